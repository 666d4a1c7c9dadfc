/* One of two files called part.c, each with a region called "part"
 * (mri_same_name). */
#include <mri_monitor.h>

MONITOR_REGION(r_part, MRI_REGION_ROUTINE, "part");

int part_two(int x)
{
    MONITOR_ENTER(r_part);
    int y = x + 1;
    MONITOR_EXIT(r_part);
    return y;
}

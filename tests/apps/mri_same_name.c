/*
 * mri_same_name - two regions of the same name in two files of the same
 * name (same_name/one/part.c and same_name/two/part.c), as in a program
 * that calls two libraries' "solve".
 *
 *   mri_same_name   "part" of one/part.c 3 times, then "part" of
 *                   two/part.c 5 times
 *
 * Wrapped in region "main" (PROGRAM).
 */
#include <mri_monitor.h>
#include <stdio.h>

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");

int part_one(int x);
int part_two(int x);

int main(void)
{
    MONITOR_ENTER(r_main);
    int x = 0;
    for (int i = 0; i < 3; ++i) x = part_one(x);
    for (int i = 0; i < 5; ++i) x = part_two(x);
    printf("mri_same_name: %d\n", x);
    MONITOR_EXIT(r_main);
    return 0;
}

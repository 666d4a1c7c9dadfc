/* mri_noprogram - regions, but none of them the PROGRAM region: "work"
 * (ROUTINE) 1000 times from an unannotated main, then "two\nlines"
 * (ROUTINE, a newline in its name) once, then one line of output.
 * mri profile shows it; --fit, which times each run by the PROGRAM region,
 * must refuse it with a clear error; the tables write the newline out. */
#include <mri_monitor.h>
#include <stdio.h>

MONITOR_REGION(r_work, MRI_REGION_ROUTINE, "work");
MONITOR_REGION(r_odd, MRI_REGION_ROUTINE, "two\nlines");

static volatile unsigned long sink;

__attribute__((noinline)) static void work(int i)
{
    MONITOR_ENTER(r_work);
    sink += (unsigned long)i;
    MONITOR_EXIT(r_work);
}

int main(void)
{
    for (int i = 0; i < 1000; ++i) work(i);
    MONITOR_ENTER(r_odd);
    MONITOR_EXIT(r_odd);
    printf("mri_noprogram: %lu\n", sink);
    return 0;
}

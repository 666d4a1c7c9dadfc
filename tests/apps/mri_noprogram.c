/* mri_noprogram - regions, but none of them the PROGRAM region: "work"
 * (ROUTINE) 1000 times from an unannotated main, then one line of output.
 * mri profile shows it; --fit, which times each run by the PROGRAM region,
 * must refuse it with a clear error. */
#include <mri_monitor.h>
#include <stdio.h>

MONITOR_REGION(r_work, MRI_REGION_ROUTINE, "work");

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
    printf("mri_noprogram: %lu\n", sink);
    return 0;
}

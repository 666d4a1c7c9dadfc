/* mri_noregions - a program built with libmonitor that declares no region
 * (mri_monitor.h is included, nothing annotated): prints one line, exits 0.
 * The tool must say that it has nothing to measure. */
#include <mri_monitor.h>
#include <stdio.h>

int main(void)
{
    puts("mri_noregions: no region here");
    return 0;
}

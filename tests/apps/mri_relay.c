/*
 * mri_relay - regions called through functions without annotations (the
 * callpath unwinding tests).
 *
 *   mri_relay N   "child" (ROUTINE) N times through relay_outer -> relay_inner
 *                 (no annotations), N times from main itself, and one "step"
 *                 (LOOP) inside relay_loop (no annotation) calling it N times
 *
 * Wrapped in region "main" (PROGRAM).
 */
#include <mri_monitor.h>
#include <stdlib.h>

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
MONITOR_REGION(r_step, MRI_REGION_LOOP, "step");
MONITOR_REGION(r_child, MRI_REGION_ROUTINE, "child");

static volatile unsigned long long sink;

__attribute__((noinline)) static void child(void)
{
    MONITOR_ENTER(r_child);
    for (int i = 0; i < 40; ++i) sink += (unsigned long long)i;
    MONITOR_EXIT(r_child);
}

/* The work after each loop keeps the calls from becoming tail calls, which
 * would take the callers' frames off the stack. */
__attribute__((noinline)) static void relay_inner(int n)
{
    for (int i = 0; i < n; ++i) child();
    sink += 1;
}

__attribute__((noinline)) static void relay_outer(int n)
{
    relay_inner(n);
    sink += 1;
}

__attribute__((noinline)) static void relay_loop(int n)
{
    MONITOR_ENTER(r_step);
    for (int i = 0; i < n; ++i) child();
    MONITOR_EXIT(r_step);
    sink += 1;
}

int main(int argc, char **argv)
{
    MONITOR_ENTER(r_main);
    const int n = argc > 1 ? atoi(argv[1]) : 10;
    relay_outer(n);
    for (int i = 0; i < n; ++i) child();
    relay_loop(n);
    MONITOR_EXIT(r_main);
    return 0;
}

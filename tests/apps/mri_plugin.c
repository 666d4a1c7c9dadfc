/* A module loaded with dlopen() after the application started: its region
 * is published then, not with the start-up static information. */
#include <mri_monitor.h>

MONITOR_REGION(r_plugin, MRI_REGION_ROUTINE, "plugin_work");

int plugin_work(int x)
{
    MONITOR_ENTER(r_plugin);
    int y = x * 2;
    MONITOR_EXIT(r_plugin);
    return y;
}

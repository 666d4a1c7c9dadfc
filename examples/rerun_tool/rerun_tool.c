/*
 * rerun_tool - measures more counter events than the machine can count at
 * once by running the application again (paper section 5: "the tool can
 * just rerun the application until all the requests are honored").
 * Written only against <mri.h>.
 *
 *   rerun_tool -r REGION -e EVENT [-e EVENT]... -- PROGRAM [ARGS...]
 *
 * Asks, for each EVENT, for its sum over all instances of REGION in the
 * whole process (SUM, PER_PROCESS). Requests that do not fit the counter
 * budget fail with MRI_Error; they wait for the next run. After each run
 * it prints what was measured, deletes those requests, and reloads the
 * program (MRI_Application_Finish, MRI_Application_Load) until every event
 * was measured. Exit status: 0, 1 on an MRI error, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mri.h"

#define MAX_EVENTS 32

static void die(const char *what)
{
    fprintf(stderr, "rerun_tool: %s: %s\n", what, MRI_Get_Error_Message());
    MRI_Finalize();
    exit(1);
}

int main(int argc, char **argv)
{
    const char *region_name = NULL;
    const char *events[MAX_EVENTS];
    int nevents = 0, i = 1;
    for (; i < argc; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            region_name = argv[++i];
        } else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc && nevents < MAX_EVENTS) {
            events[nevents++] = argv[++i];
        } else {
            i = argc;
        }
    }
    if (i >= argc || !region_name || nevents == 0) {
        fprintf(stderr, "usage: rerun_tool -r REGION -e EVENT [-e EVENT]... -- PROGRAM [ARGS...]\n");
        return 2;
    }
    char **prog = argv + i;

    if (MRI_Init() != MRI_OK) die("init");
    int done[MAX_EVENTS] = {0};
    int remaining = nevents;
    for (int run = 1; remaining > 0; ++run) {
        if (MRI_Application_Load(prog[0], prog) != MRI_OK) die("load");
        MRI_Region_Spec region;
        if (MRI_Find_Region(region_name, &region) != MRI_OK) die(region_name);
        MRI_Region_Table regions = {&region, 1};
        MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_PROCESS};
        MRI_Request_ID ids[MAX_EVENTS];
        int placed = 0;
        for (int e = 0; e < nevents; ++e) {
            ids[e] = -1;
            if (done[e]) continue;
            MRI_Runtime_Information_Spec ri;
            if (MRI_Runtime_Information_By_Name(events[e], &ri) != MRI_OK) die(events[e]);
            ids[e] = MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &agg);
            if (ids[e] > 0) {
                ++placed;
            } else if (placed == 0) {
                die(events[e]); /* not even one fits: not a budget question */
            } else {
                printf("run %d: %s waits for a later run (%s)\n", run, events[e], MRI_Get_Error_Message());
            }
        }
        if (MRI_Start() != MRI_OK) die("start");
        if (MRI_Wait() != MRI_APPLICATION_TERMINATED) die("wait");
        for (int e = 0; e < nevents; ++e) {
            if (ids[e] <= 0) continue;
            void *p;
            if (MRI_Get_Data(ids[e], &p) != MRI_OK) die("results");
            const MRI_Aggregate_Request_Results *r = p;
            printf("run %d: %s over %s: %.0f in %llu instances\n", run, events[e], region_name, r->element[0].value,
                   r->element[0].count);
            if (MRI_Request_Delete(ids[e]) != MRI_OK) die("delete");
            done[e] = 1;
            --remaining;
        }
        if (MRI_Application_Finish() != MRI_OK) die("finish");
    }
    printf("all %d events measured\n", nevents);
    MRI_Finalize();
    return 0;
}

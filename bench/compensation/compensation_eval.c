/*
 * compensation_eval - one experiment of the overhead-compensation evaluation
 * (seed paper 001, section 4.1) on one run of an annotated program.
 *
 *   compensation_eval EXPERIMENT -- PROGRAM [ARGS...]
 *
 * EXPERIMENT:
 *   MO       only "main" is measured (profile of region "main")
 *   PA       every region, flat profile, compensation off
 *   PA-comp  every region, flat profile, compensation on
 *   CA       every region, callpath profile, compensation off
 *   CA-comp  every region, callpath profile, compensation on
 *   SIM      as MO, with every memory reference simulated (the program must
 *            be built with the cache-simulator instrumentation; a request
 *            for main's simulated L1 read misses turns the simulator on)
 *   SIM-comp the same, compensation on
 *
 * Prints one line on stdout:
 *   main_us=<main's inclusive time, compensated for the -comp experiments>
 *   raw_us=<the raw value> instances=<region instances measured>
 * and the calibrated overheads on stderr. Exit status 0, or 1 with the
 * reason when a call fails or the program does not exit with status 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mri.h"

static int die(const char *what)
{
    fprintf(stderr, "compensation_eval: %s: %s\n", what, MRI_Get_Error_Message());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: compensation_eval MO|PA|PA-comp|CA|CA-comp -- PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *exp = argv[1];
    const int sim = strcmp(exp, "SIM") == 0 || strcmp(exp, "SIM-comp") == 0;
    const int mo = strcmp(exp, "MO") == 0 || sim, pa = strncmp(exp, "PA", 2) == 0, ca = strncmp(exp, "CA", 2) == 0;
    const int comp = strstr(exp, "-comp") != NULL;
    if (!(mo || ((pa || ca) && (strlen(exp) == 2 || (comp && strlen(exp) == 7))))) {
        fprintf(stderr, "compensation_eval: unknown experiment \"%s\" (MO, PA, PA-comp, CA, CA-comp, SIM, SIM-comp)\n",
                exp);
        return 2;
    }
    if (MRI_Init() != MRI_OK) return die("init");
    if (MRI_Application_Load(argv[3], &argv[3]) != MRI_OK) return die("load");

    MRI_Region_Spec main_region;
    if (MRI_Find_Region("main", &main_region) != MRI_OK) return die("the program has no region \"main\"");
    MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME;
    MRI_Region_Table only_main = {&main_region, 1}, every = {NULL, 0};
    MRI_Request_ID id = ca ? MRI_Callpath_Profile_Request(&time, &every, NULL, NULL)
                           : MRI_Profile_Request(&time, mo ? &only_main : &every, NULL, NULL);
    if (id < 0) return die("profile request");
    if (strcmp(exp, "MO") != 0 && MRI_Set_Compensation(id, comp) != MRI_OK) return die("compensation switch");
    if (sim) {
        MRI_Runtime_Information_Spec misses = MRI_LC1_DATA_READ_MISS;
        MRI_Aggregation_Spec sum = {MRI_SUM, MRI_PER_PROCESS};
        if (MRI_Aggregate_Request(&misses, &only_main, NULL, NULL, &sum) < 0) return die("cache request");
    }

    MRI_Overhead_Calibration cal;
    if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return die("calibration");
    fprintf(stderr, "calibration (k=%d, j=%d): timer delta_i %.2f ns own %.2f ns; callpath delta_i %.2f ns own %.2f ns\n",
            cal.repetitions, cal.experiments, cal.kind[MRI_OVERHEAD_TIMER].delta_inclusive,
            cal.kind[MRI_OVERHEAD_TIMER].delta_own, cal.kind[MRI_OVERHEAD_CALLPATH].delta_inclusive,
            cal.kind[MRI_OVERHEAD_CALLPATH].delta_own);

    if (MRI_Start() != MRI_OK) return die("start");
    if (MRI_Wait() != MRI_APPLICATION_TERMINATED) return die("wait");
    MRI_Application_Status_Info st;
    if (MRI_Get_Application_Status(&st) != MRI_OK) return die("status");
    if (st.reason != MRI_STOP_EXITED || st.exit_code != 0) {
        fprintf(stderr, "compensation_eval: %s did not exit with status 0 (reason %d, code %d)\n", argv[3],
                (int)st.reason, st.exit_code);
        return 1;
    }
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) return die("get data");
    const MRI_Histogram_Profile_Results *res = p;
    unsigned long long instances = 0;
    const MRI_Profile_Element *m = NULL;
    for (int i = 0; i < res->nr_Elements; ++i) {
        instances += res->element[i].instances;
        const MRI_Profile_Element *e = &res->element[i];
        if (e->region.id.file_ID == main_region.id.file_ID && e->region.id.line_NR == main_region.id.line_NR) m = e;
    }
    if (!m || m->instances != 1) {
        fprintf(stderr, "compensation_eval: main was not measured exactly once\n");
        return 1;
    }
    printf("main_us=%.1f raw_us=%.1f instances=%llu\n", (comp ? m->compensated_inclusive : m->inclusive) / 1e3,
           m->inclusive / 1e3, instances);
    if (sim) {
        MRI_Overhead_Calibration after;
        if (MRI_Get_Overhead_Calibration(&after) == MRI_OK)
            fprintf(stderr, "calibration: recording %.3f ns per reference (%s)\n",
                    after.kind[MRI_OVERHEAD_CACHE_SIMULATOR].delta_inclusive,
                    after.kind[MRI_OVERHEAD_CACHE_SIMULATOR].note);
    }
    MRI_Finalize();
    return 0;
}

/*
 * iterative_tool - iterative online analysis with MRI, written only against
 * <mri.h>: one time step per stop.
 *
 *   iterative_tool [-s STOPS] [-f] -- PROGRAM [ARGS...]
 *
 * Loads PROGRAM (e.g. examples/stencil), asks for
 *   - the time of each thread in the parallel "sweep" (SUM, PER_THREAD),
 *   - the slowest "update_rows" instance and the thread it ran on (MAX,
 *     PER_PROCESS: the focus active object),
 * then runs it to the end of "time_step" STOPS times (default 5). At every
 * stop it prints the partial results; at the third it adds a request
 * (instances of "residual"), at the fourth it deletes the per-thread one.
 * Afterwards it lets the program run to its end (MRI_Start) or, with -f,
 * ends it at once (MRI_Application_Finish). Exit status: 0 on success, 1 on
 * an MRI error, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mri.h"

static void die(const char *what)
{
    fprintf(stderr, "iterative_tool: %s: %s\n", what, MRI_Get_Error_Message());
    MRI_Finalize();
    exit(1);
}

static MRI_Region_Spec find(const char *name)
{
    MRI_Region_Spec r;
    if (MRI_Find_Region(name, &r) != MRI_OK) die(name);
    return r;
}

static MRI_Request_ID aggregate(MRI_Runtime_Information_Spec ri, const char *region, MRI_Aggregation_Operation op,
                                MRI_Aggregation_Target target)
{
    MRI_Region_Spec r = find(region);
    MRI_Region_Table regions = {&r, 1};
    MRI_Aggregation_Spec agg = {op, target};
    MRI_Request_ID id = MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &agg);
    if (id < 0) die("aggregate request");
    return id;
}

static const char *thread_name(const MRI_Active_Object_Spec *ao, char *buf, size_t n)
{
    MRI_Active_Object_Info info;
    if (MRI_Get_Active_Object_Info(ao, &info) == MRI_OK)
        snprintf(buf, n, "thread %d \"%s\"", ao->id, info.name);
    else
        snprintf(buf, n, "thread %d", ao->id);
    return buf;
}

static void print_request(const char *label, MRI_Request_ID id)
{
    void *p;
    char name[64];
    if (MRI_Get_Data(id, &p) != MRI_OK) die("get data");
    MRI_Aggregate_Request_Results *r = p;
    printf("  %s (%s %s%s):", label, MRI_Runtime_Information_Name(r->ri),
           MRI_Aggregation_Operation_Name(r->aggregation.operation),
           r->aggregation.target == MRI_PER_THREAD ? " per thread" : " per process");
    if (!r->active) {
        printf(" not active yet\n");
        return;
    }
    for (int i = 0; i < r->nr_Elements; ++i) {
        const MRI_Aggregate_Value *v = &r->element[i];
        if (r->ri == MRI_EXECUTION_TIME)
            printf("%s%.3f ms", i ? ", " : " ", v->value / 1e6);
        else
            printf("%s%.0f", i ? ", " : " ", v->value);
        if (r->aggregation.target == MRI_PER_THREAD)
            printf(" [%s]", thread_name(&v->active_object, name, sizeof name));
        if (v->has_focus && r->aggregation.target == MRI_PER_PROCESS)
            printf(" on %s", thread_name(&v->focus_active_object, name, sizeof name));
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    int stops = 5, finish = 0, i = 1;
    for (; i < argc; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            stops = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-f") == 0) {
            finish = 1;
        } else {
            break;
        }
    }
    if (i >= argc || stops < 0) {
        fprintf(stderr, "usage: iterative_tool [-s STOPS] [-f] -- PROGRAM [ARGS...]\n");
        return 2;
    }

    if (MRI_Init() != MRI_OK) die("init");
    if (MRI_Application_Load(argv[i], argv + i) != MRI_OK) die("load");

    MRI_Region_Spec step = find("time_step");
    MRI_Request_ID per_thread = aggregate(MRI_EXECUTION_TIME, "sweep", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID slowest = aggregate(MRI_EXECUTION_TIME, "update_rows", MRI_MAX, MRI_PER_PROCESS);
    MRI_Request_ID residuals = -1;

    for (int k = 1; k <= stops; ++k) {
        if (MRI_Start_Stop(&step) != MRI_OK) die("start_stop");
        int st = MRI_Wait();
        if (st == MRI_Error) die("wait");
        if (st == MRI_APPLICATION_TERMINATED) {
            printf("the program ended before stop %d\n", k);
            break;
        }
        MRI_Application_Status_Info info;
        MRI_Get_Application_Status(&info);
        printf("stop %d at the end of time_step (%llu stops so far)\n", k, info.stops);
        if (per_thread > 0) print_request("sweep time", per_thread);
        print_request("slowest update_rows", slowest);
        if (residuals > 0) print_request("residual calls since stop 3", residuals);
        if (k == 3) residuals = aggregate(MRI_NUMBER_OF_INSTANCES, "residual", MRI_SUM, MRI_PER_PROCESS);
        if (k == 4 && per_thread > 0) {
            if (MRI_Request_Delete(per_thread) != MRI_OK) die("delete");
            per_thread = -1;
            printf("  (deleted the per-thread sweep request)\n");
        }
    }

    if (finish) {
        if (MRI_Application_Finish() != MRI_OK) die("finish");
        printf("ended the program from the tool\n");
    } else if (MRI_No_Wait() != MRI_APPLICATION_TERMINATED) {
        if (MRI_Start() != MRI_OK) die("start");
        if (MRI_Wait() != MRI_APPLICATION_TERMINATED) die("wait for the end");
        printf("the program ran to its end\n");
    }
    print_request("slowest update_rows, final", slowest);
    if (residuals > 0) print_request("residual calls since stop 3, final", residuals);
    MRI_Finalize();
    return 0;
}

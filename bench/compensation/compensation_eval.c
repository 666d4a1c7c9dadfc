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
 *
 *   compensation_eval PAIRED ROUNDS -- PROGRAM [ARGS...]
 *
 * The experiments inside one process, so that what differs from one
 * process to the next (its calibration, its addresses, a slow spell of the
 * machine that lasts seconds) is the same on both sides of a comparison.
 * PROGRAM is run with "-r ROUNDS" added: it does its whole work ROUNDS
 * times, each a region "round" (the workloads of bench/compensation). The
 * tool stops it at the end of every round and changes the request for the
 * next: round 1 is a warm-up (measured as MO), then MO, PA, MO, CA, MO,
 * PA, ... where MO measures only the round, PA every region (flat profile,
 * compensation on: raw and compensated from the same round) and CA every
 * region with a callpath profile. Prints one line per round on stdout:
 *   round=<n> experiment=<warm-up|MO|PA|CA> raw_us=<round's inclusive time>
 *   comp_us=<compensated> instances=<region instances measured in it>
 * and for PA and CA rounds busiest=<the instances of other regions than
 * the round in the thread that had most> per_thread=<those of each
 * thread, by the monitor's thread number, comma-separated>
 * delta_i_ns=<the Delta_i the round was compensated with>.
 * After the last round the program runs to its end with nothing measured.
 * The workloads here keep their threads for all the rounds (crew.h). A
 * program that starts its threads anew in every round takes a new row of
 * the monitor for each one that runs a measured region (a PA or CA round),
 * and rows are never reused: PAIRED asks for the most (MRI_MAX_THREADS=1024,
 * unless set) and stops with the reason at the first round whose threads
 * found no row.
 *
 *   compensation_eval PAIRED ROUNDS --fit FIT -- PROGRAM [ARGS...]
 *
 * The same, with the overhead calibrated against the program itself
 * (docs/ACCURACY.md, "Calibrating against the program"). Every PA or CA
 * round, once the MO round after it is measured, tells what an instance
 * cost in place: the Delta_i it was compensated with + (its compensated
 * time - the mean of the MO rounds around it) / the instances of its
 * busiest thread. With one thread that is (raw - MO) / instances; with
 * threads that wait for each other it also takes in what the compensation
 * at their joins and barriers made of it. Before each PA or CA round the tool
 * sets the median of the last FIT such costs of that experiment as the
 * timer or callpath kind's Delta_i (MRI_Set_Overhead; Delta_own stays the
 * application's, or Delta_i where that is smaller), so each round is
 * compensated with what earlier rounds measured, never with its own, and
 * the value follows a machine whose speed changes. The first FIT cycles
 * after the warm-up (MO, PA, MO, CA: experiment=fit-MO, fit-PA, fit-CA)
 * only measure (compensated with the application's calibration). The
 * other PA and CA lines end in "fitted_delta_ns=" and the Delta_i their
 * round was compensated with. ROUNDS counts every round, at least 4 FIT +
 * 5.
 *
 *   compensation_eval PAIRED ROUNDS --simulated [--fit FIT] -- PROGRAM [ARGS...]
 *
 * Time under the cache simulator, in rounds: warm-up, then MO, SIM, MO,
 * SIM, ... where SIM measures only the round too, with every memory
 * reference of its thread simulated (requests for the round's L1 data
 * reads and writes, hits and misses, over every address: their sum is the
 * references it recorded). SIM lines add "references=" and
 * "recording_ns=", the recording cost per reference the compensation
 * removed. With --fit, the FIT cycles after the warm-up (fit-MO, fit-SIM)
 * only measure, and before each later SIM round the tool sets the median
 * of the last FIT measured recording costs as MRI_OVERHEAD_CACHE_SIMULATOR:
 * what was removed per reference plus (the compensated round - the mean
 * of the MO rounds around it) / its references. The references counted
 * are the round's thread's: for programs whose work the round's thread
 * does alone (one thread). ROUNDS at least 2 FIT + 3.
 *
 * SIGINT, SIGTERM or SIGHUP to compensation_eval (kill, timeout, a
 * script's trap) ends the program with the same signal, then the tool:
 * without its tool the monitor would detach and let the program run its
 * remaining rounds unmonitored.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "mri.h"

static int die(const char *what)
{
    fprintf(stderr, "compensation_eval: %s: %s\n", what, MRI_Get_Error_Message());
    return 1;
}

/* The program's process once it is loaded, and a stop signal that came
 * before that. */
static volatile sig_atomic_t g_program_pid, g_pending_signal;

static void on_stop_signal(int sig)
{
    if (g_program_pid <= 0) {
        g_pending_signal = sig;
        return;
    }
    kill((pid_t)g_program_pid, sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* MRI_Application_Load() with the stop signals passed on to the program
 * (see the top). */
static int load(const char *path, char *const argv[])
{
    static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; ++i)
        sigaction(stop_signals[i], &action, NULL);
    if (MRI_Application_Load(path, argv) != MRI_OK) return die("load");
    MRI_Application_Status_Info st;
    if (MRI_Get_Application_Status(&st) != MRI_OK) return die("status");
    g_program_pid = st.monitored_pid > 0 ? st.monitored_pid : st.pid;
    if (g_pending_signal) on_stop_signal(g_pending_signal);
    return 0;
}

static void print_calibration(void)
{
    MRI_Overhead_Calibration cal;
    if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return;
    fprintf(stderr, "calibration (k=%d, j=%d): timer delta_i %.2f ns own %.2f ns; callpath delta_i %.2f ns own %.2f ns\n",
            cal.repetitions, cal.experiments, cal.kind[MRI_OVERHEAD_TIMER].delta_inclusive,
            cal.kind[MRI_OVERHEAD_TIMER].delta_own, cal.kind[MRI_OVERHEAD_CALLPATH].delta_inclusive,
            cal.kind[MRI_OVERHEAD_CALLPATH].delta_own);
}

static int same_region(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

#define MAX_THREADS 1024 /* the monitor's hard limit (MRI_MAX_THREADS) */

/* The request's profile element of `region` (NULL when it has none) and
 * the instances of every region it measured; with `per_thread`, also the
 * instances of other regions than `region` in each thread (by the
 * monitor's thread number), and in `threads` one more than the highest
 * thread number that had any. 0, or 1 with the reason. */
static int region_result_threads(MRI_Request_ID id, const MRI_Region_Spec *region,
                                 const MRI_Profile_Element **element, unsigned long long *instances,
                                 unsigned long long per_thread[MAX_THREADS], int *threads)
{
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) return die("get data");
    const MRI_Histogram_Profile_Results *res = p;
    unsigned long long ignored[MAX_THREADS];
    if (!per_thread) per_thread = ignored;
    for (int t = 0; t < MAX_THREADS; ++t) per_thread[t] = 0;
    *element = NULL;
    *instances = 0;
    for (int i = 0; i < res->nr_Elements; ++i) {
        const MRI_Profile_Element *e = &res->element[i];
        *instances += e->instances;
        if (same_region(&e->region, region)) {
            *element = e;
            continue;
        }
        for (int k = 0; k < e->nr_Active_Objects; ++k) {
            const int t = e->per_active_object[k].active_object.id;
            if (t < 0 || t >= MAX_THREADS) {
                fprintf(stderr, "compensation_eval: thread %d beyond the %d this tool counts\n", t, MAX_THREADS);
                return 1;
            }
            per_thread[t] += e->per_active_object[k].instances;
        }
    }
    if (threads) {
        *threads = 0;
        for (int t = 0; t < MAX_THREADS; ++t)
            if (per_thread[t]) *threads = t + 1;
    }
    return 0;
}

static int region_result(MRI_Request_ID id, const MRI_Region_Spec *region, const MRI_Profile_Element **element,
                         unsigned long long *instances)
{
    return region_result_threads(id, region, element, instances, NULL, NULL);
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the last `n` of `count` values. */
static double median_of_last(const double *v, int count, int n)
{
    double d[64];
    if (n > count) n = count;
    if (n <= 0) return 0;
    for (int i = 0; i < n; ++i) d[i] = v[count - n + i];
    qsort(d, (size_t)n, sizeof d[0], by_value);
    return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

/* Sets a fitted Delta_i of `kind` (see the top), keeping the application's
 * Delta_own where it is below. 0, or 1 with the reason. */
static int set_fitted(MRI_Overhead_Kind kind, double delta)
{
    /* The application's Delta_own, read before the first value of the
     * kind is set (after that the calibration reports the tool's). */
    static double measured_own[MRI_OVERHEAD_KINDS] = {-1, -1, -1, -1};
    if (measured_own[kind] < 0) {
        MRI_Overhead_Calibration cal;
        if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return die("calibration");
        measured_own[kind] = cal.kind[kind].delta_own;
    }
    const double own = measured_own[kind] < delta ? measured_own[kind] : delta;
    if (MRI_Set_Overhead(kind, delta, own) != MRI_OK) return die("set overhead");
    return 0;
}

/* Exit status 0 of the program, or 1 with the reason. */
static int ended_well(const char *program)
{
    MRI_Application_Status_Info st;
    if (MRI_Get_Application_Status(&st) != MRI_OK) return die("status");
    if (st.reason != MRI_STOP_EXITED || st.exit_code != 0) {
        fprintf(stderr, "compensation_eval: %s did not exit with status 0 (reason %d, code %d)\n", program,
                (int)st.reason, st.exit_code);
        return 1;
    }
    return 0;
}

/* The references the round's thread recorded in the round: its simulated
 * L1 data reads and writes, hits and misses, over every address. */
static const MRI_Runtime_Information_Spec kReferenceEvents[4] = {MRI_LC1_DATA_READ_MISS, MRI_LC1_DATA_READ_HIT,
                                                                 MRI_LC1_DATA_WRITE_MISS, MRI_LC1_DATA_WRITE_HIT};

static int reference_requests(MRI_Region_Table *round, MRI_Request_ID ids[4])
{
    MRI_Aggregation_Spec sum = {MRI_SUM, MRI_PER_PROCESS};
    for (int e = 0; e < 4; ++e) {
        MRI_Runtime_Information_Spec ri = kReferenceEvents[e];
        ids[e] = MRI_Aggregate_Request(&ri, round, NULL, NULL, &sum);
        if (ids[e] < 0) return die("cache request");
    }
    return 0;
}

static int references(const MRI_Request_ID ids[4], double *refs)
{
    *refs = 0;
    for (int e = 0; e < 4; ++e) {
        void *p = NULL;
        if (MRI_Get_Data(ids[e], &p) != MRI_OK) return die("cache data");
        const MRI_Aggregate_Request_Results *a = p;
        for (int i = 0; i < a->nr_Elements; ++i) *refs += a->element[i].value;
        if (MRI_Request_Delete(ids[e]) != MRI_OK) return die("delete");
    }
    return 0;
}

/* The Delta_i of `kind` the application's compensation uses (0 for a kind
 * it did not calibrate, which it does not compensate), or -1 when the
 * calibration cannot be read. */
static double delta_in_use(MRI_Overhead_Kind kind)
{
    MRI_Overhead_Calibration cal;
    if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return -1;
    return cal.kind[kind].calibrated ? cal.kind[kind].delta_inclusive : 0;
}

/* compensation_eval PAIRED ROUNDS [--simulated] [--fit FIT] -- PROGRAM
 * [ARGS...] (see the top; fit 0: no fit rounds). */
static int paired(int rounds, int simulated, int fit, int argc, char **argv)
{
    /* PROGRAM ARGS... -r ROUNDS */
    char **args = calloc((size_t)argc + 3, sizeof(char *));
    char count[16];
    if (!args) return die("out of memory");
    snprintf(count, sizeof count, "%d", rounds);
    for (int i = 0; i < argc; ++i) args[i] = argv[i];
    args[argc] = "-r";
    args[argc + 1] = count;
    setenv("MRI_MAX_THREADS", "1024", 0); /* for programs that start threads anew in every round (above) */
    if (MRI_Init() != MRI_OK) return die("init");
    if (load(args[0], args)) return 1;
    MRI_Region_Spec round;
    if (MRI_Find_Region("round", &round) != MRI_OK)
        return die("the program has no region \"round\" (PAIRED needs a program that takes -r ROUNDS)");
    MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME;
    MRI_Region_Table only_round = {&round, 1}, every = {NULL, 0};
    static const char *const cycle[] = {"MO", "PA", "MO", "CA"};
    static const char *const fit_cycle[] = {"fit-MO", "fit-PA", "fit-MO", "fit-CA"};
    static const char *const sim_cycle[] = {"MO", "SIM"};
    static const char *const sim_fit_cycle[] = {"fit-MO", "fit-SIM"};
    const int period = simulated ? 2 : 4;
    const int fitted = 1 + period * fit; /* the last fit round */
    double *raw = calloc((size_t)rounds + 1, sizeof(double));
    double *comp = calloc((size_t)rounds + 1, sizeof(double));
    double *refs = calloc((size_t)rounds + 1, sizeof(double));
    double *used = calloc((size_t)rounds + 1, sizeof(double)); /* the Delta_i (SIM: recording cost) compensated with */
    unsigned long long *busiest = calloc((size_t)rounds + 1, sizeof(unsigned long long));
    double *cost[2] = {calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double))}; /* PA or SIM, CA */
    int costs[2] = {0, 0};
    int last = -1; /* the cost list of the round before (0: PA or SIM, 1: CA), -1: it measured no cost */
    if (!raw || !comp || !refs || !used || !busiest || !cost[0] || !cost[1]) return die("out of memory");
    print_calibration();
    for (int r = 1; r <= rounds; ++r) {
        const int in_fit = r > 1 && r <= fitted;
        const char *exp = r == 1    ? "warm-up"
                          : in_fit ? (simulated ? sim_fit_cycle : fit_cycle)[(r - 2) % period]
                                   : (simulated ? sim_cycle : cycle)[(r - 2 - period * fit) % period];
        const char *kind = in_fit ? exp + 4 : exp;
        const int pa = strcmp(kind, "PA") == 0, ca = strcmp(kind, "CA") == 0, sim = strcmp(kind, "SIM") == 0;
        const int fitted_round = fit && !in_fit && (pa || ca || sim);
        double delta = 0;
        if (fitted_round) {
            delta = median_of_last(cost[ca], costs[ca], fit);
            if (sim && delta < 0) delta = 0; /* the rounds were compensated too much even without recording costs */
            if (!(delta > 0) && !sim) {
                fprintf(stderr, "compensation_eval: round %d: the rounds before found no overhead (%.2f ns an instance)\n",
                        r, delta);
                return 1;
            }
            if (set_fitted(sim  ? MRI_OVERHEAD_CACHE_SIMULATOR
                           : ca ? MRI_OVERHEAD_CALLPATH
                                : MRI_OVERHEAD_TIMER,
                           delta))
                return 1;
        }
        MRI_Request_ID id = ca   ? MRI_Callpath_Profile_Request(&time, &every, NULL, NULL)
                            : pa ? MRI_Profile_Request(&time, &every, NULL, NULL)
                                 : MRI_Profile_Request(&time, &only_round, NULL, NULL);
        if (id < 0) return die("profile request");
        MRI_Request_ID ref_ids[4];
        if (sim && reference_requests(&only_round, ref_ids)) return 1;
        if (MRI_Start_Stop(&round) != MRI_OK) return die("start");
        const int st = MRI_Wait();
        if (st == MRI_APPLICATION_TERMINATED) {
            fprintf(stderr, "compensation_eval: %s ended before round %d of %d\n", args[0], r, rounds);
            return 1;
        }
        if (st != MRI_APPLICATION_STOPPED) return die("wait");
        unsigned long long instances = 0;
        const MRI_Profile_Element *m = NULL;
        unsigned long long per_thread[MAX_THREADS];
        int threads = 0;
        if (region_result_threads(id, &round, &m, &instances, per_thread, &threads)) return 1;
        busiest[r] = 0;
        for (int t = 0; t < threads; ++t)
            if (per_thread[t] > busiest[r]) busiest[r] = per_thread[t];
        if (!m || m->instances != 1) {
            fprintf(stderr, "compensation_eval: round %d was not measured exactly once\n", r);
            return 1;
        }
        MRI_Application_Status_Info status;
        if (MRI_Get_Application_Status(&status) != MRI_OK) return die("status");
        if (status.threads_dropped) {
            fprintf(stderr,
                    "compensation_eval: round %d: %u thread(s) of the program found no row in the monitor "
                    "(MRI_MAX_THREADS): more threads than rows, or threads started anew in every round "
                    "(rows are never reused); raise MRI_MAX_THREADS or run fewer rounds\n",
                    r, status.threads_dropped);
            return 1;
        }
        raw[r] = m->inclusive;
        comp[r] = m->compensated_inclusive;
        used[r] = delta_in_use(sim  ? MRI_OVERHEAD_CACHE_SIMULATOR
                               : ca ? MRI_OVERHEAD_CALLPATH
                                    : MRI_OVERHEAD_TIMER);
        if (used[r] < 0) return die("calibration");
        if (sim) {
            if (references(ref_ids, &refs[r])) return 1;
            if (refs[r] < 1) {
                fprintf(stderr, "compensation_eval: round %d recorded no reference (is the program instrumented?)\n",
                        r);
                return 1;
            }
        }
        /* An MO round after a PA or CA round: what an instance cost there,
         * the part of the compensated round above MO spread over the
         * instances of its busiest thread and added to what was removed.
         * After a SIM round: what recording a reference cost, the same
         * way over the references. */
        if (fit && strcmp(kind, "MO") == 0 && last >= 0) {
            const double mo = (raw[r - 2] + raw[r]) / 2;
            cost[last][costs[last]++] =
                used[r - 1] + (comp[r - 1] - mo) / (simulated ? refs[r - 1] : (double)busiest[r - 1]);
        }
        last = pa || sim ? 0 : ca ? 1 : -1;
        printf("round=%d experiment=%s raw_us=%.1f comp_us=%.1f instances=%llu", r, exp, m->inclusive / 1e3,
               m->compensated_inclusive / 1e3, instances);
        if (pa || ca) {
            printf(" busiest=%llu per_thread=", busiest[r]);
            for (int t = 0; t < threads; ++t) printf("%s%llu", t ? "," : "", per_thread[t]);
            printf(" delta_i_ns=%.4f", used[r]);
        }
        if (sim) printf(" references=%.0f recording_ns=%.4f", refs[r], used[r]);
        if (fitted_round) printf(" fitted_delta_ns=%.4f", delta);
        printf("\n");
        fflush(stdout);
        if (MRI_Request_Delete(id) != MRI_OK) return die("delete");
    }
    if (MRI_Start() != MRI_OK) return die("start");
    if (MRI_Wait() != MRI_APPLICATION_TERMINATED) return die("wait for the end");
    const int status = ended_well(args[0]);
    MRI_Finalize();
    free(args);
    free(raw);
    free(comp);
    free(refs);
    free(used);
    free(busiest);
    free(cost[0]);
    free(cost[1]);
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "PAIRED") == 0) {
        char *end = NULL;
        const long rounds = strtol(argv[2], &end, 10);
        if (end == argv[2] || *end || rounds < 2 || rounds > 100000) {
            fprintf(stderr, "compensation_eval: PAIRED ROUNDS: ROUNDS must be a number from 2 to 100000, not \"%s\"\n",
                    argv[2]);
            return 2;
        }
        long fit = 0;
        int next = 3, simulated = 0;
        if (strcmp(argv[next], "--simulated") == 0) {
            simulated = 1;
            ++next;
        }
        if (next < argc && strcmp(argv[next], "--fit") == 0) {
            if (argc < next + 4) {
                fprintf(stderr, "compensation_eval: PAIRED ROUNDS [--simulated] --fit FIT -- PROGRAM [ARGS...]\n");
                return 2;
            }
            fit = strtol(argv[next + 1], &end, 10);
            if (end == argv[next + 1] || *end || fit < 1 || fit > 64) {
                fprintf(stderr, "compensation_eval: --fit FIT: FIT must be a number from 1 to 64, not \"%s\"\n",
                        argv[next + 1]);
                return 2;
            }
            const long period = simulated ? 2 : 4;
            if (rounds < period * fit + period + 1) {
                fprintf(stderr,
                        "compensation_eval: PAIRED %ld --fit %ld: %ld rounds leave none after the fit; at least "
                        "%ld\n",
                        rounds, fit, rounds, period * fit + period + 1);
                return 2;
            }
            next += 2;
        }
        if (next < argc && strcmp(argv[next], "--") == 0 && argc > next + 1)
        {
            const int status = paired((int)rounds, simulated, (int)fit, argc - next - 1, argv + next + 1);
            /* A round that failed leaves the program stopped or running its
             * remaining rounds: end it rather than leave it behind. */
            if (status != 0 && MRI_No_Wait() != MRI_APPLICATION_TERMINATED) MRI_Application_Finish();
            return status;
        }
    }
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: compensation_eval MO|PA|PA-comp|CA|CA-comp|SIM|SIM-comp -- PROGRAM [ARGS...]\n"
                        "       compensation_eval PAIRED ROUNDS [--simulated] [--fit FIT] -- PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *exp = argv[1];
    const int sim = strcmp(exp, "SIM") == 0 || strcmp(exp, "SIM-comp") == 0;
    const int mo = strcmp(exp, "MO") == 0 || sim, pa = strncmp(exp, "PA", 2) == 0, ca = strncmp(exp, "CA", 2) == 0;
    const int comp = strstr(exp, "-comp") != NULL;
    if (!(mo || ((pa || ca) && (strlen(exp) == 2 || (comp && strlen(exp) == 7))))) {
        fprintf(stderr,
                "compensation_eval: unknown experiment \"%s\" (MO, PA, PA-comp, CA, CA-comp, SIM, SIM-comp; or PAIRED "
                "ROUNDS)\n",
                exp);
        return 2;
    }
    if (MRI_Init() != MRI_OK) return die("init");
    if (load(argv[3], &argv[3])) return 1;

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
    print_calibration();

    if (MRI_Start() != MRI_OK) return die("start");
    if (MRI_Wait() != MRI_APPLICATION_TERMINATED) return die("wait");
    if (ended_well(argv[3])) return 1;
    unsigned long long instances = 0;
    const MRI_Profile_Element *m = NULL;
    if (region_result(id, &main_region, &m, &instances)) return 1;
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

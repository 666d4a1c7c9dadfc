/*
 * test_cachesim_backend, the simulator's set-up and cost: bad configurations,
 * a file name put into the segment, a program without the backend, and the
 * time simulating adds, compensated.
 */
#include "cachesim_common.h"

#include <math.h>

#include "segment_peer.h"

/* Time under the simulator, compensated (seed paper 001, the cache-simulator
 * kind). One process measures the sweeps' time with the simulator off (the
 * instrumentation dormant); another the same with every reference recorded
 * and simulated in the program's thread (a cache request on "main",
 * MRI_CACHESIM_ASYNC=0). The simulation is timed batch by batch and the
 * recording calibrated, so the compensated sweeps must come back to the
 * dormant time: the median of five runs within 25% of what simulating
 * added (typically a few %; a run's figure also moves with the machine's
 * other load, hence the median; of five, since on a KVM guest whose speed
 * swings by 2x to 5x the recording's calibration came out at 0.31 to 1.69
 * ns a reference from one process to the next, and through the callbacks
 * the runs left -3 to -23%, median -9%: two runs of three beyond -25%
 * failed a CI run, docs/ACCURACY.md). A third process simulates on the
 * simulation thread (MRI_CACHESIM_ASYNC=1): the sweeps then pay only for
 * handing the references over and for waiting when the thread is behind,
 * both timed, so its compensated time must come back to the dormant one
 * just as well, measured against what simulating in place added. */
#define SIM_RUNS (MRI_TEST_SANITIZED ? 1 : 5) /* once, not held, under a sanitizer */

static double mean_sweep(int simulate, const char *async, double *raw, double *comp)
{
    setenv("MRI_CACHESIM_ASYNC", async, 1);
    load_app("300", "1");
    const MRI_Request_ID t = aggregate(MRI_EXECUTION_TIME, "sweep", MRI_SUM, MRI_PER_PROCESS);
    /* L1 read hits of every address: each reference then leaves the
     * kernel's inline path and is counted (a miss monitor costs the hits
     * nothing), so simulating adds at least twice what the dormant sweep
     * takes (about 2.3 times through the callbacks, 13 times with the
     * inline recording), however fast the kernel searches its sets.
     * Counting misses, it added 30-60% once the sets came to be searched
     * with AVX-512. */
    MRI_Request_ID hits = -1;
    if (simulate) hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "main", NULL, MRI_SUM);
    run_to_end();
    const MRI_Aggregate_Request_Results *r = agg_data(t);
    assert_int_equal(r->nr_Elements, 1);
    assert_int_equal(r->element[0].count, 300);
    *raw = r->element[0].value / 300;
    *comp = r->element[0].compensated_value / 300;
    if (simulate) {
        /* Every reference was simulated: each sweep of A hits L1 on the
         * 7 reads of each line after its first (A is larger than L1). */
        assert_true(thread_value(hits, 0) >= 300.0 * (kReadsA - kLinesA));
        MRI_Overhead_Calibration c;
        assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
        const MRI_Overhead_Value *v = &c.kind[MRI_OVERHEAD_CACHE_SIMULATOR];
        print_message("recording: %.2f ns per reference (%s)\n", v->delta_inclusive, v->note);
        assert_true(v->calibrated);
        assert_true(v->delta_inclusive >= 0.0 && v->delta_inclusive < 1000.0);
        assert_true(v->delta_own == 0.0);
        assert_non_null(strstr(v->note, "per reference"));
        /* The simulation ran where it was asked to. */
        char cfg[512];
        assert_int_equal(MRI_Get_Cache_Configuration(cfg, sizeof cfg), MRI_OK);
        const int threaded = strstr(cfg, "simulated by a thread of its own") != NULL;
        assert_int_equal(threaded, strcmp(async, "1") == 0);
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
    return *raw;
}

/* One set of SIM_RUNS runs; returns NULL when its medians hold the bounds
 * (or under a sanitizer, where they are only printed), else why not, in
 * `why`. */
static const char *simulation_set(char *why, size_t size)
{
    double share[SIM_RUNS], share_async[SIM_RUNS], dormant[SIM_RUNS], simulated[SIM_RUNS];
    for (int run = 0; run < SIM_RUNS; run++) {
        double t0, t0_comp, raw, comp, raw_async, comp_async;
        mean_sweep(0, "0", &t0, &t0_comp);
        mean_sweep(1, "0", &raw, &comp);
        mean_sweep(1, "1", &raw_async, &comp_async);
        print_message("sweep: %.0f ns dormant, %.0f ns simulated, %.0f ns compensated (%.1f%% of the added time "
                      "left); on the simulation thread %.0f ns, %.0f ns compensated (%.1f%%)\n",
                      t0, raw, comp, 100.0 * (comp - t0) / (raw - t0), raw_async, comp_async,
                      100.0 * (comp_async - t0) / (raw - t0));
        assert_true(comp < raw);
        assert_true(comp_async <= raw_async);
        share[run] = (comp - t0) / (raw - t0);
        share_async[run] = (comp_async - t0) / (raw - t0);
        dormant[run] = t0;
        simulated[run] = raw;
    }
    if (MRI_TEST_SANITIZED) return NULL; /* the figures are printed above (mri_test_helpers.h) */
    /* The shares mean something only if simulating adds time well beyond
     * the noise (with the hits counted, at least twice what the sweep
     * itself takes; mean_sweep). Medians: one process in a few dozen ran its
     * dormant sweeps a third slower. */
    const double t0 = median(dormant, SIM_RUNS), raw = median(simulated, SIM_RUNS);
    const double m = median(share, SIM_RUNS), m_async = median(share_async, SIM_RUNS);
    if (raw < 1.5 * t0)
        snprintf(why, size, "simulating added only %.0f ns to %.0f ns (medians)", raw - t0, t0);
    else if (fabs(m) > 0.25)
        snprintf(why, size, "the median run left %.1f%% of the simulation's time, not within 25%%", 100.0 * m);
    else if (fabs(m_async) > 0.25)
        snprintf(why, size,
                 "on the simulation thread, the median run left %.1f%% of what simulating in place added, not "
                 "within 25%%",
                 100.0 * m_async);
    else
        return NULL;
    return why;
}

/* Up to SIM_SETS sets: a set whose median misses a bound is run again, and
 * the check fails only when every set missed. Through the callbacks (the
 * build without the plugin) the runs' shares centre on -11%; in 20 sets
 * of 5 on a Zen 3 guest the sets' medians came out at -5 to -25% in place
 * and -4 to -22% on the simulation thread, and at -35.7% in one CI run,
 * where the recording was calibrated at 1.2 to 1.5 ns a reference in
 * nine processes of ten and at 0.32 in the other: phases of the host,
 * not the compensation. A compensation that is off by more than the bound misses
 * it in every set. */
#define SIM_SETS 3

void test_simulation_is_compensated(void **state)
{
    (void)state;
    const char *given = getenv("MRI_CACHESIM_ASYNC");
    char *saved = given ? strdup(given) : NULL;
    char why[256];
    const char *failed = NULL;
    for (int set = 0; set < SIM_SETS; set++) {
        failed = simulation_set(why, sizeof why);
        if (failed == NULL) break;
        print_message("set %d of %d: %s%s\n", set + 1, SIM_SETS, failed,
                      set + 1 < SIM_SETS ? "; running the set again" : "");
    }
    if (saved) {
        setenv("MRI_CACHESIM_ASYNC", saved, 1);
        free(saved);
    } else {
        unsetenv("MRI_CACHESIM_ASYNC");
    }
    if (failed) fail_msg("%s, in each of %d sets of %d runs", failed, SIM_SETS, SIM_RUNS);
}

/* The load fails for each of `values` of the environment variable `name`,
 * saying `name="value": ` and then `reason`; the variable is left as it
 * was. */
static void expect_refused(const char *name, const char *const *values, size_t n, const char *reason, char **argv)
{
    const char *given = getenv(name);
    char *saved = given ? strdup(given) : NULL;
    for (size_t i = 0; i < n; ++i) {
        setenv(name, values[i], 1);
        char want[160];
        snprintf(want, sizeof want, "%s=\"%s\": %s", name, values[i], reason);
        expect_error(MRI_Application_Load(cacheapp(), argv), want);
    }
    if (saved) {
        setenv(name, saved, 1);
        free(saved);
    } else {
        unsetenv(name);
    }
}

/* Bad simulator configurations: from the environment (at the load) and
 * through the API. */
void test_bad_configuration(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    expect_error(MRI_Set_Cache_Configuration("L1:24K,8,64"), "L1: 48 sets is not a power of two");
    expect_error(MRI_Set_Cache_Configuration("L1:32K,8,64;bogus"), "cache configuration \"L1:32K,8,64;bogus\"");
    setenv("MRI_CACHESIM_CONFIG", "L1:32K,8,64;L2:256K,8,32", 1);
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)"1", (char *)"1", NULL};
    expect_error(MRI_Application_Load(cacheapp(), argv), "MRI_CACHESIM_CONFIG \"L1:32K,8,64;L2:256K,8,32\": L2: line size 32 is smaller");
    unsetenv("MRI_CACHESIM_CONFIG");
    /* Where the simulation runs: 0 or 1, nothing else. */
    const char *bad_asyncs[] = {"yes"};
    expect_refused("MRI_CACHESIM_ASYNC", bad_asyncs, 1, "0", argv);
    /* How it is split: 0, 1, a power of two up to 64, or auto. */
    const char *bad_splits[] = {"3", "128", "-2", "4x", " 4", "Auto"};
    expect_refused("MRI_CACHESIM_SPLIT", bad_splits, sizeof bad_splits / sizeof *bad_splits, "0 or 1", argv);
    /* When auto splits: a count of hand-overs. */
    const char *bad_afters[] = {"-1", "x", "2000000", "8 "};
    expect_refused("MRI_CACHESIM_SPLIT_AFTER", bad_afters, sizeof bad_afters / sizeof *bad_afters,
                   "a number of hand-overs", argv);
    /* When batches are condensed: 0, 1 or auto. */
    const char *bad_condenses[] = {"2", "yes", "Auto", "1 "};
    expect_refused("MRI_CACHESIM_CONDENSE", bad_condenses, sizeof bad_condenses / sizeof *bad_condenses,
                   "0 (never), 1 (every batch", argv);
    /* Whether the simulator searches sets with AVX-512: 0 or 1. */
    const char *bad_vectors[] = {"yes", "2", "auto"};
    expect_refused("MRI_CACHESIM_VECTOR", bad_vectors, 3, "0 (search the cache sets one way at a time)", argv);
    /* Whether the automatic split says what it does: 0 or 1. */
    const char *bad_logs[] = {"yes", "2"};
    expect_refused("MRI_CACHESIM_SPLIT_LOG", bad_logs, 2, "0 (quiet) or 1", argv);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The program never opens a path from the segment. A configuration text
 * that starts with '@' there is an invalid configuration, refused with the
 * reason, and the program runs to its end; before, the program read the
 * named file (/dev/zero until its memory ran out, a FIFO blocked its
 * control thread for ever). The tool resolves "@FILE" itself, so only a
 * peer that writes the segment, as this test does, can put one there: it
 * names a valid configuration file, which the program must not take. */
void test_program_reads_no_file_named_in_the_segment(void **state)
{
    (void)state;
    char path[] = "/tmp/mri_cache_config_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char config[] = "L1:32K,8,64;L2:256K,8,64\n";
    assert_int_equal(write(fd, config, sizeof config - 1), (long)(sizeof config - 1));
    close(fd);
    load_app("1", "1");
    char *text = mri_test_cache_config();
    assert_non_null(text);
    snprintf(text, mri_test_cache_config_bytes(), "@%s", path);
    const MRI_Request_ID misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    run_to_end();
    void *p;
    expect_error(MRI_Get_Data(misses, &p), "the tool's configuration text starts with '@' (a file name); the program "
                                           "reads no file the tool names");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    /* The way a file gets there: the tool reads it and sends its
     * configuration. */
    assert_int_equal(MRI_Finalize(), MRI_OK);
    assert_int_equal(MRI_Init(), MRI_OK);
    char arg[64];
    snprintf(arg, sizeof arg, "@%s", path);
    if (MRI_Set_Cache_Configuration(arg) != MRI_OK) fail_msg("config: %s", MRI_Get_Error_Message());
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)"1", (char *)"1", NULL};
    if (MRI_Application_Load(cacheapp(), argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    assert_string_equal(mri_test_cache_config(), "L1:32K,8,64,lru,private,wb,wa;L2:256K,8,64,lru,private,wb,wa;cores=1");
    const MRI_Request_ID again = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    run_to_end();
    assert_int_equal((long)thread_value(again, 0), kLinesA);
    unlink(path);
}

/* An application without the instrumentation: data structures and
 * histograms are refused with the reason. */
void test_without_backend(void **state)
{
    (void)state;
    char *argv[] = {(char *)MRI_TESTAPP, (char *)"steps", (char *)"2", (char *)"1", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec r = region("step");
    MRI_Region_Table regions = {&r, 1};
    int bins = 10;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, NULL, &bins), "needs the cache-simulator backend");
    MRI_Runtime_Information_Spec hits = MRI_LC1_DATA_READ_HIT;
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    expect_error(MRI_Aggregate_Request(&hits, &regions, NULL, NULL, &agg), "counting hits needs the cache-simulator backend");
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

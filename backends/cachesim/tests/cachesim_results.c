/*
 * test_cachesim_backend, histograms, profiles and traces of simulated cache
 * events (also many histograms made and deleted over 600 stops).
 */
#include "cachesim_common.h"

static const MRI_Profile_Element *profile_element(const MRI_Histogram_Profile_Results *p, const char *name)
{
    MRI_Region_Spec r = region(name);
    for (int i = 0; i < p->nr_Elements; i++)
        if (p->element[i].region.type == r.type && p->element[i].region.id.file_ID == r.id.file_ID &&
            p->element[i].region.id.line_NR == r.id.line_NR)
            return &p->element[i];
    fail_msg("no profile element for %s", name);
    return NULL;
}

/* Simulated cache events in flat and callpath profiles: A's read misses
 * happen in "sweep" (inside "main"), B's write misses in "fill". */
void test_profiles(void **state)
{
    (void)state;
    load_app("3", "1");
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS, writes = MRI_LC1_DATA_WRITE_MISS;
    MRI_Region_Table all = {NULL, 0};
    MRI_Data_Structure_Spec a = data("A"), b = data("B");
    MRI_Data_Structure_Table only_a = {&a, 1}, only_b = {&b, 1};
    const MRI_Request_ID read_profile = MRI_Callpath_Profile_Request(&reads, &all, NULL, &only_a);
    const MRI_Request_ID write_profile = MRI_Profile_Request(&writes, &all, NULL, &only_b);
    assert_true(read_profile > 0 && write_profile > 0);
    run_to_end();

    void *p = NULL;
    assert_int_equal(MRI_Get_Data(read_profile, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *flat = p;
    assert_int_equal(flat->active, 1);
    const MRI_Profile_Element *sweep = profile_element(flat, "sweep"), *main_ = profile_element(flat, "main");
    assert_int_equal(sweep->instances, 3);
    assert_int_equal((long)sweep->inclusive, 3 * kLinesA);
    assert_int_equal((long)sweep->exclusive, 3 * kLinesA);
    assert_int_equal((long)main_->inclusive, 3 * kLinesA);
    assert_int_equal((long)main_->exclusive, 0); /* all of A's misses are in its sweeps */
    assert_int_equal((long)profile_element(flat, "fill")->inclusive, 0);

    MRI_Callpath_Profile_Results *cp = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(read_profile, &cp), MRI_OK);
    int found = 0;
    MRI_Region_Spec m = region("main"), s = region("sweep");
    for (int i = 0; i < cp->nr_Elements; i++) {
        const MRI_Callpath_Element *e = &cp->element[i];
        if (e->has_caller && e->caller.id.line_NR == m.id.line_NR && e->callee.id.line_NR == s.id.line_NR) {
            assert_int_equal(e->instances, 3);
            assert_int_equal((long)e->inclusive, 3 * kLinesA);
            found = 1;
        }
    }
    assert_true(found);

    assert_int_equal(MRI_Get_Data(write_profile, &p), MRI_OK);
    flat = p;
    assert_int_equal((long)profile_element(flat, "fill")->inclusive, kLinesB);
    assert_int_equal((long)profile_element(flat, "main")->exclusive, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Trace records of simulated cache events, drained by the call-back. */
static int trace_sweep_records, trace_main_records, trace_fill_records, trace_other_records;
static unsigned long long trace_sweep_sum, trace_main_value;
static MRI_Region_Spec trace_sweep, trace_main, trace_fill;

static int same_region(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->type == b->type && a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

static void reset_trace_counts(void)
{
    trace_sweep_records = trace_main_records = trace_fill_records = trace_other_records = 0;
    trace_sweep_sum = trace_main_value = 0;
}

static void drain_cache_records(void)
{
    for (MRI_Trace_Element_Spec *r = MRI_Get_First_Trace_Record(); r; r = MRI_Get_Next_Trace_Record()) {
        if (r->event_type != MRI_LC1_DATA_READ_MISS || r->active_object.id != 0 || !r->data_structure.name ||
            strcmp(r->data_structure.name, "A") != 0) {
            trace_other_records++;
        } else if (same_region(&r->region, &trace_sweep)) {
            trace_sweep_records++;
            trace_sweep_sum += r->data;
        } else if (same_region(&r->region, &trace_main)) {
            trace_main_records++;
            trace_main_value = r->data;
        } else if (same_region(&r->region, &trace_fill)) {
            trace_fill_records++;
        } else {
            trace_other_records++;
        }
    }
}

/* A trace of A's L1 read misses over "main" with its subregions: one value
 * record per instance of main, of its 3 sweeps and of fill, each carrying
 * the instance's misses; a second trace over "sweep" alone (no
 * subregions, MRI_Set_Trace_Subregions) has 3 more. */
void test_traces(void **state)
{
    (void)state;
    reset_trace_counts();
    load_app("3", "1");
    trace_sweep = region("sweep");
    trace_main = region("main");
    trace_fill = region("fill");
    assert_int_equal(MRI_Register_Call_Back_Function(drain_cache_records), MRI_OK);
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS;
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table only_a = {&a, 1};
    MRI_Region_Table in_main = {&trace_main, 1}, in_sweep = {&trace_sweep, 1};
    const MRI_Request_ID with_sub = MRI_Trace_Request(&reads, &in_main, NULL, &only_a);
    const MRI_Request_ID sweeps = MRI_Trace_Request(&reads, &in_sweep, NULL, &only_a);
    assert_true(with_sub > 0 && sweeps > 0);
    assert_int_equal(MRI_Set_Trace_Subregions(sweeps, 0), MRI_OK);
    run_to_end();
    assert_int_equal(trace_main_records, 1);
    assert_int_equal((long)trace_main_value, 3 * kLinesA); /* every miss of A is inside main */
    assert_int_equal(trace_sweep_records, 6);             /* 3 from each request */
    assert_int_equal((long)trace_sweep_sum, 6 * kLinesA);
    assert_int_equal(trace_fill_records, 1);
    assert_int_equal(trace_other_records, 0);
    MRI_Register_Call_Back_Function(NULL);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The tool ends the program inside a sweep (MRI_Application_Finish): the
 * instances then open, main and the sweep, get their value records at the
 * end, main's with A's misses up to then (every line of A missed in the
 * first sweep), and the sweeps' values add up to at most main's. Before,
 * neither open instance had a record. */
void test_trace_values_of_instances_open_at_the_end(void **state)
{
    (void)state;
    reset_trace_counts();
    load_app("1000000", "1");
    trace_sweep = region("sweep");
    trace_main = region("main");
    trace_fill = region("fill");
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS;
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table only_a = {&a, 1};
    MRI_Region_Table in_main = {&trace_main, 1};
    assert_true(MRI_Trace_Request(&reads, &in_main, NULL, &only_a) > 0);
    finish_inside_a_sweep();
    drain_cache_records();
    assert_int_equal(trace_main_records, 1);
    assert_true(trace_main_value >= kLinesA);
    assert_true(trace_sweep_records >= 1);
    assert_true(trace_sweep_sum <= trace_main_value);
    assert_int_equal(trace_other_records, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* A histogram over A: every 4 KiB bin holds 64 lines, each missing once per
 * sweep; and one over every data structure, of B's write misses. */
void test_histograms(void **state)
{
    (void)state;
    load_app("2", "2");
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Info ai, bi;
    assert_int_equal(MRI_Get_Data_Structure_Info(&a, &ai), MRI_OK);
    MRI_Data_Structure_Spec b = data("B");
    assert_int_equal(MRI_Get_Data_Structure_Info(&b, &bi), MRI_OK);

    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    MRI_Data_Structure_Table variables = {&a, 1};
    int bins = 16;
    MRI_Active_Object_Spec thread1 = {MRI_THREAD, 1};
    MRI_Active_Object_Table only1 = {&thread1, 1};
    const MRI_Request_ID over_a = MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins);
    if (over_a < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    const MRI_Request_ID over_a_t1 = MRI_Histogram_Request(&ri, &regions, &only1, &variables, &bins);
    assert_true(over_a_t1 > 0);
    /* Before the release: not applied, no bins yet. */
    assert_int_equal(hist_data(over_a)->active, 0);

    MRI_Runtime_Information_Spec wri = MRI_LC1_DATA_WRITE_MISS;
    MRI_Region_Spec fill = region("fill");
    MRI_Region_Table fill_regions = {&fill, 1};
    int all_bins = 12; /* A 64 KiB + B 32 KiB + C 64 bytes, packed: 8198-byte bins */
    const MRI_Request_ID over_all = MRI_Histogram_Request(&wri, &fill_regions, NULL, NULL, &all_bins);
    if (over_all < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    run_to_end();

    const MRI_Histogram_Request_Results *h = hist_data(over_a);
    assert_int_equal(h->active, 1);
    assert_int_equal(h->nr_Elements, 16);
    for (int i = 0; i < 16; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        assert_int_equal(bin->address_begin, ai.address + 4096ull * i);
        assert_int_equal(bin->address_end, ai.address + 4096ull * (i + 1));
        assert_int_equal(bin->value, 2 * 2 * 64); /* 2 threads x 2 sweeps x 64 lines */
        assert_int_equal(bin->data_structures.nr_Elements, 1);
        assert_string_equal(bin->data_structures.data_structure[0].name, "A");
    }
    h = hist_data(over_a_t1);
    for (int i = 0; i < 16; i++) assert_int_equal(h->element[i].value, 2 * 64);

    /* The whole registered space: a B line's write miss lands in the bin of
     * its first byte; A's and C's bins get none. Expected counts from B's
     * address and the bins' ranges. */
    h = hist_data(over_all);
    assert_int_equal(h->nr_Elements, 12);
    unsigned long long total = 0;
    int saw_shared_bin = 0;
    for (int i = 0; i < h->nr_Elements; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        unsigned long long expect = 0;
        for (unsigned long long line = bi.address; line < bi.address + bi.size_bytes; line += 64)
            if (line >= bin->address_begin && line < bin->address_end) expect += 2; /* 2 threads */
        /* A bin that spans from one data structure into the next covers
         * a gap; count B's lines only where the bin lists B. */
        int lists_b = 0;
        for (int k = 0; k < bin->data_structures.nr_Elements; k++)
            lists_b |= strcmp(bin->data_structures.data_structure[k].name, "B") == 0;
        if (!lists_b) expect = 0;
        saw_shared_bin |= bin->data_structures.nr_Elements > 1;
        assert_int_equal(bin->value, expect);
        total += bin->value;
    }
    assert_int_equal(total, 2 * kLinesB);
    assert_true(saw_shared_bin); /* 8198-byte bins straddle A|B or B|C */
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Data structures that overlap (A and A_tail, its second half), in a
 * histogram over all of them: they are packed one after the other, so a
 * bin holding A's end and A_tail's start covers both pieces' addresses
 * (its end was A_tail's piece's, below its beginning). */
void test_histogram_of_overlapping_data_structures(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"overlap", NULL};
    load_mode(argv);
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Info ai;
    assert_int_equal(MRI_Get_Data_Structure_Info(&a, &ai), MRI_OK);
    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    int bins = 5; /* 96 KiB packed: bin 3 holds A's last 5 KiB and A_tail's first 14 KiB */
    const MRI_Request_ID id = MRI_Histogram_Request(&ri, &regions, NULL, NULL, &bins);
    if (id < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    run_to_end();
    const MRI_Histogram_Request_Results *h = hist_data(id);
    assert_int_equal(h->nr_Elements, 5);
    double total = 0;
    int both = 0;
    for (int i = 0; i < h->nr_Elements; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        assert_true(bin->address_begin < bin->address_end);
        assert_true(bin->address_begin >= ai.address && bin->address_end <= ai.address + ai.size_bytes);
        total += bin->value;
        if (bin->data_structures.nr_Elements == 2) {
            ++both;
            assert_int_equal(bin->address_begin, ai.address + ai.size_bytes / 2); /* A_tail's first byte */
            assert_int_equal(bin->address_end, ai.address + ai.size_bytes);       /* A's last, plus one */
        }
    }
    assert_int_equal(both, 1);
    assert_true(total == kLinesA + kLinesA / 2);
}

/* A long run as an automatic analyser makes it: 600 stops at the end of
 * "sweep" (one pass over A each), and at every other stop one histogram
 * over A deleted and another made (1 to 8 in place, 16, 64 or 1024 bins,
 * so every histogram slot is reused many times), and an aggregate of A's
 * misses deleted and made anew. Every bin of every histogram holds the
 * lines it covers times the sweeps since it was applied, every aggregate
 * 1024 per sweep; the application's descriptors, threads and anonymous
 * memory do not grow from the 300th stop on. */
void test_histogram_churn_over_many_stops(void **state)
{
    (void)state;
    load_app("1000000000", "1");
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table variables = {&a, 1};
    MRI_Runtime_Information_Spec misses = MRI_LC1_DATA_READ_MISS;
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    struct { MRI_Request_ID id; int first, bins; } hist[8];
    int nhist = 0, made = 0, agg_first = 1;
    MRI_Request_ID agg = cache_aggregate(misses, "sweep", "A", MRI_SUM);
    const int bin_choices[] = {16, 64, 1024}, stops = 600;
    long anon = 0, threads = 0;
    for (int release = 1; release <= stops; ++release) {
        if (release % 2 == 0) {
            if (nhist == 8 || (nhist > 0 && release % 6 == 0)) {
                const int victim = (release / 2) % nhist;
                assert_int_equal(MRI_Request_Delete(hist[victim].id), MRI_OK);
                hist[victim] = hist[nhist - 1];
                --nhist;
            }
            int bins = bin_choices[made % 3];
            const MRI_Request_ID id = MRI_Histogram_Request(&misses, &regions, NULL, &variables, &bins);
            if (id < 0) fail_msg("stop %d: histogram request: %s", release, MRI_Get_Error_Message());
            hist[nhist].id = id;
            hist[nhist].first = release;
            hist[nhist++].bins = bins;
            ++made;
            assert_int_equal(MRI_Request_Delete(agg), MRI_OK);
            agg = cache_aggregate(misses, "sweep", "A", MRI_SUM);
            agg_first = release;
        }
        assert_int_equal(MRI_Start_Stop(&sweep), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        assert_int_equal(thread_value(agg, 0), kLinesA * (release - agg_first + 1));
        for (int h = 0; h < nhist; ++h) {
            const MRI_Histogram_Request_Results *r = hist_data(hist[h].id);
            const unsigned long long sweeps = (unsigned long long)(release - hist[h].first + 1);
            assert_int_equal(r->active, 1);
            assert_int_equal(r->nr_Elements, hist[h].bins);
            for (int b = 0; b < r->nr_Elements; ++b)
                if (r->element[b].value != sweeps * (kLinesA / hist[h].bins))
                    fail_msg("stop %d: histogram %d bin %d holds %llu, want %llu", release, hist[h].id, b,
                             r->element[b].value, sweeps * (kLinesA / hist[h].bins));
        }
        if (release == stops / 2) {
            anon = proc_status(info.pid, "RssAnon");
            threads = proc_status(info.pid, "Threads");
        }
    }
    /* Deleted histograms handed their slots on: the ones left are in place. */
    assert_true(made > 8);
    print_message("%d histograms made; the application: %ld -> %ld kB anonymous, %ld -> %ld threads\n", made, anon,
                  proc_status(info.pid, "RssAnon"), threads, proc_status(info.pid, "Threads"));
    assert_int_equal(proc_status(info.pid, "Threads"), threads);
    if (!MRI_TEST_SANITIZED) assert_true(proc_status(info.pid, "RssAnon") - anon <= 64);
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.bad_requests, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

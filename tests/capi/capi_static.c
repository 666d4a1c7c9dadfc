/*
 * test_capi, static information: the publication, the topology, regions,
 * names and the name pool, data structures, modules, the thread limit, the
 * monitor's messages, cache configuration files and the segment itself.
 */
#define _GNU_SOURCE
#include "capi_common.h" /* first: cmocka and the headers it needs before it */

#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "segment_peer.h"

/* The data structure table holds 1024: the 1025th registration, made
 * before the first region, fails and says why, as one made after it does
 * (before, it only returned -1). A registration at address NULL is
 * refused (mri_testapp many_data exits 5 otherwise). */
void test_data_structures_beyond_the_table(void **state)
{
    (void)state;
    load("many_data", "1025", NULL);
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 1024);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(st.monitor_message, "data structure \"d1024\" not published: more than 1024 data structures");
    MRI_Finalize();
    load("many_data", "1024", NULL);
    run_to_end();
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(st.monitor_message, "");
}

/* A size no address space holds (a negative size cast to unsigned, whose
 * range ends at the last byte and so does not wrap) is refused at the
 * registration with the reason; before, it was published and its histogram
 * layout wrapped (0 bins). */
void test_data_structure_of_a_negative_size(void **state)
{
    (void)state;
    load("huge_data", NULL);
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 1);
    assert_string_equal(t.data_structure[0].name, "fine");
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    if (!strstr(st.monitor_message, "data structure \"negative\" not registered: its size of ") ||
        !strstr(st.monitor_message, " bytes is above 2^56, the largest address space"))
        fail_msg("monitor_message: %s", st.monitor_message);
}

/* Writes `text` to `path`; fails the test when it cannot. */
static void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) fail_msg("cannot write %s", path);
}

/* A cache configuration named "@FILE" is read by the tool, bounded: a
 * regular file of at most 64 KiB. Anything else fails at once with one line
 * that names the file and why (before, /dev/zero was read until the
 * allocation failed and the tool aborted, and a FIFO blocked it for ever in
 * open()). MRI_CACHESIM_CONFIG alike, at the load. These need no cache
 * simulator in the program: they are the tool's checks. */
void test_cache_configuration_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/mri_cache_config_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64], big[64], nested[64], good[64], arg[80], want[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    snprintf(nested, sizeof nested, "%s/nested", dir);
    snprintf(good, sizeof good, "%s/good", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *text = malloc(70000);
    assert_non_null(text);
    memset(text, '#', 69999);
    text[69999] = '\0';
    write_text_file(big, text);
    free(text);
    write_text_file(nested, "@/dev/zero\n");
    write_text_file(good, "# two levels\nL1:32K,8,64\nL2:1M,16,64  # private\n");
    assert_int_equal(MRI_Init(), MRI_OK);
    alarm(60); /* a FIFO that blocks ends the test here rather than hanging it */
    snprintf(arg, sizeof arg, "@%s", fifo);
    snprintf(want, sizeof want, "cache configuration \"%s\": config file '%s': not a regular file (a FIFO)", arg, fifo);
    expect_error(MRI_Set_Cache_Configuration(arg), want);
    expect_error(MRI_Set_Cache_Configuration("@/dev/zero"),
                 "cache configuration \"@/dev/zero\": config file '/dev/zero': not a regular file (a character device)");
    snprintf(arg, sizeof arg, "@%s", dir);
    expect_error(MRI_Set_Cache_Configuration(arg), "': not a regular file (a directory)");
    snprintf(arg, sizeof arg, "@%s", big);
    expect_error(MRI_Set_Cache_Configuration(arg), "': 69999 bytes, more than the 65536 a configuration file may have");
    snprintf(arg, sizeof arg, "@%s", nested);
    expect_error(MRI_Set_Cache_Configuration(arg), "': a config file cannot name another");
    expect_error(MRI_Set_Cache_Configuration("@/nonexistent/caches"),
                 "config file '/nonexistent/caches': cannot open: No such file or directory");
    assert_null(strchr(MRI_Get_Error_Message(), '\n'));
    /* The environment, at the load: the program is not started. */
    setenv("MRI_CACHESIM_CONFIG", "@/dev/zero", 1);
    char *argv[] = {MRI_TESTAPP, "steps", "1", "0", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, argv),
                 "MRI_CACHESIM_CONFIG \"@/dev/zero\": config file '/dev/zero': not a regular file (a character device)");
    snprintf(arg, sizeof arg, "@%s", fifo);
    setenv("MRI_CACHESIM_CONFIG", arg, 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, argv), "': not a regular file (a FIFO)");
    unsetenv("MRI_CACHESIM_CONFIG");
    alarm(0);
    snprintf(arg, sizeof arg, "@%s", good);
    assert_int_equal(MRI_Set_Cache_Configuration(arg), MRI_OK);
    unlink(fifo);
    unlink(big);
    unlink(nested);
    unlink(good);
    rmdir(dir);
}

/* Text from the segment reaches the tool's user escaped, as the region
 * tables show names: the monitor's message with a terminal escape, a bell
 * and a newline in it (written here as a faulty or hostile program would)
 * comes out as \x1b, \x07 and \n; so does every error message (before,
 * the raw bytes went to the terminal). */
void test_messages_are_printable(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    char *message = mri_test_last_error();
    assert_non_null(message);
    snprintf(message, mri_test_message_bytes(), "bad\x1b]0;title\x07\nline two\x7f\xc2\x9b" "2J \xc3\xa9t\xc3\xa9");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_string_equal(st.monitor_message, "bad\\x1b]0;title\\x07\\nline two\\x7f\\xc2\\x9b2J \xc3\xa9t\xc3\xa9");
    /* Longer once escaped than the field: cut before an escape that does
     * not fit whole (127 of the 255 "\n" take 254 of its 255 bytes). */
    memset(message, '\n', mri_test_message_bytes() - 1);
    message[mri_test_message_bytes() - 1] = '\0';
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(strlen(st.monitor_message), 254);
    for (size_t i = 0; i < 254; i += 2) assert_memory_equal(st.monitor_message + i, "\\n", 2);
    expect_error(MRI_Set_Cache_Configuration("L1:\x1b[2J"), "cache configuration \"L1:\\x1b[2J\": ");
    MRI_Application_Finish();
}

/* Names that do not fit in the name pool are published empty, and the
 * monitor says how many; a larger MRI_MAX_REGIONS brings a larger pool
 * (256 bytes a region, from 1 MiB up to 16 MiB). Before, the names were
 * emptied without a word. */
static int count_long_names(int *empty)
{
    MRI_Region_Table t;
    assert_int_equal(MRI_Get_Regions(&t), MRI_OK);
    int named = 0;
    *empty = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        MRI_Region_Info info;
        assert_int_equal(MRI_Get_Region_Info(&t.region[i], &info), MRI_OK);
        if (t.region[i].id.line_NR < 1000) continue;
        if (strlen(info.name) == 30000) ++named;
        else if (info.name[0] == '\0') ++*empty;
        else fail_msg("region at line %d named \"%.20s...\"", t.region[i].id.line_NR, info.name);
    }
    return named;
}

void test_names_beyond_the_name_pool(void **state)
{
    (void)state;
    load("long_names", "40", "30000", NULL);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    int empty;
    const int named = count_long_names(&empty);
    assert_int_equal(named + empty, 40);
    assert_in_range(named, 30, 34); /* 1 MiB holds 34 of 30001 bytes, less the other names */
    char expected[256];
    snprintf(expected, sizeof expected,
             "%d region or file name(s) published empty: the name pool (1048576 bytes) is full; "
             "those regions are still measured, known by their file and line", empty);
    assert_string_equal(st.monitor_message, expected);
    MRI_Finalize();
    setenv("MRI_MAX_REGIONS", "8192", 1);
    load("long_names", "40", "30000", NULL);
    unsetenv("MRI_MAX_REGIONS");
    run_to_end();
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(count_long_names(&empty), 40);
    assert_int_equal(empty, 0);
    assert_string_equal(st.monitor_message, "");
}

void test_publication(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    MRI_HW_Info hw;
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    assert_true(hw.nr_CPUs >= 1);
    assert_int_equal(hw.time_entity, MRI_NANOSECONDS);
    MRI_Runtime_Information_Table t;
    assert_int_equal(Get_Available_Runtime_Information(&t), MRI_OK);
    int seen_time = 0, seen_l1 = 0, seen_event = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        if (t.info[i].ri == MRI_REGION_EVENT) {
            seen_event = 1;
            assert_true(t.info[i].available);
            assert_int_equal(t.info[i].request_kinds, 1 << MRI_TRACE_REQUEST); /* traces only */
        }
        if (t.info[i].ri == MRI_EXECUTION_TIME) {
            seen_time = 1;
            assert_true(t.info[i].available);
            assert_false(t.info[i].needs_counter);
        }
        if (t.info[i].ri == MRI_LC1_DATA_READ_MISS) {
            seen_l1 = 1;
            assert_false(t.info[i].available);
            assert_true(strlen(t.info[i].reason) > 10);
        }
    }
    assert_true(seen_time && seen_l1 && seen_event);
    MRI_Aggregation_Table a;
    assert_int_equal(Get_Available_Aggregations(MRI_REGION_EVENT, &a), MRI_OK);
    assert_int_equal(a.nr_Elements, 0);
    assert_int_equal(Get_Available_Aggregations(MRI_EXECUTION_TIME, &a), MRI_OK);
    assert_int_equal(a.nr_Elements, 10);
    expect_error(Get_Available_Active_Objects(&(MRI_Active_Object_Table){0}), "no application");
    MRI_Runtime_Information_Spec ri;
    assert_int_equal(MRI_Runtime_Information_By_Name("MRI_EXECUTION_TIME", &ri), MRI_OK);
    assert_int_equal(ri, MRI_EXECUTION_TIME);
    expect_error(MRI_Runtime_Information_By_Name("NO_SUCH_EVENT", &ri), "unknown");
    assert_string_equal(MRI_Region_Type_Name(MRI_REGION_PARALLEL), "PARALLEL");
}

/* The process is named after its program, also once it has ended (its
 * /proc entry is gone then, and the name was ""). */
void test_process_keeps_its_name(void **state)
{
    (void)state;
    load("steps", "2", "0", NULL);
    const char *program = strrchr(MRI_TESTAPP, '/') ? strrchr(MRI_TESTAPP, '/') + 1 : MRI_TESTAPP;
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    MRI_Active_Object_Spec proc = {MRI_PROCESS, st.pid};
    MRI_Active_Object_Info info;
    assert_int_equal(MRI_Get_Active_Object_Info(&proc, &info), MRI_OK);
    assert_true(info.alive);
    assert_string_equal(info.name, program);
    /* A node is refused for what it is, as requests refuse it. */
    MRI_Active_Object_Spec node = {MRI_NODE, 0};
    expect_error(MRI_Get_Active_Object_Info(&node, &info), "node-level monitoring is not available");
    run_to_end();
    assert_int_equal(MRI_Get_Active_Object_Info(&proc, &info), MRI_OK);
    assert_false(info.alive);
    assert_int_equal(info.os_id, st.pid);
    assert_string_equal(info.name, program);
}

/* At the load stop the program is parked at its first monitored event:
 * its thread is an active object already, every time (its row used to be
 * published after the stop, so a tool that asked at once sometimes found
 * no thread). */
void test_loaded_thread_is_known_at_once(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {MRI_TESTAPP, "steps", "1", "0", NULL};
    for (int i = 0; i < 30; ++i) {
        if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
        MRI_Active_Object_Table table;
        assert_int_equal(Get_Available_Active_Objects(&table), MRI_OK);
        assert_int_equal(table.nr_Elements, 2); /* the process and thread 0 */
        MRI_Active_Object_Spec thread0 = {MRI_THREAD, 0};
        MRI_Active_Object_Info info;
        if (MRI_Get_Active_Object_Info(&thread0, &info) != MRI_OK) fail_msg("load %d: %s", i, MRI_Get_Error_Message());
        assert_true(info.alive);
        assert_int_equal(info.os_id, table.active_object[0].id); /* the main thread */
        assert_int_equal(MRI_Application_Finish(), MRI_OK);
    }
}

/* One attribute of cpu0's cache indexN as Linux reports it; 0 when absent. */
static int sysfs_cache_attr(int index, const char *name, char *buf, int size)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const int ok = fgets(buf, size, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* "48K", "2048K", "480M" in bytes. */
static unsigned long long sysfs_size(const char *text)
{
    char *end;
    const unsigned long long v = strtoull(text, &end, 10);
    switch (*end) {
        case 'K': return v << 10;
        case 'M': return v << 20;
        case 'G': return v << 30;
        default: return v;
    }
}

/* The machine's topology against what the kernel reports. */
void test_system_topology(void **state)
{
    (void)state;
    MRI_HW_Info hw;
    expect_error(MRI_Get_System_Information(&hw), "MRI_Init");
    assert_int_equal(MRI_Init(), MRI_OK);
    expect_error(MRI_Get_System_Information(NULL), "NULL");
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    assert_int_equal(hw.nr_CPUs, (int)sysconf(_SC_NPROCESSORS_ONLN));
    assert_in_range(hw.nr_Cores, 1, hw.nr_CPUs);
    assert_true(hw.nr_Sockets >= 1);
    assert_true(hw.nr_NUMA_Nodes >= 1);
#ifdef MRI_HAVE_HWLOC
    if (strncmp(hw.topology_source, "hwloc ", 6) != 0) fail_msg("topology from \"%s\", not hwloc", hw.topology_source);
#else
    assert_string_equal(hw.topology_source, "sysconf");
#endif
    assert_in_range(hw.nr_Cache_Levels, 1, MRI_MAX_CACHE_LEVELS * 2);
    for (int i = 0; i < hw.nr_Cache_Levels; ++i) {
        const MRI_Cache_Info *c = &hw.cache[i];
        assert_in_range(c->level, 1, MRI_MAX_CACHE_LEVELS);
        assert_true(c->is_data || c->is_instruction);
        assert_true(c->associativity >= -1);
        assert_in_range(c->shared_by_cpus, 0, hw.nr_CPUs);
#ifdef MRI_HAVE_HWLOC
        assert_true(c->shared_by_cpus >= 1);
#endif
        if (i > 0) { /* by level; data and unified before instruction */
            const MRI_Cache_Info *p = &hw.cache[i - 1];
            assert_true(p->level <= c->level);
            if (p->level == c->level) assert_true(p->is_data || !c->is_data);
        }
    }

    /* cpu0's level 1 data cache in sysfs. */
    char level[16], type[32], size[32], line[16], ways[16];
    unsigned long long l1d_size = 0;
    int l1d_line = 0, l1d_ways = 0;
    for (int i = 0; sysfs_cache_attr(i, "level", level, sizeof level); ++i) {
        if (strcmp(level, "1") != 0 || !sysfs_cache_attr(i, "type", type, sizeof type) || strcmp(type, "Data") != 0)
            continue;
        assert_true(sysfs_cache_attr(i, "size", size, sizeof size));
        assert_true(sysfs_cache_attr(i, "coherency_line_size", line, sizeof line));
        assert_true(sysfs_cache_attr(i, "ways_of_associativity", ways, sizeof ways));
        l1d_size = sysfs_size(size);
        l1d_line = atoi(line);
        l1d_ways = atoi(ways);
        break;
    }
    if (l1d_size == 0) {
        print_message("no level 1 data cache in /sys/devices/system/cpu/cpu0/cache: not compared\n");
        return;
    }
    int found = 0;
    for (int i = 0; i < hw.nr_Cache_Levels && !found; ++i) {
        const MRI_Cache_Info *c = &hw.cache[i];
        if (c->level != 1 || !c->is_data || c->is_instruction || c->size_bytes != l1d_size) continue;
        found = 1;
        assert_int_equal(c->line_size_bytes, l1d_line);
        if (l1d_ways > 0)
            assert_int_equal(c->associativity, l1d_ways);
        else /* the kernel's 0: fully associative or unknown */
            assert_true(c->associativity <= 0);
    }
    if (!found) fail_msg("no level 1 data cache of %llu bytes (cpu0's in sysfs)", l1d_size);
}

void test_static_information(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    MRI_Region_Table t;
    assert_int_equal(MRI_Get_Regions(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 11); /* every region of mri_testapp, known before any ran */
    int found = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        MRI_Region_Info info;
        assert_int_equal(MRI_Get_Region_Info(&t.region[i], &info), MRI_OK);
        assert_non_null(strstr(info.file, "mri_testapp.c"));
        if (strcmp(info.name, "team") == 0) {
            found = 1;
            assert_int_equal(t.region[i].type, MRI_REGION_PARALLEL);
        }
        assert_true(t.region[i].id.line_NR > 0);
    }
    assert_true(found);
    MRI_Region_Spec r;
    expect_error(MRI_Find_Region("nope", &r), "no region named");
    run_to_end();
}

void test_thread_limit_is_reported(void **state)
{
    (void)state;
    setenv("MRI_MAX_THREADS", "2", 1);
    load("imbalance", "3", "2", NULL);
    unsetenv("MRI_MAX_THREADS");
    MRI_Request_ID per_thread = aggregate(MRI_NUMBER_OF_INSTANCES, "work", MRI_SUM, MRI_PER_THREAD);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.threads_dropped, 2); /* main + 3 workers, room for 2 */
    /* Said in words too: the count alone went unnoticed. */
    if (!strstr(st.monitor_message, "more than 2 threads (MRI_MAX_THREADS)"))
        fail_msg("monitor_message \"%s\" does not name the thread limit", st.monitor_message);
    MRI_Aggregate_Request_Results *r = agg_data(per_thread);
    assert_int_equal(r->nr_Elements, 2);
    assert_int_equal((long)agg_total(per_thread), 2); /* the one monitored worker's 2 instances */
}

/* A module unloaded with dlclose() and loaded again, between breakpoints:
 * the monitor no longer touches the unloaded descriptors (it crashed at
 * the next release), and the module's region, loaded again, is measured
 * again under its id. */
void test_module_unloaded_and_loaded_again(void **state)
{
    (void)state;
    load("dlclose", MRI_PLUGIN, "4", NULL);
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID prof = MRI_Profile_Request(&ri, NULL, NULL, NULL);
    assert_true(prof > 0);
    MRI_Region_Spec step = region("step");
    int stops = 0;
    while (MRI_Start_Stop(&step) == MRI_OK && MRI_Wait() == MRI_APPLICATION_STOPPED) ++stops;
    assert_int_equal(stops, 4);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    assert_int_equal(profile_of(p, "plugin_work")->instances, 8);
}

/* A module loaded and unloaded before the first region, while its regions
 * wait to be published with the rest: they are published from copies that
 * outlive the module (its name and file read back), and the program runs
 * on. (They were published at the unload before, which, coming from a
 * program's exit, let the tool release it with its requests in place.) */
void test_module_unloaded_before_publication(void **state)
{
    (void)state;
    load("early_dlclose", MRI_PLUGIN, "3", NULL);
    MRI_Region_Spec plugin = region("plugin_work");
    MRI_Region_Info info;
    assert_int_equal(MRI_Get_Region_Info(&plugin, &info), MRI_OK);
    assert_string_equal(info.name, "plugin_work");
    assert_non_null(strstr(info.file, "mri_plugin.c"));
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    assert_int_equal((long)agg_total(steps), 3);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.regions_dropped, 0);
}

void test_module_loaded_later_is_published(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "dlopen", MRI_PLUGIN, "6", NULL};
    MRI_Histogram_Profile_Results *res = profile_run(argv);
    /* Unknown at start-up, published when the module arrived, and included
     * in the profile over every region. */
    const MRI_Profile_Element *plugin = profile_of(res, "plugin_work");
    assert_int_equal(plugin->instances, 6);
    MRI_Region_Info info;
    assert_int_equal(MRI_Get_Region_Info(&plugin->region, &info), MRI_OK);
    assert_non_null(strstr(info.file, "mri_plugin.c"));
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.regions_dropped, 0);
}

void test_segment_is_private_and_marked_for_removal(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
    int mine = 0;
    for (int i = 0; i <= max; ++i) {
        struct shmid_ds ds;
        if (shmctl(i, SHM_STAT, &ds) < 0) continue;
        if (ds.shm_cpid != getpid()) continue;
        ++mine;
        assert_int_equal(ds.shm_perm.mode & 0777, 0600);
        assert_true(ds.shm_perm.mode & SHM_DEST); /* gone as soon as both sides detach */
        assert_int_equal(ds.shm_nattch, 2);
    }
    assert_int_equal(mine, 1);
    run_to_end();
}

/*
 * crew.h - the threads of a workload, kept for all its rounds.
 *
 * A workload with THREADS threads does its work ROUNDS times, each a region
 * "round" of the main thread (compensation_eval PAIRED). The other threads
 * are started once, before the first round, and each round releases them
 * through a barrier and waits for them through a second one; they end after
 * the last. A thread that starts anew in every round would take a new row
 * of the monitor in every measured round (rows are never reused), and a run
 * of many rounds would run out of them.
 *
 *   struct crew c;
 *   crew_start(&c, threads, rounds, work, parts, sizeof parts[0]);
 *   crew_times_to(&c, path);   (-T FILE; optional)
 *   for each round: set the parts; crew_round(&c); read the parts;
 *                   crew_write_times(&c, round) outside the round region;
 *   crew_finish(&c);
 *
 * crew_round() runs work(part 0) on the calling thread and work(part t) on
 * thread t, and returns when every thread is done; the parts may be set
 * before it and read after it (the barriers order them). It also times
 * each thread's part (CLOCK_MONOTONIC, part_ns[t]); with a file given to
 * crew_times_to(), crew_write_times() adds a line "ROUND NS0 NS1 ..." to
 * it (ROUND from 1, as compensation_eval PAIRED counts them): a
 * workload's -T FILE, read by bench/compensation/thread_costs.py. Header
 * only, for C and C++.
 */
#ifndef MRI_BENCH_CREW_H
#define MRI_BENCH_CREW_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { crew_max_threads = 64 };

struct crew;

/* What thread `index` needs: its crew, and which part is its own. */
struct crew_member {
    struct crew *crew;
    int index;
};

struct crew {
    pthread_barrier_t start, done;
    void *(*work)(void *);
    char *parts;
    size_t part_size;
    int threads, rounds;
    pthread_t tid[crew_max_threads];
    struct crew_member member[crew_max_threads];
    long long part_ns[crew_max_threads]; /* how long each thread's part of the last round took */
    FILE *times;                         /* crew_times_to(), or NULL */
};

static inline void *crew_part(struct crew *c, int t) { return c->parts + (size_t)t * c->part_size; }

static inline void crew_die(const char *what, int err)
{
    fprintf(stderr, "crew: %s failed (error %d)\n", what, err);
    exit(1);
}

/* work(part t), timed into part_ns[t]. */
static inline void crew_work(struct crew *c, int t)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    c->work(crew_part(c, t));
    clock_gettime(CLOCK_MONOTONIC, &b);
    c->part_ns[t] = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}

static inline void *crew_member_main(void *p)
{
    const struct crew_member *m = (const struct crew_member *)p;
    struct crew *c = m->crew;
    const int t = m->index;
    for (int r = 0; r < c->rounds; ++r) {
        pthread_barrier_wait(&c->start);
        crew_work(c, t);
        pthread_barrier_wait(&c->done);
    }
    return NULL;
}

/* Starts threads - 1 threads (1 to crew_max_threads in all) for rounds
 * rounds of work over parts, each part_size bytes. Ends the process with a
 * message if a thread cannot be started. */
static inline void crew_start(struct crew *c, int threads, int rounds, void *(*work)(void *), void *parts, size_t part_size)
{
    c->work = work;
    c->parts = (char *)parts;
    c->part_size = part_size;
    c->threads = threads;
    c->rounds = rounds;
    c->times = NULL;
    if (threads == 1) return;
    int err = pthread_barrier_init(&c->start, NULL, (unsigned)threads);
    if (!err) err = pthread_barrier_init(&c->done, NULL, (unsigned)threads);
    if (err) crew_die("pthread_barrier_init", err);
    for (int t = 1; t < threads; ++t) {
        c->member[t].crew = c;
        c->member[t].index = t;
        if ((err = pthread_create(&c->tid[t], NULL, crew_member_main, &c->member[t]))) crew_die("pthread_create", err);
    }
}

/* One round: every thread does its part; returns when all are done. */
static inline void crew_round(struct crew *c)
{
    if (c->threads > 1) pthread_barrier_wait(&c->start);
    crew_work(c, 0);
    if (c->threads > 1) pthread_barrier_wait(&c->done);
}

/* Part times to `path` (NULL: none), one line a round; ends the process
 * with a message if it cannot be written. */
static inline void crew_times_to(struct crew *c, const char *path)
{
    if (path && !(c->times = fopen(path, "w"))) {
        perror(path);
        exit(1);
    }
}

/* The line of round `round` (from 0) in the times file, if there is one. */
static inline void crew_write_times(struct crew *c, int round)
{
    if (!c->times) return;
    fprintf(c->times, "%d", round + 1);
    for (int t = 0; t < c->threads; ++t) fprintf(c->times, " %lld", c->part_ns[t]);
    fputc('\n', c->times);
}

/* After the last round: closes the times file, joins the threads. */
static inline void crew_finish(struct crew *c)
{
    if (c->times && fclose(c->times)) {
        perror("crew: part times");
        exit(1);
    }
    c->times = NULL;
    if (c->threads == 1) return;
    for (int t = 1; t < c->threads; ++t) pthread_join(c->tid[t], NULL);
    pthread_barrier_destroy(&c->start);
    pthread_barrier_destroy(&c->done);
}

#endif

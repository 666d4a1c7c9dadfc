/*
 * cg_probe.c - a small deterministic program whose address stream is fed
 * to both Valgrind cachegrind and mri-cachesim (cachegrind_check.sh).
 *
 * Everything it touches is a static array or the stack, it calls nothing
 * from libc after startup, and it is linked statically: the dynamic loader
 * reads the LD_PRELOAD string that Valgrind puts at the top of the stack a
 * word at a time, past its end, into the random AT_RANDOM bytes, and looks
 * those bytes up in a table, so a dynamically linked program's address
 * stream differs between runs in two loads (docs/ACCURACY.md).
 *
 * What it does, sized for the small caches of the test (D1 4-8 KiB, LL
 * 64-128 KiB): sweeps with strides 8, 64 and 4160 bytes over 192 KiB (more
 * than LL), reads of a 12 KiB block that fits LL but not D1 (LRU capacity
 * misses), read-modify-write passes, stores alone, and 8-byte loads and
 * stores that straddle two cache lines.
 */
#include <stdint.h>

#define BIG_DOUBLES (192 * 1024 / 8)
#define MID_INTS (12 * 1024 / 4)

static double big[BIG_DOUBLES] __attribute__((aligned(64)));
static int mid[MID_INTS] __attribute__((aligned(64)));
static unsigned char raw[4096] __attribute__((aligned(64)));

/* 8-byte fields that start 4 bytes before a 64-byte (and 32-byte) boundary. */
struct __attribute__((packed)) straddling {
    unsigned char pad[60];
    uint64_t value;
};

/* volatile sink: keeps the loads without letting the compiler drop them */
static volatile double sink_d;
static volatile uint64_t sink_u;

__attribute__((noinline)) static void fill(void)
{
    for (int i = 0; i < BIG_DOUBLES; i++) big[i] = (double)i;       /* stores, stride 8 */
    for (int i = 0; i < MID_INTS; i++) mid[i] = i;
}

__attribute__((noinline)) static double strided_sum(int stride_doubles)
{
    double s = 0.0;
    for (int i = 0; i < BIG_DOUBLES; i += stride_doubles) s += big[i];
    return s;
}

__attribute__((noinline)) static void modify(volatile int *p, int n, int step)
{
    for (int i = 0; i < n; i += step) p[i] += 3;                     /* read + write */
}

__attribute__((noinline)) static uint64_t straddle(void)
{
    uint64_t s = 0;
    for (int k = 0; k < 4096 / 64 - 1; k++) {
        struct straddling *p = (struct straddling *)(raw + 64 * k);
        p->value = (uint64_t)k * 0x0101010101010101ull;              /* straddling store */
        s += p->value;                                               /* straddling load */
    }
    return s;
}

int main(void)
{
    fill();
    double total = 0.0;
    total += strided_sum(1);
    total += strided_sum(8);
    total += strided_sum(520);            /* 4160-byte stride: conflicts in the sets */
    for (int pass = 0; pass < 3; pass++) {
        int s = 0;
        for (int i = 0; i < MID_INTS; i += 16) s += mid[i];
        total += s;
    }
    modify(mid, MID_INTS, 1);
    modify(mid, MID_INTS, 16);
    sink_u = straddle();
    sink_d = total;
    return 0;
}

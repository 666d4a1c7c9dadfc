/*
 * cg_matmul.c - C = A B for N x N doubles, in the textbook i-j-k order (B
 * walked down its columns), for the larger comparisons with cachegrind in
 * docs/ACCURACY.md. Deterministic, static arrays, linked statically like
 * cg_probe.c (which says why).
 *
 * Usage: cg_matmul [N]   N in 2..512, default 160. Exit status 0 when
 * C[N-1][N-1] has the value the formula gives, 1 otherwise.
 */
#include <stdlib.h>

#define MAX_N 512

static double A[MAX_N * MAX_N], B[MAX_N * MAX_N], C[MAX_N * MAX_N];

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 160;
    if (n < 2 || n > MAX_N)
        return 2;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[i * n + j] = (double)(i + j);
            B[i * n + j] = (double)(i - j);
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    /* sum over k of (n-1+k)(k-(n-1)) = sum k^2 - (n-1)^2 n */
    double want = 0.0;
    for (int k = 0; k < n; k++)
        want += (double)k * k;
    want -= (double)(n - 1) * (n - 1) * n;
    return C[(n - 1) * n + (n - 1)] == want ? 0 : 1;
}

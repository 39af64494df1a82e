/* STREAM-style reference loop (after John McCalpin's STREAM benchmark, https://www.cs.virginia.edu/stream/).
 *
 * Four kernels over double arrays of n elements, parallelised with OpenMP:
 *   copy  c = a          counted bytes 2 n sizeof(double)
 *   scale b = s c        2 n sizeof(double)
 *   add   c = a + b      3 n sizeof(double)
 *   triad a = b + s c    3 n sizeof(double)
 * Each kernel runs `ntimes` times; the first run is discarded and the best (shortest) time is kept,
 * as STREAM does. Write-allocate traffic is not counted, as in STREAM.
 * Output: one JSON object with bytes/s per kernel.  Build: gcc -O3 -march=native -fopenmp stream.c -o stream
 * Usage: ./stream [n] [ntimes]
 */
#include <float.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double best_of(double best, double t, int k) { return (k > 0 && t < best) ? t : best; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : (1L << 24);
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 1 || ntimes < 2) {
        fprintf(stderr, "usage: %s [n >= 1] [ntimes >= 2]\n", argv[0]);
        return 2;
    }
    double *a, *b, *c;
    if (posix_memalign((void **)&a, 64, n * sizeof(double)) || posix_memalign((void **)&b, 64, n * sizeof(double)) ||
        posix_memalign((void **)&c, 64, n * sizeof(double))) {
        fprintf(stderr, "out of memory for 3 x %ld doubles\n", n);
        return 1;
    }
#pragma omp parallel for
    for (long j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }

    const double s = 3.0;
    double best[4] = {DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX};
    for (int k = 0; k < ntimes; k++) {
        double t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) c[j] = a[j];
        best[0] = best_of(best[0], omp_get_wtime() - t, k);

        t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) b[j] = s * c[j];
        best[1] = best_of(best[1], omp_get_wtime() - t, k);

        t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) c[j] = a[j] + b[j];
        best[2] = best_of(best[2], omp_get_wtime() - t, k);

        t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) a[j] = b[j] + s * c[j];
        best[3] = best_of(best[3], omp_get_wtime() - t, k);
    }
    double check = 0.0; /* keeps the results live and lets the caller see the loops ran */
    for (long j = 0; j < n; j += 4096) check += a[j] + b[j] + c[j];
    const double word = sizeof(double);
    printf("{\"n\": %ld, \"ntimes\": %d, \"threads\": %d, \"copy\": %.6e, \"scale\": %.6e, \"add\": %.6e, "
           "\"triad\": %.6e, \"checksum\": %.17g}\n",
           n, ntimes, omp_get_max_threads(), 2 * word * n / best[0], 2 * word * n / best[1],
           3 * word * n / best[2], 3 * word * n / best[3], check);
    free(a); free(b); free(c);
    return 0;
}

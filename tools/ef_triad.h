/* ef_triad.h -- the STREAM triad a = b + s c with OpenMP, shared by ef_stream and
 * ef_bench_step (header-only; the bandwidth the momentum step is measured against). */
#ifndef EF_TRIAD_H
#define EF_TRIAD_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "edgeflow/ef_util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Best triad bandwidth in GB/s (1e9 bytes, STREAM's count of 3 x 8 bytes per element, no
 * write-allocate traffic) over `repeats` passes on arrays of n doubles initialised in
 * parallel (first touch, static schedule like the solver's loops).  Returns -1 when the
 * arrays cannot be allocated. */
static inline double ef_triad_bandwidth(int64_t n, int repeats, double *best_seconds) {
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
  if (!a || !b || !c) {
    free(a);
    free(b);
    free(c);
    return -1.0;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0 + (double)(i & 7);
    c[i] = 2.0;
  }
  const double s = 3.0;
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = ef_wtime();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = ef_wtime() - t0;
    if (t < best) best = t;
  }
  /* Keep the result observable so the loop is not removed. */
  volatile double sink = a[n / 2];
  (void)sink;
  free(a);
  free(b);
  free(c);
  if (best_seconds) *best_seconds = best;
  return 24.0 * (double)n / best * 1e-9;
}

#endif

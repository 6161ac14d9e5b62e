/* host_vector.h -- the vector kernels of the host Krylov methods: OpenMP loops whose
 * reductions are summed in fixed blocks of rows (ef_omp.h), so every result is bitwise the
 * same for any thread count. */
#ifndef EF_HOST_VECTOR_H
#define EF_HOST_VECTOR_H

#include <stdint.h>
#include <stdlib.h>

#include "ef_omp.h"
#include "host_cg.h"

/* Block partials of one reduction: n rows in blocks of ef_reduction_block_rows(n). */
typedef struct {
  int64_t n, block, n_blocks;
  double *part;
} ef_host_reduction;

static inline int ef_host_reduction_init(ef_host_reduction *r, int64_t n) {
  r->n = n;
  r->block = ef_reduction_block_rows(n);
  r->n_blocks = (n + r->block - 1) / r->block;
  r->part = malloc((size_t)(r->n_blocks > 0 ? r->n_blocks : 1) * sizeof *r->part);
  return r->part != NULL;
}

static inline void ef_host_reduction_free(ef_host_reduction *r) {
  free(r->part);
  r->part = NULL;
}

/* x . y */
static inline double ef_host_dot(ef_host_reduction *r, const double *x, const double *y) {
  const int64_t n = r->n, B = r->block, nb = r->n_blocks;
  double *part = r->part;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t i1 = (b + 1) * B < n ? (b + 1) * B : n;
    double s = 0.0;
    for (int64_t i = b * B; i < i1; ++i) s += x[i] * y[i];
    part[b] = s;
  }
  double s = 0.0;
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* sum_i x_i */
static inline double ef_host_sum(ef_host_reduction *r, const double *x) {
  const int64_t n = r->n, B = r->block, nb = r->n_blocks;
  double *part = r->part;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t i1 = (b + 1) * B < n ? (b + 1) * B : n;
    double s = 0.0;
    for (int64_t i = b * B; i < i1; ++i) s += x[i];
    part[b] = s;
  }
  double s = 0.0;
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* x -= mean(x): the projection onto 1-perp for matrices with the constant null space. */
static inline void ef_host_remove_mean(ef_host_reduction *r, double *x) {
  const double mean = ef_host_sum(r, x) / (double)r->n;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < r->n; ++i) x[i] -= mean;
}

#endif

/* test_petsc_common.h -- helpers of the PETSc tests: checks that print where they
 * failed, and a scaled, randomly weighted grid Laplacian as a pressure-like system. */
#ifndef EF_TEST_PETSC_COMMON_H
#define EF_TEST_PETSC_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "host_cg.h"

#include "ef_test.h"

/* A CSR owning its arrays, with the views an ef_csr needs. */
typedef struct {
  int64_t n, nnz;
  int64_t *rp;
  int32_t *rp32, *col;
  int64_t *diag;
  double *val;
  uint8_t *fixed;
  int null_space;
} tp_matrix;

static inline void tp_matrix_free(tp_matrix *m) {
  free(m->rp);
  free(m->rp32);
  free(m->col);
  free(m->diag);
  free(m->val);
  free(m->fixed);
  memset(m, 0, sizeof *m);
}

static inline ef_csr tp_view(const tp_matrix *m) {
  ef_csr A = {m->n, m->nnz, m->rp, m->rp32, m->col, m->val, m->diag, m->null_space};
  return A;
}

/* 5-point graph Laplacian of an nx x ny grid, edge weights in [0.5, 1.5], then S L S with
 * row scales in [0.3, 3] (so Jacobi scaling matters, as in the pressure matrix).  With
 * fix_left, the nodes of the x = 0 column become identity rows with their columns
 * eliminated (symmetric: SPD).  Without, the matrix must keep the constant null space
 * (S L S has S^-1 1 instead), so the scales are 1 then. */
static inline int tp_laplacian(int nx, int ny, int fix_left, uint64_t seed, tp_matrix *m) {
  const int64_t n = (int64_t)nx * ny;
  memset(m, 0, sizeof *m);
  m->n = n;
  m->rp = calloc((size_t)n + 1, sizeof *m->rp);
  m->rp32 = calloc((size_t)n + 1, sizeof *m->rp32);
  m->col = malloc((size_t)n * 5 * sizeof *m->col);
  m->val = malloc((size_t)n * 5 * sizeof *m->val);
  m->diag = malloc((size_t)n * sizeof *m->diag);
  m->fixed = calloc((size_t)n, 1);
  double *w = malloc((size_t)n * 2 * sizeof *w), *sc = malloc((size_t)n * sizeof *sc);
  if (!m->rp || !m->rp32 || !m->col || !m->val || !m->diag || !m->fixed || !w || !sc) return 1;
  uint64_t st = seed;
  for (int64_t i = 0; i < 2 * n; ++i) w[i] = 1.0 + 0.5 * ef_test_uniform(&st);
  for (int64_t i = 0; i < n; ++i) {
    sc[i] = fix_left ? exp(log(3.0) * ef_test_uniform(&st)) : 1.0;
    m->fixed[i] = fix_left && i % nx == 0;
  }
  m->null_space = !fix_left;
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = i % nx, y = i / nx;
    /* Neighbours in increasing index order: -nx, -1, self, +1, +nx. */
    int64_t nb[5];
    double wt[5];
    int cnt = 0;
    if (y > 0) { nb[cnt] = i - nx; wt[cnt++] = w[2 * (i - nx) + 1]; }
    if (x > 0) { nb[cnt] = i - 1; wt[cnt++] = w[2 * (i - 1)]; }
    nb[cnt] = i; wt[cnt++] = 0.0;
    if (x < nx - 1) { nb[cnt] = i + 1; wt[cnt++] = w[2 * i]; }
    if (y < ny - 1) { nb[cnt] = i + nx; wt[cnt++] = w[2 * i + 1]; }
    double d = 0.0;
    for (int c = 0; c < cnt; ++c) d += wt[c];
    for (int c = 0; c < cnt; ++c) {
      const int64_t j = nb[c];
      double v = j == i ? d : -wt[c];
      v *= sc[i] * sc[j];
      if (m->fixed[i] || m->fixed[j]) v = i == j ? 1.0 : 0.0; /* symmetric elimination */
      if (j == i) m->diag[i] = k;
      m->col[k] = (int32_t)j;
      m->val[k++] = v;
    }
    m->rp[i + 1] = k;
  }
  m->nnz = k;
  for (int64_t i = 0; i <= n; ++i) m->rp32[i] = (int32_t)m->rp[i];
  free(w);
  free(sc);
  return 0;
}

/* ||D^-1/2 (b - A x)|| / ||D^-1/2 b|| with b's mean removed for a singular A. */
static inline double tp_scaled_residual(const ef_csr *A, const double *b, const double *x) {
  double mean = 0.0, rr = 0.0, bb = 0.0;
  if (A->constant_null_space) {
    for (int64_t i = 0; i < A->n; ++i) mean += b[i];
    mean /= (double)A->n;
  }
  for (int64_t i = 0; i < A->n; ++i) {
    double ax = 0.0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) ax += A->val[k] * x[A->col[k]];
    const double d = A->val[A->diag[i]], bi = b[i] - mean, ri = bi - ax;
    rr += ri * ri / d;
    bb += bi * bi / d;
  }
  return sqrt(rr / bb);
}

#endif

/* test_opencl_common.h -- helpers shared by the OpenCL CG tests: a Laplacian-like
 * SPD matrix, a host CG on the scaled system, and a quiet context (or skip). */
#ifndef EF_TEST_OPENCL_COMMON_H
#define EF_TEST_OPENCL_COMMON_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_strategy.h"
#include "opencl_context.h"

#include "ef_test.h"

/* A host CSR with its own arrays. */
typedef struct {
  int64_t n, nnz;
  int64_t *rp;
  int32_t *col;
  double *val;
} test_csr;

/* A non-owning ef_csr_matrix view. */
static inline ef_csr_matrix test_view(const test_csr *m) {
  ef_csr_matrix A = {m->n, m->nnz, m->rp, m->col, m->val};
  return A;
}

/* Free the arrays. */
static inline void test_csr_free(test_csr *m) {
  free(m->rp);
  free(m->col);
  free(m->val);
  memset(m, 0, sizeof *m);
}

/* Graph Laplacian of an nx x ny x nz grid (7-point; nz = 1 gives the 2D 5-point
 * one) with random edge weights in [0.5, 1.5], then S L S with random row scales
 * s_i in [0.1, 10] so that the diagonal scaling matters, and the nodes of the x = 0
 * face fixed: identity rows with their columns removed (symmetric elimination).
 * SPD; columns sorted. */
static inline int test_laplacian(int nx, int ny, int nz, uint64_t seed, test_csr *m) {
  int64_t n = (int64_t)nx * ny * nz;
  m->n = n;
  m->rp = calloc((size_t)n + 1, sizeof *m->rp);
  m->col = malloc((size_t)n * 7 * sizeof *m->col);
  m->val = malloc((size_t)n * 7 * sizeof *m->val);
  double *diag = calloc((size_t)n, sizeof *diag), *sc = malloc((size_t)n * sizeof *sc);
  /* wx/wy/wz: weight of the edge from node i to its +x/+y/+z neighbour. */
  double *w = malloc((size_t)n * 3 * sizeof *w);
  if (!m->rp || !m->col || !m->val || !diag || !sc || !w) return 1;
  for (int64_t i = 0; i < n; ++i) {
    sc[i] = pow(10.0, ef_test_uniform(&seed));
    for (int d = 0; d < 3; ++d) w[3 * i + d] = 1.0 + 0.5 * ef_test_uniform(&seed);
  }
#define TEST_ID(x, y, z) (((int64_t)(z) * ny + (y)) * nx + (x))
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        int64_t i = TEST_ID(x, y, z);
        if (x + 1 < nx) diag[i] += w[3 * i], diag[TEST_ID(x + 1, y, z)] += w[3 * i];
        if (y + 1 < ny) diag[i] += w[3 * i + 1], diag[TEST_ID(x, y + 1, z)] += w[3 * i + 1];
        if (z + 1 < nz) diag[i] += w[3 * i + 2], diag[TEST_ID(x, y, z + 1)] += w[3 * i + 2];
      }
  int64_t k = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        int64_t i = TEST_ID(x, y, z);
        m->rp[i] = k;
        if (x == 0) { /* fixed */
          m->col[k] = (int32_t)i;
          m->val[k++] = 1.0;
          continue;
        }
        /* neighbours in increasing index order: -z, -y, -x, self, +x, +y, +z */
        struct { int ok; int64_t j; double w; } nb[7] = {
            {z > 0, z > 0 ? TEST_ID(x, y, z - 1) : 0, z > 0 ? w[3 * TEST_ID(x, y, z - 1) + 2] : 0},
            {y > 0, y > 0 ? TEST_ID(x, y - 1, z) : 0, y > 0 ? w[3 * TEST_ID(x, y - 1, z) + 1] : 0},
            {x > 0, x > 0 ? TEST_ID(x - 1, y, z) : 0, x > 0 ? w[3 * TEST_ID(x - 1, y, z)] : 0},
            {1, i, 0.0},
            {x + 1 < nx, TEST_ID(x + 1, y, z), w[3 * i]},
            {y + 1 < ny, TEST_ID(x, y + 1, z), w[3 * i + 1]},
            {z + 1 < nz, TEST_ID(x, y, z + 1), w[3 * i + 2]}};
        for (int q = 0; q < 7; ++q) {
          if (!nb[q].ok) continue;
          int64_t j = nb[q].j;
          if (j != i && j % nx == 0) continue; /* fixed neighbour: column eliminated */
          m->col[k] = (int32_t)j;
          m->val[k++] = (j == i ? diag[i] : -nb[q].w) * sc[i] * sc[j];
        }
      }
#undef TEST_ID
  m->rp[n] = k;
  m->nnz = k;
  free(diag);
  free(sc);
  free(w);
  return 0;
}

/* y = A x on the host. */
static inline void test_spmv(const test_csr *m, const double *x, double *y) {
  for (int64_t i = 0; i < m->n; ++i) {
    double s = 0.0;
    for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j) s += m->val[j] * x[m->col[j]];
    y[i] = s;
  }
}

/* Textbook CG on D^-1/2 A D^-1/2 from xh = D^1/2 x0 with the stop ||r||/||b|| < rtol
 * checked before every iteration (as the device does); x receives the unscaled
 * answer; returns the iteration count (-1 on allocation failure). */
static inline int test_host_cg(const test_csr *m, const double *b, double *x, double rtol, int max_it) {
  int64_t n = m->n;
  double *d = malloc(n * sizeof *d), *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p);
  double *q = malloc(n * sizeof *q), *xh = malloc(n * sizeof *xh);
  double *vh = malloc(m->nnz * sizeof *vh);
  if (!d || !r || !p || !q || !xh || !vh) return -1;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j)
      if (m->col[j] == i) d[i] = sqrt(m->val[j]);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j) vh[j] = m->val[j] / (d[i] * d[m->col[j]]);
  double bb = 0.0, rho = 0.0;
  for (int64_t i = 0; i < n; ++i) xh[i] = x[i] * d[i];
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j) s += vh[j] * xh[m->col[j]];
    double bh = b[i] / d[i];
    bb += bh * bh;
    r[i] = bh - s;
    p[i] = r[i];
    rho += r[i] * r[i];
  }
  int it = 0;
  while (it < max_it && !(rho <= rtol * rtol * bb)) {
    double pq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j) s += vh[j] * p[m->col[j]];
      q[i] = s;
      pq += p[i] * s;
    }
    double alpha = rho / pq, rho2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      xh[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rho2 += r[i] * r[i];
    }
    double beta = rho2 / rho;
    rho = rho2;
    for (int64_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
    ++it;
  }
  for (int64_t i = 0; i < n; ++i) x[i] = xh[i] / d[i];
  free(d), free(r), free(p), free(q), free(xh), free(vh);
  return it;
}

/* A quiet context on the default device, or EF_TEST_SKIP when there is none. */
static inline int test_context(ef_cl_context **ctx, const char *cache_dir) {
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) {
    fprintf(stderr, "no OpenCL device: skipping\n");
    return EF_TEST_SKIP;
  }
  ef_cl_settings s;
  ef_cl_settings_default(&s);
  s.verbose = 0;
  s.cache_dir = cache_dir;
  int err = ef_cl_context_create(&s, ctx);
  if (err == EF_ERR_NOT_FOUND || err == EF_ERR_UNSUPPORTED) {
    fprintf(stderr, "no usable OpenCL device (%s): skipping\n", ef_error_message());
    return EF_TEST_SKIP;
  }
  if (err) {
    fprintf(stderr, "context: %s\n", ef_error_message());
    return 1;
  }
  return 0;
}

#endif

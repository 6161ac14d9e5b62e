/* test_petsc_verify.c -- the checks of `edgeflow verify` (verify.c) on a synthetic
 * pressure system: a correct one passes every check, and each kind of corruption is
 * caught by the check meant for it.  Host SpMV (the device variant runs in the CLI tests).
 *   argv[1]: a work folder for the JSON report. */
#include <sys/stat.h>

#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "test_petsc_common.h"
#include "verify.h"

/* A triangulated nx x ny grid (each cell cut along its rising diagonal), and on its graph a
 * randomly weighted Laplacian H_full (zero row sums), fixed rows eliminated symmetrically
 * into H, b random, x from the host CG at tol. */
typedef struct {
  ef_model_part mp;
  ef_pressure_system s;
} fixture;

static void fixture_free(fixture *f) {
  ef_model_part_destroy(&f->mp);
  ef_pressure_system_free(&f->s);
}

static int fixture_make(int nx, int ny, int n_fixed, fixture *f) {
  memset(f, 0, sizeof *f);
  const int64_t n = (int64_t)nx * ny, ne = 2 * (int64_t)(nx - 1) * (ny - 1);
  ASSERT_OK(ef_model_part_create("FluidModelPart", 2, &f->mp));
  ASSERT_OK(ef_model_part_alloc_nodes(f->mp, n));
  ASSERT_OK(ef_model_part_alloc_elements(f->mp, ne, 3));
  for (int64_t i = 0; i < n; ++i) {
    f->mp->coords[3 * i] = (double)(i % nx);
    f->mp->coords[3 * i + 1] = (double)(i / nx);
    f->mp->coords[3 * i + 2] = 0.0;
  }
  int64_t e = 0;
  for (int y = 0; y + 1 < ny; ++y)
    for (int x = 0; x + 1 < nx; ++x) {
      int32_t a = y * nx + x, b = a + 1, c = a + nx + 1, d = a + nx;
      int32_t t[6] = {a, b, c, a, c, d};
      memcpy(f->mp->elements + 3 * e, t, sizeof t);
      e += 2;
    }
  /* Graph neighbours: -nx-1, -nx, -1, +1, +nx, +nx+1 (the cut diagonals), in index order. */
  ef_pressure_system *s = &f->s;
  s->n = n;
  s->row_ptr = calloc((size_t)n + 1, sizeof *s->row_ptr);
  s->col = malloc((size_t)n * 7 * sizeof *s->col);
  s->values = malloc((size_t)n * 7 * sizeof *s->values);
  s->values_full = malloc((size_t)n * 7 * sizeof *s->values_full);
  s->rhs = malloc((size_t)n * sizeof *s->rhs);
  s->solution = calloc((size_t)n, sizeof *s->solution);
  s->initial_guess = calloc((size_t)n, sizeof *s->initial_guess);
  s->fixed = calloc((size_t)n, 1);
  ASSERT(s->row_ptr && s->col && s->values && s->values_full && s->rhs && s->solution && s->initial_guess && s->fixed,
         "out of memory");
  for (int k = 0; k < n_fixed; ++k) s->fixed[(int64_t)k * (n / (n_fixed + 1))] = 1;
  /* Edge weights from a hash of the (unordered) pair, so H_ij = H_ji exactly. */
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = i % nx, y = i / nx;
    int64_t nb[7];
    int c = 0;
    if (y > 0 && x > 0) nb[c++] = i - nx - 1;
    if (y > 0) nb[c++] = i - nx;
    if (x > 0) nb[c++] = i - 1;
    nb[c++] = i;
    if (x < nx - 1) nb[c++] = i + 1;
    if (y < ny - 1) nb[c++] = i + nx;
    if (y < ny - 1 && x < nx - 1) nb[c++] = i + nx + 1;
    int64_t kd = -1;
    double d = 0.0;
    for (int q = 0; q < c; ++q) {
      const int64_t j = nb[q];
      s->col[k] = (int32_t)j;
      if (j == i) {
        kd = k++;
        continue;
      }
      uint64_t h = (uint64_t)(i < j ? i * 1000003 + j : j * 1000003 + i);
      double w = -(0.5 + 0.5 * (1.0 + ef_test_uniform(&h)));
      s->values_full[k++] = w;
      d -= w;
    }
    s->values_full[kd] = d;
    s->row_ptr[i + 1] = k;
  }
  s->nnz = k;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t q = s->row_ptr[i]; q < s->row_ptr[i + 1]; ++q) {
      const int64_t j = s->col[q];
      s->values[q] = (s->fixed[i] || s->fixed[j]) ? (i == j ? 1.0 : 0.0) : s->values_full[q];
    }
  uint64_t st = 99;
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += s->rhs[i] = ef_test_uniform(&st);
  for (int64_t i = 0; i < n; ++i) {
    if (!n_fixed) s->rhs[i] -= mean / (double)n;
    if (s->fixed[i]) s->rhs[i] = 0.25; /* a prescribed pressure */
    s->initial_guess[i] = s->solution[i] = s->fixed[i] ? s->rhs[i] : 0.0;
  }
  s->tolerance = 1e-8;
  int32_t *rp32 = malloc(((size_t)n + 1) * sizeof *rp32);
  ASSERT(rp32, "out of memory");
  for (int64_t i = 0; i <= n; ++i) rp32[i] = (int32_t)s->row_ptr[i];
  ef_csr A = {n, s->nnz, s->row_ptr, rp32, s->col, s->values, NULL, n_fixed == 0};
  ef_host_cg *cg = NULL;
  ASSERT_OK(ef_host_cg_create(n, &cg));
  ASSERT_OK(ef_host_cg_solve(cg, &A, s->rhs, s->solution, s->tolerance, 10000, &s->iterations, &s->relative_residual));
  ef_host_cg_destroy(&cg);
  free(rp32);
  return 0;
}

/* A deep copy of the system (each corruption works on its own). */
static int copy_system(const ef_pressure_system *a, ef_pressure_system *b) {
  *b = *a;
  const size_t n = (size_t)a->n, nnz = (size_t)a->nnz;
  b->row_ptr = malloc((n + 1) * sizeof *b->row_ptr);
  b->col = malloc(nnz * sizeof *b->col);
  b->values = malloc(nnz * sizeof *b->values);
  b->values_full = malloc(nnz * sizeof *b->values_full);
  b->rhs = malloc(n * sizeof *b->rhs);
  b->solution = malloc(n * sizeof *b->solution);
  b->initial_guess = malloc(n * sizeof *b->initial_guess);
  b->fixed = malloc(n);
  ASSERT(b->row_ptr && b->col && b->values && b->values_full && b->rhs && b->solution && b->initial_guess && b->fixed,
         "out of memory");
  memcpy(b->row_ptr, a->row_ptr, (n + 1) * sizeof *b->row_ptr);
  memcpy(b->col, a->col, nnz * sizeof *b->col);
  memcpy(b->values, a->values, nnz * sizeof *b->values);
  memcpy(b->values_full, a->values_full, nnz * sizeof *b->values_full);
  memcpy(b->rhs, a->rhs, n * sizeof *b->rhs);
  memcpy(b->solution, a->solution, n * sizeof *b->solution);
  memcpy(b->initial_guess, a->initial_guess, n * sizeof *b->initial_guess);
  memcpy(b->fixed, a->fixed, n);
  return 0;
}

static const ef_verify_check *find(const ef_verify_report *r, const char *name) {
  for (int i = 0; i < r->n_checks; ++i)
    if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
  return NULL;
}

/* Every check that applies passes. */
static int expect_all_pass(const ef_verify_report *r, int skipped) {
  for (int i = 0; i < r->n_checks; ++i)
    ASSERT(r->checks[i].passed || r->checks[i].skipped, "check %s failed: measured %.3e, bound %.3e (%s)",
           r->checks[i].name, r->checks[i].measured, r->checks[i].bound, r->checks[i].note);
  ASSERT(r->n_failed == 0 && r->n_skipped == skipped, "%d failed, %d skipped (expected %d)", r->n_failed,
         r->n_skipped, skipped);
  return 0;
}

/* The check `name` ran and failed. */
static int expect_failed(const ef_verify_report *r, const char *name) {
  const ef_verify_check *c = find(r, name);
  ASSERT(c, "check %s missing", name);
  ASSERT(!c->passed && !c->skipped, "check %s should have failed: measured %.3e, bound %.3e", name, c->measured,
         c->bound);
  ASSERT(r->n_failed >= 1, "n_failed not counted");
  return 0;
}

typedef enum { C_ASYMMETRIC, C_ROW_SUM, C_FIXED_DIAG, C_NEGATIVE_DIAG, C_SOLUTION, C_GRAPH, C_UNSORTED } corruption;

static int run_corrupted(fixture *f, corruption what, const char *check, const ef_verify_options *o) {
  ef_pressure_system s;
  if (copy_system(&f->s, &s)) return 1;
  const int64_t n = s.n;
  int64_t i = n / 2 + 3, k = s.row_ptr[i]; /* a free interior row and its first entry */
  ASSERT(!s.fixed[i] && s.col[k] != i, "fixture: pick another row");
  int32_t saved = 0;
  switch (what) {
  case C_ASYMMETRIC: s.values[k] *= 1.0 + 1e-9; break; /* 1e-9 relative >> 1e-12 */
  case C_ROW_SUM: /* H_full's diagonal off by 1e-9 relative: symmetric still, row sum not zero */
    for (int64_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q)
      if (s.col[q] == i) s.values_full[q] *= 1.0 + 1e-9;
    break;
  case C_FIXED_DIAG:
    for (int64_t r = 0; r < n; ++r)
      if (s.fixed[r])
        for (int64_t q = s.row_ptr[r]; q < s.row_ptr[r + 1]; ++q)
          if (s.col[q] == r) s.values[q] = 2.0;
    break;
  case C_NEGATIVE_DIAG:
    for (int64_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q)
      if (s.col[q] == i) s.values[q] = -s.values[q];
    break;
  case C_SOLUTION:
    for (int64_t r = 0; r < n; ++r) s.solution[r] *= 1.0 + 1e-4 * ((r % 7) - 3);
    break;
  case C_GRAPH:
    saved = f->mp->elements[0];
    f->mp->elements[0] = (int32_t)(n - 1); /* a far node: the mesh graph gains edges */
    break;
  case C_UNSORTED: {
    int32_t t = s.col[k];
    s.col[k] = s.col[k + 1];
    s.col[k + 1] = t;
    break;
  }
  }
  ef_verify_report *r = calloc(1, sizeof *r);
  ASSERT(r, "out of memory");
  int err = ef_verify_pressure_system(&s, f->mp, o, r);
  if (what == C_GRAPH) f->mp->elements[0] = saved;
  ASSERT_OK(err);
  if (expect_failed(r, check)) {
    ef_verify_report_print(r, stderr);
    return 1;
  }
  free(r);
  ef_pressure_system_free(&s);
  return 0;
}

/* The JSON report parses back and says what the table says. */
static int check_json(const ef_verify_report *r, const char *folder) {
  char path[4096];
  snprintf(path, sizeof path, "%s/verify_report.json", folder);
  ASSERT_OK(ef_verify_report_write_json(r, path));
  ef_parameters p = NULL, checks = NULL;
  ASSERT_OK(ef_parameters_load_file(path, &p));
  int passed = 0;
  ASSERT_OK(ef_parameters_get_bool(p, "passed", &passed));
  ASSERT(passed == (r->n_failed == 0), "JSON passed = %d", passed);
  ASSERT_OK(ef_parameters_get(p, "checks", &checks));
  ASSERT(ef_parameters_size(checks) == r->n_checks, "JSON has %d checks, report %d", ef_parameters_size(checks),
         r->n_checks);
  ef_parameters_destroy(&p);
  return 0;
}

int main(int argc, char **argv) {
  ASSERT(argc == 2, "usage: test_petsc_verify WORK_FOLDER");
  mkdir(argv[1], 0755);
  ef_verify_options o;
  ef_verify_options_default(&o);
  o.use_device = 0;
  ef_verify_report *r = calloc(1, sizeof *r);
  ASSERT(r, "out of memory");

  for (int n_fixed = 0; n_fixed <= 3; n_fixed += 3) {
    fixture f;
    if (fixture_make(23, 17, n_fixed, &f)) return 1;
    ASSERT_OK(ef_verify_pressure_system(&f.s, f.mp, &o, r));
    if (expect_all_pass(r, 0)) {
      ef_verify_report_print(r, stderr);
      return 1;
    }
    ASSERT(r->n_fixed == n_fixed && r->n_checks >= 12, "%lld fixed, %d checks", (long long)r->n_fixed, r->n_checks);
    /* PETSc's CG + Jacobi from the same start stops where the host CG stopped (same
     * test, rounding may move it by one iteration). */
    ASSERT(abs(r->petsc_iterations - f.s.iterations) <= 1, "PETSc %d, host CG %d iterations", r->petsc_iterations,
           f.s.iterations);
    if (check_json(r, argv[1])) return 1;

    if (run_corrupted(&f, C_ASYMMETRIC, "symmetry", &o)) return 1;
    if (run_corrupted(&f, C_ROW_SUM, "row_sums", &o)) return 1;
    if (run_corrupted(&f, C_NEGATIVE_DIAG, "diagonal", &o)) return 1;
    if (run_corrupted(&f, C_SOLUTION, "residual_scaled", &o)) return 1;
    if (run_corrupted(&f, C_GRAPH, "graph", &o)) return 1;
    if (run_corrupted(&f, C_UNSORTED, "csr", &o)) return 1;
    if (n_fixed && run_corrupted(&f, C_FIXED_DIAG, "elimination", &o)) return 1;

    /* Without H before elimination its four checks are skipped, the rest still pass. */
    double *full = f.s.values_full;
    f.s.values_full = NULL;
    ASSERT_OK(ef_verify_pressure_system(&f.s, f.mp, &o, r));
    f.s.values_full = full;
    if (expect_all_pass(r, 4)) return 1;
    /* Without a mesh the graph check is skipped. */
    ASSERT_OK(ef_verify_pressure_system(&f.s, NULL, &o, r));
    if (expect_all_pass(r, 1)) return 1;
    fixture_free(&f);
  }
  free(r);
  return 0;
}

/* verify.c -- `edgeflow verify`: a strategy's last pressure system checked with
 * PETSc (the checks and their bounds are described in verify.h).  Without PETSc
 * in the build this file only provides the stubs that say so. */
#include "verify.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"

#ifdef EF_HAVE_PETSC

#include <time.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_util.h"
#include "host_cg.h"
#include "matrix_io.h"
#include "petsc_bridge.h"
#ifdef EF_HAVE_OPENCL
#include "opencl_cg.h"
#include "opencl_context.h"
#endif

/* Bounds (see verify.h for the reasoning). */
#define EF_VERIFY_SYMMETRY_BOUND 1e-12
#define EF_VERIFY_ROW_SUM_BOUND 1e-12
#define EF_VERIFY_ELIMINATION_BOUND 1e-14
#define EF_VERIFY_SPMV_BOUND 1e-13

/* Defaults: seed 12345, 3 SpMV vectors, residual factor 2, device SpMV when one exists. */
void ef_verify_options_default(ef_verify_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = 12345;
  o->spmv_vectors = 3;
  o->residual_factor = 2.0;
  o->use_device = 1;
  o->tune = 1;
}

/* Append a check: passes when measured <= bound (or > bound for a lower bound). */
static ef_verify_check *add_check(ef_verify_report *r, const char *name, const char *description, double measured,
                                  double bound, int lower_bound) {
  static ef_verify_check overflow; /* never reached: EF_VERIFY_MAX_CHECKS exceeds the checks below */
  if (r->n_checks >= EF_VERIFY_MAX_CHECKS) return &overflow;
  ef_verify_check *c = &r->checks[r->n_checks++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  snprintf(c->description, sizeof c->description, "%s", description);
  c->measured = measured;
  c->bound = bound;
  c->lower_bound = lower_bound;
  /* Written so that NaN fails either way. */
  c->passed = lower_bound ? measured > bound : measured <= bound;
  if (!c->passed) r->n_failed++;
  return c;
}

/* Record a check that does not apply, with the reason. */
static void skip_check(ef_verify_report *r, const char *name, const char *description, const char *why) {
  ef_verify_check *c = add_check(r, name, description, 0.0, 0.0, 0); /* 0 <= 0: not counted as failed */
  c->skipped = 1;
  c->passed = 0;
  r->n_skipped++;
  snprintf(c->note, sizeof c->note, "%s", why);
}

/* Mark a recorded check as failed with a reason (e.g. PETSc disagreed). */
static void fail_check(ef_verify_report *r, ef_verify_check *c, const char *why) {
  if (c->passed) r->n_failed++;
  c->passed = 0;
  snprintf(c->note, sizeof c->note, "%s", why);
}

/* Uniform numbers in [-1, 1) from a 64-bit LCG (deterministic across platforms). */
static double verify_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0;
}

/* Position of the diagonal in each row (-1 when missing). */
static int find_diagonals(const ef_pressure_system *s, int64_t *diag) {
  int64_t missing = 0;
  for (int64_t i = 0; i < s->n; ++i) {
    diag[i] = -1;
    for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
      if (s->col[k] == i) diag[i] = k;
    missing += diag[i] < 0;
  }
  return missing > 0;
}

/* Rows of H whose pattern differs from {i} + the mesh neighbours of i (nodes sharing an
 * element), built here from the connectivity alone, independently of the edge data. */
static int count_graph_mismatches(const ef_pressure_system *s, ef_model_part mp, int64_t *mismatched,
                                  int64_t *first_bad) {
  const int64_t n = s->n, ne = mp->n_elements;
  const int npe = mp->nodes_per_element;
  int err = EF_SUCCESS;
  int64_t *start = NULL, *fill = NULL;
  int32_t *nbr = NULL;
  *mismatched = 0;
  *first_bad = -1;
  EF_CHECK(mp->n_nodes == n, EF_ERR_INTERNAL, "the mesh has %lld nodes but the system %lld rows",
           (long long)mp->n_nodes, (long long)n);
  EF_CALLOC(start, n + 1);
  for (int64_t e = 0; e < ne; ++e)
    for (int a = 0; a < npe; ++a) start[mp->elements[e * npe + a] + 1] += npe - 1;
  for (int64_t i = 0; i < n; ++i) start[i + 1] += start[i];
  nbr = malloc((size_t)(start[n] > 0 ? start[n] : 1) * sizeof *nbr);
  fill = malloc((size_t)n * sizeof *fill);
  EF_CHECK_GOTO(nbr && fill, EF_ERR_MEMORY, done, "out of memory building the mesh graph");
  memcpy(fill, start, (size_t)n * sizeof *fill);
  for (int64_t e = 0; e < ne; ++e)
    for (int a = 0; a < npe; ++a)
      for (int b = 0; b < npe; ++b)
        if (a != b) {
          int32_t i = mp->elements[e * npe + a];
          nbr[fill[i]++] = mp->elements[e * npe + b];
        }
  for (int64_t i = 0; i < n; ++i) {
    /* Insertion sort: rows hold a few dozen entries. */
    int32_t *v = nbr + start[i];
    int64_t m = start[i + 1] - start[i], u = 0;
    for (int64_t p = 1; p < m; ++p) {
      int32_t x = v[p];
      int64_t q = p - 1;
      while (q >= 0 && v[q] > x) {
        v[q + 1] = v[q];
        --q;
      }
      v[q + 1] = x;
    }
    for (int64_t p = 0; p < m; ++p)
      if (u == 0 || v[p] != v[u - 1]) v[u++] = v[p];
    /* Expected row: the unique neighbours with i inserted in order. */
    int64_t k = s->row_ptr[i], kend = s->row_ptr[i + 1], p = 0;
    int inserted = 0, bad = 0;
    while (!bad && (p < u || !inserted)) {
      int32_t expect;
      if (!inserted && (p >= u || v[p] > i)) {
        expect = (int32_t)i;
        inserted = 1;
      } else {
        expect = v[p++];
      }
      if (k >= kend || s->col[k] != expect) bad = 1;
      ++k;
    }
    if (k != kend) bad = 1;
    if (bad) {
      if (*first_bad < 0) *first_bad = i;
      ++*mismatched;
    }
  }
done:
  free(start);
  free(fill);
  free(nbr);
  return err;
}

/* max_ij |H_ij - H_ji| / max|H| from the CSR (a missing transposed entry counts as 0). */
static double csr_asymmetry(const ef_pressure_system *s, const double *val, double *max_abs) {
  double amax = 0.0, dmax = 0.0;
  for (int64_t k = 0; k < s->nnz; ++k) amax = fmax(amax, fabs(val[k]));
  for (int64_t i = 0; i < s->n; ++i)
    for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) {
      int64_t j = s->col[k], lo = s->row_ptr[j], hi = s->row_ptr[j + 1] - 1;
      double t = 0.0;
      while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->col[mid] < i)
          lo = mid + 1;
        else if (s->col[mid] > i)
          hi = mid - 1;
        else {
          t = val[mid];
          break;
        }
      }
      double d = fabs(val[k] - t);
      if (!(d <= dmax)) dmax = d; /* keeps NaN */
    }
  *max_abs = amax;
  return amax > 0.0 ? dmax / amax : dmax;
}

/* Symmetry of one matrix: our measure, and PETSc's MatIsSymmetric at 1e-12 max|H| (its
 * tolerance is absolute). */
static int check_symmetry(ef_verify_report *r, const char *name, const char *what, const ef_pressure_system *s,
                          const double *val, Mat A) {
  double amax;
  double rel = csr_asymmetry(s, val, &amax);
  char desc[200];
  snprintf(desc, sizeof desc, "max|H-H^T|/max|H| of H %s; PETSc MatIsSymmetric(tol = 1e-12 max|H|)", what);
  ef_verify_check *c = add_check(r, name, desc, rel, EF_VERIFY_SYMMETRY_BOUND, 0);
  PetscBool sym = PETSC_FALSE;
  EF_PETSC_CALL(MatIsSymmetric(A, (PetscReal)(EF_VERIFY_SYMMETRY_BOUND * amax), &sym));
  if (!sym)
    fail_check(r, c, "PETSc MatIsSymmetric: not symmetric at this tolerance");
  else
    snprintf(c->note, sizeof c->note, "MatIsSymmetric: yes; max|H| = %.3e", amax);
  return EF_SUCCESS;
}

/* Scaled and plain residual norms of x for (A, b): ||D^-1/2 r||/||D^-1/2 b|| and ||r||/||b||,
 * r = b - A x by PETSc's MatMult; b's mean removed first when A has the constant null space. */
static int residuals(Mat A, const double *b_in, const double *x_in, int64_t n, int null_space, double *scaled,
                     double *plain) {
  Vec b = NULL, x = NULL, r = NULL, d = NULL, w = NULL;
  int err = EF_SUCCESS;
  PetscReal rn, bn, rs, bs;
  EF_PETSC_CALL_GOTO(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)n, &b), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(b, &x), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(b, &r), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(b, &d), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(b, &w), done);
  {
    PetscScalar *pb, *px;
    EF_PETSC_CALL_GOTO(VecGetArray(b, &pb), done);
    memcpy(pb, b_in, (size_t)n * sizeof *pb);
    EF_PETSC_CALL_GOTO(VecRestoreArray(b, &pb), done);
    EF_PETSC_CALL_GOTO(VecGetArray(x, &px), done);
    memcpy(px, x_in, (size_t)n * sizeof *px);
    EF_PETSC_CALL_GOTO(VecRestoreArray(x, &px), done);
  }
  if (null_space) {
    PetscScalar sum;
    EF_PETSC_CALL_GOTO(VecSum(b, &sum), done);
    EF_PETSC_CALL_GOTO(VecShift(b, -sum / (PetscScalar)n), done);
  }
  EF_PETSC_CALL_GOTO(MatMult(A, x, r), done);
  EF_PETSC_CALL_GOTO(VecAYPX(r, -1.0, b), done); /* r = b - A x */
  EF_PETSC_CALL_GOTO(VecNorm(r, NORM_2, &rn), done);
  EF_PETSC_CALL_GOTO(VecNorm(b, NORM_2, &bn), done);
  EF_PETSC_CALL_GOTO(MatGetDiagonal(A, d), done);
  EF_PETSC_CALL_GOTO(VecSqrtAbs(d), done);
  EF_PETSC_CALL_GOTO(VecPointwiseDivide(w, r, d), done);
  EF_PETSC_CALL_GOTO(VecNorm(w, NORM_2, &rs), done);
  EF_PETSC_CALL_GOTO(VecPointwiseDivide(w, b, d), done);
  EF_PETSC_CALL_GOTO(VecNorm(w, NORM_2, &bs), done);
  *plain = bn > 0 ? (double)(rn / bn) : (double)rn;
  *scaled = bs > 0 ? (double)(rs / bs) : (double)rs;
done:
  VecDestroy(&b);
  VecDestroy(&x);
  VecDestroy(&r);
  VecDestroy(&d);
  VecDestroy(&w);
  return err;
}

/* y_k = A x_k on the device (the device CG layer's SpMV on A uploaded again).
 * *found = 0 when no OpenCL device exists (nothing computed). */
static int spmv_device(const ef_pressure_system *s, const double *values, int n_vec, double *const *xs,
                       double *const *ys, int tune, char *device_name, size_t name_size, int *found) {
  *found = 0;
#ifdef EF_HAVE_OPENCL
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) {
    ef_error_clear();
    return EF_SUCCESS;
  }
  int err = EF_SUCCESS;
  ef_cl_context *ctx = NULL;
  ef_cl_csr dA;
  ef_cl_cg *cg = NULL;
  cl_mem dx = NULL, dy = NULL;
  memset(&dA, 0, sizeof dA);
  ef_cl_settings cs;
  ef_cl_settings_default(&cs);
  cs.verbose = 0;
  EF_CALL_GOTO(ef_cl_context_create(&cs, &ctx), done);
  snprintf(device_name, name_size, "%s (%s)", ctx->device_name, ctx->platform_name);
  ef_csr_matrix A = {s->n, s->nnz, s->row_ptr, s->col, values};
  EF_CALL_GOTO(ef_cl_csr_upload(ctx, &A, &dA), done);
  ef_cl_cg_settings gs;
  ef_cl_cg_settings_default(&gs);
  gs.tune = tune;
  gs.verbose = 0;
  EF_CALL_GOTO(ef_cl_cg_create(ctx, &dA, &gs, &cg), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, s->n, NULL, &dx), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, s->n, NULL, &dy), done);
  for (int v = 0; v < n_vec; ++v) {
    EF_CALL_GOTO(ef_cl_vector_write(ctx, dx, s->n, xs[v]), done);
    EF_CALL_GOTO(ef_cl_cg_spmv(cg, dx, dy), done);
    EF_CALL_GOTO(ef_cl_vector_read(ctx, dy, s->n, ys[v]), done);
  }
  *found = 1;
done:
  if (dx) clReleaseMemObject(dx);
  if (dy) clReleaseMemObject(dy);
  ef_cl_cg_destroy(&cg);
  ef_cl_csr_release(&dA);
  ef_cl_context_destroy(&ctx);
  return err;
#else
  (void)s;
  (void)values;
  (void)n_vec;
  (void)xs;
  (void)ys;
  (void)tune;
  (void)device_name;
  (void)name_size;
  return EF_SUCCESS;
#endif
}

/* The SpMV check: device (or host) products against MatMult on random vectors. */
static int check_spmv(ef_verify_report *r, const ef_pressure_system *s, const ef_csr *H, Mat A,
                      const ef_verify_options *o) {
  const int nv = o->spmv_vectors > 0 ? o->spmv_vectors : 1;
  const int64_t n = s->n;
  int err = EF_SUCCESS, found = 0;
  double *buf = malloc((size_t)(3 * nv) * (size_t)n * sizeof *buf);
  EF_CHECK(buf, EF_ERR_MEMORY, "out of memory for the SpMV vectors");
  double *xs[64], *ys[64], *yp[64];
  int m = nv > 64 ? 64 : nv;
  uint64_t state = o->seed;
  for (int v = 0; v < m; ++v) {
    xs[v] = buf + (size_t)(3 * v) * (size_t)n;
    ys[v] = xs[v] + n;
    yp[v] = ys[v] + n;
    for (int64_t i = 0; i < n; ++i) xs[v][i] = verify_random(&state);
  }
  Vec vx = NULL, vy = NULL;
  if (o->use_device) {
    err = spmv_device(s, s->values, m, xs, ys, o->tune, r->spmv_device, sizeof r->spmv_device, &found);
    if (err == EF_ERR_SOLVER) {
      /* The device CG refuses the matrix (non-positive diagonal): a failed check, not an error. */
      ef_verify_check *c = add_check(r, "spmv", "device SpMV vs PETSc MatMult", NAN, EF_VERIFY_SPMV_BOUND, 0);
      fail_check(r, c, ef_error_message());
      ef_error_clear();
      err = EF_SUCCESS;
      goto done;
    }
    if (err) goto done;
#ifdef EF_HAVE_OPENCL
    const char *why = "";
#else
    const char *why = " (this build has no OpenCL)";
#endif
    EF_CHECK_GOTO(found || o->use_device < 2, EF_ERR_UNSUPPORTED, done,
                  "verify: the SpMV check needs an OpenCL device and none was found%s", why);
  }
  if (!found) {
    snprintf(r->spmv_device, sizeof r->spmv_device, "host");
    for (int v = 0; v < m; ++v) ef_csr_multiply(H, xs[v], ys[v]);
  }
  double worst = 0.0;
  EF_CALL_GOTO(ef_petsc_vec_wrap(n, xs[0], &vx), done);
  EF_CALL_GOTO(ef_petsc_vec_wrap(n, yp[0], &vy), done);
  for (int v = 0; v < m; ++v) {
    EF_PETSC_CALL_GOTO(VecPlaceArray(vx, xs[v]), done);
    EF_PETSC_CALL_GOTO(VecPlaceArray(vy, yp[v]), done);
    PetscErrorCode code = MatMult(A, vx, vy);
    VecResetArray(vx);
    VecResetArray(vy);
    EF_PETSC_CALL_GOTO(code, done);
    double dn = 0.0, yn = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double d = ys[v][i] - yp[v][i];
      dn += d * d;
      yn += yp[v][i] * yp[v][i];
    }
    double rel = yn > 0.0 ? sqrt(dn / yn) : sqrt(dn);
    if (!(rel <= worst)) worst = rel;
  }
  char desc[200];
  snprintf(desc, sizeof desc, "%s SpMV vs PETSc MatMult: max ||y - y_petsc||/||y_petsc|| over %d random vectors",
           found ? "device" : "host", m);
  ef_verify_check *c = add_check(r, "spmv", desc, worst, EF_VERIFY_SPMV_BOUND, 0);
  snprintf(c->note, sizeof c->note, "%s%s", found ? "device: " : "",
           found ? r->spmv_device : "no OpenCL device: host ef_csr_multiply");
done:
  VecDestroy(&vx);
  VecDestroy(&vy);
  free(buf);
  return err;
}

/* KSPCG + PCJACOBI on (A, b) from x0 (NULL: zero) with the natural norm sqrt(r^T D^-1 r), which
 * makes PETSc's default relative test the host/device CG's scaled-residual test. */
static int petsc_reference_cg(Mat A, const double *b_in, const double *x0, int64_t n, int null_space,
                              double rtol, double *x_out, int *iterations, int *reason, double *seconds) {
  KSP ksp = NULL;
  PC pc = NULL;
  Vec b = NULL, x = NULL;
  int err = EF_SUCCESS;
  EF_PETSC_CALL_GOTO(KSPCreate(PETSC_COMM_SELF, &ksp), done);
  /* A prefix of its own: options meant for the "petsc" pressure solver do not reach the reference. */
  EF_PETSC_CALL_GOTO(KSPSetOptionsPrefix(ksp, "ef_verify_"), done);
  EF_PETSC_CALL_GOTO(KSPSetOperators(ksp, A, A), done);
  EF_PETSC_CALL_GOTO(KSPSetType(ksp, KSPCG), done);
  EF_PETSC_CALL_GOTO(KSPGetPC(ksp, &pc), done);
  EF_PETSC_CALL_GOTO(PCSetType(pc, PCJACOBI), done);
  EF_PETSC_CALL_GOTO(KSPSetNormType(ksp, KSP_NORM_NATURAL), done);
  EF_PETSC_CALL_GOTO(KSPSetTolerances(ksp, rtol, 0.0, PETSC_DEFAULT, 1000000), done);
  EF_PETSC_CALL_GOTO(KSPSetInitialGuessNonzero(ksp, x0 ? PETSC_TRUE : PETSC_FALSE), done);
  EF_PETSC_CALL_GOTO(KSPSetFromOptions(ksp), done);
  EF_PETSC_CALL_GOTO(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)n, &b), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(b, &x), done);
  {
    PetscScalar *p;
    EF_PETSC_CALL_GOTO(VecGetArray(b, &p), done);
    memcpy(p, b_in, (size_t)n * sizeof *p);
    EF_PETSC_CALL_GOTO(VecRestoreArray(b, &p), done);
    EF_PETSC_CALL_GOTO(VecGetArray(x, &p), done);
    if (x0)
      memcpy(p, x0, (size_t)n * sizeof *p);
    else
      memset(p, 0, (size_t)n * sizeof *p);
    EF_PETSC_CALL_GOTO(VecRestoreArray(x, &p), done);
  }
  (void)null_space; /* the null space rides on A (petsc_bridge.h); KSPSolve projects b */
  double t0 = ef_wtime();
  EF_PETSC_CALL_GOTO(KSPSolve(ksp, b, x), done);
  *seconds = ef_wtime() - t0;
  PetscInt its;
  KSPConvergedReason why;
  EF_PETSC_CALL_GOTO(KSPGetIterationNumber(ksp, &its), done);
  EF_PETSC_CALL_GOTO(KSPGetConvergedReason(ksp, &why), done);
  *iterations = (int)its;
  *reason = (int)why;
  {
    const PetscScalar *p;
    EF_PETSC_CALL_GOTO(VecGetArrayRead(x, &p), done);
    memcpy(x_out, p, (size_t)n * sizeof *x_out);
    EF_PETSC_CALL_GOTO(VecRestoreArrayRead(x, &p), done);
  }
done:
  KSPDestroy(&ksp);
  VecDestroy(&b);
  VecDestroy(&x);
  return err;
}

/* Every check of verify.h on s, recorded in r (failures counted, not returned). */
int ef_verify_pressure_system(const ef_pressure_system *s, ef_model_part mp, const ef_verify_options *o_in,
                              ef_verify_report *r) {
  EF_CHECK(s && r, EF_ERR_PARAMETER, "verify: NULL argument");
  memset(r, 0, sizeof *r);
  ef_verify_options o;
  if (o_in)
    o = *o_in;
  else
    ef_verify_options_default(&o);
  EF_CHECK(s->n > 0 && s->row_ptr && s->col && s->values && s->rhs && s->solution && s->fixed, EF_ERR_PARAMETER,
           "verify: the pressure system is incomplete (matrix, rhs, solution and fixity are needed)");
  EF_CHECK(s->tolerance > 0.0, EF_ERR_PARAMETER, "verify: the pressure system carries no tolerance");
  EF_CALL(ef_petsc_initialize());
  const int64_t n = s->n, nnz = s->nnz;
  r->n = n;
  r->nnz = nnz;
  r->tolerance = s->tolerance;
  r->solver_iterations = s->iterations;
  r->solver_residual = s->relative_residual;
  for (int64_t i = 0; i < n; ++i) r->n_fixed += s->fixed[i] != 0;
  const int null_space = r->n_fixed == 0;
  const double F = o.residual_factor;

  /* The CSR must be well formed before PETSc reads it. */
  ef_csr_matrix view = {n, nnz, s->row_ptr, s->col, s->values};
  if (ef_csr_matrix_check(&view, "pressure matrix")) {
    ef_verify_check *c = add_check(r, "csr", "row offsets monotone, columns in range and sorted, values finite",
                                   1.0, 0.0, 0);
    fail_check(r, c, ef_error_message());
    ef_error_clear();
    return EF_SUCCESS;
  }
  if (s->values_full) {
    ef_csr_matrix fview = {n, nnz, s->row_ptr, s->col, s->values_full};
    if (ef_csr_matrix_check(&fview, "pressure matrix before elimination")) {
      ef_verify_check *c = add_check(r, "csr", "row offsets monotone, columns in range and sorted, values finite",
                                     1.0, 0.0, 0);
      fail_check(r, c, ef_error_message());
      ef_error_clear();
      return EF_SUCCESS;
    }
  }
  add_check(r, "csr", "row offsets monotone, columns in range and sorted, values finite (problems)", 0.0, 0.0, 0);

  int err = EF_SUCCESS;
  int64_t *diag = NULL;
  double *work = NULL, *dvals = NULL;
  ef_petsc_csr H, Hf;
  memset(&H, 0, sizeof H);
  memset(&Hf, 0, sizeof Hf);
  EF_MALLOC(diag, n);
  int missing_diag = find_diagonals(s, diag);
  ef_csr csr = {n, nnz, s->row_ptr, NULL, s->col, s->values, missing_diag ? NULL : diag, null_space};
  ef_csr csr_full = csr;
  csr_full.val = s->values_full;

  /* Graph. */
  if (mp) {
    int64_t bad = 0, first = -1;
    EF_CALL_GOTO(count_graph_mismatches(s, mp, &bad, &first), done);
    ef_verify_check *c = add_check(r, "graph", "rows whose pattern differs from the mesh graph plus the diagonal",
                                   (double)bad, 0.0, 0);
    if (bad) snprintf(c->note, sizeof c->note, "first differing row: %lld", (long long)first);
  } else {
    skip_check(r, "graph", "rows whose pattern differs from the mesh graph plus the diagonal", "no mesh given");
  }

  /* Diagonal. */
  {
    double dmin = INFINITY, dmax = 0.0;
    int64_t at = -1;
    for (int64_t i = 0; i < n; ++i) {
      double d = diag[i] >= 0 ? s->values[diag[i]] : 0.0;
      if (!(d >= dmin)) {
        dmin = d;
        at = i;
      }
      dmax = fmax(dmax, fabs(d));
    }
    ef_verify_check *c =
        add_check(r, "diagonal", "min_i H_ii / max_i |H_ii| of H as solved (must be > 0)",
                  dmax > 0 ? dmin / dmax : dmin, 0.0, 1);
    snprintf(c->note, sizeof c->note, "min H_ii = %.3e at row %lld%s", dmin, (long long)at,
             missing_diag ? "; some rows have no diagonal entry" : "");
    if (s->values_full) {
      dmin = INFINITY;
      dmax = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        double d = diag[i] >= 0 ? s->values_full[diag[i]] : 0.0;
        if (!(d >= dmin)) {
          dmin = d;
          at = i;
        }
        dmax = fmax(dmax, fabs(d));
      }
      c = add_check(r, "diagonal_full", "min_i H_ii / max_i |H_ii| of H before elimination (must be > 0)",
                    dmax > 0 ? dmin / dmax : dmin, 0.0, 1);
      snprintf(c->note, sizeof c->note, "min H_ii = %.3e at row %lld", dmin, (long long)at);
    } else {
      skip_check(r, "diagonal_full", "min_i H_ii of H before elimination",
                 "the strategy did not provide H before elimination");
    }
  }

  /* PETSc views of both matrices (values in place). */
  EF_CALL_GOTO(ef_petsc_csr_wrap(&csr, &H), done);
  if (null_space) EF_CALL_GOTO(ef_petsc_csr_set_constant_null_space(&H, 1), done);
  if (s->values_full) EF_CALL_GOTO(ef_petsc_csr_wrap(&csr_full, &Hf), done);

  /* Symmetry. */
  EF_CALL_GOTO(check_symmetry(r, "symmetry", "as solved", s, s->values, H.mat), done);
  if (s->values_full)
    EF_CALL_GOTO(check_symmetry(r, "symmetry_full", "before elimination", s, s->values_full, Hf.mat), done);
  else
    skip_check(r, "symmetry_full", "symmetry of H before elimination",
               "the strategy did not provide H before elimination");

  /* Zero row sums before elimination: H_full 1 by MatMult against sum_j |H_ij|. */
  work = malloc((size_t)(2 * n) * sizeof *work);
  EF_CHECK_GOTO(work, EF_ERR_MEMORY, done, "out of memory");
  if (s->values_full) {
    Vec one = NULL, sums = NULL;
    for (int64_t i = 0; i < n; ++i) work[i] = 1.0;
    EF_CALL_GOTO(ef_petsc_vec_wrap(n, work, &one), done);
    err = ef_petsc_vec_wrap(n, work + n, &sums);
    if (!err) {
      PetscErrorCode code = MatMult(Hf.mat, one, sums);
      if (code) err = ef_petsc_error(code, __FILE__, __LINE__, "MatMult(Hf, 1)");
    }
    VecDestroy(&one);
    VecDestroy(&sums);
    if (err) goto done;
    double worst = 0.0;
    int64_t at = -1;
    for (int64_t i = 0; i < n; ++i) {
      double a = 0.0;
      for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) a += fabs(s->values_full[k]);
      double rel = a > 0.0 ? fabs(work[n + i]) / a : fabs(work[n + i]);
      if (!(rel <= worst)) {
        worst = rel;
        at = i;
      }
    }
    ef_verify_check *c =
        add_check(r, "row_sums", "max_i |sum_j H_ij| / sum_j |H_ij| before elimination (PETSc MatMult)", worst,
                  EF_VERIFY_ROW_SUM_BOUND, 0);
    snprintf(c->note, sizeof c->note, "worst row %lld", (long long)at);
  } else {
    skip_check(r, "row_sums", "zero row sums before elimination", "the strategy did not provide H before elimination");
  }

  /* Elimination: fixed rows -> identity, fixed columns -> 0, everything else unchanged. */
  if (s->values_full) {
    double amax = 0.0, dev = 0.0;
    int64_t at = -1;
    for (int64_t k = 0; k < nnz; ++k) amax = fmax(amax, fabs(s->values_full[k]));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) {
        const int64_t j = s->col[k];
        double expect = s->values_full[k];
        if (s->fixed[i])
          expect = j == i ? 1.0 : 0.0;
        else if (s->fixed[j])
          expect = 0.0;
        double d = fabs(s->values[k] - expect);
        if (!(d <= dev)) {
          dev = d;
          at = i;
        }
      }
    ef_verify_check *c = add_check(r, "elimination",
                                   "max|H - E(H_full)|/max|H_full|, E: fixed rows to identity, fixed columns to 0",
                                   amax > 0 ? dev / amax : dev, EF_VERIFY_ELIMINATION_BOUND, 0);
    if (dev > 0)
      snprintf(c->note, sizeof c->note, "%lld fixed rows; worst row %lld", (long long)r->n_fixed, (long long)at);
    else
      snprintf(c->note, sizeof c->note, "%lld fixed rows", (long long)r->n_fixed);
  } else {
    skip_check(r, "elimination", "H as solved against H before elimination",
               "the strategy did not provide H before elimination");
  }

  /* Device (or host) SpMV against MatMult. */
  EF_CALL_GOTO(check_spmv(r, s, &csr, H.mat, &o), done);

  /* The strategy's solution. */
  double dmin_all = INFINITY, dmax_free = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = diag[i] >= 0 ? s->values[diag[i]] : 0.0;
    dmin_all = fmin(dmin_all, d);
    if (!s->fixed[i]) dmax_free = fmax(dmax_free, d);
  }
  const double spread = dmin_all > 0.0 ? sqrt(dmax_free / dmin_all) : INFINITY;
  {
    double scaled = NAN, plain = NAN;
    EF_CALL_GOTO(residuals(H.mat, s->rhs, s->solution, n, null_space, &scaled, &plain), done);
    char desc[200];
    snprintf(desc, sizeof desc, "solver's x: ||D^-1/2(b-Hx)||/||D^-1/2 b|| (PETSc MatMult) <= %g tol", F);
    ef_verify_check *c = add_check(r, "residual_scaled", desc, scaled, F * s->tolerance, 0);
    snprintf(c->note, sizeof c->note, "solver reported %.3e after %d iterations (tol %.1e)", s->relative_residual,
             s->iterations, s->tolerance);
    snprintf(desc, sizeof desc, "solver's x: ||b-Hx||/||b|| <= %g tol sqrt(max_free D/min D)", F);
    c = add_check(r, "residual", desc, plain, F * s->tolerance * spread, 0);
    snprintf(c->note, sizeof c->note, "sqrt(max_free D/min D) = %.3g", spread);
  }

  /* PETSc's own CG + Jacobi on the same system and warm start. */
  {
    int its = 0, reason = 0;
    double secs = 0.0, scaled = NAN, plain = NAN;
    dvals = malloc((size_t)n * sizeof *dvals);
    EF_CHECK_GOTO(dvals, EF_ERR_MEMORY, done, "out of memory");
    EF_CALL_GOTO(petsc_reference_cg(H.mat, s->rhs, s->initial_guess, n, null_space, s->tolerance, dvals, &its,
                                    &reason, &secs),
                 done);
    EF_CALL_GOTO(residuals(H.mat, s->rhs, dvals, n, null_space, &scaled, &plain), done);
    r->petsc_iterations = its;
    r->petsc_seconds = secs;
    char desc[200];
    snprintf(desc, sizeof desc,
             "PETSc KSPCG+PCJACOBI (natural norm, rtol = tol): ||D^-1/2(b-Hx)||/||D^-1/2 b|| <= %g tol", F);
    ef_verify_check *c = add_check(r, "petsc_cg", desc, scaled, F * s->tolerance, 0);
    /* How far apart the two solutions are (in 1-perp when H is singular). */
    double dx = 0.0, xn = 0.0, ma = 0.0, mb = 0.0;
    if (null_space) {
      for (int64_t i = 0; i < n; ++i) {
        ma += s->solution[i];
        mb += dvals[i];
      }
      ma /= (double)n;
      mb /= (double)n;
    }
    for (int64_t i = 0; i < n; ++i) {
      double a = s->solution[i] - ma, b = dvals[i] - mb;
      dx += (a - b) * (a - b);
      xn += b * b;
    }
    snprintf(c->note, sizeof c->note, "iterations: solver %d, PETSc %d (%s, %.3f s); ||x-x_petsc||/||x_petsc|| = %.2e",
             s->iterations, its, KSPConvergedReasons[reason], secs, xn > 0 ? sqrt(dx / xn) : sqrt(dx));
    if (reason <= 0) fail_check(r, c, "PETSc KSPCG+PCJACOBI did not converge");
  }

done:
  ef_petsc_csr_release(&H);
  ef_petsc_csr_release(&Hf);
  free(diag);
  free(work);
  free(dvals);
  return err;
}

/* The report as a table: measured value, bound and verdict per check. */
void ef_verify_report_print(const ef_verify_report *r, FILE *out) {
  fprintf(out, "pressure system: %lld rows, %lld nonzeros, %lld fixed; tolerance %.1e; strategy %s\n",
          (long long)r->n, (long long)r->nnz, (long long)r->n_fixed, r->tolerance,
          r->strategy[0] ? r->strategy : "(not given)");
  fprintf(out, "CG iterations: solver %d, PETSc KSPCG+PCJACOBI %d; SpMV checked on %s\n", r->solver_iterations,
          r->petsc_iterations, r->spmv_device[0] ? r->spmv_device : "-");
  fprintf(out, "%-16s %12s %4s %-12s %-6s %s\n", "check", "measured", "", "bound", "result", "what / note");
  for (int i = 0; i < r->n_checks; ++i) {
    const ef_verify_check *c = &r->checks[i];
    if (c->skipped) {
      fprintf(out, "%-16s %12s %4s %-12s %-6s %s (%s)\n", c->name, "-", "", "-", "SKIP", c->description, c->note);
      continue;
    }
    fprintf(out, "%-16s %12.4e %4s %-12.4e %-6s %s%s%s\n", c->name, c->measured, c->lower_bound ? ">" : "<=",
            c->bound, c->passed ? "PASS" : "FAIL", c->description, c->note[0] ? "; " : "", c->note);
  }
  fprintf(out, "%d checks: %d passed, %d failed, %d skipped\n", r->n_checks, r->n_checks - r->n_failed - r->n_skipped,
          r->n_failed, r->n_skipped);
}

/* s as a JSON string literal. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* A number, or null for NaN/Inf (JSON has neither). */
static void json_number(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.6e", v);
  else
    fputs("null", f);
}

/* The report as JSON, checked by parsing it back, written atomically. */
int ef_verify_report_write_json(const ef_verify_report *r, const char *path) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory writing the verify report");
  fprintf(f, "{\n  \"strategy\": ");
  json_string(f, r->strategy);
  fprintf(f, ",\n  \"rows\": %lld, \"nonzeros\": %lld, \"fixed_rows\": %lld,\n  \"tolerance\": ", (long long)r->n,
          (long long)r->nnz, (long long)r->n_fixed);
  json_number(f, r->tolerance);
  fprintf(f, ",\n  \"solver_iterations\": %d, \"solver_residual\": ", r->solver_iterations);
  json_number(f, r->solver_residual);
  fprintf(f, ",\n  \"petsc_cg_jacobi_iterations\": %d, \"petsc_cg_jacobi_seconds\": ", r->petsc_iterations);
  json_number(f, r->petsc_seconds);
  fprintf(f, ",\n  \"spmv_device\": ");
  json_string(f, r->spmv_device);
  fprintf(f, ",\n  \"passed\": %s, \"failed_checks\": %d, \"skipped_checks\": %d,\n  \"checks\": [",
          r->n_failed ? "false" : "true", r->n_failed, r->n_skipped);
  for (int i = 0; i < r->n_checks; ++i) {
    const ef_verify_check *c = &r->checks[i];
    fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
    json_string(f, c->name);
    fprintf(f, ", \"result\": \"%s\", \"measured\": ", c->skipped ? "skip" : c->passed ? "pass" : "fail");
    json_number(f, c->skipped ? NAN : c->measured);
    fprintf(f, ", \"bound\": ");
    json_number(f, c->skipped ? NAN : c->bound);
    fprintf(f, ", \"relation\": \"%s\", \"description\": ", c->lower_bound ? ">" : "<=");
    json_string(f, c->description);
    fprintf(f, ", \"note\": ");
    json_string(f, c->note);
    fputc('}', f);
  }
  fprintf(f, "\n  ]\n}\n");
  if (fclose(f)) {
    free(text);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory writing the verify report");
  }
  /* Parse it back: a report nobody can read is worse than none. */
  ef_parameters check = NULL;
  int err = ef_parameters_parse(text, "<verify report>", &check);
  ef_parameters_destroy(&check);
  if (!err) err = ef_write_text_file_atomic(path, text);
  free(text);
  return err;
}

/* The help text of `edgeflow verify`. */
static void verify_usage(FILE *f) {
  fprintf(f,
          "usage: edgeflow verify ProjectParameters.json [options]\n"
          "  runs N steps, takes the last pressure system from the strategy and checks it with PETSc\n"
          "  --steps N            time steps before the check (default 3)\n"
          "  --solver-type NAME   strategy (default: %s)\n"
          "  --refine K           override model_import_settings.refinement_levels\n"
          "  --output DIR         output folder (verify_report.json, run_summary.json)\n"
          "  --device SPEC        OpenCL device, as EDGEFLOW_OPENCL_DEVICE (\"Portable:0\", \"gpu\")\n"
          "  --host-spmv          check the host SpMV instead of the device's\n"
          "  --no-tune            device SpMV with default parameters instead of the tuner's\n"
          "  --seed S             seed of the random SpMV vectors (default 12345)\n"
          "  --residual-factor F  residual bounds are F x tolerance (default 2; below 1 demands more than\n"
          "                       the solver was asked for, which makes the check fail on purpose)\n"
          "  --quiet              no progress lines and no table unless a check fails (the JSON is written)\n",
#ifdef EF_HAVE_OPENCL
          "opencl_edge_based"
#else
          "openmp_edge_based"
#endif
  );
}

/* Parse a whole decimal integer in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *v) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || !*s || *end || x < lo || x > hi) return 1;
  *v = x;
  return 0;
}

/* `edgeflow verify`: run N steps, copy the last pressure system, check it, report. */
int ef_command_verify(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    verify_usage(stdout);
    return EF_SUCCESS;
  }
  if (argc < 2 || argv[1][0] == '-')
    return EF_ERROR(EF_ERR_PARAMETER, "verify: the parameters file is missing (edgeflow verify --help)");
  ef_analysis_options ao;
  ef_analysis_options_default(&ao);
  ef_verify_options vo;
  ef_verify_options_default(&vo);
  ao.max_steps = 3;
#ifdef EF_HAVE_OPENCL
  ao.solver_type = "opencl_edge_based";
#else
  ao.solver_type = "openmp_edge_based";
#endif
  int host_spmv = 0;
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long x;
    if (!strcmp(a, "--quiet")) {
      ao.quiet = 1;
    } else if (!strcmp(a, "--host-spmv")) {
      host_spmv = 1;
    } else if (!strcmp(a, "--no-tune")) {
      vo.tune = 0;
    } else if (!v) {
      return EF_ERROR(EF_ERR_PARAMETER, "verify: unknown or incomplete option '%s' (edgeflow verify --help)", a);
    } else if (!strcmp(a, "--steps")) {
      EF_CHECK(!parse_long(v, 1, 1000000000L, &x), EF_ERR_PARAMETER,
               "verify: --steps expects a positive integer, got '%s'", v);
      ao.max_steps = x;
      ++i;
    } else if (!strcmp(a, "--refine")) {
      EF_CHECK(!parse_long(v, 0, 8, &x), EF_ERR_PARAMETER, "verify: --refine expects 0..8, got '%s'", v);
      ao.refinement_levels = (int)x;
      ++i;
    } else if (!strcmp(a, "--seed")) {
      EF_CHECK(!parse_long(v, 0, 2147483647L, &x), EF_ERR_PARAMETER,
               "verify: --seed expects an integer >= 0, got '%s'", v);
      vo.seed = (uint64_t)x;
      ++i;
    } else if (!strcmp(a, "--residual-factor")) {
      char *end;
      double f = strtod(v, &end);
      EF_CHECK(*v && !*end && f > 0.0 && f <= 1e6, EF_ERR_PARAMETER,
               "verify: --residual-factor expects a positive number, got '%s'", v);
      vo.residual_factor = f;
      ++i;
    } else if (!strcmp(a, "--solver-type")) {
      ao.solver_type = v;
      ++i;
    } else if (!strcmp(a, "--output")) {
      ao.output_folder = v;
      ++i;
    } else if (!strcmp(a, "--device")) {
      /* The strategy and the SpMV check read the same variable, so both use this device. */
      EF_CHECK(setenv("EDGEFLOW_OPENCL_DEVICE", v, 1) == 0, EF_ERR_INTERNAL, "verify: setenv failed");
      ++i;
    } else {
      return EF_ERROR(EF_ERR_PARAMETER, "verify: unknown option '%s' (edgeflow verify --help)", a);
    }
  }
  /* The device strategy is what is being verified: its SpMV must be the device's. */
  vo.use_device = host_spmv ? 0 : strcmp(ao.solver_type, "opencl_edge_based") ? 1 : 2;

  int err = EF_SUCCESS;
  ef_analysis a = NULL;
  ef_pressure_system sys;
  memset(&sys, 0, sizeof sys);
  ef_verify_report *rep = calloc(1, sizeof *rep);
  EF_CHECK(rep, EF_ERR_MEMORY, "out of memory");
  EF_CALL_GOTO(ef_petsc_initialize(), done);
  EF_CALL_GOTO(ef_analysis_create(argv[1], &ao, &a), done);
  EF_CALL_GOTO(ef_analysis_initialize(a), done);
  EF_CALL_GOTO(ef_analysis_run_solution_loop(a), done);
  EF_CHECK_GOTO(ef_analysis_step(a) > 0, EF_ERR_PARAMETER, done, "verify: %s: no time step was run (end_time reached?)",
                argv[1]);
  EF_CALL_GOTO(ef_analysis_copy_pressure_system(a, &sys), done);
  EF_CALL_GOTO(ef_analysis_finalize(a), done);
  EF_CALL_GOTO(ef_verify_pressure_system(&sys, ef_analysis_model_part(a), &vo, rep), done);
  snprintf(rep->strategy, sizeof rep->strategy, "%s", ao.solver_type);
  if (!ao.quiet) ef_verify_report_print(rep, stdout);
  char path[4200];
  snprintf(path, sizeof path, "%s/verify_report.json", ef_analysis_output_folder(a));
  EF_CALL_GOTO(ef_verify_report_write_json(rep, path), done);
  if (!ao.quiet) printf("report: %s\n", path);
  if (ao.quiet && rep->n_failed) ef_verify_report_print(rep, stderr); /* failures are never silent */
  if (rep->n_failed) {
    char names[512] = "";
    for (int i = 0; i < rep->n_checks; ++i)
      if (!rep->checks[i].passed && !rep->checks[i].skipped) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", rep->checks[i].name);
      }
    err = EF_ERROR(EF_ERR_SOLVER, "%d of %d checks of the pressure system failed (%s); see %s", rep->n_failed,
                   rep->n_checks, names, path);
  }
done:
  ef_pressure_system_free(&sys);
  ef_analysis_destroy(&a);
  free(rep);
  return err;
}

#else /* !EF_HAVE_PETSC */

/* `edgeflow verify` without PETSc: an error saying so. */
int ef_command_verify(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return EF_ERROR(EF_ERR_UNSUPPORTED,
                  "verify: this build has no PETSc (install petsc-dev and configure with -DEF_WITH_PETSC=ON)");
}

#endif

static const ef_command_ops ef_verify_command_ops = {
    .name = "verify",
#ifdef EF_HAVE_PETSC
    .help = "run N steps and check the last pressure system with PETSc (structure, SpMV, CG solution)",
#else
    .help = "check a strategy's pressure system with PETSc (not in this build: no PETSc)",
#endif
    .run = ef_command_verify,
};

int ef_register_verify_command(void) { return ef_registry_add_command(&ef_verify_command_ops); }

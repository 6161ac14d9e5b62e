/* petsc_bench.c -- the command `edgeflow pressure-bench FILE`: one linear-system file solved
 * from x = 0 to the same scaled relative residual by the host CG and PETSc CG with Jacobi, GAMG
 * and hypre BoomerAMG; iterations and seconds as JSON lines.  Under mpiexec -n P the PETSc
 * solvers run on P ranks (rows split in contiguous blocks) and the host CG is left out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_util.h"
#include "host_cg.h"
#include "matrix_io.h"
#include "petsc_bridge.h"
#include "petsc_solver.h"

#ifdef EF_HAVE_OPENMP
#include <omp.h>
#endif

typedef struct {
  Vec r, t, w, dinv_sqrt;
  double b_scaled; /* ||D^-1/2 b|| */
  double rtol;
  PetscInt max_it;
} ef_bench_test;

/* Convergence test on the true scaled residual ||D^-1/2 (b - A x_k)|| / ||D^-1/2 b|| (one
 * extra SpMV per iteration; used only to count the iterations each solver needs). */
static PetscErrorCode ef_bench_converged(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason *reason,
                                         void *ctx) {
  ef_bench_test *c = ctx;
  Vec r;
  PetscReal rs;
  (void)rnorm;
  *reason = KSP_CONVERGED_ITERATING;
  PetscCall(KSPBuildResidual(ksp, c->t, c->r, &r));
  PetscCall(VecPointwiseMult(c->w, r, c->dinv_sqrt));
  PetscCall(VecNorm(c->w, NORM_2, &rs));
  if (rs <= c->rtol * c->b_scaled)
    *reason = KSP_CONVERGED_RTOL;
  else if (it >= c->max_it)
    *reason = KSP_DIVERGED_ITS;
  else if (PetscIsInfOrNanReal(rs))
    *reason = KSP_DIVERGED_NANORINF;
  return 0;
}

typedef struct {
  const char *file;
  const char *solvers;
  const char *petsc_options;
  double rtol;
  int repeat;
  int max_it;
} ef_bench_options;

/* The slowest rank's time (all ranks wait for each other in the solve anyway). */
static double ef_bench_max(double t) {
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return m;
}

/* 1 when every row sums to zero (no fixed pressure: constant null space). */
static int ef_bench_is_singular(const ef_linear_system *s) {
  for (int64_t i = 0; i < s->n; ++i) {
    double sum = 0.0, abs_sum = 0.0;
    for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) {
      sum += s->values[k];
      abs_sum += fabs(s->values[k]);
    }
    if (fabs(sum) > 1e-10 * abs_sum) return 0;
  }
  return 1;
}

/* Print one result as a JSON line (rank 0). */
static void ef_bench_print(int rank, const char *solver, int ranks, int threads, const ef_linear_system *s,
                           double rtol, int its, double setup, double solve, double relres, int converged,
                           const char *extra) {
  if (rank) return;
  printf("{\"program\": \"edgeflow pressure-bench\", \"solver\": \"%s\", \"ranks\": %d, \"threads\": %d, "
         "\"n\": %lld, \"nnz\": %lld, \"rtol\": %g, \"iterations\": %d, \"setup_s\": %.6f, \"solve_s\": %.6f, "
         "\"total_s\": %.6f, \"us_per_iteration\": %.3f, \"relres_scaled\": %.3e, \"converged\": %s%s%s}\n",
         solver, ranks, threads, (long long)s->n, (long long)s->nnz, rtol, its, setup, solve, setup + solve,
         its > 0 ? 1e6 * solve / its : 0.0, relres, converged ? "true" : "false", extra && extra[0] ? ", " : "",
         extra ? extra : "");
  fflush(stdout);
}

/* Host CG (host_cg.h) from x = 0, best of `repeat` solves. */
static int ef_bench_host_cg(const ef_linear_system *s, const ef_bench_options *o) {
  ef_host_cg *cg = NULL;
  int err = EF_SUCCESS, its = 0, threads = 1;
  double best = INFINITY, res = 0.0;
  int32_t *rp32 = NULL;
  double *x = malloc((size_t)s->n * sizeof *x), *r = malloc((size_t)s->n * sizeof *r);
  rp32 = malloc((size_t)(s->n + 1) * sizeof *rp32);
  EF_CHECK_GOTO(x && r && rp32, EF_ERR_MEMORY, done, "out of memory");
  for (int64_t i = 0; i <= s->n; ++i) rp32[i] = (int32_t)s->row_ptr[i];
  ef_csr A = {s->n, s->nnz, s->row_ptr, rp32, s->col, s->values, NULL, ef_bench_is_singular(s)};
  EF_CALL_GOTO(ef_host_cg_create(s->n, &cg), done);
#ifdef EF_HAVE_OPENMP
  threads = omp_get_max_threads();
#endif
  for (int k = 0; k < o->repeat; ++k) {
    memset(x, 0, (size_t)s->n * sizeof *x);
    double secs;
    EF_CALL_GOTO(ef_host_cg_solve(cg, &A, s->rhs, x, o->rtol, o->max_it, &its, NULL), done);
    ef_host_cg_last(cg, NULL, &secs);
    best = fmin(best, secs);
  }
  res = ef_scaled_residual(&A, s->rhs, x, r);
  ef_bench_print(0, "host_cg", 1, threads, s, o->rtol, its, 0.0, best, res, res <= o->rtol * 1.01, NULL);
done:
  ef_host_cg_destroy(&cg);
  free(x);
  free(r);
  free(rp32);
  return err;
}

/* The matrix on PETSC_COMM_WORLD: wrapped in place on one rank, a contiguous row block per
 * rank otherwise (MatCreateMPIAIJWithArrays copies its block). */
typedef struct {
  ef_petsc_csr seq;
  Mat mat;
  Vec b, x;
  int32_t *rp32;
  PetscInt r0, r1;
} ef_bench_system;

/* Free the benchmark matrix and vectors. */
static void ef_bench_system_free(ef_bench_system *m) {
  if (m->seq.mat) m->mat = NULL; /* the wrapper owns it */
  ef_petsc_csr_release(&m->seq);
  if (m->mat) (void)MatDestroy(&m->mat);
  if (m->b) (void)VecDestroy(&m->b);
  if (m->x) (void)VecDestroy(&m->x);
  free(m->rp32);
  memset(m, 0, sizeof *m);
}

/* The file's system as PETSc objects (see ef_bench_system). */
static int ef_bench_system_create(const ef_linear_system *s, int size, ef_bench_system *m) {
  int err = EF_SUCCESS;
  memset(m, 0, sizeof *m);
  const int singular = ef_bench_is_singular(s);
  if (size == 1) {
    m->rp32 = malloc((size_t)(s->n + 1) * sizeof *m->rp32);
    EF_CHECK(m->rp32, EF_ERR_MEMORY, "out of memory");
    for (int64_t i = 0; i <= s->n; ++i) m->rp32[i] = (int32_t)s->row_ptr[i];
    ef_csr A = {s->n, s->nnz, s->row_ptr, m->rp32, s->col, s->values, NULL, singular};
    EF_CALL(ef_petsc_csr_wrap(&A, &m->seq));
    m->mat = m->seq.mat;
    if (singular) EF_CALL(ef_petsc_csr_set_constant_null_space(&m->seq, 1));
    m->r0 = 0;
    m->r1 = (PetscInt)s->n;
  } else {
    EF_CHECK(sizeof(PetscInt) == sizeof(int32_t), EF_ERR_UNSUPPORTED,
             "pressure-bench: several ranks need a PETSc with 32-bit PetscInt");
    PetscInt local = PETSC_DECIDE, N = (PetscInt)s->n;
    EF_PETSC_CALL(PetscSplitOwnership(PETSC_COMM_WORLD, &local, &N));
    PetscInt start = 0;
    EF_CHECK(MPI_Scan(&local, &start, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD) == MPI_SUCCESS, EF_ERR_PETSC,
             "MPI_Scan failed");
    m->r0 = start - local;
    m->r1 = start;
    PetscInt *ri = malloc((size_t)(local + 1) * sizeof *ri);
    EF_CHECK(ri, EF_ERR_MEMORY, "out of memory");
    const int64_t base = s->row_ptr[m->r0];
    for (PetscInt i = 0; i <= local; ++i) ri[i] = (PetscInt)(s->row_ptr[m->r0 + i] - base);
    err = ef_petsc_mpiaij_create(local, ri, (const PetscInt *)(s->col + base), s->values + base, &m->mat);
    free(ri);
    if (err) return err;
    if (singular) EF_CALL(ef_petsc_set_constant_null_space(m->mat, 1));
  }
  EF_PETSC_CALL(MatCreateVecs(m->mat, &m->x, &m->b));
  PetscScalar *pb;
  EF_PETSC_CALL(VecGetArray(m->b, &pb));
  memcpy(pb, s->rhs + m->r0, (size_t)(m->r1 - m->r0) * sizeof *pb);
  EF_PETSC_CALL(VecRestoreArray(m->b, &pb));
  return err;
}

/* Configure a PETSc CG for one of the benchmark's preconditioners. */
static int ef_bench_ksp(Mat A, const char *pc_name, KSP *out) {
  KSP ksp;
  PC pc;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "ef_bench_%s_", pc_name);
  EF_PETSC_CALL(KSPCreate(PETSC_COMM_WORLD, &ksp));
  *out = ksp;
  EF_PETSC_CALL(KSPSetOptionsPrefix(ksp, prefix));
  EF_PETSC_CALL(KSPSetOperators(ksp, A, A));
  EF_PETSC_CALL(KSPSetType(ksp, KSPCG));
  EF_PETSC_CALL(KSPGetPC(ksp, &pc));
  if (!strcmp(pc_name, "jacobi")) {
    EF_PETSC_CALL(PCSetType(pc, PCJACOBI));
  } else if (!strcmp(pc_name, "gamg")) {
    EF_PETSC_CALL(PCSetType(pc, PCGAMG));
  } else if (!strcmp(pc_name, "hypre") || !strcmp(pc_name, "hypre3d")) {
#ifdef PETSC_HAVE_HYPRE
    EF_PETSC_CALL(PCSetType(pc, PCHYPRE));
    EF_PETSC_CALL(PCHYPRESetType(pc, "boomeramg"));
    /* hypre's advice for 3D Laplacians: strong threshold 0.5, HMIS coarsening, ext+i
     * interpolation truncated to 4 entries, one level of aggressive coarsening (BoomerAMG's
     * defaults are tuned for 2D).  Options given by the user for this prefix win. */
    static const char *const hypre3d[][2] = {{"pc_hypre_boomeramg_strong_threshold", "0.5"},
                                             {"pc_hypre_boomeramg_coarsen_type", "HMIS"},
                                             {"pc_hypre_boomeramg_interp_type", "ext+i"},
                                             {"pc_hypre_boomeramg_P_max", "4"},
                                             {"pc_hypre_boomeramg_agg_nl", "1"}};
    for (size_t i = 0; pc_name[5] && i < sizeof hypre3d / sizeof hypre3d[0]; ++i) {
      char name[160];
      PetscBool given;
      snprintf(name, sizeof name, "-%s%s", prefix, hypre3d[i][0]);
      EF_PETSC_CALL(PetscOptionsHasName(NULL, NULL, name, &given));
      if (!given) EF_PETSC_CALL(PetscOptionsSetValue(NULL, name, hypre3d[i][1]));
    }
#else
    return EF_ERROR(EF_ERR_UNSUPPORTED, "this PETSc has no hypre");
#endif
  } else if (!strcmp(pc_name, "ml")) {
    EF_PETSC_CALL(PCSetType(pc, PCML));
  } else {
    return EF_ERROR(EF_ERR_PARAMETER, "pressure-bench: unknown solver 'petsc_cg_%s' (jacobi, gamg, hypre, hypre3d, ml)",
                    pc_name);
  }
  EF_PETSC_CALL(KSPSetFromOptions(ksp));
  return EF_SUCCESS;
}

/* PETSc CG + pc_name from x = 0 to the scaled residual rtol: first the iterations it needs
 * (exact test on the true scaled residual; for Jacobi the natural norm is that test), then
 * `repeat` timed solves of exactly that many iterations with no norm computed (setup = the
 * preconditioner built again for "new" values, as every time step needs). */
static int ef_bench_petsc(const ef_linear_system *s, ef_bench_system *m, const char *pc_name,
                          const ef_bench_options *o, int rank, int size) {
  KSP ksp = NULL;
  int err = EF_SUCCESS;
  ef_bench_test t;
  memset(&t, 0, sizeof t);
  char name[64];
  snprintf(name, sizeof name, "petsc_cg_%s", pc_name);
  const int jacobi = !strcmp(pc_name, "jacobi");
  EF_CALL_GOTO(ef_bench_ksp(m->mat, pc_name, &ksp), done);
  PC pc;
  EF_PETSC_CALL_GOTO(KSPGetPC(ksp, &pc), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(m->b, &t.r), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(m->b, &t.t), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(m->b, &t.w), done);
  EF_PETSC_CALL_GOTO(VecDuplicate(m->b, &t.dinv_sqrt), done);
  EF_PETSC_CALL_GOTO(MatGetDiagonal(m->mat, t.dinv_sqrt), done);
  EF_PETSC_CALL_GOTO(VecSqrtAbs(t.dinv_sqrt), done);
  EF_PETSC_CALL_GOTO(VecReciprocal(t.dinv_sqrt), done);
  {
    /* ||D^-1/2 b|| of b as KSPSolve sees it (mean removed for a singular matrix). */
    MatNullSpace ns = NULL;
    EF_PETSC_CALL_GOTO(VecCopy(m->b, t.t), done);
    EF_PETSC_CALL_GOTO(MatGetNullSpace(m->mat, &ns), done);
    if (ns) EF_PETSC_CALL_GOTO(MatNullSpaceRemove(ns, t.t), done);
    EF_PETSC_CALL_GOTO(VecPointwiseMult(t.w, t.t, t.dinv_sqrt), done);
    PetscReal bn;
    EF_PETSC_CALL_GOTO(VecNorm(t.w, NORM_2, &bn), done);
    t.b_scaled = bn;
  }
  t.rtol = o->rtol;
  t.max_it = o->max_it;

  /* Pass 1: count. */
  PetscInt its = 0;
  KSPConvergedReason reason;
  EF_PETSC_CALL_GOTO(VecSet(m->x, 0.0), done);
  if (jacobi) {
    EF_PETSC_CALL_GOTO(KSPSetNormType(ksp, KSP_NORM_NATURAL), done);
    EF_PETSC_CALL_GOTO(KSPSetTolerances(ksp, o->rtol, 0.0, PETSC_DEFAULT, o->max_it), done);
  } else {
    EF_PETSC_CALL_GOTO(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED), done);
    EF_PETSC_CALL_GOTO(KSPSetConvergenceTest(ksp, ef_bench_converged, &t, NULL), done);
  }
  EF_PETSC_CALL_GOTO(KSPSolve(ksp, m->b, m->x), done);
  EF_PETSC_CALL_GOTO(KSPGetIterationNumber(ksp, &its), done);
  EF_PETSC_CALL_GOTO(KSPGetConvergedReason(ksp, &reason), done);
  int converged = reason > 0;

  /* Pass 2: time.  Jacobi keeps its natural-norm test (free in CG: r.z is needed anyway). */
  if (!jacobi && converged) {
    EF_PETSC_CALL_GOTO(KSPSetNormType(ksp, KSP_NORM_NONE), done);
    EF_PETSC_CALL_GOTO(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL), done);
    EF_PETSC_CALL_GOTO(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, its), done);
  }
  double best_setup = INFINITY, best_solve = INFINITY;
  PetscInt its2 = its;
  for (int k = 0; k < o->repeat && converged; ++k) {
    /* New values (same pattern) for the preconditioner, as after a time step. */
    if (m->seq.mat)
      EF_CALL_GOTO(ef_petsc_csr_values_changed(&m->seq), done);
    else {
      PetscScalar *a;
      Mat Ad;
      EF_PETSC_CALL_GOTO(MatMPIAIJGetSeqAIJ(m->mat, &Ad, NULL, NULL), done);
      EF_PETSC_CALL_GOTO(MatSeqAIJGetArray(Ad, &a), done);
      EF_PETSC_CALL_GOTO(MatSeqAIJRestoreArray(Ad, &a), done);
      EF_PETSC_CALL_GOTO(MatAssemblyBegin(m->mat, MAT_FINAL_ASSEMBLY), done);
      EF_PETSC_CALL_GOTO(MatAssemblyEnd(m->mat, MAT_FINAL_ASSEMBLY), done);
    }
    EF_PETSC_CALL_GOTO(VecSet(m->x, 0.0), done);
    MPI_Barrier(PETSC_COMM_WORLD);
    double t0 = ef_wtime();
    /* KSPSolve would rebuild the preconditioner on its own; PCSetUp here times it apart. */
    EF_PETSC_CALL_GOTO(KSPSetUp(ksp), done);
    EF_PETSC_CALL_GOTO(PCSetUp(pc), done);
    double t1 = ef_wtime();
    EF_PETSC_CALL_GOTO(KSPSolve(ksp, m->b, m->x), done);
    double t2 = ef_wtime();
    best_setup = fmin(best_setup, ef_bench_max(t1 - t0));
    best_solve = fmin(best_solve, ef_bench_max(t2 - t1));
    EF_PETSC_CALL_GOTO(KSPGetIterationNumber(ksp, &its2), done);
  }
  /* The true scaled residual of the timed solution. */
  Vec r;
  PetscReal rs = NAN;
  EF_PETSC_CALL_GOTO(KSPBuildResidual(ksp, t.t, t.r, &r), done);
  EF_PETSC_CALL_GOTO(VecPointwiseMult(t.w, r, t.dinv_sqrt), done);
  EF_PETSC_CALL_GOTO(VecNorm(t.w, NORM_2, &rs), done);
  char extra[160];
  snprintf(extra, sizeof extra, "\"stopping\": \"%s\", \"timed_iterations\": %d",
           jacobi ? "natural norm (= scaled residual)"
                  : "iterations counted on the true scaled residual, timed without norms",
           (int)its2);
  if (!converged) {
    best_setup = best_solve = NAN;
    snprintf(extra, sizeof extra, "\"reason\": \"%s\"", KSPConvergedReasons[reason]);
  }
  ef_bench_print(rank, name, size, 1, s, o->rtol, (int)its, best_setup, best_solve,
                 t.b_scaled > 0 ? rs / t.b_scaled : rs, converged && rs <= 1.01 * o->rtol * t.b_scaled, extra);
done:
  if (ksp) KSPDestroy(&ksp);
  VecDestroy(&t.r);
  VecDestroy(&t.t);
  VecDestroy(&t.w);
  VecDestroy(&t.dinv_sqrt);
  return err;
}

/* The help text of `edgeflow pressure-bench`. */
static void ef_bench_usage(FILE *f) {
  fprintf(f,
          "usage: [mpiexec -n P] edgeflow pressure-bench FILE [options]\n"
          "  FILE                a linear system (matrix_io.h: the export_pressure_system format)\n"
          "  --rtol R            scaled relative residual to reach from x = 0 (default 1e-8)\n"
          "  --solvers LIST      comma-separated: host_cg, petsc_cg_jacobi, petsc_cg_gamg, petsc_cg_hypre (BoomerAMG\n"
          "                      defaults), petsc_cg_hypre3d (BoomerAMG with hypre's 3D settings), petsc_cg_ml\n"
          "                      (default host_cg,petsc_cg_jacobi,petsc_cg_gamg,petsc_cg_hypre,petsc_cg_hypre3d)\n"
          "  --repeat K          timed repetitions, the best is kept (default 3)\n"
          "  --max-iterations N  (default 100000)\n"
          "  --petsc-options S   PETSc options; solver petsc_cg_X reads prefix -ef_bench_X_\n"
          "                      (\"-ef_bench_gamg_pc_gamg_threshold 0.05 -ef_bench_jacobi_ksp_monitor\")\n"
          "One JSON line per solver.  The host CG runs with OMP_NUM_THREADS threads and only on one rank.\n");
}

/* `edgeflow pressure-bench FILE`: every requested solver on the file, one JSON line each. */
static int ef_command_pressure_bench(int argc, char **argv) {
  ef_bench_options o;
  memset(&o, 0, sizeof o);
  o.rtol = 1e-8;
  o.repeat = 3;
  o.max_it = 100000;
  o.solvers = "host_cg,petsc_cg_jacobi,petsc_cg_gamg,petsc_cg_hypre,petsc_cg_hypre3d";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      ef_bench_usage(stdout);
      return EF_SUCCESS;
    } else if (a[0] != '-' && !o.file) {
      o.file = a;
    } else if (!v) {
      ef_bench_usage(stderr);
      return EF_ERROR(EF_ERR_PARAMETER, "pressure-bench: unknown or incomplete option '%s'", a);
    } else if (!strcmp(a, "--rtol")) {
      o.rtol = strtod(v, &end);
      EF_CHECK(*v && !*end && o.rtol > 0 && o.rtol < 1, EF_ERR_PARAMETER, "pressure-bench: --rtol expects (0, 1)");
      ++i;
    } else if (!strcmp(a, "--repeat")) {
      o.repeat = (int)strtol(v, &end, 10);
      EF_CHECK(*v && !*end && o.repeat >= 1 && o.repeat <= 1000, EF_ERR_PARAMETER,
               "pressure-bench: --repeat expects 1..1000");
      ++i;
    } else if (!strcmp(a, "--max-iterations")) {
      o.max_it = (int)strtol(v, &end, 10);
      EF_CHECK(*v && !*end && o.max_it >= 1, EF_ERR_PARAMETER,
               "pressure-bench: --max-iterations expects a positive integer");
      ++i;
    } else if (!strcmp(a, "--solvers")) {
      o.solvers = v;
      ++i;
    } else if (!strcmp(a, "--petsc-options")) {
      o.petsc_options = v;
      ++i;
    } else {
      ef_bench_usage(stderr);
      return EF_ERROR(EF_ERR_PARAMETER, "pressure-bench: unknown option '%s'", a);
    }
  }
  if (!o.file) {
    ef_bench_usage(stderr);
    return EF_ERROR(EF_ERR_PARAMETER, "pressure-bench: no system file given");
  }
  EF_CALL(ef_petsc_initialize());
  EF_CALL(ef_petsc_insert_options(o.petsc_options));
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  ef_linear_system *s = NULL;
  ef_bench_system m;
  memset(&m, 0, sizeof m);
  int err = EF_SUCCESS;
  EF_CALL_GOTO(ef_linear_system_read(o.file, &s), done);
  EF_CALL_GOTO(ef_bench_system_create(s, size, &m), done);
  char list[512];
  snprintf(list, sizeof list, "%s", o.solvers);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strcmp(tok, "host_cg")) {
      if (size == 1) EF_CALL_GOTO(ef_bench_host_cg(s, &o), done);
    } else if (!strncmp(tok, "petsc_cg_", 9)) {
      EF_CALL_GOTO(ef_bench_petsc(s, &m, tok + 9, &o, rank, size), done);
    } else {
      err = EF_ERROR(EF_ERR_PARAMETER, "pressure-bench: unknown solver '%s'", tok);
      goto done;
    }
  }
done:
  ef_bench_system_free(&m);
  ef_linear_system_destroy(&s);
  return err;
}

static const ef_command_ops ef_pressure_bench_ops = {
    .name = "pressure-bench",
    .help = "time a pressure-system file: host CG and PETSc CG with Jacobi, GAMG, hypre BoomerAMG",
    .run = ef_command_pressure_bench,
};

int ef_register_petsc_bench(void) { return ef_registry_add_command(&ef_pressure_bench_ops); }

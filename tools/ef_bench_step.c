/* ef_bench_step.c -- benchmark of the OpenMP fractional-step executor on a 3D lid-driven
 * cavity: unit cube of Kuhn tetrahedra with N = 16 * 2^level cells per side (level 0: 4913
 * nodes, 1: 35937, 2: 274625), lid z = 1 moving at (1, 0, 0) (rim excluded), no slip
 * elsewhere, reference pressure 0 at one corner, nu = 0.01 (Re 100).
 * Prints time per step and per phase, CG iterations and time per CG iteration, and the
 * effective bandwidth of the momentum phase (ef_fs_momentum_bytes: 4 stages x (16 doubles +
 * 1 int per directed edge + the node vectors), neighbour gathers assumed cached) against the
 * STREAM triad measured in the same run with the same threads.  With PETSc in the build,
 * the last pressure system is also solved by KSPCG + PCJACOBI (natural norm, the same
 * stopping test) for the time per iteration.
 * Usage: ef_bench_step [-l level | -N cells] [-s steps (5)] [-j jitter (0)] [-t cfl (0.5)]
 *                      [-o out.json] [--no-triad]
 * Text on stdout; JSON with -o. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "host_cg.h"
#include "ef_triad.h"
#include "../tests/ef_test_mesh.h"

#ifdef EF_HAVE_PETSC
#include <petscksp.h>
#endif

typedef struct {
  int64_t n_lid;
  int64_t *lid;
} lid_ctx;

/* Lid velocity (1, 0, 0) on the lid nodes; every other fixed value is 0 (left as is). */
static int lid_values(void *ctx, double t, double *velocity, double *pressure) {
  const lid_ctx *c = ctx;
  (void)t;
  (void)pressure;
  for (int64_t k = 0; k < c->n_lid; ++k) {
    velocity[3 * c->lid[k]] = 1.0;
    velocity[3 * c->lid[k] + 1] = 0.0;
    velocity[3 * c->lid[k] + 2] = 0.0;
  }
  return 0;
}

#ifdef EF_HAVE_PETSC
/* Solve H x = f with KSPCG + PCJACOBI from x = 0, natural norm (sqrt(r^T D^-1 r), the host
 * CG's test), rtol relative to the natural norm of b; returns seconds per iteration. */
static int petsc_cg(const ef_csr *H, const double *f, double rtol, int *its, double *sec_per_it,
                    double *total) {
  if (!H->row_ptr32) return 1;
  Mat A;
  Vec b, x;
  KSP ksp;
  PC pc;
  PetscInt n = (PetscInt)H->n;
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, n, n, (PetscInt *)H->row_ptr32, (PetscInt *)H->col,
                                      (PetscScalar *)H->val, &A));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, f, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_NATURAL));
  PetscCall(KSPSetTolerances(ksp, rtol, 0.0, 1e30, 100000));
  PetscCall(KSPSetUp(ksp));
  /* One untimed solve (page faults, PC setup), then the timed one. */
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(VecSet(x, 0.0));
  double t0 = ef_wtime();
  PetscCall(KSPSolve(ksp, b, x));
  double t1 = ef_wtime();
  PetscInt it;
  PetscCall(KSPGetIterationNumber(ksp, &it));
  *its = (int)it;
  *total = t1 - t0;
  *sec_per_it = it > 0 ? (t1 - t0) / (double)it : 0.0;
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  return 0;
}
#endif

/* Build the cavity, run the timed steps and print the figures. */
int main(int argc, char **argv) {
  int level = 0, N = -1, steps = 5, triad = 1;
  double jitter = 0.0, cfl = 0.5;
  const char *json = NULL;
  for (int k = 1; k < argc; ++k) {
    if (!strcmp(argv[k], "-l") && k + 1 < argc)
      level = atoi(argv[++k]);
    else if (!strcmp(argv[k], "-N") && k + 1 < argc)
      N = atoi(argv[++k]);
    else if (!strcmp(argv[k], "-s") && k + 1 < argc)
      steps = atoi(argv[++k]);
    else if (!strcmp(argv[k], "-j") && k + 1 < argc)
      jitter = atof(argv[++k]);
    else if (!strcmp(argv[k], "-t") && k + 1 < argc)
      cfl = atof(argv[++k]);
    else if (!strcmp(argv[k], "-o") && k + 1 < argc)
      json = argv[++k];
    else if (!strcmp(argv[k], "--no-triad"))
      triad = 0;
    else {
      fprintf(stderr, "usage: %s [-l level | -N cells] [-s steps] [-j jitter] [-t cfl] [-o out.json] [--no-triad]\n",
              argv[0]);
      return 2;
    }
  }
  if (N < 0) N = 16 << level;
  if (N < 2 || steps < 1) {
    fprintf(stderr, "ef_bench_step: need N >= 2 and steps >= 1\n");
    return 2;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
#ifdef EF_HAVE_PETSC
  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
#endif

  double t0 = ef_wtime();
  ef_test_mesh m;
  if (ef_test_mesh_3d(N, N, N, 1.0, 1.0, 1.0, jitter, 1234, &m)) {
    fprintf(stderr, "ef_bench_step: mesh generation failed\n");
    return 1;
  }
  double t_mesh = ef_wtime() - t0;
  const int64_t n = m.n_nodes;
  ef_edge_data ed;
  t0 = ef_wtime();
  if (ef_edge_data_build(3, n, m.coords, m.n_elements, 4, m.elements, &ed)) {
    fprintf(stderr, "ef_bench_step: %s\n", ef_error_message());
    return 1;
  }
  const double t_edges = ef_wtime() - t0;

  double *u = calloc(3 * (size_t)n, sizeof(double)), *p = calloc((size_t)n, sizeof(double));
  double *reaction = calloc(3 * (size_t)n, sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *pfix = calloc((size_t)n, 1);
  lid_ctx lid = {0, malloc((size_t)n * sizeof(int64_t))};
  if (!u || !p || !reaction || !vfix || !pfix || !lid.lid) return 1;
  for (int64_t i = 0; i < n; ++i) {
    if (!m.boundary[i]) continue;
    vfix[3 * i] = vfix[3 * i + 1] = vfix[3 * i + 2] = 1;
    if (m.boundary[i] == EF_TM_ZMAX) {
      lid.lid[lid.n_lid++] = i;
      u[3 * i] = 1.0;
    }
  }
  pfix[0] = 1; /* corner (0,0,0): reference pressure */
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = 0.01;
  s.velocity_fixed = vfix;
  s.pressure_fixed = pfix;
  s.eval_fixed = lid_values;
  s.eval_fixed_ctx = &lid;
  s.pressure_rtol = 1e-6;
  ef_fs *fs = NULL;
  if (ef_fs_create(&ed, &s, &fs)) {
    fprintf(stderr, "ef_bench_step: %s\n", ef_error_message());
    return 1;
  }
  ef_fs_dt_settings dts = {0, 0.0, cfl, 1e-8, 1.0, 0.0};
  double t = 0.0;
  ef_fs_stats sum, st;
  memset(&sum, 0, sizeof sum);
  int cg_its = 0;
  /* One warm-up step (first touch of the work arrays), then the timed steps. */
  for (int k = 0; k <= steps; ++k) {
    double dt;
    if (ef_fs_compute_dt(fs, u, &dts, &dt, NULL, NULL) || ef_fs_step(fs, t, dt, u, p, reaction, &st)) {
      fprintf(stderr, "ef_bench_step: step %d: %s\n", k, ef_error_message());
      return 1;
    }
    t += dt;
    if (k == 0) continue;
    sum.seconds_prepare += st.seconds_prepare;
    sum.seconds_momentum += st.seconds_momentum;
    sum.seconds_assembly += st.seconds_assembly;
    sum.seconds_solve += st.seconds_solve;
    sum.seconds_correction += st.seconds_correction;
    sum.seconds_total += st.seconds_total;
    cg_its += st.cg_iterations;
  }
  const double per_step = sum.seconds_total / steps;
  const double per_it = cg_its > 0 ? sum.seconds_solve / cg_its : 0.0;
  const double mom_bytes = ef_fs_momentum_bytes(fs);
  const double mom_gbs = mom_bytes / (sum.seconds_momentum / steps) * 1e-9;
  /* CG bytes per iteration: matrix (8 + 4 per nonzero) + offsets + ~9 vector streams. */
  const ef_csr *H = ef_fs_pressure_matrix(fs);
  const double cg_bytes = (double)H->nnz * 12.0 + (double)n * (8.0 + 9 * 8.0);
  const double cg_gbs = per_it > 0 ? cg_bytes / per_it * 1e-9 : 0.0;
  double triad_gbs = -1.0;
  if (triad) triad_gbs = ef_triad_bandwidth((int64_t)1 << 25, 10, NULL);

  int petsc_its = -1, ours_its = 0;
  double petsc_per_it = 0.0, ours_per_it = 0.0;
#ifdef EF_HAVE_PETSC
  {
    double petsc_total = 0.0, ours_total = 0.0;
    /* The same system for both: the last H and f, from x = 0. */
    double *x = calloc((size_t)n, sizeof(double));
    ef_host_cg *cg = NULL;
    if (x && !ef_host_cg_create(n, &cg)) {
      ef_host_cg_solve(cg, H, ef_fs_pressure_rhs(fs), x, s.pressure_rtol, 100000, &ours_its, NULL);
      memset(x, 0, (size_t)n * sizeof(double));
      ef_host_cg_solve(cg, H, ef_fs_pressure_rhs(fs), x, s.pressure_rtol, 100000, &ours_its, NULL);
      ef_host_cg_last(cg, NULL, &ours_total);
      ours_per_it = ours_its > 0 ? ours_total / ours_its : 0.0;
      if (petsc_cg(H, ef_fs_pressure_rhs(fs), s.pressure_rtol, &petsc_its, &petsc_per_it, &petsc_total))
        petsc_its = -1;
    }
    ef_host_cg_destroy(&cg);
    free(x);
  }
#endif

  printf("ef_bench_step: 3D cavity N = %d (level %d), %lld nodes, %lld elements, %lld directed edges, "
         "%.1f MB edge data, %d threads\n",
         N, level, (long long)n, (long long)m.n_elements, (long long)ed.n_edges, ef_edge_data_bytes(&ed) / 1e6,
         threads);
  printf("  mesh %.3f s, edge data %.3f s; %d timed steps (after 1 warm-up), t = %.4g\n", t_mesh, t_edges, steps, t);
  printf("  per step     %10.3f ms\n", 1e3 * per_step);
  printf("    prepare    %10.3f ms\n", 1e3 * sum.seconds_prepare / steps);
  printf("    momentum   %10.3f ms  (%.2f GB/s effective, %.1f MB per step)\n", 1e3 * sum.seconds_momentum / steps,
         mom_gbs, mom_bytes / 1e6);
  printf("    assembly   %10.3f ms\n", 1e3 * sum.seconds_assembly / steps);
  printf("    solve      %10.3f ms  (%.1f CG iterations per step, %.1f us per iteration, %.2f GB/s)\n",
         1e3 * sum.seconds_solve / steps, (double)cg_its / steps, 1e6 * per_it, cg_gbs);
  printf("    correction %10.3f ms\n", 1e3 * sum.seconds_correction / steps);
  if (triad) printf("  STREAM triad %.2f GB/s: momentum at %.0f%% of triad\n", triad_gbs, 100.0 * mom_gbs / triad_gbs);
  if (petsc_its >= 0)
    printf("  same system from 0: host CG %d its %.1f us/it; PETSc KSPCG+PCJACOBI (1 rank) %d its %.1f us/it; "
           "ratio %.2f\n",
           ours_its, 1e6 * ours_per_it, petsc_its, 1e6 * petsc_per_it, ours_per_it / petsc_per_it);
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "ef_bench_step: cannot write %s\n", json);
      return 1;
    }
    fprintf(f,
            "{\"benchmark\": \"fractional_step_openmp\", \"case\": \"cavity3d\", \"N\": %d, \"level\": %d, "
            "\"nodes\": %lld, \"elements\": %lld, \"directed_edges\": %lld, \"threads\": %d, \"steps\": %d,\n"
            " \"seconds_edge_data\": %.6e, \"seconds_per_step\": %.6e, \"seconds_prepare\": %.6e, "
            "\"seconds_momentum\": %.6e, \"seconds_assembly\": %.6e, \"seconds_solve\": %.6e, "
            "\"seconds_correction\": %.6e,\n"
            " \"cg_iterations_per_step\": %.2f, \"seconds_per_cg_iteration\": %.6e, \"cg_GB_per_s\": %.4f,\n"
            " \"momentum_bytes_per_step\": %.6e, \"momentum_GB_per_s\": %.4f, \"triad_GB_per_s\": %.4f,\n"
            " \"petsc_iterations\": %d, \"petsc_seconds_per_iteration\": %.6e, \"host_cg_iterations\": %d, "
            "\"host_cg_seconds_per_iteration\": %.6e}\n",
            N, level, (long long)n, (long long)m.n_elements, (long long)ed.n_edges, threads, steps, t_edges,
            per_step, sum.seconds_prepare / steps, sum.seconds_momentum / steps, sum.seconds_assembly / steps,
            sum.seconds_solve / steps, sum.seconds_correction / steps, (double)cg_its / steps, per_it, cg_gbs,
            mom_bytes, mom_gbs, triad_gbs, petsc_its, petsc_per_it, ours_its, ours_per_it);
    fclose(f);
  }
  ef_fs_destroy(&fs);
  ef_edge_data_free(&ed);
  ef_test_mesh_free(&m);
  free(u);
  free(p);
  free(reaction);
  free(vfix);
  free(pfix);
  free(lid.lid);
#ifdef EF_HAVE_PETSC
  PetscFinalize();
#endif
  return 0;
}

/* test_fs_pressure_guess.c -- the pressure solve's initial guess (ef_fs_settings.pressure_guess, issue 12): the
 * start-up of a 2D channel (fixed parabolic inlet on a jittered mesh, walls, outlet pressure 0.5 fixed) at the
 * automatic step (CFL 0.5), 150 steps (t = 0.52), built-in Jacobi CG to rtol 1e-8.  An executor with "linear"
 * (then "quadratic") runs the trajectory; before each of its steps a second executor with "previous" takes the same
 * step from the same state.  Per step:
 *   - both assemble the same pressure system (H and f bit for bit): the guess moves only the start;
 *   - the solutions differ only as the tolerance allows.  The solver stops when ||f - H p||_D < rtol ||f||_D
 *     (the D^-1-weighted norm of its Jacobi CG, D = diag H), so for the two solutions
 *     ||H (p_guess - p_prev)||_D <= 2 rtol ||f||_D; checked with the true residuals, up to 1e-3 of the bound for
 *     the drift of the CG's recursive residual;
 *   - the fixed-pressure nodes keep the prescribed 0.5 exactly;
 *   - the first step (no history) is "previous" bit for bit, and so is a step whose input pressure is not the one
 *     the executor returned (changed by the caller at step 75): it starts from p_n again.
 * Over the run the guess must save pressure iterations (at least 5 %; measured 11.8 % for linear and 26.5 % for
 * quadratic when written; the saving grows as the start-up settles: 22 % and 36 % over 300 steps).  Bad values of
 * the setting are refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "ef_test_mesh.h"

#include "ef_test.h"

#define RTOL 1e-8
#define STEPS 150

/* ||v||_D = sqrt(sum v_i^2 / H_ii). */
static double dnorm(const ef_csr *H, const double *v) {
  double s = 0.0;
  for (int64_t i = 0; i < H->n; ++i) {
    double d = 0.0;
    for (int64_t k = H->row_ptr[i]; k < H->row_ptr[i + 1]; ++k)
      if (H->col[k] == i) d = H->val[k];
    s += v[i] * v[i] / d;
  }
  return sqrt(s);
}

/* r = H x. */
static void matvec(const ef_csr *H, const double *x, double *r) {
  for (int64_t i = 0; i < H->n; ++i) {
    double a = 0.0;
    for (int64_t k = H->row_ptr[i]; k < H->row_ptr[i + 1]; ++k) a += H->val[k] * x[H->col[k]];
    r[i] = a;
  }
}

/* One run with guess (1 linear, 2 quadratic) against "previous" step by step; the iteration totals. */
static int run(const ef_edge_data *ed, const ef_test_mesh *m, int guess, long *its_guess, long *its_prev) {
  const int64_t n = m->n_nodes;
  double *u = calloc(3 * (size_t)n, sizeof(double)), *p = calloc((size_t)n, sizeof(double));
  double *ua = malloc(3 * (size_t)n * sizeof(double)), *pa = malloc((size_t)n * sizeof(double));
  double *dp = malloc((size_t)n * sizeof(double)), *r = malloc((size_t)n * sizeof(double));
  double *fsave = malloc((size_t)n * sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *pfix = calloc((size_t)n, 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t b = m->boundary[i];
    const double y = m->coords[3 * i + 1];
    if (b & (EF_TM_XMIN | EF_TM_YMIN | EF_TM_YMAX)) vfix[3 * i] = vfix[3 * i + 1] = 1;
    if (b & EF_TM_XMIN) u[3 * i] = 6.0 * y * (1.0 - y);
    if ((b & EF_TM_XMAX) && !(b & (EF_TM_YMIN | EF_TM_YMAX))) {
      pfix[i] = 1;
      p[i] = 0.5;
    }
  }
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = 0.05;
  s.velocity_fixed = vfix;
  s.pressure_fixed = pfix;
  s.pressure_rtol = RTOL;
  ef_fs *fs_ref = NULL, *fs_g = NULL;
  int err = ef_fs_create(ed, &s, &fs_ref);
  s.pressure_guess = guess;
  if (!err) err = ef_fs_create(ed, &s, &fs_g);
  EXPECT(!err, "%s", ef_error_message());
  ef_fs_dt_settings dts = {0, 0.0, 0.5, 1e-9, 1.0, 0.0};
  double t = 0.0, worst = 0.0;
  *its_guess = *its_prev = 0;
  for (int step = 0; !err && step < STEPS; ++step) {
    double dt = 0.0;
    err = ef_fs_compute_dt(fs_g, u, &dts, &dt, NULL, NULL);
    if (step == STEPS / 2 && !err) { /* the caller changes the pressure: the next step starts from p_n */
      for (int64_t i = 0; i < n; ++i)
        if (!pfix[i]) p[i] *= 1.0 + 1e-12;
    }
    memcpy(ua, u, 3 * (size_t)n * sizeof(double));
    memcpy(pa, p, (size_t)n * sizeof(double));
    ef_fs_stats sr, sg;
    if (!err) err = ef_fs_step(fs_ref, t, dt, ua, pa, NULL, &sr);
    if (!err) memcpy(fsave, ef_fs_pressure_rhs(fs_ref), (size_t)n * sizeof(double));
    if (!err) err = ef_fs_step(fs_g, t, dt, u, p, NULL, &sg);
    if (err) break;
    const ef_csr *Hr = ef_fs_pressure_matrix(fs_ref), *Hg = ef_fs_pressure_matrix(fs_g);
    EXPECT(Hr->nnz == Hg->nnz && !memcmp(Hr->val, Hg->val, (size_t)Hr->nnz * sizeof(double)) &&
               !memcmp(fsave, ef_fs_pressure_rhs(fs_g), (size_t)n * sizeof(double)),
           "guess %d, step %d: the pressure system differs from the one started from p_n", guess, step);
    for (int64_t i = 0; i < n; ++i) dp[i] = p[i] - pa[i];
    matvec(Hg, dp, r);
    const double lhs = dnorm(Hg, r), bound = 2.0 * RTOL * dnorm(Hg, fsave);
    worst = fmax(worst, lhs / bound);
    EXPECT(lhs <= bound * (1.0 + 1e-3),
           "guess %d, step %d: ||H (p_guess - p_prev)||_D = %.3e > 2 rtol ||f||_D = %.3e", guess, step, lhs, bound);
    int fixed_ok = 1;
    for (int64_t i = 0; i < n; ++i)
      if (pfix[i] && p[i] != 0.5) fixed_ok = 0;
    EXPECT(fixed_ok, "guess %d, step %d: a fixed pressure moved from 0.5", guess, step);
    if (step == 0 || step == STEPS / 2) {
      EXPECT(!memcmp(p, pa, (size_t)n * sizeof(double)) && sg.cg_iterations == sr.cg_iterations,
             "guess %d, step %d (no history): not the \"previous\" step bit for bit (%d vs %d iterations)", guess,
             step, sg.cg_iterations, sr.cg_iterations);
    }
    *its_guess += sg.cg_iterations;
    *its_prev += sr.cg_iterations;
    t += dt;
  }
  EXPECT(!err, "guess %d: %s", guess, ef_error_message());
  printf("guess %d: %d steps to t = %.4f, pressure iterations %ld (previous: %ld, %.1f %% saved); largest "
         "||H dp||_D / (2 rtol ||f||_D) = %.3f\n",
         guess, STEPS, t, *its_guess, *its_prev, 100.0 * (double)(*its_prev - *its_guess) / (double)*its_prev, worst);
  ef_fs_destroy(&fs_ref);
  ef_fs_destroy(&fs_g);
  free(u);
  free(p);
  free(ua);
  free(pa);
  free(dp);
  free(r);
  free(fsave);
  free(vfix);
  free(pfix);
  return err;
}

int main(void) {
  ef_test_mesh m;
  if (ef_test_mesh_2d(30, 10, 3.0, 1.0, 0.15, 21, &m)) return 1;
  ef_edge_data ed;
  if (ef_edge_data_build(2, m.n_nodes, m.coords, m.n_elements, 3, m.elements, &ed)) {
    fprintf(stderr, "%s\n", ef_error_message());
    return 1;
  }
  for (int guess = 1; guess <= 2; ++guess) {
    long its_g = 0, its_p = 0;
    if (run(&ed, &m, guess, &its_g, &its_p)) return 1;
    EXPECT((double)its_g <= 0.95 * (double)its_p, "guess %d saved too little: %ld pressure iterations vs %ld", guess,
           its_g, its_p);
  }
  /* Bad values are refused by name. */
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.pressure_guess = 3;
  ef_fs *fs = NULL;
  EXPECT(ef_fs_create(&ed, &s, &fs) == EF_ERR_PARAMETER && strstr(ef_error_message(), "pressure guess must be"),
         "pressure_guess 3 not refused clearly: %s", ef_error_message());
  ef_fs_destroy(&fs);
  ef_edge_data_free(&ed);
  ef_test_mesh_free(&m);
  return failures ? 1 : 0;
}

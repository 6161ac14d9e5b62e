/* test_fs_tau_time_step.c -- the step of tau's c1/dt with the implicit viscous option
 * (ef_fs_settings.tau_time_step, ef_fs_dt_tau; docs/implicit_viscosity.md, "Time step"):
 *  (a) ef_fs_dt_tau is the step the explicit scheme's rule (ef_fs_dt_choose) gives with CFL min(cfl, 1): the
 *      automatic step within [dt_min, dt_max], a fixed step cut to the cfl = 1 limit, none (0) for the explicit
 *      scheme and for tau_time_step 1 ("step");
 *  (b) GATED: the 2D lid-driven cavity at Re 10 (16^2 cells, unit square, nu 0.1, lid speed 1), run to a steady
 *      state (max_I |u_I^{n+1} - u_I^n| / dt <= 1e-9) at the automatic step with CFL 0.8 by the explicit scheme,
 *      by the implicit option with "explicit_limit" (the default) and with "step" (its step, 0.035, is 10x the
 *      explicit one).  "explicit_limit" reaches the explicit scheme's steady state: max_I |u_I - u_I^expl| <=
 *      1e-8 (measured 2.9e-10, the steady tolerance's size); "step" does not: its difference is >= 1e-3
 *      (measured 5.0e-2 of the lid speed 1).  1130 + 260 + 230 steps, 0.5 s.  That is the point of the
 *      setting: at a steady state the fractional step's splitting term vanishes and the discretisation is the
 *      stabilised one with tau, so equal taus give equal steady states whatever the scheme in time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "ef_test_mesh.h"

#include "ef_test.h"

/* EF_TEST_VERBOSE set: print the measured figures (silent otherwise). */
static int verbose;
#define SAY(...) (verbose ? (void)printf(__VA_ARGS__) : (void)0)

/* (a) */
static void test_rule(void) {
  ef_fs_settings fss;
  ef_fs_settings_default(&fss);
  ef_fs_dt_settings s;
  memset(&s, 0, sizeof s);
  s.cfl = 4.0;
  s.dt_min = 1e-6;
  s.dt_max = 1.0;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.01) == 0.0, "explicit scheme: a tau bound");
  fss.viscous_implicit = 1;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.01) == 0.01, "automatic, CFL 4: tau's step is not the cfl 1 limit");
  s.cfl = 0.5;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.01) == 0.005, "automatic, CFL 0.5: tau's step is not 0.5 x the limit");
  s.dt_max = 0.002;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.01) == 0.002, "automatic: tau's step above dt_max");
  EXPECT(ef_fs_dt_tau(&s, &fss, 1.0e300) == 0.002, "automatic at rest: tau's step is not dt_max");
  s.dt_min = 0.003;
  s.dt_max = 1.0;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.001) == 0.003, "automatic: tau's step below dt_min");
  s.fixed = 1;
  s.dt_fixed = 0.004;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.01) == 0.004, "fixed step below the limit: tau's step changed");
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.001) == 0.001, "fixed step above the limit: tau's step not cut");
  fss.tau_time_step = 1;
  EXPECT(ef_fs_dt_tau(&s, &fss, 0.001) == 0.0, "tau_time_step step: a tau bound");
}

typedef struct {
  ef_test_mesh m;
  ef_edge_data ed;
  int64_t n;
  uint8_t *vfix, *pfix;
  double *u, *p;
} cavity;

/* Unit square, all walls no-slip, the lid (y = 1 without its two corners) at (1, 0), p = 0 at (0, 0). */
static void cavity_make(cavity *c, int nx) {
  memset(c, 0, sizeof *c);
  ASSERT(!ef_test_mesh_2d(nx, nx, 1.0, 1.0, 0.0, 1, &c->m), "mesh");
  const int64_t n = c->n = c->m.n_nodes;
  ASSERT_OK(ef_edge_data_build(2, n, c->m.coords, c->m.n_elements, 3, c->m.elements, &c->ed));
  c->vfix = calloc(3 * (size_t)n, 1);
  c->pfix = calloc((size_t)n, 1);
  c->u = calloc(3 * (size_t)n, sizeof(double));
  c->p = calloc((size_t)n, sizeof(double));
  ASSERT(c->vfix && c->pfix && c->u && c->p, "memory");
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t b = c->m.boundary[i];
    if (b) c->vfix[3 * i] = c->vfix[3 * i + 1] = 1;
    if (b == EF_TM_YMAX) c->u[3 * i] = 1.0;
    if (b == (EF_TM_XMIN | EF_TM_YMIN)) c->pfix[i] = 1;
  }
}

static void cavity_free(cavity *c) {
  ef_test_mesh_free(&c->m);
  ef_edge_data_free(&c->ed);
  free(c->vfix);
  free(c->pfix);
  free(c->u);
  free(c->p);
}

/* Run from rest (lid on) to max_I |du_I|/dt <= 1e-9 at CFL 0.8 into u (3n); implicit: -1 explicit scheme, else
 * the implicit option with tau_time_step = implicit.  Returns the last step. */
static double steady(cavity *c, double nu, int implicit, double *u) {
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = nu;
  s.viscous_implicit = implicit >= 0;
  s.tau_time_step = implicit > 0 ? implicit : 0;
  s.velocity_fixed = c->vfix;
  s.pressure_fixed = c->pfix;
  s.pressure_rtol = 1e-13;
  ef_fs *fs = NULL;
  ASSERT_OK(ef_fs_create(&c->ed, &s, &fs));
  ef_fs_dt_settings dts;
  memset(&dts, 0, sizeof dts);
  dts.cfl = 0.8;
  dts.dt_min = 1e-12;
  dts.dt_max = 1e30;
  const int64_t n = c->n;
  memcpy(u, c->u, 3 * (size_t)n * sizeof *u);
  double *p = calloc((size_t)n, sizeof *p), *prev = malloc(3 * (size_t)n * sizeof *prev);
  ASSERT(p && prev, "memory");
  double t = 0.0, dt = 0.0, rate = 1e300;
  int k = 0;
  for (; k < 20000 && rate > 1e-9; ++k) {
    memcpy(prev, u, 3 * (size_t)n * sizeof *u);
    ASSERT_OK(ef_fs_compute_dt(fs, u, &dts, &dt, NULL, NULL));
    dts.dt_previous = dt;
    ASSERT_OK(ef_fs_step(fs, t, dt, u, p, NULL, NULL));
    t += dt;
    double d = 0.0;
    for (int64_t j = 0; j < 3 * n; ++j) d = fmax(d, fabs(u[j] - prev[j]));
    rate = d / dt;
  }
  SAY("  %s: %d steps to t = %.2f, last dt %.4g, max |du|/dt %.2g\n",
      implicit < 0 ? "explicit" : implicit == 0 ? "implicit, explicit_limit" : "implicit, step", k, t, dt, rate);
  EXPECT(rate <= 1e-9, "cavity (tau_time_step %d): no steady state in 20000 steps (max |du|/dt %g)", implicit,
         rate);
  free(p);
  free(prev);
  ef_fs_destroy(&fs);
  return dt;
}

static double max_diff(int64_t n3, const double *a, const double *b) {
  double d = 0.0;
  for (int64_t j = 0; j < n3; ++j) d = fmax(d, fabs(a[j] - b[j]));
  return d;
}

/* (b) */
static void test_steady_state(void) {
  cavity c;
  cavity_make(&c, 16);
  const int64_t n3 = 3 * c.n;
  double *ue = malloc((size_t)n3 * sizeof *ue), *ul = malloc((size_t)n3 * sizeof *ul),
         *us = malloc((size_t)n3 * sizeof *us);
  ASSERT(ue && ul && us, "memory");
  const double nu = 0.1;
  const double dte = steady(&c, nu, -1, ue);
  const double dtl = steady(&c, nu, 0, ul);
  const double dts = steady(&c, nu, 1, us);
  const double dl = max_diff(n3, ul, ue), ds = max_diff(n3, us, ue);
  SAY("  steps explicit %.4g, implicit %.4g and %.4g; max |u - u_explicit|: explicit_limit %.2e, step %.2e\n", dte,
      dtl, dts, dl, ds);
  EXPECT(dtl > 3.0 * dte && dts > 3.0 * dte, "the implicit steps (%g, %g) are not well above the explicit %g", dtl,
         dts, dte);
  EXPECT(dl <= 1e-8, "explicit_limit: steady state %g from the explicit scheme's (> 1e-8)", dl);
  EXPECT(ds >= 1e-3, "step: steady state only %g from the explicit scheme's (< 1e-3): the test shows nothing", ds);
  free(ue);
  free(ul);
  free(us);
  cavity_free(&c);
}

int main(void) {
  verbose = getenv("EF_TEST_VERBOSE") != NULL;
  test_rule();
  test_steady_state();
  return failures ? 1 : 0;
}

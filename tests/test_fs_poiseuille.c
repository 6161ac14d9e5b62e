/* test_fs_poiseuille.c -- end-to-end check of the whole step: steady plane Poiseuille flow
 * in a 2D channel [0,3]x[0,1] on a jittered triangle mesh, from rest.
 *   inlet x = 0: u = 6 U y (H - y) / H^2, v = 0 (fixed); walls y = 0, H: no slip;
 *   outlet x = L: p = 0 (fixed), velocity free; nu = 0.1, U = 1 (Re = 10).
 * At steady state (max |du/dt| < 1e-6, or t = 25):
 *   - velocity within 2% (of U_max) of the exact profile at every node;
 *   - pressure gradient (least squares over x in [0.5, 2.5]) within 2% of -12 nu U / H^2;
 *   - wall reactions: sum over the wall nodes (x > 0) of reaction_x within 3% of the exact
 *     drag 2 L tau_w = 2 L (6 nu U / H) (sign: the fluid drags the walls downstream; 3%
 *     because the inlet corner nodes mix inlet pressure into the first wall node).
 * Also checks the time-step control (CFL and fixed-step reduction) on the way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "ef_test_mesh.h"

#include "ef_test.h"

#define L_CH 3.0
#define H_CH 1.0
#define U_MEAN 1.0
#define NU 0.1

static double exact_u(double y) { return 6.0 * U_MEAN * y * (H_CH - y) / (H_CH * H_CH); }

/* Channel flow from rest to steady state, checked against the exact solution. */
int main(void) {
  ef_test_mesh m;
  if (ef_test_mesh_2d(30, 10, L_CH, H_CH, 0.15, 21, &m)) return 1;
  const int64_t n = m.n_nodes;
  ef_edge_data ed;
  if (ef_edge_data_build(2, n, m.coords, m.n_elements, 3, m.elements, &ed)) {
    fprintf(stderr, "%s\n", ef_error_message());
    return 1;
  }
  double *u = calloc(3 * (size_t)n, sizeof(double)), *p = calloc((size_t)n, sizeof(double));
  double *uold = malloc(3 * (size_t)n * sizeof(double)), *reaction = calloc(3 * (size_t)n, sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *pfix = calloc((size_t)n, 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t b = m.boundary[i];
    if (b & (EF_TM_XMIN | EF_TM_YMIN | EF_TM_YMAX)) vfix[3 * i] = vfix[3 * i + 1] = 1;
    if (b & EF_TM_XMIN) u[3 * i] = exact_u(m.coords[3 * i + 1]);
    if ((b & EF_TM_XMAX) && !(b & (EF_TM_YMIN | EF_TM_YMAX))) pfix[i] = 1;
  }
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = NU;
  s.velocity_fixed = vfix;
  s.pressure_fixed = pfix;
  s.pressure_rtol = 1e-10;
  ef_fs *fs = NULL;
  int err = ef_fs_create(&ed, &s, &fs);
  EXPECT(!err, "%s", ef_error_message());
  if (err) return 1;

  /* Time-step control: a fixed step above the limit is cut and flagged. */
  ef_fs_dt_settings dts = {0, 0.0, 0.8, 1e-6, 1.0, 0.0};
  double dt = 0.0, dt_stable = 0.0;
  int reduced = -1;
  err = ef_fs_compute_dt(fs, u, &dts, &dt, &dt_stable, &reduced);
  EXPECT(!err && reduced == 0 && fabs(dt - 0.8 * dt_stable) <= 1e-15 * dt, "CFL step %g vs limit %g", dt, dt_stable);
  ef_fs_dt_settings fixed = {1, 10.0 * dt_stable, 0.0, 0.0, 0.0, 0.0};
  double dtf = 0.0;
  err = ef_fs_compute_dt(fs, u, &fixed, &dtf, NULL, &reduced);
  EXPECT(!err && reduced == 1 && dtf == dt_stable, "fixed step not reduced: %g (limit %g)", dtf, dt_stable);
  fixed.dt_fixed = 0.5 * dt_stable;
  err = ef_fs_compute_dt(fs, u, &fixed, &dtf, NULL, &reduced);
  EXPECT(!err && reduced == 0 && dtf == 0.5 * dt_stable, "small fixed step changed");

  double t = 0.0, change = 1.0;
  int step = 0;
  ef_fs_stats st;
  while (t < 25.0 && change > 1e-6) {
    err = ef_fs_compute_dt(fs, u, &dts, &dt, NULL, NULL);
    memcpy(uold, u, 3 * (size_t)n * sizeof(double));
    if (!err) err = ef_fs_step(fs, t, dt, u, p, reaction, &st);
    if (err) {
      fprintf(stderr, "step %d, t = %g: %s\n", step, t, ef_error_message());
      return 1;
    }
    t += dt;
    ++step;
    change = 0.0;
    for (int64_t q = 0; q < 3 * n; ++q) change = fmax(change, fabs(u[q] - uold[q]) / dt);
  }
  EXPECT(change <= 1e-6, "no steady state by t = %g (max |du/dt| = %g)", t, change);

  /* Velocity within 2% of U_max everywhere. */
  const double umax = 1.5 * U_MEAN;
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double eu = fabs(u[3 * i] - exact_u(m.coords[3 * i + 1])), ev = fabs(u[3 * i + 1]);
    worst = fmax(worst, fmax(eu, ev));
  }
  EXPECT(worst <= 0.02 * umax, "velocity error %.3g%% of U_max", 100.0 * worst / umax);

  /* Pressure gradient by least squares p = a + g x over the middle of the channel. */
  double sx = 0, sp = 0, sxx = 0, sxp = 0, cnt = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = m.coords[3 * i];
    if (x < 0.5 || x > 2.5) continue;
    sx += x;
    sp += p[i];
    sxx += x * x;
    sxp += x * p[i];
    cnt += 1.0;
  }
  const double g = (cnt * sxp - sx * sp) / (cnt * sxx - sx * sx), gex = -12.0 * NU * U_MEAN / (H_CH * H_CH);
  EXPECT(fabs(g - gex) <= 0.02 * fabs(gex), "pressure gradient %g, exact %g (%.3g%%)", g, gex,
         100.0 * fabs(g - gex) / fabs(gex));

  /* Wall drag from the reactions. */
  double drag = 0.0;
  for (int64_t i = 0; i < n; ++i)
    if ((m.boundary[i] & (EF_TM_YMIN | EF_TM_YMAX)) && !(m.boundary[i] & EF_TM_XMIN)) drag += reaction[3 * i];
  const double drag_ex = 2.0 * L_CH * 6.0 * NU * U_MEAN / H_CH;
  EXPECT(fabs(drag - drag_ex) <= 0.03 * drag_ex, "wall drag from reactions %g, exact %g", drag, drag_ex);
  for (int64_t i = 0; i < n; ++i)
    if (!vfix[3 * i]) EXPECT(reaction[3 * i] == 0.0, "reaction on a free node %lld", (long long)i);

  if (getenv("EF_TEST_VERBOSE"))
    printf("steps %d t %.3f  u err %.3f%%  dp/dx %.5f (exact %.5f)  drag %.4f (exact %.4f)  CG its %d\n", step, t,
           100.0 * worst / umax, g, gex, drag, drag_ex, st.cg_iterations);
  ef_fs_destroy(&fs);
  ef_edge_data_free(&ed);
  ef_test_mesh_free(&m);
  free(u);
  free(p);
  free(uold);
  free(reaction);
  free(vfix);
  free(pfix);
  return failures ? 1 : 0;
}

/* test_fs_threads.c -- results after a few steps are bitwise equal with 1 and 2 OpenMP
 * threads (edge data, velocity, pressure, reactions), on a jittered 3D lid-driven cavity
 * with a time-dependent lid (eval_fixed callback, no fixed pressure: null-space path) and a
 * jittered 2D cavity with slip side walls and a fixed-pressure node.  Both meshes have
 * many reduction blocks.  No tolerance: the comparison is memcmp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "ef_test.h"
#include "ef_test_mesh.h"

typedef struct {
  const ef_test_mesh *m;
  const uint8_t *lid;
  int calls;
} lid_ctx;

/* Lid velocity U(t) = 1 - exp(-t / 0.02) along x on the lid nodes; other fixed values 0. */
static int lid_values(void *ctx, double t, double *velocity, double *pressure) {
  lid_ctx *c = ctx;
  (void)pressure;
  c->calls++;
  const double U = 1.0 - exp(-t / 0.02);
  for (int64_t i = 0; i < c->m->n_nodes; ++i)
    if (c->lid[i]) velocity[3 * i] = U;
  return 0;
}

typedef struct {
  double *u, *p, *reaction;
  ef_edge_data ed;
  int calls;
} run_result;

/* Build the edge data and run a few cavity steps with the given thread count. */
static int run(const ef_test_mesh *m, int threads, int steps, run_result *out) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  const int64_t n = m->n_nodes;
  const int d = m->dim;
  const uint8_t top = d == 3 ? EF_TM_ZMAX : EF_TM_YMAX;
  memset(out, 0, sizeof *out);
  if (ef_edge_data_build(d, n, m->coords, m->n_elements, d + 1, m->elements, &out->ed)) return 1;
  out->u = calloc(3 * (size_t)n, sizeof(double));
  out->p = calloc((size_t)n, sizeof(double));
  out->reaction = calloc(3 * (size_t)n, sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *lid = calloc((size_t)n, 1), *slip = calloc((size_t)n, 1);
  uint8_t *pfix = calloc((size_t)n, 1);
  double *normal = calloc(3 * (size_t)n, sizeof(double));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t b = m->boundary[i];
    if (!b) continue;
    if (d == 2 && (b == EF_TM_XMIN || b == EF_TM_XMAX)) {
      /* 2D: slip side walls (not the corners). */
      slip[i] = EF_SLIP_FACE;
      normal[3 * i] = b == EF_TM_XMIN ? -1.0 : 1.0;
      continue;
    }
    for (int c = 0; c < 3; ++c) vfix[3 * i + c] = 1;
    if (b == top) lid[i] = 1; /* lid without its rim */
  }
  lid_ctx ctx = {m, lid, 0};
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = 0.01;
  s.velocity_fixed = vfix;
  s.slip_type = slip;
  s.slip_normal = normal;
  s.eval_fixed = lid_values;
  s.eval_fixed_ctx = &ctx;
  s.pressure_rtol = 1e-9;
  if (d == 2) {
    pfix[0] = 1; /* one corner: the fixed-pressure path */
    s.pressure_fixed = pfix;
  }
  ef_fs *fs = NULL;
  int err = ef_fs_create(&out->ed, &s, &fs);
  double t = 0.0;
  ef_fs_dt_settings dts = {0, 0.0, 0.7, 1e-6, 0.01, 0.0};
  for (int k = 0; k < steps && !err; ++k) {
    double dt;
    err = ef_fs_compute_dt(fs, out->u, &dts, &dt, NULL, NULL);
    if (!err) err = ef_fs_step(fs, t, dt, out->u, out->p, out->reaction, NULL);
    t += dt;
  }
  if (err) fprintf(stderr, "%dD, %d thread(s): %s\n", d, threads, ef_error_message());
  out->calls = ctx.calls;
  ef_fs_destroy(&fs);
  free(vfix);
  free(lid);
  free(slip);
  free(pfix);
  free(normal);
  return err;
}

/* Free one run. */
static void release(run_result *r) {
  free(r->u);
  free(r->p);
  free(r->reaction);
  ef_edge_data_free(&r->ed);
}

/* Bitwise comparison of 1- and 2-thread runs in 3D and 2D. */
int main(void) {
#ifndef _OPENMP
  return EF_TEST_SKIP; /* nothing to compare without OpenMP */
#else
  ef_test_mesh m[2];
  if (ef_test_mesh_3d(13, 13, 12, 1.0, 1.0, 1.0, 0.2, 17, &m[0]) || ef_test_mesh_2d(50, 45, 1.0, 1.0, 0.25, 19, &m[1]))
    return 1;
  for (int k = 0; k < 2; ++k) {
    run_result r1, r2;
    if (run(&m[k], 1, 4, &r1) || run(&m[k], 2, 4, &r2)) return 1;
    const int64_t n = m[k].n_nodes;
    const char *what = NULL;
    if (r1.ed.n_edges != r2.ed.n_edges ||
        memcmp(r1.ed.values, r2.ed.values, (size_t)r1.ed.n_edges * r1.ed.stride * sizeof(double)) ||
        memcmp(r1.ed.col, r2.ed.col, (size_t)r1.ed.n_edges * sizeof(int32_t)) ||
        memcmp(r1.ed.mass, r2.ed.mass, (size_t)n * sizeof(double)) ||
        memcmp(r1.ed.hmin, r2.ed.hmin, (size_t)n * sizeof(double)))
      what = "edge data";
    else if (memcmp(r1.u, r2.u, 3 * (size_t)n * sizeof(double)))
      what = "velocity";
    else if (memcmp(r1.p, r2.p, (size_t)n * sizeof(double)))
      what = "pressure";
    else if (memcmp(r1.reaction, r2.reaction, 3 * (size_t)n * sizeof(double)))
      what = "reaction";
    EXPECT(!what, "%dD %s differs between 1 and 2 threads", m[k].dim, what);
    /* The run did something: the lid moved fluid and the callback ran 4 times a step. */
    double umax = 0.0, pmax = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      if (!m[k].boundary[i]) umax = fmax(umax, fabs(r1.u[3 * i]));
      pmax = fmax(pmax, fabs(r1.p[i]));
    }
    EXPECT(umax > 1e-3 && pmax > 0.0 && r1.calls == 4 * 4,
           "%dD run did not move (|u| %g, |p| %g, %d callback calls)", m[k].dim, umax, pmax, r1.calls);
    release(&r1);
    release(&r2);
    ef_test_mesh_free(&m[k]);
  }
  return failures ? 1 : 0;
#endif
}

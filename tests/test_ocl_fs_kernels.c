/* test_ocl_fs_kernels.c -- every deterministic kernel of the device executor
 * (custom_utilities/opencl_fs.c, custom_kernels/fs_kernels.cl) against the OpenMP executor's
 * arithmetic on identical inputs: time step, tau and the projections, each of the four RK4
 * stages (residual, accumulator, update, boundary conditions) and the reactions, the pressure
 * matrix and right-hand side with fixed pressures eliminated, the correction.  Jittered 2D
 * and 3D meshes with random fields, fixed velocity components, slip faces, edges and corners,
 * fixed pressures and a body force; the edge data is split into three row blocks.
 *
 * Tolerance: |device - host| <= 8 n_I eps S_I per row and component, n_I the edges of row I
 * and S_I the sum of the absolute values of the terms the row sums (computed here by a
 * fabs mirror of edge_physics.h): any order of summation and fused multiply-adds stay far
 * inside it, an indexing or argument mistake does not.  A node the slip condition projects
 * mixes its components: (1 + dim) times the largest component bound.  Fixed components and
 * eliminated rows/columns are copies and must match exactly.
 * The RK stages are checked one by one from the host's inputs to each stage (a replica of
 * the executor's stage loop, itself checked bitwise against ef_fs_momentum).
 * Skips (77) without an OpenCL device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "opencl_fs.h"
#include "ef_test_mesh.h"
#include "test_opencl_common.h"

#define EPS DBL_EPSILON

typedef struct {
  int dim;
  int64_t n;
  ef_edge_data ed;
  double *un, *pn, *pnew, *body, *normal, *tangent;
  uint8_t *vfix, *pfix, *slip;
  ef_fs_settings s;
} test_case;

/* Edges of row i and a pointer to its records / columns. */
#define ROW(ed, i)                                                                \
  (int)((ed)->row_ptr[(i) + 1] - (ed)->row_ptr[i]), (ed)->col + (ed)->row_ptr[i], \
      (ed)->values + (ed)->row_ptr[i] * (ed)->stride

/* Compare n values of a per-row quantity with components per row; bound[q] per value. */
static void compare(const char *what, int dim, const double *host, const double *dev, const double *bound,
                    int64_t count) {
  int64_t worst = -1;
  double worst_ratio = 0.0;
  for (int64_t q = 0; q < count; ++q) {
    const double d = fabs(host[q] - dev[q]);
    if (!(d <= bound[q])) {
      const double r = bound[q] > 0 ? d / bound[q] : INFINITY;
      if (worst < 0 || r > worst_ratio || isnan(d)) {
        worst = q;
        worst_ratio = r;
      }
    }
  }
  EXPECT(worst < 0, "%dD %s: entry %lld host %.17g device %.17g bound %.3g", dim, what, (long long)worst,
        worst >= 0 ? host[worst] : 0.0, worst >= 0 ? dev[worst] : 0.0, worst >= 0 ? bound[worst] : 0.0);
}

/* |u_I . nabla_IJ| with every product made absolute. */
static double abs_an(int dim, const double *ui, const double *ev, int k) {
  double s = 0.0;
  for (int c = 0; c < dim; ++c)
    s += fabs(ui[c] * EF_EDGE_NABLA(ev, k, dim, c));
  return s;
}

/* Node bound after the boundary conditions: fixed components are copies (0), projected
 * slip nodes mix components. */
static void bc_bounds(const test_case *t, int64_t i, double *b) {
  const int dim = t->dim;
  int any = 0;
  for (int c = 0; c < dim; ++c)
    any |= t->vfix[3 * i + c];
  if (!any && t->slip[i] != EF_SLIP_NONE) {
    double m = 0.0;
    for (int c = 0; c < dim; ++c)
      m = fmax(m, b[c]);
    for (int c = 0; c < dim; ++c)
      b[c] = (1 + dim) * m;
  }
  for (int c = 0; c < 3; ++c)
    if (t->vfix[3 * i + c] || c >= dim)
      b[c] = 0.0;
}

/* The executor's RK stage loop (fractional_step.c rk_stage), on the host. */
static void host_stage(const test_case *t, int stage, double dt, const double *tau, const double *xi,
                       const double *us, double *acc, double *uout, double *Sacc, double *bound) {
  const ef_edge_data *ed = &t->ed;
  const int dim = t->dim;
  const double a = stage == 0 || stage == 1 ? 0.5 * dt : stage == 2 ? dt : dt / 6.0;
  const double wacc = stage == 0 || stage == 3 ? 1.0 : 2.0;
  for (int64_t i = 0; i < t->n; ++i) {
    double b[3] = {0.0, 0.0, 0.0}, R[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < dim; ++c)
      b[c] = t->body[3 * i + c];
    if (dim == 3)
      ef_row_momentum_residual(3, i, ROW(ed, i), us, t->pn, xi, ed->mass[i], b, tau[i], t->s.nu, R);
    else
      ef_row_momentum_residual(2, i, ROW(ed, i), us, t->pn, xi, ed->mass[i], b, tau[i], t->s.nu, R);
    /* Absolute terms of R (see ef_row_momentum_residual). */
    const int ne = (int)(ed->row_ptr[i + 1] - ed->row_ptr[i]);
    const int32_t *col = ed->col + ed->row_ptr[i];
    const double *ev = ed->values + ed->row_ptr[i] * ed->stride;
    double SR[3] = {0.0, 0.0, 0.0}, nabs[3] = {0.0, 0.0, 0.0};
    const double *ui = us + 3 * i;
    for (int k = 0; k < ne; ++k) {
      const int64_t j = col[k];
      double an = abs_an(dim, ui, ev, k), l = 0.0, q = 0.0;
      for (int aa = 0; aa < dim; ++aa) {
        l += fabs(EF_EDGE_LD(ev, k, dim, aa, aa));
        for (int bb = 0; bb < dim; ++bb)
          q += fabs(ui[aa] * EF_EDGE_LD(ev, k, dim, aa, bb) * ui[bb]);
      }
      const double wu = an + t->s.nu * l + tau[i] * q, wx = tau[i] * an;
      for (int c = 0; c < dim; ++c) {
        SR[c] += wu * fabs(us[3 * j + c] - ui[c]) + wx * fabs(xi[3 * j + c] - xi[3 * i + c]);
        SR[c] += fabs(EF_EDGE_G(ev, k, dim, c) * t->pn[j]);
        nabs[c] += fabs(EF_EDGE_NABLA(ev, k, dim, c));
      }
    }
    for (int c = 0; c < dim; ++c)
      SR[c] += fabs(ed->mass[i] * b[c]) + nabs[c] * fabs(t->pn[i]);
    double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < dim; ++c) {
      const int64_t q = 3 * i + c;
      const double ac = stage == 0 ? R[c] : acc[q] + wacc * R[c];
      const double sac = stage == 0 ? SR[c] : Sacc[q] + wacc * SR[c];
      acc[q] = ac;
      Sacc[q] = sac;
      uref[c] = t->un[q];
      u[c] = uref[c] + a * ed->inv_mass[i] * (stage == 3 ? ac : R[c]);
      bound[q] = 8.0 * ne * EPS * (fabs(uref[c]) + fabs(a) * ed->inv_mass[i] * (stage == 3 ? sac : SR[c]));
    }
    bound[3 * i + 2] = dim == 2 ? 0.0 : bound[3 * i + 2];
    ef_node_apply_bc(dim, t->vfix + 3 * i, t->slip[i], t->normal + 3 * i, t->tangent + 3 * i, uref, u);
    bc_bounds(t, i, bound + 3 * i);
    for (int c = 0; c < 3; ++c)
      uout[3 * i + c] = u[c];
  }
}

/* The device's tau, projections, RK4 velocity, pressure system and corrected velocity from t's state, on an
 * executor over ed with settings os, one after the other into out (2n + 4 * 3n + n_edges + n doubles). */
static int device_chain(ef_cl_context *ctx, const ef_edge_data *ed, const ef_cl_fs_settings *os, const test_case *t,
                        double dt, double *out) {
  ef_cl_fs *fs = NULL;
  ASSERT_OK(ef_cl_fs_create(ctx, ed, os, &fs));
  ASSERT(ef_cl_fs_blocks(fs) == 3, "expected 3 row blocks, got %d", ef_cl_fs_blocks(fs));
  ASSERT_OK(ef_cl_fs_set_bc(fs, &t->s));
  ASSERT_OK(ef_cl_fs_set_state(fs, t->un, t->pn));
  const int64_t n = t->n;
  ASSERT_OK(ef_cl_fs_prepare(fs, dt));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_TAU, out));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_XI, out += n));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_XP, out += 3 * n));
  for (int stage = 0; stage < 4; ++stage) ASSERT_OK(ef_cl_fs_rk_stage(fs, stage, dt));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_UH, out += 3 * n));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_PNEW, t->pnew));
  ASSERT_OK(ef_cl_fs_assemble(fs, dt));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_MATRIX, out += 3 * n));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_RHS, out += ed->n_edges + n));
  ASSERT_OK(ef_cl_fs_correct(fs, dt));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_UNEW, out += n));
  ef_cl_fs_destroy(&fs);
  return 0;
}

/* The executor over a structure-only build (records computed into the staging buffers, three row blocks,
 * 4,000-byte chunks) gives bitwise the results of one over the full build: the same records reached the
 * device.  With its source released such a build is refused. */
static int check_structure_only(ef_cl_context *ctx, const ef_test_mesh *m, const ef_cl_fs_settings *os,
                                const test_case *t, double dt) {
  const ef_edge_data *ed = &t->ed;
  ef_edge_data sd;
  ASSERT_OK(ef_edge_data_build_structure(t->dim, t->n, m->coords, m->n_elements, t->dim + 1, m->elements, &sd));
  ASSERT(!sd.values && (size_t)ed->max_row * ed->stride * 8 < 2 * (size_t)os->staging_bytes &&
             (size_t)(ed->n_edges / 3) * ed->stride * 8 > 3 * (size_t)os->staging_bytes,
         "the test mesh does not stage each block in several chunks of several rows");
  const size_t len = (size_t)(2 * t->n + 12 * t->n + ed->n_edges + t->n);
  double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
  ASSERT(a && b, "out of memory");
  memset(a, 0x5a, len * sizeof *a);
  memset(b, 0xa5, len * sizeof *b);
  if (device_chain(ctx, ed, os, t, dt, a) || device_chain(ctx, &sd, os, t, dt, b)) return 1;
  EXPECT(!memcmp(a, b, len * sizeof *a), "%dD: the executor over the structure-only build differs", t->dim);
  ef_edge_data_release_source(&sd);
  ef_cl_fs *fs = NULL;
  EXPECT(ef_cl_fs_create(ctx, &sd, os, &fs) == EF_ERR_PARAMETER && !fs && strstr(ef_error_message(), "no records"),
         "%dD: edge data without records or source accepted: %s", t->dim, ef_error_message());
  free(a);
  free(b);
  ef_edge_data_free(&sd);
  return 0;
}

/* One case: build the data, run host and device, compare. */
static int run_case(ef_cl_context *ctx, int dim) {
  test_case t;
  memset(&t, 0, sizeof t);
  t.dim = dim;
  ef_test_mesh m;
  if (dim == 3 ? ef_test_mesh_3d(6, 5, 5, 1.0, 0.9, 0.8, 0.25, 17, &m)
               : ef_test_mesh_2d(17, 14, 1.0, 0.8, 0.25, 19, &m))
    return 1;
  const int64_t n = t.n = m.n_nodes;
  ASSERT_OK(ef_edge_data_build(dim, n, m.coords, m.n_elements, dim + 1, m.elements, &t.ed));
  const ef_edge_data *ed = &t.ed;
  t.un = calloc(3 * (size_t)n, sizeof(double));
  t.pn = calloc((size_t)n, sizeof(double));
  t.pnew = calloc((size_t)n, sizeof(double));
  t.body = calloc(3 * (size_t)n, sizeof(double));
  t.normal = calloc(3 * (size_t)n, sizeof(double));
  t.tangent = calloc(3 * (size_t)n, sizeof(double));
  t.vfix = calloc(3 * (size_t)n, 1);
  t.pfix = calloc((size_t)n, 1);
  t.slip = calloc((size_t)n, 1);
  uint64_t seed = 1234 + (uint64_t)dim;
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < dim; ++c)
      t.un[3 * i + c] = ef_test_rand(&seed);
    t.pn[i] = 2.0 * ef_test_rand(&seed);
    t.pnew[i] = t.pn[i] + 0.3 * ef_test_rand(&seed);
    for (int c = 0; c < dim; ++c)
      t.body[3 * i + c] = 0.5 * ef_test_rand(&seed);
    const uint8_t b = m.boundary[i];
    if (b & EF_TM_XMIN) {
      for (int c = 0; c < 3; ++c)
        t.vfix[3 * i + c] = 1;
    } else if (b == EF_TM_YMIN || b == EF_TM_YMAX) {
      t.slip[i] = EF_SLIP_FACE;
      t.normal[3 * i + 1] = b == EF_TM_YMIN ? -1.0 : 1.0;
    } else if (dim == 3 && (b == (EF_TM_YMIN | EF_TM_ZMIN) || b == (EF_TM_YMAX | EF_TM_ZMIN))) {
      t.slip[i] = EF_SLIP_EDGE;
      t.tangent[3 * i] = 1.0;
      t.normal[3 * i + 1] = 1.0;
    } else if (b == (EF_TM_XMAX | EF_TM_YMAX) || (dim == 3 && b == (EF_TM_XMAX | EF_TM_YMAX | EF_TM_ZMAX))) {
      t.slip[i] = EF_SLIP_CORNER;
      t.normal[3 * i] = 1.0;
    } else if (b & EF_TM_XMAX) {
      t.vfix[3 * i + 1] = 1; /* one component */
    } else if (dim == 3 && b == EF_TM_ZMAX) {
      t.slip[i] = EF_SLIP_FACE; /* a non-axis normal */
      t.normal[3 * i] = 0.6;
      t.normal[3 * i + 2] = 0.8;
    }
    if ((b & EF_TM_XMAX) && (b & EF_TM_YMIN))
      t.pfix[i] = 1;
    if (b == EF_TM_XMAX && i % 3 == 0)
      t.pfix[i] = 1;
  }
  ef_fs_settings_default(&t.s);
  t.s.nu = 0.03;
  t.s.velocity_fixed = t.vfix;
  t.s.pressure_fixed = t.pfix;
  t.s.slip_type = t.slip;
  t.s.slip_normal = t.normal;
  t.s.slip_tangent = t.tangent;
  t.s.body_force = t.body;
  const double dt = 0.01, cc = 0.5 * dt;

  /* Host executor. */
  ef_fs *hfs = NULL;
  ASSERT_OK(ef_fs_create(ed, &t.s, &hfs));
  ASSERT_OK(ef_fs_prepare(hfs, dt, t.un, t.pn));
  const double *tau = ef_fs_tau(hfs), *xi = ef_fs_convective_projection(hfs), *xp = ef_fs_pressure_projection(hfs);
  double *uh_ref = calloc(3 * (size_t)n, sizeof(double)), *pw = calloc((size_t)n, sizeof(double));
  double *reaction_ref = calloc(3 * (size_t)n, sizeof(double));
  ASSERT_OK(ef_fs_momentum(hfs, 0.0, dt, t.un, t.pn, uh_ref, pw, reaction_ref));

  /* Device executor on the same data, three row blocks. */
  ef_cl_fs_settings os;
  ef_cl_fs_settings_default(&os);
  os.fs = t.s;
  os.max_block_doubles = (ed->n_edges / 3 + ed->max_row) * ed->stride;
  /* and each block's records through the pinned staging buffers, in chunks of 4,000 bytes (not a
   * multiple of a record: chunks split records) */
  os.staging_bytes = 4000;
  ASSERT((size_t)(ed->n_edges / 3) * (size_t)ed->stride * 8 > 3 * (size_t)os.staging_bytes,
         "the test mesh is too small to stage in several chunks");
  ef_cl_fs *fs = NULL;
  ASSERT_OK(ef_cl_fs_create(ctx, ed, &os, &fs));
  ASSERT(ef_cl_fs_blocks(fs) == 3, "expected 3 row blocks, got %d", ef_cl_fs_blocks(fs));
  ASSERT_OK(ef_cl_fs_set_bc(fs, &t.s));
  ASSERT_OK(ef_cl_fs_set_state(fs, t.un, t.pn));

  const size_t v = 3 * (size_t)n;
  double *dev = calloc(v > (size_t)(ed->n_edges + n) ? v : (size_t)(ed->n_edges + n), sizeof(double));
  double *bound = calloc((size_t)(ed->n_edges + n) > v ? (size_t)(ed->n_edges + n) : v, sizeof(double));
  double *acc = calloc(v, sizeof(double)), *Sacc = calloc(v, sizeof(double));
  double *ua = calloc(v, sizeof(double)), *ub = calloc(v, sizeof(double)), *uh = calloc(v, sizeof(double));
  ASSERT(dev && bound && acc && Sacc && ua && ub && uh, "out of memory");

  /* Time step: dt_I = 1/(|u|/hmin + 4 nu/hmin^2), a norm and two divisions; min is exact. */
  {
    ef_fs_dt_settings ds = {0, 0.0, 0.7, 1e-9, 1.0, 0.0};
    double dh, dd, sh, sd;
    ASSERT_OK(ef_fs_compute_dt(hfs, t.un, &ds, &dh, &sh, NULL));
    ASSERT_OK(ef_cl_fs_compute_dt(fs, &ds, &dd, &sd, NULL));
    EXPECT(fabs(sh - sd) <= 8.0 * dim * EPS * sh && fabs(dh - dd) <= 8.0 * dim * EPS * dh,
          "%dD time step: host %.17g / %.17g, device %.17g / %.17g", dim, dh, sh, dd, sd);
  }

  /* Step 1: tau and the projections. */
  ASSERT_OK(ef_cl_fs_prepare(fs, dt));
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_TAU, dev));
  for (int64_t i = 0; i < n; ++i)
    bound[i] = 8.0 * (double)(ed->row_ptr[i + 1] - ed->row_ptr[i]) * EPS * tau[i];
  compare("tau", dim, tau, dev, bound, n);
  for (int which = 0; which < 2; ++which) {
    for (int64_t i = 0; i < n; ++i) {
      const int ne = (int)(ed->row_ptr[i + 1] - ed->row_ptr[i]);
      const int32_t *col = ed->col + ed->row_ptr[i];
      const double *ev = ed->values + ed->row_ptr[i] * ed->stride;
      double S[3] = {0.0, 0.0, 0.0};
      for (int k = 0; k < ne; ++k) {
        const int64_t j = col[k];
        const double an = abs_an(dim, t.un + 3 * i, ev, k);
        for (int c = 0; c < dim; ++c)
          S[c] += which == 0 ? an * fabs(t.un[3 * j + c] - t.un[3 * i + c])
                             : fabs(EF_EDGE_NABLA(ev, k, dim, c)) * fabs(t.pn[j] - t.pn[i]);
      }
      for (int c = 0; c < 3; ++c)
        bound[3 * i + c] = 8.0 * ne * EPS * ed->inv_mass[i] * S[c];
    }
    ASSERT_OK(ef_cl_fs_read_array(fs, which == 0 ? EF_CL_FS_XI : EF_CL_FS_XP, dev));
    compare(which == 0 ? "convective projection" : "pressure projection", dim, which == 0 ? xi : xp, dev, bound,
            (int64_t)v);
  }

  /* Step 1: the RK stages, each from the host's inputs.  The replica must reproduce the
   * executor's momentum phase exactly (same functions, same order, same compiler). */
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_TAU, tau));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_XI, xi));
  const ef_cl_fs_array out_of[4] = {EF_CL_FS_STAGE_A, EF_CL_FS_STAGE_B, EF_CL_FS_STAGE_A, EF_CL_FS_UH};
  const ef_cl_fs_array in_of[4] = {EF_CL_FS_VELOCITY, EF_CL_FS_STAGE_A, EF_CL_FS_STAGE_B, EF_CL_FS_STAGE_A};
  double *ins[4] = {t.un, ua, ub, ua}, *outs[4] = {ua, ub, ua, uh};
  for (int stage = 0; stage < 4; ++stage) {
    if (stage > 0) {
      ASSERT_OK(ef_cl_fs_write_array(fs, in_of[stage], ins[stage]));
      ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_ACC, acc));
    }
    double *out = calloc(v, sizeof(double));
    ASSERT(out, "out of memory");
    host_stage(&t, stage, dt, tau, xi, ins[stage], acc, out, Sacc, bound);
    ASSERT_OK(ef_cl_fs_rk_stage(fs, stage, dt));
    ASSERT_OK(ef_cl_fs_read_array(fs, out_of[stage], dev));
    char what[64];
    snprintf(what, sizeof what, "RK stage %d velocity", stage);
    compare(what, dim, out, dev, bound, (int64_t)v);
    /* The accumulator of stages 0-2 is the next stage's input: compare it too. */
    ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_ACC, dev));
    for (int64_t q = 0; q < (int64_t)v; ++q)
      bound[q] = 8.0 * (double)(ed->row_ptr[q / 3 + 1] - ed->row_ptr[q / 3]) * EPS * Sacc[q];
    snprintf(what, sizeof what, "RK stage %d accumulator", stage);
    compare(what, dim, acc, dev, bound, (int64_t)v);
    memcpy(outs[stage], out, v * sizeof(double));
    free(out);
  }
  for (int64_t q = 0; q < (int64_t)v; ++q)
    EXPECT(uh[q] == uh_ref[q], "%dD: the test's stage replica differs from ef_fs_momentum at %lld", dim, (long long)q);
  /* Reactions of stage 3: acc/6 - M (uh - u_n)/dt on fixed components. */
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_REACTION, dev));
  for (int64_t q = 0; q < (int64_t)v; ++q) {
    const int64_t i = q / 3;
    bound[q] = t.vfix[q] ? 8.0 * (double)(ed->row_ptr[i + 1] - ed->row_ptr[i]) * EPS *
                               (Sacc[q] / 6.0 + ed->mass[i] * (fabs(uh[q]) + fabs(t.un[q])) / dt)
                         : 0.0;
  }
  compare("reaction", dim, reaction_ref, dev, bound, (int64_t)v);
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_PNEW, dev));
  for (int64_t i = 0; i < n; ++i)
    EXPECT(dev[i] == t.pn[i], "%dD: warm start of node %lld is %.17g, p_n %.17g", dim, (long long)i, dev[i], t.pn[i]);

  /* Step 2: the pressure system from (uh, p_n, pf = p_new's fixed values, xp, tau). */
  for (int64_t i = 0; i < n; ++i)
    pw[i] = t.pfix[i] ? t.pnew[i] : t.pn[i];
  ASSERT_OK(ef_fs_assemble_pressure(hfs, dt, uh, t.pn, pw, NULL));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_UH, uh));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_XP, xp));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_PNEW, pw));
  ASSERT_OK(ef_cl_fs_assemble(fs, dt));
  const ef_csr *H = ef_fs_pressure_matrix(hfs);
  const double *f = ef_fs_pressure_rhs(hfs);
  double *fb = calloc((size_t)n, sizeof(double));
  ASSERT(fb, "out of memory");
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(ed->row_ptr[i + 1] - ed->row_ptr[i]);
    const int32_t *col = ed->col + ed->row_ptr[i];
    const double *ev = ed->values + ed->row_ptr[i] * ed->stride;
    const double nb = 8.0 * ne * EPS;
    int kd = 0;
    while (kd < ne && col[kd] < i)
      ++kd;
    const int64_t h0 = H->row_ptr[i];
    if (t.pfix[i]) { /* identity row, f = the prescribed value: copies */
      for (int k = 0; k <= ne; ++k)
        bound[h0 + k] = 0.0;
      fb[i] = 0.0;
      continue;
    }
    double sdiag = 0.0, sf = 0.0;
    for (int k = 0; k < ne; ++k) {
      const int64_t j = col[k];
      double l = 0.0, sdiv = 0.0, sst = 0.0;
      for (int c = 0; c < dim; ++c) {
        const double nbk = EF_EDGE_NABLA(ev, k, dim, c);
        l += fabs(EF_EDGE_LD(ev, k, dim, c, c));
        sdiv += fabs(nbk * (uh[3 * j + c] - uh[3 * i + c]));
        sst += fabs(EF_EDGE_G(ev, k, dim, c) * xp[3 * j + c]) + fabs(nbk * xp[3 * i + c]);
      }
      const double tij = 0.5 * (tau[i] + tau[j]), h = (tij + cc) * l;
      sdiag += h;
      sf += sdiv + cc * l * fabs(t.pn[j] - t.pn[i]) + tij * sst;
      if (t.pfix[j])
        sf += h * fabs(pw[j]);
      bound[h0 + k + (k >= kd ? 1 : 0)] = t.pfix[j] ? 0.0 : nb * h;
    }
    bound[h0 + kd] = nb * sdiag;
    fb[i] = nb * sf;
  }
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_MATRIX, dev));
  compare("pressure matrix", dim, H->val, dev, bound, H->nnz);
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_RHS, dev));
  compare("pressure right-hand side", dim, f, dev, fb, n);
  free(fb);

  /* Step 3: the correction from (uh, p_n, p_new). */
  double *ucorr = calloc(v, sizeof(double));
  ASSERT(ucorr, "out of memory");
  ASSERT_OK(ef_fs_correct(hfs, dt, uh, t.pn, t.pnew, ucorr));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_PNEW, t.pnew));
  ASSERT_OK(ef_cl_fs_correct(fs, dt));
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(ed->row_ptr[i + 1] - ed->row_ptr[i]);
    const int32_t *col = ed->col + ed->row_ptr[i];
    const double *ev = ed->values + ed->row_ptr[i] * ed->stride;
    const double dpi = t.pnew[i] - t.pn[i];
    double S[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < ne; ++k) {
      const double dp = fabs((t.pnew[col[k]] - t.pn[col[k]]) - dpi);
      for (int c = 0; c < dim; ++c)
        S[c] += fabs(EF_EDGE_NABLA(ev, k, dim, c)) * dp;
    }
    for (int c = 0; c < 3; ++c)
      bound[3 * i + c] = 8.0 * ne * EPS * (fabs(uh[3 * i + c]) + cc * ed->inv_mass[i] * S[c]);
    bc_bounds(&t, i, bound + 3 * i);
  }
  ASSERT_OK(ef_cl_fs_read_array(fs, EF_CL_FS_UNEW, dev));
  compare("corrected velocity", dim, ucorr, dev, bound, (int64_t)v);

  /* Divergence: a bound below the largest speed names a node, on both executors. */
  ef_fs_settings tight = t.s;
  tight.velocity_bound = 1e-3;
  ASSERT_OK(ef_fs_set_settings(hfs, &tight));
  const int herr = ef_fs_correct(hfs, dt, uh, t.pn, t.pnew, ucorr);
  char host_msg[512];
  snprintf(host_msg, sizeof host_msg, "%s", ef_error_message());
  ef_cl_fs_destroy(&fs);
  os.fs = tight;
  ASSERT_OK(ef_cl_fs_create(ctx, ed, &os, &fs));
  ASSERT_OK(ef_cl_fs_set_bc(fs, &tight));
  ASSERT_OK(ef_cl_fs_set_state(fs, t.un, t.pn));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_UH, uh));
  ASSERT_OK(ef_cl_fs_write_array(fs, EF_CL_FS_PNEW, t.pnew));
  const int derr = ef_cl_fs_correct(fs, dt);
  const char *at_h = strstr(host_msg, "at node "), *at_d = strstr(ef_error_message(), "at node ");
  EXPECT(herr == EF_ERR_DIVERGED && derr == EF_ERR_DIVERGED && at_h && at_d && atoll(at_h + 8) == atoll(at_d + 8),
        "%dD divergence: host (%d) '%s', device (%d) '%s'", dim, herr, host_msg, derr, ef_error_message());

  ef_cl_fs_destroy(&fs);
  os.fs = t.s;
  if (check_structure_only(ctx, &m, &os, &t, dt)) return 1;
  ef_fs_destroy(&hfs);
  free(dev), free(bound), free(acc), free(Sacc), free(ua), free(ub), free(uh), free(ucorr);
  free(uh_ref), free(pw), free(reaction_ref);
  free(t.un), free(t.pn), free(t.pnew), free(t.body), free(t.normal), free(t.tangent);
  free(t.vfix), free(t.pfix), free(t.slip);
  ef_edge_data_free(&t.ed);
  ef_test_mesh_free(&m);
  return 0;
}

int main(int argc, char **argv) {
  ef_cl_context *ctx = NULL;
  int rc = test_context(&ctx, argc > 1 ? argv[1] : "");
  if (rc)
    return rc;
  for (int dim = 2; dim <= 3 && !rc; ++dim)
    rc = run_case(ctx, dim);
  ef_cl_context_destroy(&ctx);
  if (rc)
    return rc;
  return failures ? 1 : 0;
}

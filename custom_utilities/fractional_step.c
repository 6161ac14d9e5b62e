/* fractional_step.c -- OpenMP executor of one edge-based fractional step (see the header). */
#include "fractional_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_util.h"

#include "ef_omp.h"

struct ef_fs_s {
  const ef_edge_data *ed;
  ef_fs_settings s;
  int64_t n, n_blocks, block;
  double *tau, *xi, *xp;        /* step 1 */
  double *ua, *ub, *acc;        /* RK stage states and the residual accumulator */
  double *uh, *unew, *pnew;     /* ef_fs_step's intermediate states */
  double *pscratch;             /* pressure target of the stage-time BC evaluations */
  double *part_f, *part_abs;    /* per-block partial sums of f and |f| */
  /* Pressure system: CSR of the edge graph with the diagonal inserted. */
  int64_t *h_row_ptr, *h_diag;
  int32_t *h_row_ptr32, *h_col;
  double *h_val, *f;
  ef_csr H;
  ef_host_cg *cg;
  /* Implicit viscosity (allocated when first enabled): stage residuals F_j, V_j (3n each), the
   * stage state and right-hand side, the CG vectors, the operator diagonal and block partials. */
  double *imex_f, *imex_v, *imex_u, *imex_rhs, *cg_r, *cg_z, *cg_p, *cg_q, *vdiag, *vpart;
  double *stage_lij; /* the stage operator, compact: L_IJ per directed edge (ef_row_edge_laplacians) */
  int v_iterations, v_max_iterations;
  double v_residual, v_seconds;
  /* viscous_pressure 1: the pressure the last step started from and returned, its dt, the stage pressures
   * P_1..P_3 (n each), their gradients (3n each), a zero pressure and p^; ext_on: this step extrapolates. */
  double *ext_prev, *ext_last, *ext_p, *ext_g, *ext_zero, *ext_hat;
  double ext_dt;
  int ext_have, ext_on;
  /* viscous_projection 1: the velocity and pressure of the single projection, the corrected velocity of a
   * trial pressure, the PCG vectors. */
  double *cp_u0, *cp_u, *cp_p0, *cp_r0, *cp_r, *cp_z, *cp_d, *cp_q, *cp_x, *cp_t;
  int cp_iterations;
  /* pressure_guess: the input pressures of the last two steps, their steps, the pressure the last step returned,
   * how many levels are known (0-2). */
  double *pg_prev, *pg_prev2, *pg_last;
  double pg_dt[2];
  int pg_levels;
  double tau_dt; /* TAU_TIME_STEP: tau's step bound from ef_fs_compute_dt for the next step (0: none) */
};

/* Default settings (see the header for the reasons of each value). */
void ef_fs_settings_default(ef_fs_settings *s) {
  memset(s, 0, sizeof *s);
  s->nu = 0.0;
  s->stabilization = 1;
  s->tau_c1 = 1.0;
  s->tau_c2 = 4.0;
  s->tau_c3 = 2.0;
  s->pressure_rtol = EF_DEFAULT_TOLERANCE;
  s->pressure_max_iterations = EF_DEFAULT_MAX_ITERATION;
  s->flux_imbalance_tolerance = 1e-6;
  s->velocity_bound = 1e6;
  s->fixed_pressure_scale = 1.0;
  s->viscous_implicit = 0;
  s->viscous_rtol = 1e-10;
  s->viscous_max_iterations = 10000;
  s->viscous_number_max = 100.0;
  s->viscous_dt_growth = 1.2;
}

/* Reject settings the step cannot run with. */
static int check_settings(const ef_fs_settings *s) {
  EF_CHECK(s, EF_ERR_PARAMETER, "fractional step: settings are NULL");
  EF_CHECK(s->nu >= 0.0 && isfinite(s->nu), EF_ERR_PARAMETER,
           "fractional step: kinematic viscosity must be finite and >= 0, got %g", s->nu);
  EF_CHECK(!s->stabilization || (s->tau_c1 >= 0.0 && s->tau_c2 >= 0.0 && s->tau_c3 >= 0.0 &&
                                 s->tau_c1 + s->tau_c2 + s->tau_c3 > 0.0),
           EF_ERR_PARAMETER, "fractional step: tau constants must be >= 0 and not all 0 (got %g, %g, %g)",
           s->tau_c1, s->tau_c2, s->tau_c3);
  EF_CHECK(s->pressure_rtol > 0.0 && s->pressure_rtol < 1.0, EF_ERR_PARAMETER,
           "fractional step: pressure tolerance must be in (0, 1), got %g", s->pressure_rtol);
  EF_CHECK(s->pressure_max_iterations > 0, EF_ERR_PARAMETER,
           "fractional step: pressure max iterations must be positive, got %d", s->pressure_max_iterations);
  EF_CHECK(s->flux_imbalance_tolerance >= 0.0, EF_ERR_PARAMETER,
           "fractional step: flux imbalance tolerance must be >= 0, got %g", s->flux_imbalance_tolerance);
  EF_CHECK(s->velocity_bound > 0.0, EF_ERR_PARAMETER,
           "fractional step: velocity bound must be positive, got %g", s->velocity_bound);
  EF_CHECK(!s->slip_type || s->slip_normal, EF_ERR_PARAMETER,
           "fractional step: slip types given without slip normals");
  EF_CHECK(s->fixed_pressure_scale > 0.0, EF_ERR_PARAMETER,
           "fractional step: fixed pressure scale must be positive (1/density), got %g",
           s->fixed_pressure_scale);
  EF_CHECK(!s->viscous_implicit || (s->viscous_rtol > 0.0 && s->viscous_rtol < 1.0 && s->viscous_max_iterations > 0),
           EF_ERR_PARAMETER,
           "fractional step: implicit viscosity needs a tolerance in (0, 1) and a positive iteration limit "
           "(got %g, %d)",
           s->viscous_rtol, s->viscous_max_iterations);
  EF_CHECK(s->viscous_correction >= 0 && s->viscous_correction <= 3, EF_ERR_PARAMETER,
           "fractional step: viscous correction must be 0 (lumped), 1 (viscous), 2 (viscous, unfiltered) or 3 "
           "(rotational), got %d",
           s->viscous_correction);
  EF_CHECK(s->viscous_pressure == 0 || s->viscous_pressure == 1, EF_ERR_PARAMETER,
           "fractional step: viscous pressure must be 0 (frozen) or 1 (extrapolated), got %d", s->viscous_pressure);
  EF_CHECK(s->pressure_guess >= 0 && s->pressure_guess <= 2, EF_ERR_PARAMETER,
           "fractional step: pressure guess must be 0 (previous), 1 (linear) or 2 (quadratic), got %d",
           s->pressure_guess);
  EF_CHECK(s->viscous_projection == 0 || (s->viscous_projection == 1 && s->viscous_correction == 0), EF_ERR_PARAMETER,
           "fractional step: viscous projection must be 0 (single) or 1 (converged, with the lumped correction), got "
           "%d with correction %d",
           s->viscous_projection, s->viscous_correction);
  EF_CHECK(!s->viscous_implicit || s->nu_nodal || s->nu > 0.0, EF_ERR_PARAMETER,
           "fractional step: implicit viscosity needs a positive viscosity (got %g)", s->nu);
  return EF_SUCCESS;
}

/* The work arrays of the implicit viscous stages, once. */
static int imex_alloc(ef_fs *fs) {
  if (fs->imex_f) return EF_SUCCESS;
  const size_t v = 3 * (size_t)fs->n;
  fs->imex_f = calloc(4 * v, sizeof(double));
  fs->imex_v = calloc(4 * v, sizeof(double));
  fs->imex_u = calloc(v, sizeof(double));
  fs->imex_rhs = calloc(v, sizeof(double));
  fs->cg_r = calloc(v, sizeof(double));
  fs->cg_z = calloc(v, sizeof(double));
  fs->cg_p = calloc(v, sizeof(double));
  fs->cg_q = calloc(v, sizeof(double));
  fs->vdiag = calloc((size_t)fs->n, sizeof(double));
  fs->vpart = calloc(3 * (size_t)fs->n_blocks, sizeof(double));
  fs->stage_lij = malloc((size_t)(fs->ed->n_edges > 0 ? fs->ed->n_edges : 1) * sizeof(double));
  EF_CHECK(fs->imex_f && fs->imex_v && fs->imex_u && fs->imex_rhs && fs->cg_r && fs->cg_z && fs->cg_p && fs->cg_q &&
               fs->vdiag && fs->vpart && fs->stage_lij,
           EF_ERR_MEMORY, "fractional step: out of memory for the implicit viscous stages (%lld nodes)",
           (long long)fs->n);
  const ef_edge_data *ed = fs->ed;
  const int64_t *rp = ed->row_ptr;
  double *lij = fs->stage_lij;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < fs->n; ++i)
    ef_row_edge_laplacians(ed->dim, (int)(rp[i + 1] - rp[i]), ed->values + rp[i] * ed->stride, lij + rp[i]);
  return EF_SUCCESS;
}

/* The arrays of pressure_guess, once. */
static int pg_alloc(ef_fs *fs) {
  if (fs->pg_prev) return EF_SUCCESS;
  const size_t n = (size_t)fs->n;
  fs->pg_prev = calloc(n, sizeof(double));
  fs->pg_prev2 = calloc(n, sizeof(double));
  fs->pg_last = calloc(n, sizeof(double));
  EF_CHECK(fs->pg_prev && fs->pg_prev2 && fs->pg_last, EF_ERR_MEMORY,
           "fractional step: out of memory for the pressure guess's history (%lld nodes)", (long long)fs->n);
  return EF_SUCCESS;
}

int ef_fs_get_pressure_history(const ef_fs *fs, ef_fs_pressure_history *h) {
  EF_CHECK(fs && h, EF_ERR_PARAMETER, "fractional step: NULL argument to ef_fs_get_pressure_history");
  memset(h, 0, sizeof *h);
  if (!fs->pg_prev || fs->pg_levels == 0) return EF_SUCCESS;
  h->levels = fs->pg_levels;
  h->prev = fs->pg_prev;
  h->prev2 = fs->pg_prev2;
  h->last = fs->pg_last;
  h->dt[0] = fs->pg_dt[0];
  h->dt[1] = fs->pg_dt[1];
  return EF_SUCCESS;
}

int ef_fs_pressure_history_check(const ef_fs_pressure_history *h, int need_last) {
  EF_CHECK(h, EF_ERR_PARAMETER, "fractional step: no pressure history");
  EF_CHECK(h->levels >= 0 && h->levels <= 2, EF_ERR_PARAMETER,
           "fractional step: pressure history levels must be 0, 1 or 2, got %d", h->levels);
  if (h->levels == 0) return EF_SUCCESS;
  EF_CHECK(h->prev && (h->last || !need_last) && (h->levels < 2 || h->prev2), EF_ERR_PARAMETER,
           "fractional step: pressure history of %d levels without its arrays", h->levels);
  EF_CHECK(h->dt[0] > 0.0 && (h->levels < 2 || h->dt[1] > 0.0), EF_ERR_PARAMETER,
           "fractional step: pressure history steps must be positive, got %g, %g", h->dt[0], h->dt[1]);
  return EF_SUCCESS;
}

int ef_fs_set_pressure_history(ef_fs *fs, const ef_fs_pressure_history *h) {
  EF_CHECK(fs && h, EF_ERR_PARAMETER, "fractional step: NULL argument to ef_fs_set_pressure_history");
  EF_CALL(ef_fs_pressure_history_check(h, 1));
  fs->pg_levels = 0;
  if (h->levels == 0 || !fs->s.pressure_guess) return EF_SUCCESS;
  EF_CALL(pg_alloc(fs));
  const size_t n = (size_t)fs->n;
  memcpy(fs->pg_prev, h->prev, n * sizeof(double));
  memcpy(fs->pg_last, h->last, n * sizeof(double));
  if (h->levels == 2) memcpy(fs->pg_prev2, h->prev2, n * sizeof(double));
  fs->pg_dt[0] = h->dt[0];
  fs->pg_dt[1] = h->levels == 2 ? h->dt[1] : 0.0;
  fs->pg_levels = h->levels;
  return EF_SUCCESS;
}

/* The arrays of viscous_pressure 1, once. */
static int ext_alloc(ef_fs *fs) {
  if (fs->ext_prev) return EF_SUCCESS;
  const size_t n = (size_t)fs->n;
  fs->ext_last = calloc(n, sizeof(double));
  fs->ext_p = calloc(3 * n, sizeof(double));
  fs->ext_g = calloc(9 * n, sizeof(double));
  fs->ext_zero = calloc(n, sizeof(double));
  fs->ext_hat = calloc(n, sizeof(double));
  fs->ext_prev = calloc(n, sizeof(double));
  EF_CHECK(fs->ext_prev && fs->ext_last && fs->ext_p && fs->ext_g && fs->ext_zero && fs->ext_hat, EF_ERR_MEMORY,
           "fractional step: out of memory for the extrapolated stage pressures (%lld nodes)", (long long)fs->n);
  return EF_SUCCESS;
}

/* The arrays of viscous_projection 1, once. */
static int cp_alloc(ef_fs *fs) {
  if (fs->cp_u0) return EF_SUCCESS;
  const size_t n = (size_t)fs->n;
  fs->cp_u = calloc(3 * n, sizeof(double));
  fs->cp_p0 = calloc(n, sizeof(double));
  fs->cp_r0 = calloc(n, sizeof(double));
  fs->cp_r = calloc(n, sizeof(double));
  fs->cp_z = calloc(n, sizeof(double));
  fs->cp_d = calloc(n, sizeof(double));
  fs->cp_q = calloc(n, sizeof(double));
  fs->cp_x = calloc(n, sizeof(double));
  fs->cp_t = calloc(n, sizeof(double));
  fs->cp_u0 = calloc(3 * n, sizeof(double));
  EF_CHECK(fs->cp_u0 && fs->cp_u && fs->cp_p0 && fs->cp_r0 && fs->cp_r && fs->cp_z && fs->cp_d && fs->cp_q &&
               fs->cp_x && fs->cp_t,
           EF_ERR_MEMORY, "fractional step: out of memory for the converged projection (%lld nodes)", (long long)fs->n);
  return EF_SUCCESS;
}

/* Validate and install new settings. */
int ef_fs_set_settings(ef_fs *fs, const ef_fs_settings *settings) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "fractional step: executor is NULL");
  EF_CALL(check_settings(settings));
  if (settings->viscous_implicit) EF_CALL(imex_alloc(fs));
  fs->s = *settings;
  return EF_SUCCESS;
}

const ef_fs_settings *ef_fs_get_settings(const ef_fs *fs) { return fs ? &fs->s : NULL; }

/* Free every work array; accepts NULL. */
void ef_fs_destroy(ef_fs **fsp) {
  if (!fsp || !*fsp) return;
  ef_fs *fs = *fsp;
  free(fs->tau);
  free(fs->xi);
  free(fs->xp);
  free(fs->ua);
  free(fs->ub);
  free(fs->acc);
  free(fs->uh);
  free(fs->unew);
  free(fs->pnew);
  free(fs->pscratch);
  free(fs->part_f);
  free(fs->part_abs);
  free(fs->h_row_ptr);
  free(fs->h_diag);
  free(fs->h_row_ptr32);
  free(fs->h_col);
  free(fs->h_val);
  free(fs->f);
  free(fs->imex_f);
  free(fs->imex_v);
  free(fs->imex_u);
  free(fs->imex_rhs);
  free(fs->cg_r);
  free(fs->cg_z);
  free(fs->cg_p);
  free(fs->cg_q);
  free(fs->vdiag);
  free(fs->vpart);
  free(fs->stage_lij);
  free(fs->ext_prev);
  free(fs->ext_last);
  free(fs->ext_p);
  free(fs->ext_g);
  free(fs->ext_zero);
  free(fs->ext_hat);
  free(fs->pg_prev);
  free(fs->pg_prev2);
  free(fs->pg_last);
  free(fs->cp_u0);
  free(fs->cp_u);
  free(fs->cp_p0);
  free(fs->cp_r0);
  free(fs->cp_r);
  free(fs->cp_z);
  free(fs->cp_d);
  free(fs->cp_q);
  free(fs->cp_x);
  free(fs->cp_t);
  ef_host_cg_destroy(&fs->cg);
  free(fs);
  *fsp = NULL;
}

/* Allocate all work arrays once and build the CSR of H (edge graph + diagonal). */
int ef_fs_create(const ef_edge_data *edges, const ef_fs_settings *settings, ef_fs **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "fractional step: output handle is NULL");
  *out = NULL;
  EF_CHECK(edges && edges->row_ptr && edges->n_nodes > 0, EF_ERR_PARAMETER,
           "fractional step: edge data is missing or empty");
  EF_CALL(check_settings(settings));
  ef_fs *fs = calloc(1, sizeof *fs);
  EF_CHECK(fs, EF_ERR_MEMORY, "fractional step: out of memory");
  int err = EF_SUCCESS;
  const int64_t n = edges->n_nodes, ne = edges->n_edges, nnz = ne + n;
  fs->ed = edges;
  fs->s = *settings;
  fs->n = n;
  fs->block = ef_reduction_block_rows(n);
  fs->n_blocks = (n + fs->block - 1) / fs->block;
  const size_t v = 3 * (size_t)n;
  fs->tau = calloc((size_t)n, sizeof(double));
  fs->xi = calloc(v, sizeof(double));
  fs->xp = calloc(v, sizeof(double));
  fs->ua = calloc(v, sizeof(double));
  fs->ub = calloc(v, sizeof(double));
  fs->acc = calloc(v, sizeof(double));
  fs->uh = calloc(v, sizeof(double));
  fs->unew = calloc(v, sizeof(double));
  fs->pnew = calloc((size_t)n, sizeof(double));
  fs->pscratch = calloc((size_t)n, sizeof(double));
  fs->part_f = calloc((size_t)fs->n_blocks, sizeof(double));
  fs->part_abs = calloc((size_t)fs->n_blocks, sizeof(double));
  fs->h_row_ptr = malloc(((size_t)n + 1) * sizeof(int64_t));
  fs->h_diag = malloc((size_t)n * sizeof(int64_t));
  fs->h_col = malloc((size_t)nnz * sizeof(int32_t));
  fs->h_val = calloc((size_t)nnz, sizeof(double));
  fs->f = calloc((size_t)n, sizeof(double));
  if (nnz < INT32_MAX) fs->h_row_ptr32 = malloc(((size_t)n + 1) * sizeof(int32_t));
  EF_CHECK_GOTO(fs->tau && fs->xi && fs->xp && fs->ua && fs->ub && fs->acc && fs->uh && fs->unew &&
                    fs->pnew && fs->pscratch && fs->part_f && fs->part_abs && fs->h_row_ptr &&
                    fs->h_diag && fs->h_col && fs->h_val && fs->f && (nnz >= INT32_MAX || fs->h_row_ptr32),
                EF_ERR_MEMORY, fail, "fractional step: out of memory for %lld nodes", (long long)n);
  EF_CALL_GOTO(ef_host_cg_create(n, &fs->cg), fail);
  if (settings->viscous_implicit) EF_CALL_GOTO(imex_alloc(fs), fail);

  /* H has the edge graph's sparsity plus the diagonal, inserted in sorted position. */
  const int64_t *rp = edges->row_ptr;
  const int32_t *col = edges->col;
  fs->h_row_ptr[0] = 0;
  for (int64_t i = 0; i < n; ++i) fs->h_row_ptr[i + 1] = rp[i + 1] + i + 1;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = fs->h_row_ptr[i];
    int placed = 0;
    for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
      if (!placed && col[k] > i) {
        fs->h_diag[i] = o;
        fs->h_col[o++] = (int32_t)i;
        placed = 1;
      }
      fs->h_col[o++] = col[k];
    }
    if (!placed) {
      fs->h_diag[i] = o;
      fs->h_col[o++] = (int32_t)i;
    }
  }
  if (fs->h_row_ptr32)
    for (int64_t i = 0; i <= n; ++i) fs->h_row_ptr32[i] = (int32_t)fs->h_row_ptr[i];
  fs->H.n = n;
  fs->H.nnz = nnz;
  fs->H.row_ptr = fs->h_row_ptr;
  fs->H.row_ptr32 = fs->h_row_ptr32;
  fs->H.col = fs->h_col;
  fs->H.val = fs->h_val;
  fs->H.diag = fs->h_diag;
  fs->H.constant_null_space = 0;
  *out = fs;
  return EF_SUCCESS;
fail:
  ef_fs_destroy(&fs);
  return err;
}

const double *ef_fs_tau(const ef_fs *fs) { return fs ? fs->tau : NULL; }
const double *ef_fs_convective_projection(const ef_fs *fs) { return fs ? fs->xi : NULL; }
const double *ef_fs_pressure_projection(const ef_fs *fs) { return fs ? fs->xp : NULL; }
const ef_csr *ef_fs_pressure_matrix(const ef_fs *fs) { return fs ? &fs->H : NULL; }
const double *ef_fs_pressure_rhs(const ef_fs *fs) { return fs ? fs->f : NULL; }

/* Bytes streamed by the four RK stages: records, columns and node vectors once each. */
double ef_fs_momentum_bytes(const ef_fs *fs) {
  if (!fs) return 0.0;
  const double E = (double)fs->ed->n_edges, n = (double)fs->n;
  /* Per stage: records + columns; per node: row offset, mass, 1/mass, tau, p (8 each),
   * stage u, xi, u_n, new u (24 each), the accumulator read and written (48). */
  const double per_stage = E * (8.0 * fs->ed->stride + 4.0) + n * (5 * 8.0 + 4 * 24.0 + 48.0);
  return 4.0 * per_stage;
}

/* ---------------------------------------------------------------------------
 * Time step. */

int ef_fs_dt_check(const ef_fs_dt_settings *s) {
  EF_CHECK(s, EF_ERR_PARAMETER, "time step: NULL settings");
  if (s->fixed)
    EF_CHECK(s->dt_fixed > 0.0, EF_ERR_PARAMETER, "time step: fixed step must be positive, got %g", s->dt_fixed);
  else
    EF_CHECK(s->cfl > 0.0 && s->dt_min > 0.0 && s->dt_max >= s->dt_min, EF_ERR_PARAMETER,
             "time step: need cfl > 0 and 0 < dt_min <= dt_max (got cfl %g, [%g, %g])", s->cfl, s->dt_min,
             s->dt_max);
  return EF_SUCCESS;
}

/* The floor: a stable step (cfl * limit) below minimum_delta_time stops the run; clamping up to the
 * floor would step beyond the stability limit, and a floor of 1e-12 is an effective hang. */
int ef_fs_dt_floor_check(const ef_fs_dt_settings *s, double stable) {
  if (stable == 1.0e300) return EF_SUCCESS;
  double limit = s->fixed ? stable : s->cfl * stable;
  EF_CHECK(limit >= s->dt_min, EF_ERR_DIVERGED,
           "time step: the stability limit %s%.3g is below solver_settings.time_stepping.minimum_delta_time "
           "%.3g; an element far smaller than its neighbours (a sliver: run 'edgeflow check' on the case) or a "
           "velocity far above the case's scale forces it; stopping instead of stepping past the limit",
           s->fixed ? "" : "(CFL_number x limit) ", limit, s->dt_min);
  return EF_SUCCESS;
}

void ef_fs_dt_choose(const ef_fs_dt_settings *s, double stable, double *dt, double *dt_stable, int *reduced) {
  if (dt_stable) *dt_stable = stable;
  if (reduced) *reduced = 0;
  if (s->fixed) {
    *dt = s->dt_fixed;
    if (s->dt_fixed > stable) {
      *dt = stable;
      if (reduced) *reduced = 1;
    }
  } else {
    /* ef_node_dt is linear in cfl. */
    double d = stable == 1.0e300 ? s->dt_max : s->cfl * stable;
    if (d > s->dt_max) d = s->dt_max;
    if (d < s->dt_min) d = s->dt_min;
    *dt = d;
  }
}

void ef_fs_dt_cap_viscous(const ef_fs_dt_settings *s, const ef_fs_settings *fss, double hmin2_over_nu, double *dt) {
  if (s->fixed || !fss->viscous_implicit) return;
  double cap = 1.0e300;
  if (fss->viscous_number_max > 0.0 && hmin2_over_nu < 1.0e300) cap = fss->viscous_number_max * hmin2_over_nu;
  if (fss->viscous_dt_growth > 0.0) {
    const double g = s->dt_previous > 0.0       ? fss->viscous_dt_growth * s->dt_previous
                     : hmin2_over_nu < 1.0e300 ? 0.25 * fmin(s->cfl, EF_FS_CFL_EXPLICIT) * hmin2_over_nu
                                               : 1.0e300;
    if (g < cap) cap = g;
  }
  if (*dt > cap) *dt = cap > s->dt_min ? cap : s->dt_min;
}

double ef_fs_dt_tau(const ef_fs_dt_settings *s, const ef_fs_settings *fss, double stable_explicit) {
  if (!fss->viscous_implicit || fss->tau_time_step != 0) return 0.0; /* TAU_TIME_STEP */
  ef_fs_dt_settings e = *s;
  e.cfl = fmin(s->cfl, EF_FS_CFL_EXPLICIT);
  double d;
  ef_fs_dt_choose(&e, stable_explicit, &d, NULL, NULL);
  return d;
}

/* Time step min_I cfl / (|u_I|/hmin_I + 4 nu_I/hmin_I^2), bounded, or a fixed step cut to the cfl = 1 limit. */
int ef_fs_compute_dt(ef_fs *fs, const double *velocity, const ef_fs_dt_settings *s, double *dt,
                     double *dt_stable, int *reduced) {
  EF_CHECK(fs && velocity && s && dt, EF_ERR_PARAMETER, "time step: NULL argument");
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim;
  const double *hmin = ed->hmin, *nun = fs->s.nu_nodal, nu = fs->s.nu;
  EF_CALL(ef_fs_dt_check(s));
  /* min is exact, so the reduction is independent of the thread count. */
  double stable = 1.0e300, visc = 1.0e300, expl = 1.0e300;
  int64_t bad = INT64_MAX;
  const int64_t n = fs->n;
  const int implicit = fs->s.viscous_implicit;
  EF_OMP(omp parallel for schedule(static) reduction(min : stable, bad, visc, expl))
  for (int64_t i = 0; i < n; ++i) {
    const double nui = nun ? nun[i] : nu;
    const double d = implicit ? ef_node_dt_convective(hmin[i], ef_node_norm(dim, i, velocity), 1.0)
                              : ef_node_dt(hmin[i], ef_node_norm(dim, i, velocity), nui, 1.0);
    if (!(d > 0.0)) {
      if (i < bad) bad = i;
    } else if (d < stable) {
      stable = d;
    }
    if (implicit && nui > 0.0 && hmin[i] * hmin[i] / nui < visc) visc = hmin[i] * hmin[i] / nui;
    if (implicit) { /* TAU_TIME_STEP: the explicit rule's limit */
      const double e = ef_node_dt(hmin[i], ef_node_norm(dim, i, velocity), nui, 1.0);
      if (e < expl) expl = e;
    }
  }
  EF_CHECK(bad == INT64_MAX, EF_ERR_DIVERGED, "time step: velocity (%g, %g, %g) at node %lld is not finite",
           velocity[3 * (bad == INT64_MAX ? 0 : bad)], velocity[3 * (bad == INT64_MAX ? 0 : bad) + 1],
           velocity[3 * (bad == INT64_MAX ? 0 : bad) + 2], (long long)bad);
  EF_CALL(ef_fs_dt_floor_check(s, stable));
  ef_fs_dt_choose(s, stable, dt, dt_stable, reduced);
  if (implicit) ef_fs_dt_cap_viscous(s, &fs->s, visc, dt);
  fs->tau_dt = ef_fs_dt_tau(s, &fs->s, expl); /* TAU_TIME_STEP */
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 1. */

/* Step 1: tau_I, xi_I = M^-1 A_I(u_n), xp_I = M^-1 sum nabla_IJ (p_J - p_I) (eq. 48). */
void ef_fs_rows_prepare(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, double dt, const double *u_n,
                        const double *p_n, double *tau, double *xi, double *xp) {
  const int dim = ed->dim, S = ed->stride;
  const int64_t *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *invm = ed->inv_mass, *h = ed->h;
  const double *nun = fss->nu_nodal, nu = fss->nu;
  const int stab = fss->stabilization;
  const double c1 = fss->tau_c1, c2 = fss->tau_c2, c3 = fss->tau_c3;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    double a[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
    if (dim == 3)
      ef_row_projections(3, i, ne, ci, ei, u_n, p_n, invm[i], a, g);
    else
      ef_row_projections(2, i, ne, ci, ei, u_n, p_n, invm[i], a, g);
    for (int c = 0; c < 3; ++c) {
      xi[3 * i + c] = a[c];
      xp[3 * i + c] = g[c];
    }
    tau[i] = stab ? ef_node_tau(h[i], ef_node_norm(dim, i, u_n), nun ? nun[i] : nu, dt, c1, c2, c3) : 0.0;
  }
}

int ef_fs_prepare(ef_fs *fs, double dt, const double *u_n, const double *p_n) {
  EF_CHECK(fs && u_n && p_n, EF_ERR_PARAMETER, "fractional step: NULL argument to prepare");
  EF_CHECK(dt > 0.0, EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  if (fs->tau_dt > 0.0 && fs->tau_dt < dt) dt = fs->tau_dt; /* TAU_TIME_STEP: dt is tau's only here */
  ef_fs_rows_prepare(fs->ed, &fs->s, fs->n, dt, u_n, p_n, fs->tau, fs->xi, fs->xp);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 2. */

/* One RK4 stage over all rows: R = R(us) (p_n, xi, tau frozen); the accumulator gathers
 * R_1 + 2R_2 + 2R_3 + R_4; uout = u_n + a M^-1 R (stages 0-2, a = dt/2, dt/2, dt) or
 * u_n + dt/6 M^-1 acc (stage 3), then fixed components take u_n's values and slip nodes
 * are projected. */
void ef_fs_rows_rk_stage(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int stage, double dt,
                         const double *u_n, const double *p_n, const double *us, const double *tau, const double *xi,
                         double *acc, double *uout) {
  const int dim = ed->dim, S = ed->stride;
  const int64_t *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *mass = ed->mass, *invm = ed->inv_mass;
  const double *bf = fss->body_force, *nun = fss->nu_nodal;
  const double nu = fss->nu;
  const uint8_t *vfix = fss->velocity_fixed, *slip = fss->slip_type, *pfix = fss->pressure_fixed;
  const double *sn = fss->slip_normal, *st = fss->slip_tangent;
  const double a = stage == 0 || stage == 1 ? 0.5 * dt : stage == 2 ? dt : dt / 6.0;
  const double wacc = stage == 0 || stage == 3 ? 1.0 : 2.0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    double b[3] = {0.0, 0.0, 0.0}, R[3] = {0.0, 0.0, 0.0};
    if (bf)
      for (int c = 0; c < dim; ++c) b[c] = bf[3 * i + c];
    const double nui = nun ? nun[i] : nu;
    if (dim == 3)
      ef_row_momentum_residual(3, i, ne, ci, ei, us, p_n, xi, mass[i], b, tau[i], nui, R);
    else
      ef_row_momentum_residual(2, i, ne, ci, ei, us, p_n, xi, mass[i], b, tau[i], nui, R);
    if (pfix && pfix[i] && !(vfix && (vfix[3 * i] || vfix[3 * i + 1] || vfix[3 * i + 2])))
      ef_row_open_boundary_traction(dim, i, ne, ci, ei, p_n, R);
    double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < dim; ++c) {
      const double ac = stage == 0 ? R[c] : acc[3 * i + c] + wacc * R[c];
      acc[3 * i + c] = ac;
      uref[c] = u_n[3 * i + c];
      u[c] = uref[c] + a * invm[i] * (stage == 3 ? ac : R[c]);
    }
    const uint8_t none[3] = {0, 0, 0};
    const double zero[3] = {0.0, 0.0, 0.0};
    ef_node_apply_bc(dim, vfix ? vfix + 3 * i : none, slip ? slip[i] : EF_SLIP_NONE, sn ? sn + 3 * i : zero,
                     st ? st + 3 * i : zero, uref, u);
    for (int c = 0; c < 3; ++c) uout[3 * i + c] = u[c];
  }
}

static void rk_stage(ef_fs *fs, int stage, double dt, const double *u_n, const double *p_n, const double *us,
                     double *uout) {
  ef_fs_rows_rk_stage(fs->ed, &fs->s, fs->n, stage, dt, u_n, p_n, us, fs->tau, fs->xi, fs->acc, uout);
}

/* Call the caller's boundary-value function, with context on failure. */
static int eval_fixed(ef_fs *fs, double t, double *u, double *p) {
  if (!fs->s.eval_fixed) return EF_SUCCESS;
  int err = fs->s.eval_fixed(fs->s.eval_fixed_ctx, t, u, p);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "while evaluating boundary values at t = %.9g", t);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 2 with implicit viscosity: IMEX ARS(3,4,3). */

/* ARS(3,4,3): gamma the root in (1/6, 1/2) of 6g^3 - 18g^2 + 9g - 1 = 0 (L-stable SDIRK3); the
 * explicit a42 = a43 as published, a41, a31 from the row sums and a32 from the third-order
 * condition sum b_i a_ij c_j = 1/6, so every order condition holds to rounding. */
void ef_fs_imex_tableau(double a[4][4], double ai[4][4], double b[4], double c[4]) {
  const double g = 0.43586652150845899942;
  const double b1 = -1.5 * g * g + 4.0 * g - 0.25, b2 = 1.5 * g * g - 5.0 * g + 1.25;
  const double a4 = 0.5529291479;
  memset(a, 0, 16 * sizeof(double));
  memset(ai, 0, 16 * sizeof(double));
  c[0] = 0.0;
  c[1] = g;
  c[2] = 0.5 * (1.0 + g);
  c[3] = 1.0;
  b[0] = 0.0;
  b[1] = b1;
  b[2] = b2;
  b[3] = g;
  ai[1][1] = g;
  ai[2][1] = 0.5 * (1.0 - g);
  ai[2][2] = g;
  ai[3][1] = b1;
  ai[3][2] = b2;
  ai[3][3] = g;
  a[1][0] = g;
  a[3][1] = a4;
  a[3][2] = a4;
  a[3][0] = 1.0 - 2.0 * a4;
  a[2][1] = (1.0 / 6.0 - g * a4 * (c[1] + c[2])) / (b2 * c[1]);
  a[2][0] = c[2] - a[2][1];
}

/* F and V of ef_row_imex_residual at the state us on rows [0, n) (with the open-boundary traction in F, as
 * the explicit stage has it). */
void ef_fs_rows_imex_residual(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, const double *us,
                              const double *p_n, const double *tau, const double *xi, double *F, double *V) {
  const int dim = ed->dim, S = ed->stride;
  const int64_t *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *mass = ed->mass;
  const double *bf = fss->body_force, *nun = fss->nu_nodal;
  const double nu = fss->nu;
  const uint8_t *vfix = fss->velocity_fixed, *pfix = fss->pressure_fixed;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    double b[3] = {0.0, 0.0, 0.0}, f[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0};
    if (bf)
      for (int c = 0; c < dim; ++c) b[c] = bf[3 * i + c];
    const double nui = nun ? nun[i] : nu;
    if (dim == 3)
      ef_row_imex_residual(3, i, ne, ci, ei, us, p_n, xi, mass[i], b, tau[i], nui, f, v);
    else
      ef_row_imex_residual(2, i, ne, ci, ei, us, p_n, xi, mass[i], b, tau[i], nui, f, v);
    if (pfix && pfix[i] && !(vfix && (vfix[3 * i] || vfix[3 * i + 1] || vfix[3 * i + 2])))
      ef_row_open_boundary_traction(dim, i, ne, ci, ei, p_n, f);
    for (int c = 0; c < 3; ++c) {
      F[3 * i + c] = f[c];
      V[3 * i + c] = v[c];
    }
  }
}

static void imex_residual(ef_fs *fs, const double *us, const double *p_n, double *F, double *V) {
  ef_fs_rows_imex_residual(fs->ed, &fs->s, fs->n, us, p_n, fs->tau, fs->xi, F, V);
}

/* The constraint projection P_I of node I on the vector w (3): fixed components to 0, else the
 * slip projection (face, edge, corner); an orthogonal projection, so P A P stays symmetric. */
static inline void node_project(const ef_fs_settings *fss, int dim, int64_t i, double *w) {
  static const uint8_t none[3] = {0, 0, 0};
  static const double zero[3] = {0.0, 0.0, 0.0};
  const uint8_t *vfix = fss->velocity_fixed, *slip = fss->slip_type;
  const double *sn = fss->slip_normal, *st = fss->slip_tangent;
  ef_node_apply_bc(dim, vfix ? vfix + 3 * i : none, slip ? slip[i] : EF_SLIP_NONE, sn ? sn + 3 * i : zero,
                   st ? st + 3 * i : zero, zero, w);
}

void ef_fs_node_project(const ef_fs_settings *fss, int dim, int64_t i, double *w) { node_project(fss, dim, i, w); }

static inline void imex_project(const ef_fs *fs, int dim, int64_t i, double *w) { node_project(&fs->s, dim, i, w); }

/* Sum of the first k block partials (k <= 3) in block order: independent of the thread count. */
static void imex_block_sums(const ef_fs *fs, int k, double *out) {
  for (int q = 0; q < k; ++q) out[q] = 0.0;
  for (int64_t b = 0; b < fs->n_blocks; ++b)
    for (int q = 0; q < k; ++q) out[q] += fs->vpart[3 * b + q];
}

/* Row i of the stage CG's start: dg_I = D_I + K_II (D_I = M_II dscale / nu_I), r_I = P_I (rhs_I - (A x)_I),
 * z_I = r_I / dg_I, and |P_I rhs_I|^2 added to *sb component by component. */
static inline void stage_start_row(const ef_edge_data *ed, const ef_fs_settings *fss, const double *lij, double dscale,
                                   int64_t i, const double *rhs, const double *x, double *dg, double *r, double *z,
                                   double *sb) {
  const int dim = ed->dim;
  const int64_t *rp = ed->row_ptr;
  const int ne = (int)(rp[i + 1] - rp[i]);
  const int32_t *ci = ed->col + rp[i];
  const double *ei = ed->values + rp[i] * ed->stride;
  const double d = ed->mass[i] * dscale / (fss->nu_nodal ? fss->nu_nodal[i] : fss->nu);
  double y[3] = {0.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0};
  if (dim == 3) {
    ef_row_stage_operator(3, i, ne, ci, lij + rp[i], d, x, y);
    dg[i] = d + ef_row_stiffness_diagonal(3, ne, ei);
  } else {
    ef_row_stage_operator(2, i, ne, ci, lij + rp[i], d, x, y);
    dg[i] = d + ef_row_stiffness_diagonal(2, ne, ei);
  }
  for (int c = 0; c < dim; ++c) {
    w[c] = rhs[3 * i + c];
    y[c] = w[c] - y[c];
  }
  node_project(fss, dim, i, w);
  node_project(fss, dim, i, y);
  for (int c = 0; c < 3; ++c) {
    r[3 * i + c] = y[c];
    z[3 * i + c] = y[c] / dg[i];
    *sb += w[c] * w[c];
  }
}

void ef_fs_row_stage_start(const ef_edge_data *ed, const ef_fs_settings *fss, const double *lij, double dscale,
                           int64_t i, const double *rhs, const double *x, double *dg, double *r, double *z, double *sb) {
  stage_start_row(ed, fss, lij, dscale, i, rhs, x, dg, r, z, sb);
}

/* Projected Jacobi CG for P (D + K) P x = P rhs, D_I = M_II dscale / nu_I: x enters with the
 * prescribed values and a start and leaves with the solution; |P (rhs - A x)| <= rtol |P rhs|. */
static int viscous_solve(ef_fs *fs, double dscale, const double *rhs, double *x, int *its_out, double *res_out) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim;
  const int64_t n = fs->n, nb = fs->n_blocks, B = fs->block, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *lij = fs->stage_lij, *mass = ed->mass, *nun = fs->s.nu_nodal;
  const double nu = fs->s.nu;
  double *r = fs->cg_r, *z = fs->cg_z, *pv = fs->cg_p, *q = fs->cg_q, *dg = fs->vdiag, *part = fs->vpart;
  /* r = P (rhs - A x), z = r / diag, p = z; partials |P rhs|^2, r.z, r.r. */
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sb = 0.0, srz = 0.0, srr = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      stage_start_row(fs->ed, &fs->s, lij, dscale, i, rhs, x, dg, r, z, &sb);
      for (int c = 0; c < 3; ++c) {
        const double yc = r[3 * i + c], zc = z[3 * i + c];
        pv[3 * i + c] = zc;
        srz += yc * zc;
        srr += yc * yc;
      }
    }
    part[3 * blk] = sb;
    part[3 * blk + 1] = srz;
    part[3 * blk + 2] = srr;
  }
  double sums[3];
  imex_block_sums(fs, 3, sums);
  double bnorm = sqrt(sums[0]), rz = sums[1], rnorm = sqrt(sums[2]);
  if (bnorm == 0.0) bnorm = rnorm > 0.0 ? rnorm : 1.0;
  const double target = fs->s.viscous_rtol * bnorm;
  int it = 0;
  while (rnorm > target && it < fs->s.viscous_max_iterations) {
    /* q = P A p, p.q */
    EF_OMP(omp parallel for schedule(static))
    for (int64_t blk = 0; blk < nb; ++blk) {
      const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
      double spq = 0.0;
      for (int64_t i = blk * B; i < i1; ++i) {
        const int ne = (int)(rp[i + 1] - rp[i]);
        const int32_t *ci = col + rp[i];
        const double *li = lij + rp[i];
        const double d = mass[i] * dscale / (nun ? nun[i] : nu);
        double y[3] = {0.0, 0.0, 0.0};
        if (dim == 3)
          ef_row_stage_operator(3, i, ne, ci, li, d, pv, y);
        else
          ef_row_stage_operator(2, i, ne, ci, li, d, pv, y);
        imex_project(fs, dim, i, y);
        for (int c = 0; c < 3; ++c) {
          q[3 * i + c] = y[c];
          spq += pv[3 * i + c] * y[c];
        }
      }
      part[3 * blk] = spq;
    }
    imex_block_sums(fs, 1, sums);
    EF_CHECK(sums[0] > 0.0 && isfinite(sums[0]), EF_ERR_SOLVER,
             "implicit viscous stage: CG broke down (p.Ap = %g at iteration %d)", sums[0], it);
    const double alpha = rz / sums[0];
    EF_OMP(omp parallel for schedule(static))
    for (int64_t blk = 0; blk < nb; ++blk) {
      const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
      double srz = 0.0, srr = 0.0;
      for (int64_t i = blk * B; i < i1; ++i)
        for (int c = 0; c < 3; ++c) {
          const int64_t k = 3 * i + c;
          x[k] += alpha * pv[k];
          const double rk = r[k] - alpha * q[k];
          const double zk = rk / dg[i];
          r[k] = rk;
          z[k] = zk;
          srz += rk * zk;
          srr += rk * rk;
        }
      part[3 * blk] = srz;
      part[3 * blk + 1] = srr;
    }
    imex_block_sums(fs, 2, sums);
    const double beta = sums[0] / rz;
    rz = sums[0];
    rnorm = sqrt(sums[1]);
    ++it;
    if (rnorm <= target) break;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t k = 0; k < 3 * n; ++k) pv[k] = z[k] + beta * pv[k];
  }
  *its_out = it;
  *res_out = rnorm / bnorm;
  EF_CHECK(rnorm <= target, EF_ERR_SOLVER,
           "implicit viscous stage: CG did not converge in %d iterations (scaled residual %.3e > %.3e)", it,
           rnorm / bnorm, fs->s.viscous_rtol);
  return EF_SUCCESS;
}

/* viscous_pressure 1 (w = dt/(2 dt_prev)): the stage pressures P_s = p_n + c_s w (p_n - p_prev) (s = 1..3), their pressure forces
 * (the weak gradient, and the open-boundary traction where ef_fs_step's explicit residual has it) and
 * p^ = p_n + w (p_n - p_prev). */
static void imex_stage_pressures(ef_fs *fs, const double *p_n, const double *p_prev, double w, const double c[4]) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values;
  const uint8_t *vfix = fs->s.velocity_fixed, *pfix = fs->s.pressure_fixed;
  double *P = fs->ext_p, *G = fs->ext_g, *hat = fs->ext_hat;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const double d = p_n[i] - p_prev[i];
    hat[i] = p_n[i] + w * d;
    for (int s = 1; s < 4; ++s) P[(s - 1) * n + i] = p_n[i] + c[s] * w * d;
  }
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    const int open = pfix && pfix[i] && !(vfix && (vfix[3 * i] || vfix[3 * i + 1] || vfix[3 * i + 2]));
    for (int s = 1; s < 4; ++s) {
      const double *ps = P + (s - 1) * n;
      double g[3] = {0.0, 0.0, 0.0};
      if (dim == 3)
        ef_row_weak_gradient(3, i, ne, ci, ei, ps, g);
      else
        ef_row_weak_gradient(2, i, ne, ci, ei, ps, g);
      if (open) ef_row_open_boundary_traction(dim, i, ne, ci, ei, ps, g);
      for (int q = 0; q < 3; ++q) G[(s - 1) * 3 * n + 3 * i + q] = g[q];
    }
  }
}

/* Stage s's right-hand side on rows [0, n): rhs = (M u_n + dt sum_{j<s} (a_sj F_j + ai_sj V_j)) / (nu_I gamma dt),
 * F and V in slices of n3 doubles (ef_dof_imex_rhs), dscale = 1/(gamma dt). */
void ef_fs_rows_imex_rhs(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int64_t n3, int s,
                         const double *as, const double *ais, const double *F, const double *V, const double *u_n,
                         double dt, double dscale, double *rhs) {
  const double *mass = ed->mass, *nun = fss->nu_nodal;
  const double nu = fss->nu;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const double w = dscale / (nun ? nun[i] : nu);
    for (int cc = 0; cc < 3; ++cc) {
      const int64_t k = 3 * i + cc;
      rhs[k] = ef_dof_imex_rhs(s, as, ais, F, V, n3, k, mass[i], u_n[k], dt, w);
    }
  }
}

/* The stage start U on nodes [0, n) projected on the slip constraints (nothing without slip nodes). */
void ef_fs_rows_imex_start(const ef_fs_settings *fss, int dim, int64_t n, double *U) {
  const uint8_t *vfix = fss->velocity_fixed, *slip = fss->slip_type;
  const double *sn = fss->slip_normal, *st = fss->slip_tangent;
  if (!slip) return;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    static const uint8_t none[3] = {0, 0, 0};
    double u[3] = {U[3 * i], U[3 * i + 1], U[3 * i + 2]};
    ef_node_apply_bc(dim, vfix ? vfix + 3 * i : none, slip[i], sn + 3 * i, st ? st + 3 * i : u, u, u);
    for (int cc = 0; cc < 3; ++cc) U[3 * i + cc] = u[cc];
  }
}

/* uh = U_3 + dt M^-1 sum_j (b_j - a_3j) F_j on rows [0, n) (the implicit part is stiffly accurate, ai_3j = b_j),
 * fixed components from u_n (eval_fixed overwrites them), slip projection; acc = Rbar = sum_j b_j (F_j + V_j). */
void ef_fs_rows_imex_final(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int64_t n3, const double *F,
                           const double *V, const double *U, const double *u_n, double dt, double *acc, double *uh) {
  const int dim = ed->dim;
  const double *invm = ed->inv_mass;
  const uint8_t *vfix = fss->velocity_fixed, *slip = fss->slip_type;
  const double *sn = fss->slip_normal, *st = fss->slip_tangent;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    static const uint8_t none[3] = {0, 0, 0};
    static const double zero[3] = {0.0, 0.0, 0.0};
    double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
    for (int cc = 0; cc < 3; ++cc) {
      const int64_t k = 3 * i + cc;
      double rb = 0.0;
      const double v = ef_dof_imex_final(b, a[3], F, V, n3, k, U[k], invm[i], dt, &rb);
      acc[k] = rb;
      uref[cc] = u_n[k];
      u[cc] = cc < dim ? v : 0.0;
    }
    ef_node_apply_bc(dim, vfix ? vfix + 3 * i : none, slip ? slip[i] : EF_SLIP_NONE, sn ? sn + 3 * i : zero,
                     st ? st + 3 * i : zero, uref, u);
    for (int cc = 0; cc < 3; ++cc) uh[3 * i + cc] = u[cc];
  }
}

/* Step 2 with implicit viscosity: the ARS(3,4,3) stages (fractional_step.h, 2'); leaves
 * Rbar = sum_j b_j (F_j + V_j) in fs->acc for the reaction. */
static int imex_momentum(ef_fs *fs, double t, double dt, const double *u_n, const double *p_n, double *uh) {
  const int64_t n = fs->n, n3 = 3 * n;
  const int dim = fs->ed->dim;
  const double *nun = fs->s.nu_nodal;
  const double nu = fs->s.nu;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double gamma = ai[1][1], dscale = 1.0 / (gamma * dt);
  double *F = fs->imex_f, *V = fs->imex_v, *U = fs->imex_u, *rhs = fs->imex_rhs, *acc = fs->acc;
  if (nun)
    for (int64_t i = 0; i < n; ++i)
      EF_CHECK(nun[i] > 0.0, EF_ERR_PARAMETER,
               "implicit viscosity: the nodal viscosity %g at node %lld is not positive", nun[i], (long long)i);
  fs->v_iterations = fs->v_max_iterations = 0;
  fs->v_residual = 0.0;
  const double ts = ef_wtime();
  double tsolve = 0.0;
  /* viscous_pressure 1 (set by ef_fs_step for this call only): F without the pressure, whose stage forces
   * (ext_g) enter with the implicit weights ai (stage s's own with ai_ss); the explicit tail of uh then has
   * no pressure (the implicit part is stiffly accurate), and Rbar gets sum_j b_j of them. */
  const int ext = fs->ext_on;
  fs->ext_on = 0;
  const double *pf = ext ? fs->ext_zero : p_n;
  imex_residual(fs, u_n, pf, F, V);
  memcpy(U, u_n, (size_t)n3 * sizeof *U);
  for (int s = 1; s < 4; ++s) {
    /* rhs = (M u_n + dt sum_{j<s} (a_sj F_j + ai_sj V_j)) / (nu_I gamma dt); U keeps the previous stage
     * as the start, with the prescribed values of t + c_s dt and the slip projection. */
    ef_fs_rows_imex_rhs(fs->ed, &fs->s, n, n3, s, a[s], ai[s], F, V, u_n, dt, dscale, rhs);
    if (ext) {
      const double *G = fs->ext_g;
      EF_OMP(omp parallel for schedule(static))
      for (int64_t i = 0; i < n; ++i) {
        const double w = dscale / (nun ? nun[i] : nu);
        for (int cc = 0; cc < 3; ++cc) {
          const int64_t k = 3 * i + cc;
          double e = 0.0;
          for (int j = 1; j <= s; ++j) e += ai[s][j] * G[(j - 1) * n3 + k];
          rhs[k] += dt * e * w;
        }
      }
    }
    EF_CALL(eval_fixed(fs, t + c[s] * dt, U, fs->pscratch));
    ef_fs_rows_imex_start(&fs->s, dim, n, U);
    int its = 0;
    double res = 0.0;
    const double t0 = ef_wtime();
    const int err = viscous_solve(fs, dscale, rhs, U, &its, &res);
    tsolve += ef_wtime() - t0;
    fs->v_iterations += its;
    if (its > fs->v_max_iterations) fs->v_max_iterations = its;
    if (res > fs->v_residual) fs->v_residual = res;
    if (err) return ef_error_push(err, __FILE__, __LINE__, "in stage %d of the implicit viscous step (t = %.9g)", s,
                                  t + c[s] * dt);
    imex_residual(fs, U, pf, F + s * n3, V + s * n3);
  }
  /* uh = U_3 + dt M^-1 sum_j (b_j - a_3j) F_j (the implicit part is stiffly accurate, ai_3j = b_j),
   * fixed components from u_n (eval_fixed overwrites them), slip projection; acc = Rbar. */
  ef_fs_rows_imex_final(fs->ed, &fs->s, n, n3, F, V, U, u_n, dt, acc, uh);
  if (ext) {
    const double *G = fs->ext_g;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t k = 0; k < n3; ++k) acc[k] += b[1] * G[k] + b[2] * G[n3 + k] + b[3] * G[2 * n3 + k];
  }
  fs->v_seconds = tsolve;
  (void)ts;
  return EF_SUCCESS;
}

void ef_fs_viscous_stats(const ef_fs *fs, ef_fs_stats *stats) {
  if (!fs || !stats) return;
  const int on = fs->s.viscous_implicit;
  stats->viscous_iterations = on ? fs->v_iterations : 0;
  stats->viscous_max_stage_iterations = on ? fs->v_max_iterations : 0;
  stats->viscous_residual = on ? fs->v_residual : 0.0;
  stats->seconds_viscous = on ? fs->v_seconds : 0.0;
}

/* Step 2: classical RK4 for M du/dt = R(u) with the BCs at the stage times (or the IMEX stages);
 * reactions. */
int ef_fs_momentum(ef_fs *fs, double t, double dt, const double *u_n, const double *p_n, double *uh,
                   double *p_new, double *reaction) {
  EF_CHECK(fs && u_n && p_n && uh && p_new, EF_ERR_PARAMETER, "fractional step: NULL argument to momentum");
  EF_CHECK(dt > 0.0, EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  const int64_t n = fs->n;
  const int implicit = fs->s.viscous_implicit;
  if (implicit) {
    EF_CALL(imex_alloc(fs));
    EF_CALL(imex_momentum(fs, t, dt, u_n, p_n, uh));
  } else {
    double *ua = fs->ua, *ub = fs->ub;
    rk_stage(fs, 0, dt, u_n, p_n, u_n, ua);
    EF_CALL(eval_fixed(fs, t + 0.5 * dt, ua, fs->pscratch));
    rk_stage(fs, 1, dt, u_n, p_n, ua, ub);
    EF_CALL(eval_fixed(fs, t + 0.5 * dt, ub, fs->pscratch));
    rk_stage(fs, 2, dt, u_n, p_n, ub, ua);
    EF_CALL(eval_fixed(fs, t + dt, ua, fs->pscratch));
    rk_stage(fs, 3, dt, u_n, p_n, ua, uh);
  }
  memcpy(p_new, p_n, (size_t)n * sizeof *p_new);
  const uint8_t *pfix = fs->s.pressure_fixed;
  /* The callback writes physical pressures; a fixed entry it leaves alone (NaN marker)
   * keeps the kinematic p_n value instead of being scaled twice. */
  const int scale_fixed = fs->s.eval_fixed && pfix && fs->s.fixed_pressure_scale != 1.0;
  if (scale_fixed)
    for (int64_t i = 0; i < n; ++i)
      if (pfix[i]) p_new[i] = NAN;
  EF_CALL(eval_fixed(fs, t + dt, uh, p_new));
  if (scale_fixed) {
    const double scale = fs->s.fixed_pressure_scale;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i)
      if (pfix[i]) p_new[i] = isnan(p_new[i]) ? p_n[i] : p_new[i] * scale;
  }
  if (reaction) {
    const uint8_t *vfix = fs->s.velocity_fixed;
    const double *mass = fs->ed->mass, *acc = fs->acc;
    const double inv_dt = 1.0 / dt;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        const int64_t q = 3 * i + c;
        reaction[q] = vfix && vfix[q] ? acc[q] / (implicit ? 1.0 : 6.0) - mass[i] * (uh[q] - u_n[q]) * inv_dt : 0.0;
      }
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The corrections of viscous_correction 1-3 (issue 16, fix (a); docs/implicit_viscosity.md).
 *
 * The pressure row enforces  D u_{n+1} + tau (L p_{n+1} - st) = 0  with the lumped correction
 * u_{n+1} = uh - c M^-1 G dp (D M^-1 G ~ -K); written E(p) := D uh + tau (L p - st), it is
 * c K dp = -E(p_{n+1}).  Through A = M + gamma dt nu K the correction gives D A^-1 G, which is dense;
 * where A commutes with the gradient (no boundary) D A^-1 G = (1 + gamma dt nu K M^-1)^-1 D M^-1 G, and
 * multiplied through the row becomes  c K dp = -(1 + gamma dt nu K M^-1) E,  the filter taken with E at
 * p_n (E(p_n) = H p_n - f, before the filter).  The filter must act on the continuity residual E, not on
 * D uh alone: with OSS D u_n = O(tau), not O(dt), and a filtered D uh moves the pressure by
 * -2 gamma nu M^-1 D uh every step even at a steady state (measured: first order on the start-up channel). */

/* viscous_correction 1 and 3 (ef_fs_step): the filter gamma dt nu K M^-1 E(p_n) is explicit in E's stabilisation
 * term tau (L p_n - D xi_p).  On a pressure mode with M^-1 K p = lambda p and stabilisation share sigma <= 1 the row
 * c K dp = -E(p_{n+1}) - gamma dt nu K M^-1 E(p_n) gives p_{n+1} = g p_n, g = (c - gamma dt nu lambda tau sigma) /
 * (c + tau sigma), c = dt/2: |g| <= 1 for every sigma iff gamma nu tau lambda / (1 + tau/dt) <= 1.  theta_I is that
 * number with lambda_I the Gershgorin bound (K_II + sum_J |K_IJ|)/M_II, an upper bound of M^-1 K's spectrum.  Measured
 * on 2D start-up channels of cell aspect 1 to 6 (docs/implicit_viscosity.md, "The divergence of viscous"): every
 * divergence had max theta >= 1.18, every run with max theta <= 1.14 stayed bounded for 2000 steps; in 2D the step is
 * refused where max_I theta_I > EF_FS_FILTER_THETA_MAX (free-pressure rows).  Not in 3D, where the bound is looser
 * (lambda_max / max Gershgorin 0.60 on the square duct, 0.69-0.74 on the channels) and no divergence was measured:
 * the duct (tests/strategies_agree.py) reaches theta 1.70 for a few steps while its automatic step grows and runs
 * 400 steps to its steady state (theta 0.94). */
#define EF_FS_FILTER_THETA_MAX 1.15
static int imex_filter_check(const ef_fs *fs, double dt) {
  const ef_edge_data *ed = fs->ed;
  const int64_t n = fs->n, *rp = ed->row_ptr;
  const double *tau = fs->tau, *lij = fs->stage_lij, *invm = ed->inv_mass, *nun = fs->s.nu_nodal, nu = fs->s.nu;
  const uint8_t *pfix = fs->s.pressure_fixed;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  double theta = 0.0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (pfix && pfix[i]) continue;
    double sum = 0.0, abs_sum = 0.0;
    for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
      sum += lij[k];
      abs_sum += fabs(lij[k]);
    }
    const double lambda = (fabs(sum) + abs_sum) * invm[i];
    const double th = ai[1][1] * (nun ? nun[i] : nu) * tau[i] * lambda / (1.0 + tau[i] / dt);
    if (th > theta) {
      theta = th;
      at = i;
    }
  }
  EF_CHECK(theta <= EF_FS_FILTER_THETA_MAX, EF_ERR_PARAMETER,
           "implicit_viscosity.correction \"%s\" is unstable at this step: its filter of the continuity residual is "
           "explicit in the stabilisation term, and gamma nu tau lambda/(1 + tau/dt) = %.3f > %.2f at node %lld "
           "(docs/implicit_viscosity.md); use correction \"lumped\", a smaller time step or a larger "
           "stabilization.tau_c1",
           fs->s.viscous_correction == 1 ? "viscous" : "rotational", theta, EF_FS_FILTER_THETA_MAX, (long long)at);
  return EF_SUCCESS;
}

/* q = M^-1 E(p_n) = M^-1 (H p_n - f) at the free-pressure rows, 0 at fixed ones, into component 0 of
 * fs->cg_z (H and f as assembled; a fixed pressure that changes in the step leaves its neighbours' q off
 * by h_IJ (p_J(t + dt) - p_J(t))). */
static void imex_continuity_residual(ef_fs *fs, const double *p_n) {
  const int64_t n = fs->n, *hrp = fs->h_row_ptr;
  const int32_t *hc = fs->h_col;
  const double *hv = fs->h_val, *f = fs->f, *invm = fs->ed->inv_mass;
  const uint8_t *pfix = fs->s.pressure_fixed;
  double *q = fs->cg_z;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    double e = 0.0;
    if (!(pfix && pfix[i])) e = ef_row_csr_residual((int)(hrp[i + 1] - hrp[i]), hc + hrp[i], hv + hrp[i], f[i], p_n);
    q[3 * i] = e * invm[i];
    q[3 * i + 1] = q[3 * i + 2] = 0.0;
  }
}

/* viscous_correction 1: f_I -= gamma dt nu_I (K q)_I at the free-pressure rows, and the block partials of
 * f again. */
static void imex_filter_pressure_rhs(ef_fs *fs, double dt, const double *p_n) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim;
  const int64_t n = fs->n, nb = fs->n_blocks, B = fs->block, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *lij = fs->stage_lij, *nun = fs->s.nu_nodal;
  const uint8_t *pfix = fs->s.pressure_fixed;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double gdt = ai[1][1] * dt, nu = fs->s.nu;
  double *q = fs->cg_z, *f = fs->f, *pf = fs->part_f, *pabs = fs->part_abs;
  imex_continuity_residual(fs, p_n);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sf = 0.0, sa = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      if (pfix && pfix[i]) continue;
      const int ne = (int)(rp[i + 1] - rp[i]);
      const int32_t *ci = col + rp[i];
      const double *li = lij + rp[i];
      double y[3] = {0.0, 0.0, 0.0};
      if (dim == 3)
        ef_row_stage_operator(3, i, ne, ci, li, 0.0, q, y);
      else
        ef_row_stage_operator(2, i, ne, ci, li, 0.0, q, y);
      f[i] -= gdt * (nun ? nun[i] : nu) * y[0];
      sf += f[i];
      sa += fabs(f[i]);
    }
    pf[blk] = sf;
    pabs[blk] = sa;
  }
}

/* delta = -c (M + gamma dt nu K)^-1 G dp into fs->imex_u, fixed components 0 and slip nodes projected
 * (the stages' projected CG, start: the lumped -c M^-1 G dp); adds to the viscous solver figures. */
static int imex_correction(ef_fs *fs, double dt, const double *p_n, const double *p_new) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *invm = ed->inv_mass, *nun = fs->s.nu_nodal;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double dscale = 1.0 / (ai[1][1] * dt), cc = 0.5 * dt, nu = fs->s.nu;
  double *x = fs->imex_u, *rhs = fs->imex_rhs;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    const double w = dscale / (nun ? nun[i] : nu);
    double x0[3], r0[3];
    if (dim == 3)
      ef_row_viscous_correction_start(3, i, ne, ci, ei, p_new, p_n, cc, invm[i], w, x0, r0);
    else
      ef_row_viscous_correction_start(2, i, ne, ci, ei, p_new, p_n, cc, invm[i], w, x0, r0);
    imex_project(fs, dim, i, x0);
    for (int q = 0; q < 3; ++q) {
      x[3 * i + q] = x0[q];
      rhs[3 * i + q] = r0[q];
    }
  }
  int its = 0;
  double res = 0.0;
  const double t0 = ef_wtime();
  const int err = viscous_solve(fs, dscale, rhs, x, &its, &res);
  fs->v_seconds += ef_wtime() - t0;
  fs->v_iterations += its;
  if (its > fs->v_max_iterations) fs->v_max_iterations = its;
  if (res > fs->v_residual) fs->v_residual = res;
  if (err) return ef_error_push(err, __FILE__, __LINE__, "in the viscous velocity correction");
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 3. */

/* Step 3 assembly: H and f with symmetric elimination, null-space check and projection. */
int ef_fs_assemble_pressure(ef_fs *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                            ef_fs_stats *stats) {
  EF_CHECK(fs && uh && p_n && p_new, EF_ERR_PARAMETER, "fractional step: NULL argument to pressure assembly");
  EF_CHECK(dt > 0.0, EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n, nb = fs->n_blocks, B = fs->block, *rp = ed->row_ptr, *hrp = fs->h_row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *tau = fs->tau, *xp = fs->xp;
  const uint8_t *pfix = fs->s.pressure_fixed;
  const int has_fixed = pfix != NULL;
  const double cc = 0.5 * dt;
  double *hval = fs->h_val, *f = fs->f, *pf = fs->part_f, *pabs = fs->part_abs;
  int64_t n_fixed = 0, bad = INT64_MAX;
  EF_OMP(omp parallel for schedule(static) reduction(+ : n_fixed) reduction(min : bad))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sf = 0.0, sa = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      const int ne = (int)(rp[i + 1] - rp[i]);
      const int32_t *ci = col + rp[i];
      const double *ei = ev + rp[i] * S;
      double fi;
      if (dim == 3)
        fi = ef_row_pressure_system(3, i, ne, ci, ei, tau, cc, uh, p_n, p_new, xp, pfix, has_fixed, hval + hrp[i]);
      else
        fi = ef_row_pressure_system(2, i, ne, ci, ei, tau, cc, uh, p_n, p_new, xp, pfix, has_fixed, hval + hrp[i]);
      f[i] = fi;
      if (!isfinite(fi) && i < bad) bad = i;
      if (has_fixed && pfix[i]) {
        ++n_fixed;
      } else {
        sf += fi;
        sa += fabs(fi);
      }
    }
    pf[blk] = sf;
    pabs[blk] = sa;
  }
  if (bad != INT64_MAX)
    return EF_ERROR(EF_ERR_DIVERGED,
                    "pressure right-hand side is not finite at node %lld (intermediate velocity "
                    "(%g, %g, %g))",
                    (long long)bad, uh[3 * bad], uh[3 * bad + 1], uh[3 * bad + 2]);
  if (fs->s.viscous_implicit && fs->s.viscous_correction == 1) imex_filter_pressure_rhs(fs, dt, p_n);
  if (fs->s.viscous_implicit && fs->s.viscous_correction == 3) imex_continuity_residual(fs, p_n);
  double imbalance = 0.0;
  fs->H.constant_null_space = n_fixed == 0;
  if (n_fixed == 0) {
    double sf = 0.0, sa = 0.0;
    for (int64_t b = 0; b < nb; ++b) {
      sf += pf[b];
      sa += pabs[b];
    }
    imbalance = sa > 0.0 ? fabs(sf) / sa : 0.0;
    EF_CHECK(imbalance <= fs->s.flux_imbalance_tolerance, EF_ERR_PARAMETER,
             "pressure equation: no node has a fixed pressure and the prescribed velocities do not "
             "conserve mass (net flux imbalance |sum f|/sum|f| = %.3e > tolerance %.3e); fix the "
             "pressure on an outlet, or balance inflow and outflow",
             imbalance, fs->s.flux_imbalance_tolerance);
    /* Remove the null-space component of f so the singular system is consistent. */
    const double mean = sf / (double)n;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) f[i] -= mean;
  }
  if (stats) {
    stats->flux_imbalance = imbalance;
    stats->n_fixed_pressure = (int)(n_fixed > INT32_MAX ? INT32_MAX : n_fixed);
  }
  return EF_SUCCESS;
}

/* Step 3: assemble and solve H p_{n+1} = f (warm start in p_new). */
int ef_fs_pressure(ef_fs *fs, double dt, const double *uh, const double *p_n, double *p_new, ef_fs_stats *stats) {
  double t0 = ef_wtime();
  EF_CALL(ef_fs_assemble_pressure(fs, dt, uh, p_n, p_new, stats));
  double t1 = ef_wtime();
  int its = 0, err;
  double res = 0.0;
  if (fs->s.solver) {
    const ef_csr *H = &fs->H;
    ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {H->n, 0, NULL}, .nnz = H->nnz,
                   .constant_null_space = H->constant_null_space, .row_ptr = H->row_ptr, .row_ptr32 = H->row_ptr32,
                   .col = H->col, .values = H->val, .diag = H->diag};
    ef_vector b = {EF_MEMORY_HOST, A.layout, fs->f, NULL}, x = {EF_MEMORY_HOST, A.layout, p_new, NULL};
    ef_solve_result r = {0};
    err = ef_linear_solver_setup(fs->s.solver, &A);
    if (!err) err = ef_linear_solver_solve(fs->s.solver, &b, &x, &r);
    its = r.iterations;
    res = r.residual;
  } else {
    err = ef_host_cg_solve(fs->cg, &fs->H, fs->f, p_new, fs->s.pressure_rtol, fs->s.pressure_max_iterations, &its,
                           &res);
  }
  if (stats) {
    stats->cg_iterations = its;
    stats->cg_residual = res;
    stats->seconds_assembly = t1 - t0;
    stats->seconds_solve = ef_wtime() - t1;
  }
  if (err) return ef_error_push(err, __FILE__, __LINE__, "pressure equation not solved");
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 4. */

/* Step 4: u = uh - c M^-1 grad(p_{n+1} - p_n), BCs, divergence check. */
int ef_fs_correct(ef_fs *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                  double *u_new) {
  EF_CHECK(fs && uh && p_n && p_new && u_new, EF_ERR_PARAMETER, "fractional step: NULL argument to correct");
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *invm = ed->inv_mass;
  const uint8_t *vfix = fs->s.velocity_fixed, *slip = fs->s.slip_type;
  const double *sn = fs->s.slip_normal, *st = fs->s.slip_tangent;
  const double cc = 0.5 * dt, bound2 = fs->s.velocity_bound * fs->s.velocity_bound;
  const int viscous = fs->s.viscous_implicit && (fs->s.viscous_correction == 1 || fs->s.viscous_correction == 2);
  if (viscous) {
    EF_CALL(imex_alloc(fs));
    EF_CALL(imex_correction(fs, dt, p_n, p_new));
  }
  const double *delta = fs->imex_u;
  int64_t bad = INT64_MAX;
  EF_OMP(omp parallel for schedule(static) reduction(min : bad))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
    if (viscous)
      for (int c = 0; c < dim; ++c) u[c] = uh[3 * i + c] + delta[3 * i + c];
    else if (dim == 3)
      ef_row_correction(3, i, ne, ci, ei, p_new, p_n, invm[i], cc, uh, u);
    else
      ef_row_correction(2, i, ne, ci, ei, p_new, p_n, invm[i], cc, uh, u);
    for (int c = 0; c < dim; ++c) uref[c] = uh[3 * i + c];
    const uint8_t none[3] = {0, 0, 0};
    const double zero[3] = {0.0, 0.0, 0.0};
    ef_node_apply_bc(dim, vfix ? vfix + 3 * i : none, slip ? slip[i] : EF_SLIP_NONE, sn ? sn + 3 * i : zero,
                     st ? st + 3 * i : zero, uref, u);
    double u2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      u_new[3 * i + c] = u[c];
      u2 += u[c] * u[c];
    }
    /* !(u2 <= bound2) also catches NaN. */
    if ((!(u2 <= bound2) || !isfinite(p_new[i])) && i < bad) bad = i;
  }
  if (bad != INT64_MAX) {
    const double *u = u_new + 3 * bad;
    if (!isfinite(p_new[bad]))
      return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: pressure %g at node %lld", p_new[bad],
                      (long long)bad);
    return EF_ERROR(EF_ERR_DIVERGED,
                    "the solution diverged: velocity (%g, %g, %g) at node %lld (bound %g)", u[0], u[1], u[2],
                    (long long)bad, fs->s.velocity_bound);
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The whole step. */

/* viscous_projection 1: r = f(u(p), p) - H p at the free-pressure rows (0 at fixed ones), u(p) the velocity
 * corrected from (cp_u0, cp_p0) to p with the boundary conditions (ef_fs_correct); affine in p. */
static int cp_residual(ef_fs *fs, double dt, const double *p, double *r) {
  EF_CALL(ef_fs_correct(fs, dt, fs->cp_u0, fs->cp_p0, p, fs->cp_u));
  EF_CALL(ef_fs_assemble_pressure(fs, dt, fs->cp_u, p, p, NULL));
  const int64_t n = fs->n, *hrp = fs->h_row_ptr;
  const int32_t *hc = fs->h_col;
  const double *hv = fs->h_val, *f = fs->f;
  const uint8_t *pfix = fs->s.pressure_fixed;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i)
    r[i] = pfix && pfix[i] ? 0.0 : -ef_row_csr_residual((int)(hrp[i + 1] - hrp[i]), hc + hrp[i], hv + hrp[i], f[i], p);
  return EF_SUCCESS;
}

/* Dot product in fixed row blocks (independent of the thread count). */
static double cp_dot(const ef_fs *fs, const double *a, const double *b) {
  const int64_t n = fs->n, nb = fs->n_blocks, B = fs->block;
  double *part = fs->part_f;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double s = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) s += a[i] * b[i];
    part[blk] = s;
  }
  double s = 0.0;
  for (int64_t blk = 0; blk < nb; ++blk) s += part[blk];
  return s;
}

/* z = H^-1 r from 0 by the pressure solve (a fixed linear preconditioner to its tolerance): the solver of
 * the settings (set up for H by ef_fs_pressure; the assemblies since rewrote the same values), as the
 * device executor, else the built-in CG to min(pressure_rtol, 1e-8). */
static int cp_precondition(ef_fs *fs, const double *r, double *z) {
  memset(z, 0, (size_t)fs->n * sizeof(double));
  int err;
  if (fs->s.solver) {
    const ef_csr *H = &fs->H;
    ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {H->n, 0, NULL}, .nnz = H->nnz,
                   .constant_null_space = H->constant_null_space, .row_ptr = H->row_ptr, .row_ptr32 = H->row_ptr32,
                   .col = H->col, .values = H->val, .diag = H->diag};
    ef_vector b = {EF_MEMORY_HOST, A.layout, (double *)r, NULL}, x = {EF_MEMORY_HOST, A.layout, z, NULL};
    ef_solve_result res = {0};
    err = ef_linear_solver_solve(fs->s.solver, &b, &x, &res);
    if (!err && !res.converged)
      err = EF_ERROR(EF_ERR_SOLVER, "no convergence in %d iterations (relative residual %.3e)", res.iterations,
                     res.residual);
  } else {
    int its = 0;
    double res = 0.0;
    const double rtol = fs->s.pressure_rtol < 1e-8 ? fs->s.pressure_rtol : 1e-8;
    err = ef_host_cg_solve(fs->cg, &fs->H, r, z, rtol, fs->s.pressure_max_iterations, &its, &res);
  }
  if (err) return ef_error_push(err, __FILE__, __LINE__, "in the converged projection's preconditioner");
  return EF_SUCCESS;
}

/* viscous_projection 1: from the single projection (fs->unew, fs->pnew), PCG on A dp = r(p0), A dp =
 * r(p0) - r(p0 + dp) (symmetric positive: the single projection's Richardson iteration p += H^-1 r converges),
 * to |r| <= 1e-3 |r(p0)| or 20 iterations; fs->unew, fs->pnew receive u(p), p. */
static int cp_solve(ef_fs *fs, double dt) {
  EF_CALL(cp_alloc(fs));
  const int64_t n = fs->n;
  double *x = fs->cp_x, *r = fs->cp_r, *z = fs->cp_z, *d = fs->cp_d, *q = fs->cp_q, *t = fs->cp_t, *r0 = fs->cp_r0;
  const double *p0 = fs->cp_p0;
  memcpy(fs->cp_u0, fs->unew, 3 * (size_t)n * sizeof(double));
  memcpy(fs->cp_p0, fs->pnew, (size_t)n * sizeof(double));
  memcpy(x, fs->pnew, (size_t)n * sizeof(double));
  fs->cp_iterations = 0;
  EF_CALL(cp_residual(fs, dt, x, r0));
  memcpy(r, r0, (size_t)n * sizeof(double));
  const double rn0 = sqrt(cp_dot(fs, r, r));
  if (rn0 == 0.0) return EF_SUCCESS;
  EF_CALL(cp_precondition(fs, r, z));
  memcpy(d, z, (size_t)n * sizeof(double));
  double rz = cp_dot(fs, r, z);
  for (int k = 0; k < 20; ++k) {
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) t[i] = p0[i] + d[i];
    EF_CALL(cp_residual(fs, dt, t, q));
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) q[i] = r0[i] - q[i];
    const double dq = cp_dot(fs, d, q);
    EF_CHECK(isfinite(dq), EF_ERR_SOLVER, "converged projection: PCG broke down (d.Ad = %g at iteration %d)", dq, k);
    if (!(dq > 0.0)) break; /* a residual at rounding level (a steady state): keep the iterate */
    const double alpha = rz / dq;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      x[i] += alpha * d[i];
      r[i] -= alpha * q[i];
    }
    fs->cp_iterations = k + 1;
    if (sqrt(cp_dot(fs, r, r)) <= 1e-3 * rn0) break;
    EF_CALL(cp_precondition(fs, r, z));
    const double rz2 = cp_dot(fs, r, z), beta = rz2 / rz;
    rz = rz2;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) d[i] = z[i] + beta * d[i];
  }
  EF_CALL(ef_fs_correct(fs, dt, fs->cp_u0, fs->cp_p0, x, fs->unew));
  memcpy(fs->pnew, x, (size_t)n * sizeof(double));
  return EF_SUCCESS;
}

/* One fractional step t -> t + dt on the caller arrays (written only on success). */
int ef_fs_step(ef_fs *fs, double t, double dt, double *velocity, double *pressure, double *reaction,
               ef_fs_stats *stats) {
  EF_CHECK(fs && velocity && pressure, EF_ERR_PARAMETER, "fractional step: NULL argument to step");
  ef_fs_stats st;
  memset(&st, 0, sizeof st);
  const double t0 = ef_wtime();
  EF_CALL(ef_fs_prepare(fs, dt, velocity, pressure));
  if (fs->s.viscous_implicit && fs->s.stabilization && fs->ed->dim == 2 &&
      (fs->s.viscous_correction == 1 || fs->s.viscous_correction == 3))
    EF_CALL(imex_filter_check(fs, dt));
  const double t1 = ef_wtime();
  const int64_t n = fs->n;
  /* viscous_pressure 1: extrapolate when the input pressure is the one the previous step returned (at the
   * free nodes: the processes may write the fixed values of the new time before the step). */
  const int extrap = fs->s.viscous_implicit && fs->s.viscous_pressure == 1;
  const double *pold = pressure;
  fs->ext_on = 0;
  if (extrap) {
    EF_CALL(ext_alloc(fs));
    int same = fs->ext_have && fs->ext_dt > 0.0;
    const uint8_t *pfix = fs->s.pressure_fixed;
    for (int64_t i = 0; same && i < n; ++i)
      if (!(pfix && pfix[i]) && memcmp(fs->ext_last + i, pressure + i, sizeof(double)) != 0) same = 0;
    if (same) {
      double a[4][4], ai[4][4], b[4], c[4];
      ef_fs_imex_tableau(a, ai, b, c);
      /* Half the linear extrapolation: the full one diverges (docs/implicit_viscosity.md, fix (b)). */
      imex_stage_pressures(fs, pressure, fs->ext_prev, 0.5 * dt / fs->ext_dt, c);
      fs->ext_on = 1;
      pold = fs->ext_hat;
    }
  }
  EF_CALL(ef_fs_momentum(fs, t, dt, velocity, pressure, fs->uh, fs->pnew, reaction));
  ef_fs_viscous_stats(fs, &st);
  /* pressure_guess: the levels the history holds for this input pressure (0: it is not the one the last step
   * returned), and the guess at the free nodes (ef_fs_momentum put p_n there, the prescribed values at the fixed). */
  const int guess = fs->s.pressure_guess;
  int pg_known = 0;
  if (guess) {
    EF_CALL(pg_alloc(fs));
    pg_known = fs->pg_levels;
    const uint8_t *pfix = fs->s.pressure_fixed;
    for (int64_t i = 0; pg_known && i < n; ++i)
      if (!(pfix && pfix[i]) && memcmp(fs->pg_last + i, pressure + i, sizeof(double)) != 0) pg_known = 0;
    const int order = pg_known < guess ? pg_known : guess;
    if (order > 0) {
      double a, b;
      ef_pressure_guess_weights(order, dt, fs->pg_dt[0], fs->pg_dt[1], &a, &b);
      const double *p1 = fs->pg_prev, *p2 = order == 2 ? fs->pg_prev2 : fs->pg_prev;
      double *pw = fs->pnew;
      EF_OMP(omp parallel for schedule(static))
      for (int64_t i = 0; i < n; ++i)
        if (!(pfix && pfix[i])) pw[i] = ef_node_pressure_guess(pressure[i], p1[i], p2[i], a, b);
    }
  }
  const double t2 = ef_wtime();
  EF_CALL(ef_fs_pressure(fs, dt, fs->uh, pold, fs->pnew, &st));
  const double t3 = ef_wtime();
  EF_CALL(ef_fs_correct(fs, dt, fs->uh, pold, fs->pnew, fs->unew));
  if (fs->s.viscous_implicit && fs->s.viscous_correction) ef_fs_viscous_stats(fs, &st);
  if (fs->s.viscous_implicit && fs->s.viscous_projection == 1) {
    EF_CALL(cp_solve(fs, dt));
    st.projection_iterations = fs->cp_iterations;
  }
  if (fs->s.viscous_implicit && fs->s.viscous_correction == 3) {
    /* Rotational pressure (experiment, ef_fs_step only): the lumped correction with phi = dp of the
     * unfiltered row, then p_{n+1} = p_n + phi - 2 gamma nu_I q_I (q of the assembly) at the free-pressure
     * nodes: what viscous_correction 1 gives where the operators commute (c K dp = c K phi - gamma dt nu K q). */
    double a[4][4], ai[4][4], b[4], c[4];
    ef_fs_imex_tableau(a, ai, b, c);
    const double *q = fs->cg_z, *nun = fs->s.nu_nodal, g2 = 2.0 * ai[1][1], nu = fs->s.nu;
    const uint8_t *pfix = fs->s.pressure_fixed;
    double *pw = fs->pnew;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i)
      if (!(pfix && pfix[i])) pw[i] -= g2 * (nun ? nun[i] : nu) * q[3 * i];
  }
  if (guess) { /* the history for the next step: this step's input pressure and step in front */
    if (guess == 2 && pg_known > 0) {
      double *swap = fs->pg_prev2;
      fs->pg_prev2 = fs->pg_prev;
      fs->pg_prev = swap;
      fs->pg_dt[1] = fs->pg_dt[0];
    }
    memcpy(fs->pg_prev, pressure, (size_t)n * sizeof(double));
    memcpy(fs->pg_last, fs->pnew, (size_t)n * sizeof(double));
    fs->pg_dt[0] = dt;
    fs->pg_levels = guess == 2 && pg_known > 0 ? 2 : 1;
  }
  if (extrap) {
    memcpy(fs->ext_prev, pressure, (size_t)n * sizeof(double));
    memcpy(fs->ext_last, fs->pnew, (size_t)n * sizeof(double));
    fs->ext_dt = dt;
    fs->ext_have = 1;
  }
  const double *un = fs->unew, *pn = fs->pnew;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) velocity[3 * i + c] = un[3 * i + c];
    pressure[i] = pn[i];
  }
  const double t4 = ef_wtime();
  st.seconds_prepare = t1 - t0;
  st.seconds_momentum = t2 - t1;
  st.seconds_correction = t4 - t3;
  st.seconds_total = t4 - t0;
  fs->tau_dt = 0.0; /* TAU_TIME_STEP: consumed (the next step's comes from its own ef_fs_compute_dt) */
  if (stats) *stats = st;
  return EF_SUCCESS;
}

/* fractional_step_mpi.c -- the fractional step on a rank's piece (fractional_step_mpi.h). */
#include "fractional_step_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "ef_omp.h"
#include "fractional_step_mpi_solver.h"
#include "stage_cg.h"

struct ef_fs_mpi_s {
  const ef_edge_data *ed;
  ef_fs_settings s;
  ef_comm comm;
  const ef_partition *p;
  ef_halo halo;
  uint8_t *bnd; /* the CG product's overlap: 1 on the owned rows of H with a ghost column (NULL: no overlap) */
  int64_t n, n_owned, n_global; /* local nodes, owned rows, nodes of the whole mesh */
  int64_t block, n_blocks;      /* fixed blocks of owned rows for sums independent of the thread count */
  double *tau, *xi, *xp, *ua, *ub, *acc, *uh, *unew, *pnew, *f, *part;
  /* The pressure matrix: owned rows of the edge graph with the diagonal inserted (local columns). */
  int64_t *h_row_ptr, *h_diag;
  int32_t *h_col;
  double *h_val;
  double *cg_r, *cg_p, *cg_q, *cg_dinv, *cg_u, *cg_w;
  double seconds_exchange;
  /* A registry solver across ranks instead of pressure_cg (fractional_step_mpi_solver.h), or NULL. */
  ef_fs_mpi_system pressure_system;
  ef_fs_mpi_solver *pressure_numbering;
  ef_linear_solver *pressure_solver;
  /* The implicit viscosity (allocated when first enabled): the stage residuals F_j, V_j (4 slices of 3n each),
   * the stage state and right-hand side, the stage CG's vectors (3n each), its diagonal, block partials (3 a
   * block) and the compact stage operator L_IJ of the owned rows; the figures of the last step. */
  double *imex_f, *imex_v, *imex_u, *imex_rhs, *v_r, *v_p, *v_s, *v_u, *v_w, *v_diag, *v_part, *stage_lij;
  int v_iterations, v_max_iterations;
  double v_residual, v_seconds;
  double tau_dt; /* TAU_TIME_STEP: tau's step bound from ef_fs_mpi_compute_dt for the next step (0: none) */
};

/* ---------------------------------------------------------------------------
 * Exchange and reductions, timed. */

static int halo(ef_fs_mpi *fs, double *x, int nc) {
  const double t0 = ef_wtime();
  int err = ef_halo_exchange(fs->halo, x, nc);
  fs->seconds_exchange += ef_wtime() - t0;
  return err;
}

static int reduce(ef_fs_mpi *fs, double *v, int n, ef_comm_op op) {
  const double t0 = ef_wtime();
  int err = ef_comm_allreduce(fs->comm, v, n, op);
  fs->seconds_exchange += ef_wtime() - t0;
  return err;
}

/* Sum of the block partials, in block order. */
static double sum_parts(const double *part, int64_t nb) {
  double s = 0.0;
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* ---------------------------------------------------------------------------
 * Creation. */

static int check_supported(const ef_fs_settings *s, int64_t n) {
  (void)n;
  EF_CHECK(!s->viscous_implicit || (s->viscous_correction == 0 && s->viscous_pressure == 0 && s->viscous_projection == 0),
           EF_ERR_UNSUPPORTED,
           "viscous_time_integration \"implicit\" on several ranks runs with implicit_viscosity.correction \"lumped\", "
           "pressure \"frozen\" and projection \"single\" only (docs/mpi.md)");
  return EF_SUCCESS;
}

/* The implicit viscosity's arrays, once; L_IJ of the owned rows (ef_row_edge_laplacians, as ef_fs_create). */
static int imex_alloc(ef_fs_mpi *fs) {
  if (!fs->s.viscous_implicit || fs->imex_f) return EF_SUCCESS;
  const ef_edge_data *ed = fs->ed;
  const int64_t no = fs->n_owned, *rp = ed->row_ptr;
  const size_t v = 3 * (size_t)fs->n;
  fs->imex_f = calloc(4 * v, sizeof(double));
  fs->imex_v = calloc(4 * v, sizeof(double));
  fs->imex_u = calloc(v, sizeof(double));
  fs->imex_rhs = calloc(v, sizeof(double));
  fs->v_r = calloc(v, sizeof(double));
  fs->v_p = calloc(v, sizeof(double));
  fs->v_s = calloc(v, sizeof(double));
  fs->v_u = calloc(v, sizeof(double));
  fs->v_w = calloc(v, sizeof(double));
  fs->v_diag = calloc((size_t)fs->n, sizeof(double));
  fs->v_part = calloc(3 * (size_t)fs->n_blocks + 3, sizeof(double));
  fs->stage_lij = malloc((size_t)(rp[no] > 0 ? rp[no] : 1) * sizeof(double));
  EF_CHECK(fs->imex_f && fs->imex_v && fs->imex_u && fs->imex_rhs && fs->v_r && fs->v_p && fs->v_s && fs->v_u &&
               fs->v_w && fs->v_diag && fs->v_part && fs->stage_lij,
           EF_ERR_MEMORY, "distributed fractional step: out of memory for the implicit viscous stages (%lld nodes)",
           (long long)fs->n);
  double *lij = fs->stage_lij;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < no; ++i)
    ef_row_edge_laplacians(ed->dim, (int)(rp[i + 1] - rp[i]), ed->values + rp[i] * ed->stride, lij + rp[i]);
  return EF_SUCCESS;
}

void ef_fs_mpi_destroy(ef_fs_mpi **fsp) {
  if (!fsp || !*fsp) return;
  ef_fs_mpi *fs = *fsp;
  ef_halo_destroy(&fs->halo);
  ef_fs_mpi_solver_destroy(&fs->pressure_numbering);
  double *arrays[] = {fs->tau,    fs->xi,     fs->xp,     fs->ua,       fs->ub,     fs->acc,    fs->uh,
                      fs->unew,   fs->pnew,   fs->f,      fs->part,     fs->h_val,  fs->cg_r,   fs->cg_p,
                      fs->cg_q,   fs->cg_dinv, fs->cg_u,  fs->cg_w,     fs->imex_f, fs->imex_v, fs->imex_u,
                      fs->imex_rhs, fs->v_r,  fs->v_p,    fs->v_s,      fs->v_u,    fs->v_w,    fs->v_diag,
                      fs->v_part, fs->stage_lij};
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) free(arrays[k]);
  free(fs->h_row_ptr);
  free(fs->h_diag);
  free(fs->h_col);
  free(fs->bnd);
  free(fs);
  *fsp = NULL;
}

int ef_fs_mpi_create(const ef_edge_data *edges, const ef_fs_settings *settings, ef_comm comm, const ef_partition *p,
                     ef_fs_mpi **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "distributed fractional step: NULL result");
  *out = NULL;
  EF_CHECK(edges && settings && p && edges->n_nodes == p->n_nodes, EF_ERR_PARAMETER,
           "distributed fractional step: edge data of %lld nodes for a piece of %lld",
           (long long)(edges ? edges->n_nodes : -1), (long long)(p ? p->n_nodes : -1));
  EF_CALL(check_supported(settings, p->n_nodes));
  ef_fs_mpi *fs = calloc(1, sizeof *fs);
  EF_CHECK(fs, EF_ERR_MEMORY, "distributed fractional step: out of memory");
  int err = EF_SUCCESS;
  const int64_t n = p->n_nodes, no = p->n_owned;
  fs->ed = edges;
  fs->s = *settings;
  fs->comm = comm;
  fs->p = p;
  fs->n = n;
  fs->n_owned = no;
  fs->n_global = p->n_global_nodes;
  fs->block = ef_reduction_block_rows(no);
  fs->n_blocks = (no + fs->block - 1) / fs->block;
  EF_CALL_GOTO(ef_halo_create(comm, p, 3, &fs->halo), fail);
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
  fs->f = calloc((size_t)n, sizeof(double));
  fs->part = calloc(2 * (size_t)fs->n_blocks + 2, sizeof(double));
  fs->cg_r = calloc((size_t)n, sizeof(double));
  fs->cg_p = calloc((size_t)n, sizeof(double));
  fs->cg_q = calloc((size_t)n, sizeof(double));
  fs->cg_dinv = calloc((size_t)n, sizeof(double));
  fs->cg_u = calloc((size_t)n, sizeof(double));
  fs->cg_w = calloc((size_t)n, sizeof(double));
  const int64_t *rp = edges->row_ptr;
  const int32_t *col = edges->col;
  const int64_t nnz = rp[no] + no;
  fs->h_row_ptr = malloc(((size_t)no + 1) * sizeof(int64_t));
  fs->h_diag = malloc(((size_t)no + 1) * sizeof(int64_t));
  fs->h_col = malloc(((size_t)nnz + 1) * sizeof(int32_t));
  fs->h_val = calloc((size_t)nnz + 1, sizeof(double));
  EF_CHECK_GOTO(fs->tau && fs->xi && fs->xp && fs->ua && fs->ub && fs->acc && fs->uh && fs->unew && fs->pnew &&
                    fs->f && fs->part && fs->cg_r && fs->cg_p && fs->cg_q && fs->cg_dinv && fs->cg_u && fs->cg_w && fs->h_row_ptr &&
                    fs->h_diag && fs->h_col && fs->h_val,
                EF_ERR_MEMORY, fail, "distributed fractional step: out of memory for %lld nodes", (long long)n);
  /* H: the owned rows of the edge graph with the diagonal inserted in sorted position (as ef_fs_create). */
  fs->h_row_ptr[0] = 0;
  for (int64_t i = 0; i < no; ++i) fs->h_row_ptr[i + 1] = rp[i + 1] + i + 1;
  for (int64_t i = 0; i < no; ++i) {
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
  EF_CALL_GOTO(ef_fs_mpi_set_overlap(fs, 1), fail);
  EF_CALL_GOTO(imex_alloc(fs), fail);
  *out = fs;
  return EF_SUCCESS;
fail:
  ef_fs_mpi_destroy(&fs);
  return err;
}

int ef_fs_mpi_set_settings(ef_fs_mpi *fs, const ef_fs_settings *settings) {
  EF_CHECK(fs && settings, EF_ERR_PARAMETER, "distributed fractional step: NULL argument");
  EF_CALL(check_supported(settings, fs->n));
  fs->s = *settings;
  return imex_alloc(fs);
}

double ef_fs_mpi_exchange_seconds(const ef_fs_mpi *fs) { return fs ? fs->seconds_exchange : 0.0; }

int ef_fs_mpi_set_overlap(ef_fs_mpi *fs, int on) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "distributed fractional step: NULL argument");
  free(fs->bnd);
  fs->bnd = NULL;
  if (!on || fs->p->n_neighbours == 0) return EF_SUCCESS;
  const int64_t no = fs->n_owned;
  fs->bnd = malloc((size_t)(no ? no : 1));
  EF_CHECK(fs->bnd, EF_ERR_MEMORY, "distributed fractional step: out of memory");
  for (int64_t i = 0; i < no; ++i) { /* the overlap: rows reading a ghost wait for the exchange */
    uint8_t ghost = 0;
    for (int64_t k = fs->h_row_ptr[i]; k < fs->h_row_ptr[i + 1] && !ghost; ++k) ghost = fs->h_col[k] >= no;
    fs->bnd[i] = ghost;
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Time step. */

int ef_fs_mpi_compute_dt(ef_fs_mpi *fs, const double *velocity, const ef_fs_dt_settings *s, double *dt,
                         double *dt_stable, int *reduced) {
  EF_CHECK(fs && velocity && s && dt, EF_ERR_PARAMETER, "time step: NULL argument");
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim;
  const double *hmin = ed->hmin, *nun = fs->s.nu_nodal, nu = fs->s.nu;
  EF_CALL(ef_fs_dt_check(s));
  /* As ef_fs_compute_dt: with the implicit viscosity the convective limit, min h_min^2/nu for the cap and the
   * explicit rule's limit for tau's step. */
  double stable = 1.0e300, visc = 1.0e300, expl = 1.0e300;
  int64_t bad = INT64_MAX;
  const int64_t n = fs->n_owned;
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
  /* {stable, -(a bad node's flag), the viscous cap's min h^2/nu, the explicit limit}: min over ranks. */
  double r[4] = {stable, bad == INT64_MAX ? 0.0 : -1.0, visc, expl};
  EF_CALL(reduce(fs, r, implicit ? 4 : 2, EF_COMM_MIN));
  if (bad != INT64_MAX)
    return EF_ERROR(EF_ERR_DIVERGED, "time step: velocity (%g, %g, %g) at node %lld is not finite", velocity[3 * bad],
                    velocity[3 * bad + 1], velocity[3 * bad + 2], (long long)bad);
  EF_CHECK(r[1] == 0.0, EF_ERR_DIVERGED, "time step: the velocity is not finite on another rank");
  stable = r[0];
  EF_CALL(ef_fs_dt_floor_check(s, stable));
  ef_fs_dt_choose(s, stable, dt, dt_stable, reduced);
  if (implicit) ef_fs_dt_cap_viscous(s, &fs->s, r[2], dt);
  fs->tau_dt = ef_fs_dt_tau(s, &fs->s, r[3]); /* TAU_TIME_STEP */
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The step. */

/* Step 1 on the owned rows, then tau and both projections at the ghosts. */
static int prepare(ef_fs_mpi *fs, double dt, const double *u_n, const double *p_n) {
  double *tau = fs->tau, *xi = fs->xi, *xp = fs->xp;
  if (fs->tau_dt > 0.0 && fs->tau_dt < dt) dt = fs->tau_dt; /* TAU_TIME_STEP: dt is tau's only here */
  ef_fs_rows_prepare(fs->ed, &fs->s, fs->n_owned, dt, u_n, p_n, tau, xi, xp);
  EF_CALL(halo(fs, xi, 3));
  EF_CALL(halo(fs, xp, 3));
  return halo(fs, tau, 1);
}

/* One RK4 stage on the owned rows (rk_stage of fractional_step.c), then uout at the ghosts. */
static int rk_stage(ef_fs_mpi *fs, int stage, double dt, const double *u_n, const double *p_n, const double *us,
                    double *uout) {
  ef_fs_rows_rk_stage(fs->ed, &fs->s, fs->n_owned, stage, dt, u_n, p_n, us, fs->tau, fs->xi, fs->acc, uout);
  return halo(fs, uout, 3);
}

/* The caller's boundary values on every local node (owned and ghost alike). */
static int eval_fixed(ef_fs_mpi *fs, double t, double *u, double *p) {
  if (!fs->s.eval_fixed) return EF_SUCCESS;
  int err = fs->s.eval_fixed(fs->s.eval_fixed_ctx, t, u, p);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "while evaluating boundary values at t = %.9g", t);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Step 2 with the implicit viscosity: the IMEX ARS(3,4,3) stages of fractional_step.c (imex_momentum) on the
 * owned rows, each stage solved by a distributed projected Jacobi CG. */

/* y = P_I (D_I + K) x at owned row i (D_I = M_II dscale / nu_I): ef_row_stage_operator on the compact L_IJ, then
 * the constraint projection, as viscous_solve of fractional_step.c. */
static inline void stage_row(const ef_fs_mpi *fs, double dscale, int64_t i, const double *x, double *y) {
  const ef_edge_data *ed = fs->ed;
  const int64_t *rp = ed->row_ptr;
  const int ne = (int)(rp[i + 1] - rp[i]);
  const double d = ed->mass[i] * dscale / (fs->s.nu_nodal ? fs->s.nu_nodal[i] : fs->s.nu);
  y[0] = y[1] = y[2] = 0.0;
  if (ed->dim == 3)
    ef_row_stage_operator(3, i, ne, ed->col + rp[i], fs->stage_lij + rp[i], d, x, y);
  else
    ef_row_stage_operator(2, i, ne, ed->col + rp[i], fs->stage_lij + rp[i], d, x, y);
  ef_fs_node_project(&fs->s, ed->dim, i, y);
}

/* u's ghosts from their owners, w = P A u on the owned rows and the block partials of r.u, w.u and r.r (3 a
 * block) into part.  With the overlap (fs->bnd: the rows of H, whose columns are the stage operator's, with a ghost
 * column) the exchange is in flight while the interior rows' products run, as product() for the pressure. */
static int stage_product(ef_fs_mpi *fs, double dscale, const double *r, double *u, double *w, double *part) {
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block;
  const uint8_t *bnd = fs->bnd;
  double t0 = ef_wtime();
  int err = bnd ? ef_halo_begin(fs->halo, u, 3) : ef_halo_exchange(fs->halo, u, 3);
  fs->seconds_exchange += ef_wtime() - t0;
  if (err) return err;
  if (bnd) {
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i)
      if (!bnd[i]) stage_row(fs, dscale, i, u, w + 3 * i);
    t0 = ef_wtime();
    err = ef_halo_end(fs->halo);
    fs->seconds_exchange += ef_wtime() - t0;
    if (err) return err;
  }
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sg = 0.0, sd = 0.0, sr = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      if (!bnd || bnd[i]) stage_row(fs, dscale, i, u, w + 3 * i);
      for (int c = 0; c < 3; ++c) {
        const int64_t k = 3 * i + c;
        sg += r[k] * u[k];
        sd += w[k] * u[k];
        sr += r[k] * r[k];
      }
    }
    part[3 * blk] = sg;
    part[3 * blk + 1] = sd;
    part[3 * blk + 2] = sr;
  }
  return EF_SUCCESS;
}

/* Sums of the 3-a-block partials, in block order. */
static void stage_sums(const ef_fs_mpi *fs, const double *part, double *out) {
  out[0] = out[1] = out[2] = 0.0;
  for (int64_t b = 0; b < fs->n_blocks; ++b)
    for (int q = 0; q < 3; ++q) out[q] += part[3 * b + q];
}

/* The projected Jacobi CG of viscous_solve (fractional_step.c) for P (D + K) P x = P rhs on the owned rows -- the
 * same start (x with the prescribed values and the previous stage), operator, diagonal and stopping test
 * |P (rhs - A x)| <= rtol |P rhs| -- in the Chronopoulos-Gear form of pressure_cg: one reduction per iteration
 * (r.u, (A u).u and r.r together, u = D^-1 r) and one halo exchange (u before w = P A u), s = A p by recurrence.
 * In exact arithmetic the serial iterates; in floating point the iteration counts may differ by a few.  x comes
 * back with its ghosts current; every decision is taken from reduced values. */
static int stage_solve(ef_fs_mpi *fs, double dscale, const double *rhs, double *x, int *its_out, double *res_out) {
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block;
  double *r = fs->v_r, *p = fs->v_p, *sv = fs->v_s, *u = fs->v_u, *w = fs->v_w, *dg = fs->v_diag, *part = fs->v_part;
  /* The start's x at the ghosts: the caller set the prescribed values and the slip projection on every local node,
   * so they agree with the owners' already; received anyway, so the start never depends on that. */
  EF_CALL(halo(fs, x, 3));
  /* r = P (rhs - A x), u = r / diag; the partials of |P rhs|^2. */
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sb = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      ef_fs_row_stage_start(fs->ed, &fs->s, fs->stage_lij, dscale, i, rhs, x, dg, r, u, &sb);
      for (int c = 0; c < 3; ++c) p[3 * i + c] = sv[3 * i + c] = 0.0;
    }
    fs->part[blk] = sb;
  }
  double s0[4];
  s0[3] = sum_parts(fs->part, nb);
  EF_CALL(stage_product(fs, dscale, r, u, w, part));
  stage_sums(fs, part, s0);
  /* {r.u, w.u, r.r, |P rhs|^2}: the one reduction of the start. */
  EF_CALL(reduce(fs, s0, 4, EF_COMM_SUM));
  ef_stage_cg c;
  ef_stage_cg_start(&c, s0, fs->s.viscous_rtol);
  while (ef_stage_cg_running(&c, fs->s.viscous_max_iterations)) {
    EF_CALL(ef_stage_cg_alpha(&c));
    const double alpha = c.alpha, beta = c.beta;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i)
      for (int c3 = 0; c3 < 3; ++c3) {
        const int64_t k = 3 * i + c3;
        p[k] = u[k] + beta * p[k];
        sv[k] = w[k] + beta * sv[k];
        x[k] += alpha * p[k];
        r[k] -= alpha * sv[k];
        u[k] = r[k] / dg[i];
      }
    EF_CALL(stage_product(fs, dscale, r, u, w, part));
    double g[3];
    stage_sums(fs, part, g);
    EF_CALL(reduce(fs, g, 3, EF_COMM_SUM));
    int done;
    EF_CALL(ef_stage_cg_next(&c, g, &done));
    if (done) break;
  }
  EF_CALL(ef_stage_cg_finish(&c, fs->s.viscous_rtol, its_out, res_out));
  return halo(fs, x, 3);
}

/* imex_momentum of fractional_step.c on the owned rows: the residuals F, V of u_n and of each stage (their states'
 * ghosts current), the stage right-hand sides, the prescribed values of t + c_s dt and the slip projection of the
 * start on every local node, the stage solves, then uh (with its ghosts) and acc = Rbar for the reactions. */
static int imex_momentum(ef_fs_mpi *fs, double t, double dt, const double *u_n, const double *p_n, double *uh) {
  const ef_edge_data *ed = fs->ed;
  const int64_t n = fs->n, no = fs->n_owned, n3 = 3 * n;
  const double *nun = fs->s.nu_nodal;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double gamma = ai[1][1], dscale = 1.0 / (gamma * dt);
  double *F = fs->imex_f, *V = fs->imex_v, *U = fs->imex_u, *rhs = fs->imex_rhs;
  if (nun)
    for (int64_t i = 0; i < no; ++i)
      EF_CHECK(nun[i] > 0.0, EF_ERR_PARAMETER,
               "implicit viscosity: the nodal viscosity %g at node %lld is not positive", nun[i], (long long)i);
  fs->v_iterations = fs->v_max_iterations = 0;
  fs->v_residual = 0.0;
  double tsolve = 0.0;
  ef_fs_rows_imex_residual(ed, &fs->s, no, u_n, p_n, fs->tau, fs->xi, F, V);
  memcpy(U, u_n, (size_t)n3 * sizeof *U);
  for (int s = 1; s < 4; ++s) {
    ef_fs_rows_imex_rhs(ed, &fs->s, no, n3, s, a[s], ai[s], F, V, u_n, dt, dscale, rhs);
    EF_CALL(eval_fixed(fs, t + c[s] * dt, U, fs->f));
    ef_fs_rows_imex_start(&fs->s, ed->dim, n, U);
    int its = 0;
    double res = 0.0;
    const double t0 = ef_wtime();
    const int err = stage_solve(fs, dscale, rhs, U, &its, &res);
    tsolve += ef_wtime() - t0;
    fs->v_iterations += its;
    if (its > fs->v_max_iterations) fs->v_max_iterations = its;
    if (res > fs->v_residual) fs->v_residual = res;
    if (err) return ef_error_push(err, __FILE__, __LINE__, "in stage %d of the implicit viscous step (t = %.9g)", s,
                                  t + c[s] * dt);
    ef_fs_rows_imex_residual(ed, &fs->s, no, U, p_n, fs->tau, fs->xi, F + s * n3, V + s * n3);
  }
  ef_fs_rows_imex_final(ed, &fs->s, no, n3, F, V, U, u_n, dt, fs->acc, uh);
  fs->v_seconds = tsolve;
  return halo(fs, uh, 3);
}

static int momentum(ef_fs_mpi *fs, double t, double dt, const double *u_n, const double *p_n, double *uh,
                    double *p_new, double *reaction) {
  const int64_t n = fs->n;
  const int implicit = fs->s.viscous_implicit;
  double *ua = fs->ua, *ub = fs->ub, *scratch = fs->f;
  if (implicit) {
    EF_CALL(imex_momentum(fs, t, dt, u_n, p_n, uh));
  } else {
    EF_CALL(rk_stage(fs, 0, dt, u_n, p_n, u_n, ua));
    EF_CALL(eval_fixed(fs, t + 0.5 * dt, ua, scratch));
    EF_CALL(rk_stage(fs, 1, dt, u_n, p_n, ua, ub));
    EF_CALL(eval_fixed(fs, t + 0.5 * dt, ub, scratch));
    EF_CALL(rk_stage(fs, 2, dt, u_n, p_n, ub, ua));
    EF_CALL(eval_fixed(fs, t + dt, ua, scratch));
    EF_CALL(rk_stage(fs, 3, dt, u_n, p_n, ua, uh));
  }
  memcpy(p_new, p_n, (size_t)n * sizeof *p_new);
  const uint8_t *pfix = fs->s.pressure_fixed;
  const int scale_fixed = fs->s.eval_fixed && pfix && fs->s.fixed_pressure_scale != 1.0;
  if (scale_fixed)
    for (int64_t i = 0; i < n; ++i)
      if (pfix[i]) p_new[i] = NAN;
  EF_CALL(eval_fixed(fs, t + dt, uh, p_new));
  if (scale_fixed) {
    const double scale = fs->s.fixed_pressure_scale;
    for (int64_t i = 0; i < n; ++i)
      if (pfix[i]) p_new[i] = isnan(p_new[i]) ? p_n[i] : p_new[i] * scale;
  }
  if (reaction) {
    const uint8_t *vfix = fs->s.velocity_fixed;
    const double *mass = fs->ed->mass, *acc = fs->acc;
    const double inv_dt = 1.0 / dt;
    const int64_t no = fs->n_owned;
    for (int64_t q = 0; q < 3 * n; ++q) {
      const int64_t i = q / 3;
      reaction[q] =
          i < no && vfix && vfix[q] ? acc[q] / (implicit ? 1.0 : 6.0) - mass[i] * (uh[q] - u_n[q]) * inv_dt : 0.0;
    }
  }
  return EF_SUCCESS;
}

/* Step 3 assembly on the owned rows; the fixed count and the flux sums reduced over the ranks. */
static int assemble_pressure(ef_fs_mpi *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                             int *null_space, ef_fs_stats *stats) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block, *rp = ed->row_ptr, *hrp = fs->h_row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *tau = fs->tau, *xp = fs->xp;
  const uint8_t *pfix = fs->s.pressure_fixed;
  const int has_fixed = pfix != NULL;
  const double cc = 0.5 * dt;
  double *hval = fs->h_val, *f = fs->f, *pf = fs->part, *pabs = fs->part + nb;
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
  double sums[4] = {sum_parts(pf, nb), sum_parts(pabs, nb), (double)n_fixed, bad == INT64_MAX ? 0.0 : 1.0};
  EF_CALL(reduce(fs, sums, 4, EF_COMM_SUM));
  if (bad != INT64_MAX)
    return EF_ERROR(EF_ERR_DIVERGED,
                    "pressure right-hand side is not finite at node %lld (intermediate velocity (%g, %g, %g))",
                    (long long)bad, uh[3 * bad], uh[3 * bad + 1], uh[3 * bad + 2]);
  EF_CHECK(sums[3] == 0.0, EF_ERR_DIVERGED, "pressure right-hand side is not finite on another rank");
  double imbalance = 0.0;
  *null_space = sums[2] == 0.0;
  if (*null_space) {
    imbalance = sums[1] > 0.0 ? fabs(sums[0]) / sums[1] : 0.0;
    EF_CHECK(imbalance <= fs->s.flux_imbalance_tolerance, EF_ERR_PARAMETER,
             "pressure equation: no node has a fixed pressure and the prescribed velocities do not "
             "conserve mass (net flux imbalance |sum f|/sum|f| = %.3e > tolerance %.3e); fix the "
             "pressure on an outlet, or balance inflow and outflow",
             imbalance, fs->s.flux_imbalance_tolerance);
    const double mean = sums[0] / (double)fs->n_global;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) f[i] -= mean;
  }
  if (stats) {
    stats->flux_imbalance = imbalance;
    stats->n_fixed_pressure = (int)(sums[2] > INT32_MAX ? INT32_MAX : sums[2]);
  }
  return EF_SUCCESS;
}

/* w = H u on the owned rows (u's ghosts current); the partials of r.u and w.u per block into pa, pb. */
static void spmv_dots(ef_fs_mpi *fs, const double *r, const double *u, double *w, double *pa, double *pb) {
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block, *rp = fs->h_row_ptr;
  const int32_t *col = fs->h_col;
  const double *val = fs->h_val;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sg = 0.0, sd = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      double au = 0.0;
      for (int64_t k = rp[i]; k < rp[i + 1]; ++k) au += val[k] * u[col[k]];
      w[i] = au;
      sg += r[i] * u[i];
      sd += au * u[i];
    }
    pa[blk] = sg;
    pb[blk] = sd;
  }
}

/* u's ghosts from their owners, then w = H u and the partials of spmv_dots.  With the overlap (fs->bnd) the
 * exchange is in flight while the interior rows' products run, and the second pass (the boundary rows' products,
 * then every row's dot products in block order) gives the partials of spmv_dots bit for bit. */
static int product(ef_fs_mpi *fs, const double *r, double *u, double *w, double *pa, double *pb) {
  if (!fs->bnd) {
    EF_CALL(halo(fs, u, 1));
    spmv_dots(fs, r, u, w, pa, pb);
    return EF_SUCCESS;
  }
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block, *rp = fs->h_row_ptr;
  const int32_t *col = fs->h_col;
  const double *val = fs->h_val;
  const uint8_t *bnd = fs->bnd;
  double t0 = ef_wtime();
  EF_CALL(ef_halo_begin(fs->halo, u, 1));
  fs->seconds_exchange += ef_wtime() - t0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    if (bnd[i]) continue;
    double au = 0.0;
    for (int64_t k = rp[i]; k < rp[i + 1]; ++k) au += val[k] * u[col[k]];
    w[i] = au;
  }
  t0 = ef_wtime();
  EF_CALL(ef_halo_end(fs->halo));
  fs->seconds_exchange += ef_wtime() - t0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sg = 0.0, sd = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      if (bnd[i]) {
        double au = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; ++k) au += val[k] * u[col[k]];
        w[i] = au;
      }
      sg += r[i] * u[i];
      sd += w[i] * u[i];
    }
    pa[blk] = sg;
    pb[blk] = sd;
  }
  return EF_SUCCESS;
}

/* The Jacobi CG of ef_host_cg_solve on the owned rows -- same warm start, b's mean removed in 1-perp for a
 * closed domain, same stopping test sqrt(r.D^-1 r) / sqrt(b.D^-1 b) < rtol -- in the Chronopoulos-Gear form,
 * which needs one reduction per iteration (gamma = r.u and delta = (A u).u together, u = D^-1 r) and one
 * halo exchange (u before w = A u), keeping s = A p by recurrence:
 *   p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = D^-1 r, w = A u,
 *   beta = gamma'/gamma, alpha = gamma' / (delta' - beta gamma' / alpha).
 * In exact arithmetic the iterates of the serial CG; in floating point the iteration counts differ by a
 * few at most (docs/mpi.md).  x comes back with its ghosts current.  All decisions from reduced values. */
static int pressure_cg(ef_fs_mpi *fs, int null_space, const double *b, double *x, int *iterations, double *residual) {
  const int64_t n = fs->n_owned, nb = fs->n_blocks, B = fs->block, *rp = fs->h_row_ptr;
  const int32_t *col = fs->h_col;
  const double *val = fs->h_val, rtol = fs->s.pressure_rtol;
  const int max_it = fs->s.pressure_max_iterations;
  double *r = fs->cg_r, *p = fs->cg_p, *s = fs->cg_q, *dinv = fs->cg_dinv, *u = fs->cg_u, *w = fs->cg_w;
  double *pa = fs->part, *pb = fs->part + nb;
  double bmean = 0.0;
  if (null_space) {
    double sb = 0.0;
    for (int64_t i = 0; i < n; ++i) sb += b[i];
    EF_CALL(reduce(fs, &sb, 1, EF_COMM_SUM));
    bmean = sb / (double)fs->n_global;
  }
  EF_CALL(halo(fs, x, 1));
  int64_t bad_diag = INT64_MAX;
  EF_OMP(omp parallel for schedule(static) reduction(min : bad_diag))
  for (int64_t blk = 0; blk < nb; ++blk) {
    const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
    double sbb = 0.0;
    for (int64_t i = blk * B; i < i1; ++i) {
      double ax = 0.0;
      for (int64_t k = rp[i]; k < rp[i + 1]; ++k) ax += val[k] * x[col[k]];
      double d = val[fs->h_diag[i]];
      if (!(d > 0.0)) {
        if (i < bad_diag) bad_diag = i;
        d = 1.0;
      }
      const double di = 1.0 / d, bi = b[i] - bmean, ri = bi - ax;
      dinv[i] = di;
      r[i] = ri;
      u[i] = di * ri;
      sbb += bi * di * bi;
    }
    pa[blk] = sbb;
  }
  const double bb = sum_parts(pa, nb);
  EF_CALL(product(fs, r, u, w, pa, pb));
  /* {r.u, w.u, b.D^-1 b, a bad diagonal}: the one reduction of the start. */
  double s0[4] = {sum_parts(pa, nb), sum_parts(pb, nb), bb, bad_diag == INT64_MAX ? 0.0 : 1.0};
  EF_CALL(reduce(fs, s0, 4, EF_COMM_SUM));
  EF_CHECK(bad_diag == INT64_MAX, EF_ERR_SOLVER, "distributed CG: diagonal entry of row %lld is not positive",
           (long long)bad_diag);
  EF_CHECK(s0[3] == 0.0, EF_ERR_SOLVER, "distributed CG: a diagonal entry is not positive on another rank");
  double gamma = s0[0], delta = s0[1];
  const double bnorm = sqrt(s0[2]);
  double rnorm = bnorm > 0.0 ? sqrt(gamma) / bnorm : 0.0;
  int it = 0;
  if (bnorm > 0.0 && rnorm >= rtol) {
    double alpha = 0.0, beta = 0.0;
    for (;;) {
      const double denom = it == 0 ? delta : delta - beta * gamma / alpha;
      EF_CHECK(denom > 0.0, EF_ERR_SOLVER,
               isfinite(denom) ? "distributed CG: p^T A p = %g <= 0 at iteration %d: the matrix is not positive definite"
                               : "distributed CG: non-finite value (%g) at iteration %d",
               denom, it + 1);
      alpha = gamma / denom;
      EF_OMP(omp parallel for schedule(static))
      for (int64_t i = 0; i < n; ++i) {
        p[i] = u[i] + beta * p[i];
        s[i] = w[i] + beta * s[i];
        x[i] += alpha * p[i];
        r[i] -= alpha * s[i];
        u[i] = dinv[i] * r[i];
      }
      EF_CALL(product(fs, r, u, w, pa, pb));
      double g[2] = {sum_parts(pa, nb), sum_parts(pb, nb)};
      EF_CALL(reduce(fs, g, 2, EF_COMM_SUM));
      ++it;
      EF_CHECK(isfinite(g[0]) && isfinite(g[1]), EF_ERR_SOLVER, "distributed CG: non-finite value at iteration %d",
               it);
      rnorm = sqrt(fabs(g[0])) / bnorm;
      if (rnorm < rtol) break;
      EF_CHECK(it < max_it, EF_ERR_SOLVER,
               "distributed CG: no convergence in %d iterations (relative residual %.3e > %.3e)", max_it, rnorm, rtol);
      beta = g[0] / gamma;
      gamma = g[0];
      delta = g[1];
    }
  } else if (bnorm == 0.0) {
    for (int64_t i = 0; i < n; ++i) x[i] = 0.0;
  }
  *iterations = it;
  *residual = rnorm;
  return halo(fs, x, 1);
}

/* Step 4 on the owned rows, the velocity at the ghosts, the divergence check over the ranks. */
static int correct(ef_fs_mpi *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                   double *u_new) {
  const ef_edge_data *ed = fs->ed;
  const int dim = ed->dim, S = ed->stride;
  const int64_t n = fs->n_owned, *rp = ed->row_ptr;
  const int32_t *col = ed->col;
  const double *ev = ed->values, *invm = ed->inv_mass;
  const uint8_t *vfix = fs->s.velocity_fixed, *slip = fs->s.slip_type;
  const double *sn = fs->s.slip_normal, *st = fs->s.slip_tangent;
  const double cc = 0.5 * dt, bound2 = fs->s.velocity_bound * fs->s.velocity_bound;
  int64_t bad = INT64_MAX;
  EF_OMP(omp parallel for schedule(static) reduction(min : bad))
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(rp[i + 1] - rp[i]);
    const int32_t *ci = col + rp[i];
    const double *ei = ev + rp[i] * S;
    double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
    if (dim == 3)
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
    if ((!(u2 <= bound2) || !isfinite(p_new[i])) && i < bad) bad = i;
  }
  double flag = bad == INT64_MAX ? 0.0 : 1.0;
  EF_CALL(reduce(fs, &flag, 1, EF_COMM_MAX));
  if (bad != INT64_MAX) {
    const double *u = u_new + 3 * bad;
    if (!isfinite(p_new[bad]))
      return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: pressure %g at node %lld", p_new[bad], (long long)bad);
    return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: velocity (%g, %g, %g) at node %lld (bound %g)", u[0],
                    u[1], u[2], (long long)bad, fs->s.velocity_bound);
  }
  EF_CHECK(flag == 0.0, EF_ERR_DIVERGED, "the solution diverged on another rank (bound %g)", fs->s.velocity_bound);
  return halo(fs, u_new, 3);
}

int ef_fs_mpi_step(ef_fs_mpi *fs, double t, double dt, double *velocity, double *pressure, double *reaction,
                   ef_fs_stats *stats) {
  EF_CHECK(fs && velocity && pressure, EF_ERR_PARAMETER, "distributed fractional step: NULL argument to step");
  EF_CHECK(dt > 0.0, EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  ef_fs_stats st;
  memset(&st, 0, sizeof st);
  const double t0 = ef_wtime();
  /* The state's ghosts from their owners (processes set values on every local node). */
  EF_CALL(halo(fs, velocity, 3));
  EF_CALL(halo(fs, pressure, 1));
  EF_CALL(prepare(fs, dt, velocity, pressure));
  const double t1 = ef_wtime();
  EF_CALL(momentum(fs, t, dt, velocity, pressure, fs->uh, fs->pnew, reaction));
  if (reaction) EF_CALL(halo(fs, reaction, 3)); /* outputs write ghost points too */
  const double t2 = ef_wtime();
  int null_space = 0;
  EF_CALL(assemble_pressure(fs, dt, fs->uh, pressure, fs->pnew, &null_space, &st));
  const double t2a = ef_wtime();
  int its = 0;
  double res = 0.0;
  int err = fs->pressure_solver ? ef_fs_mpi_solver_solve(fs->pressure_numbering, fs->pressure_solver, null_space,
                                                         fs->f, fs->pnew, &its, &res)
                                : pressure_cg(fs, null_space, fs->f, fs->pnew, &its, &res);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "pressure equation not solved");
  const double t3 = ef_wtime();
  EF_CALL(correct(fs, dt, fs->uh, pressure, fs->pnew, fs->unew));
  const int64_t n = fs->n;
  memcpy(velocity, fs->unew, 3 * (size_t)n * sizeof *velocity);
  memcpy(pressure, fs->pnew, (size_t)n * sizeof *pressure);
  const double t4 = ef_wtime();
  st.cg_iterations = its;
  st.cg_residual = res;
  if (fs->s.viscous_implicit) { /* the stage solves' figures, as ef_fs_viscous_stats */
    st.viscous_iterations = fs->v_iterations;
    st.viscous_max_stage_iterations = fs->v_max_iterations;
    st.viscous_residual = fs->v_residual;
    st.seconds_viscous = fs->v_seconds;
  }
  fs->tau_dt = 0.0; /* TAU_TIME_STEP: consumed (the next step's comes from its own ef_fs_mpi_compute_dt) */
  st.seconds_prepare = t1 - t0;
  st.seconds_momentum = t2 - t1;
  st.seconds_assembly = t2a - t2;
  st.seconds_solve = t3 - t2a;
  st.seconds_correction = t4 - t3;
  st.seconds_total = t4 - t0;
  if (stats) *stats = st;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * A registry pressure solver across ranks (fractional_step_mpi_solver.c). */

int ef_fs_mpi_pressure_matrix(ef_fs_mpi *fs, ef_matrix *A) {
  EF_CHECK(fs && A, EF_ERR_PARAMETER, "distributed fractional step: NULL argument");
  if (!fs->pressure_numbering) {
    const int64_t no = fs->n_owned;
    fs->pressure_system = (ef_fs_mpi_system){.comm = fs->comm, .p = fs->p, .halo = fs->halo, .n_owned = no,
                                             .n = fs->n, .nnz = fs->h_row_ptr[no], .row_ptr = fs->h_row_ptr,
                                             .diag = fs->h_diag, .col = fs->h_col, .values = fs->h_val,
                                             .seconds_exchange = &fs->seconds_exchange};
    EF_CALL(ef_fs_mpi_solver_create(&fs->pressure_system, &fs->pressure_numbering));
  }
  ef_fs_mpi_solver_matrix(fs->pressure_numbering, 0, A);
  return EF_SUCCESS;
}

int ef_fs_mpi_set_pressure_solver(ef_fs_mpi *fs, ef_linear_solver *solver) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "distributed fractional step: NULL argument");
  EF_CHECK(!solver || fs->pressure_numbering, EF_ERR_PARAMETER,
           "distributed fractional step: a pressure solver not made for ef_fs_mpi_pressure_matrix's matrix");
  fs->pressure_solver = solver;
  return EF_SUCCESS;
}

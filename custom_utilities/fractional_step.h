/* fractional_step.h -- the OpenMP executor of one edge-based fractional step
 * (Rossi, Mossaiby & Idelsohn, Comput. Fluids 81, 2013, eqs. 40-48 in the
 * corrected form below), on raw host arrays.
 *
 * ---------------------------------------------------------------------------
 * The step from t to t + dt, with c = dt/2 in all three places it appears and
 * the kinematic pressure p (= physical pressure / density) throughout:
 *
 * 1. From u_n: tau_I = 1/(c1/dt + c2 nu/h_I^2 + c3 |u_I|/h_I) (0 when stabilisation is off),
 *    xi_I = M_II^-1 sum_{J!=I} (u_I.nabla_IJ)(u_J - u_I)       (convective projection),
 *    xp_I = M_II^-1 sum_{J!=I} nabla_IJ (p_n,J - p_n,I)        (pressure projection, eq. 48).
 * 2. Momentum, classical RK4 with lumped mass, p_n, xi and tau frozen, the stage velocity as
 *    convecting velocity:  M_II du_I/dt = R_I(u),
 *      R_I = M_II b_I - A_I - nu_I sum L_IJ (u_J - u_I) + P_I(p_n) - tau_I (S_low,I - S_high,I)
 *    (see edge_physics.h).  Stage k_s = M^-1 R(u_s):
 *      u_1 = u_n;  u_2 = u_n + dt/2 k_1 (BC at t + dt/2);  u_3 = u_n + dt/2 k_2 (BC at t + dt/2);
 *      u_4 = u_n + dt k_3 (BC at t + dt);  uh = u_n + dt/6 (k_1 + 2k_2 + 2k_3 + k_4) (BC at t + dt).
 * 3. Pressure: H p_{n+1} = f (edge_physics.h, ef_row_pressure_system), fixed pressures at t + dt
 *    eliminated symmetrically, solved by the linear solver (default: host CG on D^-1/2 H D^-1/2,
 *    warm start p_n).  Without any fixed pressure the constant null space is removed: the net
 *    flux imbalance |sum f| / sum |f| is checked against flux_imbalance_tolerance (refused
 *    with a message naming the imbalance when above), f is made zero-sum, and the solution
 *    keeps the additive constant of p_n (CG never changes the null-space component).
 *    The tau-terms of H and f cancel exactly on a linear pressure only where tau is uniform
 *    (test (b)); h_I = M_II^(1/dim) is smaller at boundary nodes, so tau varies there and a
 *    hydrostatic state keeps a small spurious current (~6e-4 |b| in test_fs_solver's box).
 * 4. Correction: u_{n+1,I} = uh_I - c M_II^-1 sum_{J!=I} nabla_IJ (dp_J - dp_I), dp = p_{n+1} - p_n;
 *    velocity boundary conditions.
 *
 * 2'. Implicit viscosity (viscous_implicit = 1; docs/implicit_viscosity.md): R = F + V with
 *    V_I = -nu_I (K u)_I the viscous part, treated by the IMEX ARS(3,4,3) scheme (explicit F,
 *    L-stable stiffly accurate SDIRK for V, gamma = 0.4358665215):
 *      U_0 = u_n;  (M + gamma dt nu K) U_i = M u_n + dt sum_{j<i} (a_ij F_j + ai_ij V_j), i = 1..3,
 *      each solved per component with the fixed components of t + c_i dt eliminated and slip
 *      nodes projected (projected Jacobi CG on the 1/nu_I-scaled, symmetric system);
 *      uh = U_3 + dt M^-1 sum_j (b_j - a_3j) F_j  (= u_n + dt M^-1 sum_j b_j (F_j + V_j)).
 *    The reaction uses Rbar = sum_j b_j (F_j + V_j) with V at the stage values.  Steps 3 and 4 change
 *    only with viscous_correction != 0 (below): the correction through M + gamma dt nu K.
 * Boundary conditions (arrays borrowed from the caller, read at every step, so fixity may
 * change between steps):
 *  - velocity_fixed[3 I + c]: the component is prescribed.  Its value is taken from the
 *    input velocity and, when eval_fixed is given, overwritten by eval_fixed at the stage
 *    times t + dt/2 (stages 2 and 3) and t + dt (stage 4 and the end of RK; the correction
 *    keeps the end-of-RK values, which are the values at t + dt).
 *  - pressure_fixed[I]: prescribed pressure; values from the input pressure or eval_fixed at
 *    t + dt.  Where no velocity component is fixed (a pressure inlet or outlet) the momentum
 *    residual takes the Galerkin gradient -sum nabla_IJ (p_J - p_I) instead of the weak one:
 *    the traction -p n of the prescribed pressure (without it the open boundary is traction free).  eval_fixed writes PHYSICAL pressure (ef_fixed_values_fn of ef_strategy.h);
 *    the executor multiplies the fixed entries it writes by fixed_pressure_scale (set 1/rho).
 *  - slip_type[I] (EF_SLIP_FACE / EDGE / CORNER of edge_physics.h) with unit slip_normal and
 *    slip_tangent (3 per node): projection after every stage and after the correction, on
 *    nodes with no fixed component.  A node with a fixed component is not projected:
 *    prescribed velocity wins over slip whatever the process order (the processes decide
 *    which of two prescribed values wins by their list order, before the executor sees them).
 *  - body_force: per unit mass, 3 per node, constant during the step.
 *
 * Reaction (for wall forces): for every fixed velocity component
 *    reaction_I = Rbar_I - M_II (u_{n+1,I} - u_{n,I}) / dt,   Rbar = (R_1 + 2R_2 + 2R_3 + R_4)/6,
 * the RK-weighted momentum residual (with p_n) minus the inertia of the prescribed motion,
 * taken before the boundary values overwrite the node.  Units: kinematic force (force /
 * density).  Sign: R_I is the force the rest of the fluid exerts on node I's share of fluid,
 * so the wall must supply -reaction_I and
 *    force the fluid exerts on the wall at node I = + density * reaction_I
 * (a fluid at rest under pressure p gives reaction_I = p int N_I n, n the outward normal of
 * the fluid domain).  Components that are not fixed are 0.
 *
 * Divergence: after the correction, NaN/Inf in u or p or |u_I| > velocity_bound stops the
 * step with EF_ERR_DIVERGED naming the node (the caller adds step, time and file).  The
 * caller's velocity and pressure arrays are written only when the step succeeds, so they
 * still hold the last good state.
 *
 * Speed: OpenMP over rows (nodes), no atomics, no allocation after ef_fs_create, one pass
 * over the edge data per operator (projections, each RK stage, pressure assembly,
 * correction), reductions in fixed row blocks: results are bitwise independent of the
 * number of threads.
 */
#ifndef EF_FRACTIONAL_STEP_H
#define EF_FRACTIONAL_STEP_H

#include <stdint.h>

#include "edge_data.h"
#include "host_cg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  /* Physics. */
  double nu;               /* kinematic viscosity */
  const double *nu_nodal;  /* optional per-node viscosity (n); NULL: nu everywhere */
  int stabilization;       /* 1: OSS stabilisation with tau; 0: tau = 0 */
  double tau_c1, tau_c2, tau_c3; /* defaults 1, 4, 2 (see ef_fs_settings_default) */
  /* Pressure solve: a registered host linear solver (ef_linear_solver.h), which owns its
   * tolerance and iteration limit; NULL: the built-in host CG with the two values below
   * (executor tests and tools use it). */
  ef_linear_solver *solver;
  double pressure_rtol;          /* built-in CG: relative tolerance (default 1e-8) */
  int pressure_max_iterations;   /* built-in CG: default 5000 */
  double flux_imbalance_tolerance; /* only without fixed pressure (default 1e-6) */
  /* Divergence. */
  double velocity_bound;         /* |u| above this is divergence (default 1e6) */
  /* Boundary conditions (borrowed; any may be NULL = none). */
  const uint8_t *velocity_fixed; /* 3 per node */
  const uint8_t *pressure_fixed; /* 1 per node */
  const uint8_t *slip_type;      /* 1 per node, EF_SLIP_* */
  const double *slip_normal;     /* 3 per node, unit */
  const double *slip_tangent;    /* 3 per node, unit (EF_SLIP_EDGE) */
  const double *body_force;      /* 3 per node, per unit mass */
  /* Values of the fixed entries at time t (velocity, physical pressure); NULL: constant. */
  int (*eval_fixed)(void *ctx, double t, double *velocity, double *pressure);
  void *eval_fixed_ctx;
  double fixed_pressure_scale;   /* multiplies pressures written by eval_fixed (1/rho) */
  /* Viscous term in time (docs/implicit_viscosity.md): 0 = explicit inside the RK4 above (the
   * published scheme, default); 1 = implicit, IMEX ARS(3,4,3): step 2 becomes three stage solves
   * (M/(gamma dt) + nu K) U = rhs by a projected Jacobi CG, matrix-free from the edge records. */
  int viscous_implicit;
  double viscous_rtol;           /* stage solves: |r| <= rtol |b| on the 1/nu-scaled system (1e-10) */
  int viscous_max_iterations;    /* stage solves: default 10000 */
  /* Time step with viscous_implicit: the limit is the convective one, min_I cfl hmin_I/|u_I| (fixed
   * steps are cut to it), and in CFL mode dt <= viscous_number_max min_I hmin_I^2/nu_I (<= 0: no cap;
   * default 100). */
  double viscous_number_max;
  /* ... and, in CFL mode, dt <= viscous_dt_growth * the previous automatic step (ef_fs_dt_settings'
   * dt_previous; <= 0: no limit; default 1.2), the first automatic step of a run being the explicit
   * rule's at rest, min(cfl, 1) min_I hmin_I^2/(4 nu_I): from rest, or from a state that the step does not yet
   * resolve, one step of up to viscous_number_max h^2/nu carries an O(dt) splitting error of the size
   * of the flow itself (a pressure-driven start-up: 30x the exact velocity). */
  double viscous_dt_growth;
  /* Velocity correction with viscous_implicit (docs/implicit_viscosity.md, issue 16 fix (a); none
   * restores second order on Taylor-Green, so the default stays 0):
   * 0 = lumped, u = uh - c M^-1 G dp (step 4, default);
   * 1 = viscous, u = uh - c (M + gamma dt nu K)^-1 G dp (one more projected CG solve, fixed components
   *     and slip as in the stages), the pressure row's continuity residual E filtered by
   *     (1 + gamma dt nu K M^-1) at p_n, the form this correction implies where the operators commute;
   * 2 = the viscous correction with the pressure row unchanged (experiment);
   * 3 = rotational (experiment): the lumped correction, then p_{n+1} -= 2 gamma nu M^-1 E(p_n) (ef_fs_step). */
  int viscous_correction;
  /* Pressure in the implicit stages (docs/implicit_viscosity.md, issue 16 fix (b); ef_fs_step only, the
   * phases called one by one always freeze it):
   * 0 = frozen: p_n in every stage and as the base of the pressure increment (default);
   * 1 = extrapolated (half-weight): with w = dt/(2 dt_prev) and d = p_n - p_{n-1} (the pressures of the two
   *     previous ef_fs_step calls), stage i uses P_i = p_n + c_i w d, its gradient weighted by the implicit
   *     tableau (stage i's own P_i in its solve), and steps 3-4 take the increment from p^ = p_n + w d
   *     (= 2 sum_i b_i P_i - p_n) instead of p_n.  The full weight dt/dt_prev (linear extrapolation) is
   *     unstable on the start-up channel, 3/4 too; 1/2 halves the pressure lag (first order still).  The
   *     first step, and any step whose input pressure at the free nodes is not the one the previous step
   *     returned (a restart, a changed field), is frozen.  Not the default: the Taylor-Green order stays ~1.3. */
  int viscous_pressure;
  /* Projection with viscous_implicit (docs/implicit_viscosity.md, issue 16 fix (c); ef_fs_step only, with
   * viscous_correction 0):
   * 0 = single: steps 3-4 once (default);
   * 1 = converged: after steps 3-4, the consistent projection r(p) = f(u(p), p) - H p = 0, u(p) the corrected
   *     velocity with the boundary values (the fixed-velocity nodes receive no correction, so the single
   *     projection leaves their rows' continuity residual, which it relaxes by only ~3 % a step), solved by
   *     PCG on p with the built-in CG on H as the preconditioner, to |r| <= 1e-3 |r_0| (at most 20
   *     iterations; each one assembly and one H solve). */
  int viscous_projection;
  /* The step of tau's c1/dt with viscous_implicit (docs/implicit_viscosity.md, "Time step"; TAU_TIME_STEP):
   * 0 = explicit_limit (default): min(dt, the step the explicit scheme would take with the same settings,
   *     ef_fs_dt_tau), computed by ef_fs_compute_dt in its reduction and used by the next ef_fs_prepare /
   *     ef_fs_step (which consumes it; without one, the step itself), so that at a steady state the
   *     stabilised discretisation, and the steady state, are the explicit scheme's;
   * 1 = step: the step taken (tau grows with the implicit step, and the steady state moves with it). */
  int tau_time_step;
  /* The initial guess of the pressure solve (issue 12, "A better start"; ef_fs_step only, the phases called one by
   * one start from p_n; solver_settings.pressure_initial_guess, docs/parameters.md).  The prescribed values stay at
   * the fixed-pressure nodes; at the free ones:
   * 0 = previous: p_n (default);
   * 1 = linear: p_n + (dt/dt_{n-1}) (p_n - p_{n-1});
   * 2 = quadratic: the parabola through (t_{n-2}, p_{n-2}), (t_{n-1}, p_{n-1}), (t_n, p_n) at t_n + dt
   *     (linear on the second step).
   * p_{n-1}, p_{n-2} and their steps are the input pressures of the previous ef_fs_step calls; the first step, and
   * any step whose input pressure at the free nodes is not the one the previous step returned (a changed field, a
   * restart without ef_fs_set_pressure_history), start from p_n and the history restarts there. */
  int pressure_guess;
} ef_fs_settings;

/* Defaults: nu = 0, stabilisation on with (c1, c2, c3) = (1, 4, 2), the constants of Kratos'
 * edge-based solver and of Codina's OSS for linear elements (c2 = 4, c3 = 2 make tau the
 * nodally exact 1D value in the diffusive and convective limits; the paper's 1, 1, 1 gives
 * a 2-4 times larger tau, i.e. more numerical diffusion), rtol 1e-8, 5000 iterations,
 * flux tolerance 1e-6, velocity bound 1e6, no boundary conditions, pressure scale 1. */
void ef_fs_settings_default(ef_fs_settings *s);

/* The default CFL_number of each scheme (time_stepping.CFL_number absent or null).  Explicit: the
 * published scheme's 1.0.  Implicit viscosity: 4.0, <= 0.8x the smallest stable value measured by
 * tools/cfl_bisect.py (2000 steps from a developed state; docs/implicit_viscosity.md): with tau's step
 * "explicit_limit" (the default) 6.03 on flow_past_obstacle (s = 1, Re 100), against 23.1 on the 64^2
 * graded cavity2d and 15.5-19.8 on cavity3d levels 0-1 (Re 100); with "step" 5.5, 14.2 and 16-19 (levels
 * 0-2); the explicit scheme's own limits there are 4.4, 3.4 and 3.8-4.5. */
#define EF_FS_CFL_EXPLICIT 1.0
#define EF_FS_CFL_IMPLICIT 4.0

/* Time-step control. */
typedef struct {
  int fixed;        /* 1: dt_fixed reduced to the stability limit; 0: from the CFL number */
  double dt_fixed;
  double cfl;       /* CFL mode: dt = min_I cfl / (|u_I|/hmin_I + 4 nu_I/hmin_I^2) */
  double dt_min, dt_max; /* CFL mode bounds */
  double dt_previous;    /* implicit viscosity, CFL mode: the previous automatic step (0: none yet);
                          * the strategy keeps it (and its restart files) */
} ef_fs_dt_settings;

/* Per-step figures. */
typedef struct {
  int cg_iterations;
  double cg_residual;
  double flux_imbalance;     /* |sum f| / sum |f| when no pressure is fixed, else 0 */
  int n_fixed_pressure;
  double seconds_prepare, seconds_momentum, seconds_assembly, seconds_solve, seconds_correction,
      seconds_total;
  /* Implicit viscosity: CG iterations of the three stage solves (sum and largest), the largest
   * final scaled residual, and the seconds spent in the solves (part of seconds_momentum). */
  int viscous_iterations, viscous_max_stage_iterations;
  double viscous_residual, seconds_viscous;
  /* viscous_projection 1: PCG iterations of the converged projection (0: the single projection). */
  int projection_iterations;
} ef_fs_stats;

typedef struct ef_fs_s ef_fs;

/* Allocate every work array for the mesh of `edges` (borrowed; must outlive the executor). */
int ef_fs_create(const ef_edge_data *edges, const ef_fs_settings *settings, ef_fs **fs);
/* Free; accepts NULL and sets *fs to NULL. */
void ef_fs_destroy(ef_fs **fs);
/* Replace the settings (boundary arrays, viscosity, solver...). */
int ef_fs_set_settings(ef_fs *fs, const ef_fs_settings *settings);
const ef_fs_settings *ef_fs_get_settings(const ef_fs *fs);

/* The time-step rules shared by the host and device executors: ef_fs_dt_check validates the
 * settings; ef_fs_dt_choose turns the cfl = 1 limit `stable` (1e300: no limit) into the step (a
 * fixed step cut to `stable`, setting *reduced; else cfl * stable within [dt_min, dt_max]) and
 * copies `stable` to *dt_stable (dt_stable and reduced may be NULL). */
int ef_fs_dt_check(const ef_fs_dt_settings *s);
void ef_fs_dt_choose(const ef_fs_dt_settings *s, double stable, double *dt, double *dt_stable, int *reduced);
/* EF_ERR_DIVERGED when the stable step (cfl * stable, or stable for a fixed step) is below dt_min. */
int ef_fs_dt_floor_check(const ef_fs_dt_settings *s, double stable);
/* Implicit viscosity in CFL mode: dt = min(dt, fss->viscous_number_max hmin2_over_nu,
 * fss->viscous_dt_growth s->dt_previous) (not below dt_min; with no previous step the last term is
 * the explicit rule at rest, min(s->cfl, EF_FS_CFL_EXPLICIT) hmin2_over_nu / 4), hmin2_over_nu = min_I hmin_I^2/nu_I; nothing
 * for fixed steps or the explicit scheme, and no term for a cap or a growth <= 0.  The caller sets
 * s->dt_previous to the step returned. */
void ef_fs_dt_cap_viscous(const ef_fs_dt_settings *s, const ef_fs_settings *fss, double hmin2_over_nu, double *dt);
/* TAU_TIME_STEP: tau's step bound with viscous_implicit and tau_time_step 0, from the explicit rule's cfl = 1 limit
 * stable_explicit = min_I ef_node_dt(hmin_I, |u_I|, nu_I, 1) (1e300: none): the step ef_fs_dt_choose gives the
 * explicit scheme, with the CFL number min(s->cfl, EF_FS_CFL_EXPLICIT) (a fixed step: min(dt_fixed, stable_explicit);
 * else within [dt_min, dt_max]).  0 (no bound: tau takes the step) for the explicit scheme or tau_time_step 1. */
double ef_fs_dt_tau(const ef_fs_dt_settings *s, const ef_fs_settings *fss, double stable_explicit);

/* Time step for the state `velocity` (3 per node).  dt_stable is the limit with cfl = 1
 * (may be NULL); *reduced (may be NULL) is set to 1 when a fixed step was cut to it (the
 * caller warns once).  With viscous_implicit it also keeps tau's step bound for the next step (ef_fs_dt_tau;
 * TAU_TIME_STEP). */
int ef_fs_compute_dt(ef_fs *fs, const double *velocity, const ef_fs_dt_settings *s, double *dt,
                     double *dt_stable, int *reduced);

/* Advance velocity (3 per node) and kinematic pressure (1 per node) from t to t + dt in
 * place.  reaction (3 per node) and stats may be NULL.  On failure velocity and pressure
 * are unchanged. */
int ef_fs_step(ef_fs *fs, double t, double dt, double *velocity, double *pressure, double *reaction,
               ef_fs_stats *stats);

/* The history of pressure_guess (restarts): levels (0-2) previous input pressures p_{n-1} (prev) and p_{n-2}
 * (prev2, used with 2 levels), their steps dt_{n-1} (dt[0]) and dt_{n-2} (dt[1]), and the pressure the last step
 * returned (last).  get: pointers into the executor (NULL when levels is 0); set copies them (levels 0, or
 * pressure_guess 0, clears). */
typedef struct {
  int levels;
  const double *prev, *prev2, *last;
  double dt[2];
} ef_fs_pressure_history;
int ef_fs_get_pressure_history(const ef_fs *fs, ef_fs_pressure_history *h);
int ef_fs_set_pressure_history(ef_fs *fs, const ef_fs_pressure_history *h);
/* The checks both executors' set_pressure_history make: 0-2 levels, their arrays (last where need_last), positive
 * steps. */
int ef_fs_pressure_history_check(const ef_fs_pressure_history *h, int need_last);

/* ---------------------------------------------------------------------------
 * The phases of ef_fs_step, for tests and for strategies that interleave their own work.
 * They share the executor's internal tau, xi, xp and pressure system. */

/* Step 1: tau, xi, xp from (u_n, p_n); tau with min(dt, the bound of the last ef_fs_compute_dt) (TAU_TIME_STEP). */
int ef_fs_prepare(ef_fs *fs, double dt, const double *u_n, const double *p_n);

/* The row loops of step 1 and of an RK4 stage on rows [0, n), shared by ef_fs_step (n = every node) and the
 * distributed step of fractional_step_mpi.c (n = the owned rows, the ghosts exchanged by the caller): step 1
 * writes tau (with dt, tau's step), xi and xp; an RK4 stage (0-3) writes acc and uout from us with p_n, xi and
 * tau frozen, fixed components taking u_n's values and slip nodes projected. */
void ef_fs_rows_prepare(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, double dt, const double *u_n,
                        const double *p_n, double *tau, double *xi, double *xp);
void ef_fs_rows_rk_stage(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int stage, double dt,
                         const double *u_n, const double *p_n, const double *us, const double *tau, const double *xi,
                         double *acc, double *uout);
/* The row loops of the implicit viscosity's IMEX stages on rows [0, n), shared in the same way (ef_fs_step: every
 * node; fractional_step_mpi.c: the owned rows).  F and V hold the four stage residuals in slices of n3 doubles
 * (3 x the arrays' node count).  ef_fs_rows_imex_residual: F_j and V_j of one state (one slice each);
 * ef_fs_rows_imex_rhs: stage s's right-hand side scaled by 1/(nu_I gamma dt) (dscale = 1/(gamma dt), as and ais
 * row s of the tableau); ef_fs_rows_imex_start: the stage start projected on the slip constraints;
 * ef_fs_rows_imex_final: uh from U_3 and acc = Rbar (the reactions' residual); ef_fs_node_project: node i's
 * constraint projection of the stage CG (fixed components to 0, the slip projection). */
void ef_fs_rows_imex_residual(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, const double *us,
                              const double *p_n, const double *tau, const double *xi, double *F, double *V);
void ef_fs_rows_imex_rhs(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int64_t n3, int s,
                         const double *as, const double *ais, const double *F, const double *V, const double *u_n,
                         double dt, double dscale, double *rhs);
void ef_fs_rows_imex_start(const ef_fs_settings *fss, int dim, int64_t n, double *U);
void ef_fs_rows_imex_final(const ef_edge_data *ed, const ef_fs_settings *fss, int64_t n, int64_t n3, const double *F,
                           const double *V, const double *U, const double *u_n, double dt, double *acc, double *uh);
void ef_fs_node_project(const ef_fs_settings *fss, int dim, int64_t i, double *w);
/* Row i of the stage CG's start (lij: the compact stage operator of ef_row_edge_laplacians on the edge CSR):
 * dg_I = M_II dscale/nu_I + K_II, r_I = P_I (rhs_I - (A x)_I) (x's neighbours current), z_I = r_I / dg_I, and the
 * components of |P_I rhs_I|^2 added to *sb. */
void ef_fs_row_stage_start(const ef_edge_data *ed, const ef_fs_settings *fss, const double *lij, double dscale,
                           int64_t i, const double *rhs, const double *x, double *dg, double *r, double *z, double *sb);
/* Step 2: RK4 (or, with viscous_implicit, the IMEX ARS(3,4,3) stages) from u_n to uh (3 per
 * node) with the BCs; p_new (1 per node) receives p_n with the fixed pressures of t + dt (the warm
 * start of step 3); reaction may be NULL.  The stage solves' figures go to ef_fs_viscous_stats. */
int ef_fs_momentum(ef_fs *fs, double t, double dt, const double *u_n, const double *p_n, double *uh,
                   double *p_new, double *reaction);
/* Step 3: assemble H and f from (uh, p_n, xp, tau) and the fixed values in p_new, and solve
 * into p_new.  stats may be NULL. */
int ef_fs_pressure(ef_fs *fs, double dt, const double *uh, const double *p_n, double *p_new,
                   ef_fs_stats *stats);
/* Step 3 without the solve: only H and f (ef_fs_pressure_system gives them). */
int ef_fs_assemble_pressure(ef_fs *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                            ef_fs_stats *stats);
/* Step 4: u_new = corrected uh with the BCs (fixed components keep uh's values); checks
 * divergence of u_new and p_new. */
int ef_fs_correct(ef_fs *fs, double dt, const double *uh, const double *p_n, const double *p_new,
                  double *u_new);

/* Figures of the last implicit momentum phase (zeros when explicit) into the viscous_* fields. */
void ef_fs_viscous_stats(const ef_fs *fs, ef_fs_stats *stats);

/* The IMEX ARS(3,4,3) tableau (Ascher, Ruuth & Spiteri 1997), stages 0..3: explicit a[4][4],
 * implicit ai[4][4] (diagonal gamma), weights b[4] (shared), abscissae c[4]. */
void ef_fs_imex_tableau(double a[4][4], double ai[4][4], double b[4], double c[4]);

/* Internal arrays (valid until the next call that changes them). */
const double *ef_fs_tau(const ef_fs *fs);            /* n */
const double *ef_fs_convective_projection(const ef_fs *fs); /* 3 n */
const double *ef_fs_pressure_projection(const ef_fs *fs);   /* 3 n */
const ef_csr *ef_fs_pressure_matrix(const ef_fs *fs);       /* H after the last assembly */
const double *ef_fs_pressure_rhs(const ef_fs *fs);          /* f after the last assembly */

/* Bytes the momentum phase streams per step (for bandwidth figures): 4 stages x (edge
 * records + columns + row offsets + the node vectors each stage reads and writes once). */
double ef_fs_momentum_bytes(const ef_fs *fs);

#ifdef __cplusplus
}
#endif
#endif

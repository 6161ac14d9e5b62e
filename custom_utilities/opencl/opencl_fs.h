/* opencl_fs.h -- the device executor of one edge-based fractional step: the OpenCL
 * counterpart of fractional_step.h (same scheme, same boundary conditions, same row
 * functions of edge_physics.h, kernels in custom_kernels/fs_kernels.cl).
 *
 * Residency.  The edge data, the node arrays of the mesh, the boundary-condition arrays,
 * the solution (u, p), every intermediate vector and the pressure matrix live on the
 * device.  The mesh is uploaded once by ef_cl_fs_create; the host uploads the state and
 * the boundary arrays again only when it changed them (ef_cl_fs_set_state,
 * ef_cl_fs_set_bc) and reads results back only when it needs them (ef_cl_fs_read).
 *
 * One step (ef_cl_fs_step), all launches non-blocking on the context's in-order queue:
 *   Step 1: fs_prepare (tau, xi, xp), four fs_rk_stage launches (residual, accumulator,
 *           update, BCs; the last also the reactions and the warm start p_n + fixed values).
 *   Step 2: fs_pressure_system (H values in the CSR the host built once, f, fixed pressures
 *           eliminated symmetrically, non-finite check); without any fixed pressure the
 *           flux imbalance sums, the mean removal (fs_sum_partials, fs_remove_mean);
 *           the pressure solve by the device linear solver the strategy set
 *           (ef_cl_fs_set_solver; warm start p_n).
 *   Step 3: fs_correct (correction, BCs, divergence flag by atomic minimum of the node).
 * Blocking reads inside a step: the solver's own (the device CG's diagonal check and its
 * convergence state every check_every iterations), and one final read of the flags and the
 * null-space sums.  The
 * solution buffers are double-buffered: a failed step leaves u_n and p_n in place.
 *
 * Time-dependent boundary values (settings.eval_fixed): the fixed dofs are kept in a
 * compact list; the host evaluates the callback at t + dt and t + dt/2 (the host executor
 * evaluates at the same times), gathers the fixed entries and uploads the two small
 * arrays non-blocking from pinned memory; a scatter kernel puts the t + dt values into
 * u_n/p_n before step 1 (the host executor gets them from the processes there) and the
 * stage values into the arrays the RK stages read.
 *
 * Implicit viscosity (settings.fs.viscous_implicit; fractional_step.h 2', docs/implicit_viscosity.md): step 1
 * becomes fs_prepare and the IMEX ARS(3,4,3) stages: four fs_imex_residual launches (F and V of the stage
 * states), per stage fs_imex_rhs, the prescribed values of t + c_i dt scattered into U, fs_imex_project and
 * the stage solve, a projected Jacobi CG entirely on the device (fs_visc_*: the CG scalars live in a device
 * state buffer, the host reads it back every viscous_check_every iterations), then fs_imex_final (uh,
 * reactions with the implicit viscous term, the pressure warm start).  The time step follows the
 * convective limit with the viscous cap (ef_fs_dt_cap_viscous); the corrections "viscous",
 * "viscous_unfiltered" and "rotational" as the host executor's (fs_imex_correction_start, a stage-type
 * solve, fs_imex_correct; fs_imex_continuity, fs_imex_filter; fs_imex_rotational).  The projection
 * "converged" (viscous_projection 1) as the host executor's cp_solve: a PCG on the consistent projection
 * r(p) = f(u(p), p) - H p, each residual fs_correct + fs_pressure_system + fs_cp_residual, each
 * preconditioner application a solve of the strategy's pressure solver, the vector updates fs_cp_axpby and
 * the dot products fs_cp_dot (per-group partial sums read back and added on the host).  No node vector
 * goes to the host.
 *
 * Rows are split into blocks when the edge records exceed the device's largest buffer
 * (ef_edge_data_row_blocks); every edge kernel then runs once per block.
 *
 * Profiling: every launch and transfer of a step carries an event; after the step the
 * per-kernel device times go to ef_log events of stage "kernel" (with the bytes each
 * kernel streams) and the phase times to ef_cl_fs_stats.
 */
#ifndef EF_OPENCL_FS_H
#define EF_OPENCL_FS_H

#include <stdint.h>

#include "edge_data.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_strategy.h"
#include "fractional_step.h"
#include "opencl_context.h"
#include "opencl_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  /* Physics and boundary conditions as for the host executor: nu (nu_nodal must be NULL),
   * stabilization, tau_c*, flux_imbalance_tolerance, velocity_bound, fixed_pressure_scale,
   * eval_fixed / eval_fixed_ctx.  The boundary arrays are read by ef_cl_fs_set_bc only
   * (solver is not used: the pressure solver comes from ef_cl_fs_set_solver). */
  ef_fs_settings fs;
  int work_group_bits;      /* edge kernels: 2^bits items per group; 0: automatic (128) */
  int64_t max_block_doubles; /* edge records per buffer; 0: the device's largest buffer */
  /* The edge records go to the device through two pinned staging buffers of this many bytes when they
   * are larger (a write from pageable memory runs at 1-2 GB/s on NVIDIA's OpenCL); 0: 32 MiB. */
  int64_t staging_bytes;
  /* Implicit viscosity (fs.viscous_implicit): the stage solves read their convergence state back every
   * this many CG iterations (>= 1; default 8), as the device pressure CG's check_every. */
  int viscous_check_every;
  /* Implicit viscosity: work-groups of the stage CG's vector kernels (fs_visc_update, fs_visc_direction), each
   * looping over blocks of as many nodes as a work-group has items; 0: automatic (4 a compute
   * unit), more than the blocks: one a block. */
  int64_t stage_cg_groups;
} ef_cl_fs_settings;

/* Defaults: ef_fs_settings_default, automatic work-group size and blocks, viscous_check_every 8. */
void ef_cl_fs_settings_default(ef_cl_fs_settings *s);

/* Per-step figures (seconds from the device's profiling clock unless noted). */
typedef struct {
  int cg_iterations;         /* the pressure solver's iterations */
  double cg_residual;        /* its own relative residual (the device CG: of the scaled system) */
  double flux_imbalance;     /* |sum f| / sum |f| when no pressure is fixed, else 0 */
  int n_fixed_pressure;
  double seconds_upload;     /* boundary values: host evaluation (wall) + transfers */
  double seconds_step1;      /* first step-1 launch start .. last step-1 launch end */
  double seconds_step2;      /* last step-1 end .. first step-3 start (assembly + CG) */
  double seconds_assembly;   /* assembly kernels (and the null-space kernels) */
  double seconds_solve;      /* the pressure solve (wall clock of ef_linear_solver_solve) */
  double seconds_step3;      /* correction and the final flag read */
  double seconds_total;      /* wall clock of ef_cl_fs_step */
  /* Implicit viscosity (ef_fs_stats' fields): CG iterations of the stage solves (and of the viscous
   * correction's), the largest of one solve, the largest final scaled residual, their wall seconds. */
  int viscous_iterations, viscous_max_stage_iterations;
  double viscous_residual, seconds_viscous;
  int projection_iterations; /* viscous_projection 1: PCG iterations of the converged projection */
} ef_cl_fs_stats;

typedef struct ef_cl_fs_s ef_cl_fs;

/* Device bytes the executor needs for this mesh: edge data, node arrays, vectors, the
 * pressure matrix and a pressure solver's share (the device CG's estimate,
 * ef_cl_cg_memory_bytes, the largest of the device solvers'). */
uint64_t ef_cl_fs_memory_bytes(const ef_edge_data *edges);

/* Check the estimate against the device (printed), build the kernels, upload the edge data
 * and the pressure matrix's structure (built here on the host), allocate every vector.
 * ctx and edges are borrowed and must outlive the executor.  The records are read only here:
 * kept ones (ef_edge_data_build) are copied, those of a structure-only build
 * (ef_edge_data_build_structure) are computed into the pinned staging buffers, after which the
 * caller may release the source (ef_edge_data_release_source).  The state starts at zero
 * with no boundary conditions: call ef_cl_fs_set_state and ef_cl_fs_set_bc. */
int ef_cl_fs_create(ef_cl_context *ctx, const ef_edge_data *edges, const ef_cl_fs_settings *settings,
                     ef_cl_fs **out);
/* Release everything; accepts NULL and sets *fs to NULL. */
void ef_cl_fs_destroy(ef_cl_fs **fs);

/* Upload velocity (3 per node) and/or kinematic pressure (1 per node); NULL skips. */
int ef_cl_fs_set_state(ef_cl_fs *fs, const double *velocity, const double *pressure);
/* The history of settings.fs.pressure_guess (fractional_step.h), for restarts: get reads the known levels back into
 * prev and prev2 (n each; blocking) and points *h at them (h->last NULL); set uploads them (levels beyond what the
 * setting uses are dropped).  An upload of the pressure (ef_cl_fs_set_state) forgets the history: set it after. */
int ef_cl_fs_get_pressure_history(ef_cl_fs *fs, double *prev, double *prev2, ef_fs_pressure_history *h);
int ef_cl_fs_set_pressure_history(ef_cl_fs *fs, const ef_fs_pressure_history *h);
/* Upload the boundary arrays of settings (velocity_fixed, pressure_fixed, slip_type,
 * slip_normal, slip_tangent, body_force; NULL = none) and rebuild the list of fixed dofs. */
int ef_cl_fs_set_bc(ef_cl_fs *fs, const ef_fs_settings *settings);
/* The velocity bound of the divergence check from the next step on (> 0). */
void ef_cl_fs_set_velocity_bound(ef_cl_fs *fs, double bound);
/* Read velocity, kinematic pressure and reaction (3 per node, kinematic force as the host
 * executor) back through pinned memory; NULL skips.  Blocking. */
int ef_cl_fs_read(ef_cl_fs *fs, double *velocity, double *pressure, double *reaction);
/* Asynchronous read-back for outputs (the strategy's snapshot hook, ef_model_part.h), in
 * EF_CL_FS_SNAPSHOTS slots so one can be in flight while the next is taken.  begin (the main
 * thread): device-to-device copies of velocity, kinematic pressure and reaction on the main queue,
 * then a non-blocking read into pinned memory on a second queue; the next steps' kernels run
 * meanwhile.  wait (any one thread, once per begin): *host = 7n doubles (3n u, n p, 3n reaction,
 * as ef_cl_fs_read gives them), valid until the slot is begun again. */
#define EF_CL_FS_SNAPSHOTS 2
int ef_cl_fs_snapshot_begin(ef_cl_fs *fs, int slot);
int ef_cl_fs_snapshot_wait(ef_cl_fs *fs, int slot, const double **host);

/* The time step for the current device velocity (ef_fs_compute_dt's rules; a min-reduction
 * on the device and one blocking read). */
int ef_cl_fs_compute_dt(ef_cl_fs *fs, const ef_fs_dt_settings *s, double *dt, double *dt_stable,
                         int *reduced);

/* Assemble a pressure matrix from the current state with time step dt (values for a solver
 * that needs real ones at creation, e.g. the device CG's SpMV tuner). */
int ef_cl_fs_assemble_pressure(ef_cl_fs *fs, double dt);
/* The device pressure matrix (structure fixed at create, values of the last assembly). */
const ef_cl_csr *ef_cl_fs_pressure_matrix(const ef_cl_fs *fs);
/* The solver of the pressure equation (borrowed: it must outlive the executor's steps),
 * created by the caller for ef_cl_fs_pressure_matrix, and its bytes moved per iteration
 * (for the bandwidth figures; 0: unknown).  Each step calls ef_linear_solver_setup after the
 * assembly, then ef_linear_solver_solve. */
void ef_cl_fs_set_solver(ef_cl_fs *fs, ef_linear_solver *solver, double bytes_per_iteration);

/* Advance the device state from t to t + dt (needs a solver: ef_cl_fs_set_solver).  On
 * failure the state is unchanged (the error names the node for divergence, as the host
 * executor's).  stats may be NULL. */
int ef_cl_fs_step(ef_cl_fs *fs, double t, double dt, ef_cl_fs_stats *stats);

/* The last step's pressure system to the host: values as solved and before elimination
 * (recomputed from the last step's tau and dt), rhs, solution, warm start, fixed flags,
 * tolerance, iterations, residual.  Fails with EF_ERR_INTERNAL before the first step. */
int ef_cl_fs_copy_pressure_system(ef_cl_fs *fs, ef_pressure_system *out);

/* ---------------------------------------------------------------------------
 * The phases on their own, for tests: they run on the named device arrays below, read
 * the inputs the step would read and write the outputs it would write (no boundary-value
 * callback), and finish before returning. */
typedef enum {
  EF_CL_FS_VELOCITY = 0, /* u_n (3n) */
  EF_CL_FS_PRESSURE,     /* p_n (n) */
  EF_CL_FS_TAU,          /* n */
  EF_CL_FS_XI,           /* 3n */
  EF_CL_FS_XP,           /* 3n */
  EF_CL_FS_ACC,          /* RK accumulator (3n) */
  EF_CL_FS_STAGE_A,      /* output of stages 0 and 2 (3n) */
  EF_CL_FS_STAGE_B,      /* output of stage 1 (3n) */
  EF_CL_FS_UH,           /* output of stage 3 (3n) */
  EF_CL_FS_REACTION,     /* 3n */
  EF_CL_FS_PNEW,         /* warm start / fixed values / CG solution (n) */
  EF_CL_FS_RHS,          /* f (n) */
  EF_CL_FS_MATRIX,       /* H values (nnz = edges + n) */
  EF_CL_FS_UNEW,         /* corrected velocity (3n) */
  EF_CL_FS_N_ARRAYS
} ef_cl_fs_array;
/* Number of doubles of an array. */
int64_t ef_cl_fs_array_size(const ef_cl_fs *fs, ef_cl_fs_array which);
int ef_cl_fs_write_array(ef_cl_fs *fs, ef_cl_fs_array which, const double *host);
int ef_cl_fs_read_array(ef_cl_fs *fs, ef_cl_fs_array which, double *host);

int ef_cl_fs_prepare(ef_cl_fs *fs, double dt);                 /* u_n, p_n -> tau, xi, xp */
int ef_cl_fs_rk_stage(ef_cl_fs *fs, int stage, double dt);    /* 0: u_n -> A, 1: A -> B, 2: B -> A, 3: A -> UH */
int ef_cl_fs_assemble(ef_cl_fs *fs, double dt);                /* UH, p_n, PNEW, XP, TAU -> MATRIX, RHS */
int ef_cl_fs_correct(ef_cl_fs *fs, double dt);                 /* UH, p_n, PNEW -> UNEW (+ divergence) */

/* The pressure matrix's CSR (host copy of the structure: n + 1 offsets, nnz columns). */
void ef_cl_fs_matrix_structure(const ef_cl_fs *fs, int64_t *n, int64_t *nnz, const int64_t **row_ptr,
                                const int32_t **col);
/* The pressure solver (NULL before ef_cl_fs_set_solver). */
ef_linear_solver *ef_cl_fs_solver(ef_cl_fs *fs);
/* Number of row blocks the edge data was split into. */
int ef_cl_fs_blocks(const ef_cl_fs *fs);
/* Bytes one step streams: the edge kernels (records, columns, offsets, node arrays each
 * read/written once) plus cg_iterations solver iterations (ef_cl_fs_set_solver's figure). */
double ef_cl_fs_bytes_per_step(const ef_cl_fs *fs, int cg_iterations);

#ifdef __cplusplus
}
#endif
#endif

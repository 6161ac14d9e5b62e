/* fractional_step_mpi.h -- the fractional step of fractional_step.h on a rank's piece of a partitioned mesh
 * (docs/mpi.md, issue 15 step 1).
 *
 * The same row functions (custom_kernels/edge_physics.h) and the same order of operations as
 * ef_fs_step with the explicit RK4, on the owned rows only (local 0..n_owned-1; the edge data of the
 * piece has complete owned rows because the piece holds every element around an owned node), with the
 * ghost values received from their owners (ef_halo of ef_partition.h) wherever a step reads neighbour
 * values: the velocity and pressure at the start of the step, tau and both projections after step 1,
 * the stage velocity after each RK stage, the pressure after the solve, the velocity after the
 * correction, and the search direction before each product of the pressure CG.  Reductions over the
 * ranks: the time step's minimum, the fixed-pressure count and flux sums of the pressure system, the
 * CG's dot products, the divergence check; every decision is taken from reduced values, so all ranks
 * take the same branch.
 *
 * The pressure solver is the Jacobi CG of ef_host_cg_solve (same start, same stopping test
 * sqrt(r.D^-1 r) / sqrt(b.D^-1 b) < tolerance, 1-perp for a closed domain) in the Chronopoulos-Gear
 * form: one reduction (r.D^-1 r and (A u).u together) and one halo exchange per iteration.
 *
 * Or a registry linear solver that runs across ranks ("petsc": ef_fs_mpi_pressure_matrix,
 * ef_fs_mpi_set_pressure_solver; fractional_step_mpi_solver.c) solves the owned rows of the same system
 * in a global numbering, then the pressure's ghosts are received as after the built-in CG.
 *
 * The implicit viscosity (viscous_implicit, docs/implicit_viscosity.md): the IMEX ARS(3,4,3) stages of ef_fs_step
 * with the same row loops (ef_fs_rows_imex_*) on the owned rows; the ghosts received for each stage's explicit
 * residual (the stage state after its solve), the start of each stage solve and the CG's u before each operator
 * product; the stage CG is viscous_solve's projected Jacobi CG (same start, operator, slip projection and stopping
 * test) in the Chronopoulos-Gear form, one reduction of three doubles per iteration; the time step's convective
 * minimum, the viscous cap's min h^2/nu and tau's explicit limit in the time step's one reduction.  Its stage
 * figures go to the step's stats as ef_fs_viscous_stats does.
 *
 * Not supported here (the strategy refuses them on several ranks with EF_ERR_UNSUPPORTED): the implicit
 * viscosity's correction other than "lumped", pressure "extrapolated" and projection "converged"; other pressure
 * solvers and preconditioners.  One rank gives ef_fs_step's
 * results to rounding (the sums run in another order), not bit-identically: one rank uses ef_fs_step.
 */
#ifndef EF_FRACTIONAL_STEP_MPI_H
#define EF_FRACTIONAL_STEP_MPI_H

#include "edge_data.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_partition.h"
#include "fractional_step.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_fs_mpi_s ef_fs_mpi;

/* edges: built on the piece (p->n_nodes nodes, local numbering); settings as for ef_fs_create (arrays of
 * p->n_nodes entries, ghosts included); the pressure solve takes rtol and max_it from
 * settings->pressure_rtol / pressure_max_iterations (settings->solver is ignored).  comm and p must
 * outlive the executor.  Fails with EF_ERR_UNSUPPORTED for settings it does not handle. */
int ef_fs_mpi_create(const ef_edge_data *edges, const ef_fs_settings *settings, ef_comm comm, const ef_partition *p,
                     ef_fs_mpi **out);
void ef_fs_mpi_destroy(ef_fs_mpi **fs);
int ef_fs_mpi_set_settings(ef_fs_mpi *fs, const ef_fs_settings *settings);
/* on 1 (the default): the pressure CG's halo exchange of u in flight while the interior rows' products run
 * (the results bit for bit those of 0: exchange, then the product; docs/mpi.md). */
int ef_fs_mpi_set_overlap(ef_fs_mpi *fs, int on);

/* ef_fs_compute_dt over the owned nodes of every rank (collective), with the implicit viscosity's cap and tau's step. */
int ef_fs_mpi_compute_dt(ef_fs_mpi *fs, const double *velocity, const ef_fs_dt_settings *s, double *dt,
                         double *dt_stable, int *reduced);

/* ef_fs_step (RK4, or the IMEX stages with viscous_implicit) on the piece (collective); velocity, pressure (kinematic) and reaction hold
 * every local node and come back with the ghosts current. */
int ef_fs_mpi_step(ef_fs_mpi *fs, double t, double dt, double *velocity, double *pressure, double *reaction,
                   ef_fs_stats *stats);

/* The distributed pressure matrix (collective on the first call: the global row numbers): this rank's owned
 * rows of H, local columns, layout n_owned + n_ghost on comm, global_row; valid while fs lives.  For
 * ef_linear_solver_create of a solver whose table sets distributed. */
int ef_fs_mpi_pressure_matrix(ef_fs_mpi *fs, ef_matrix *A);
/* Solve the pressure with solver (created for ef_fs_mpi_pressure_matrix's matrix, not owned: it must outlive
 * fs or be unset) instead of the built-in Jacobi CG; NULL: the built-in CG again. */
int ef_fs_mpi_set_pressure_solver(ef_fs_mpi *fs, ef_linear_solver *solver);

/* Seconds this rank spent in halo exchanges and reductions so far. */
double ef_fs_mpi_exchange_seconds(const ef_fs_mpi *fs);

#ifdef __cplusplus
}
#endif
#endif

/* opencl_fs_mpi.h -- the device fractional step on a rank's piece (docs/mpi.md): the executor of opencl_fs.h
 * on the owned rows, the ghosts received where the step reads neighbours (the places of fractional_step_mpi.c),
 * the exchanges through pinned host memory (a pack kernel, one read, ef_comm's nonblocking exchange, one write
 * of the contiguous ghost block), reductions over the ranks, and the pressure solved by a device Jacobi CG in
 * the Chronopoulos-Gear form (one reduction of two partial sums per iteration). */
#ifndef EF_OPENCL_FS_MPI_H
#define EF_OPENCL_FS_MPI_H

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_partition.h"
#include "opencl_fs.h"

typedef struct ef_cl_fs_mpi_s ef_cl_fs_mpi;

/* The refusal of the implicit viscosity's sub-options that do not run on several ranks (also the strategy's). */
#define EF_CL_FS_MPI_IMPLICIT_REFUSAL                                                                              \
  "opencl_edge_based on several ranks: viscous_time_integration \"implicit\" runs with "                          \
  "implicit_viscosity.correction \"lumped\", pressure \"frozen\" and projection \"single\" only (docs/mpi.md)"

/* On fs (created on the piece's edge data, the owned rows first): rtol and max_it of the pressure CG; overlap 1:
 * the CG product's halo in flight while the interior rows are multiplied (docs/mpi.md), 0: the exchange first.
 * The implicit viscosity runs with its default sub-options only (EF_CL_FS_MPI_IMPLICIT_REFUSAL): the IMEX stages on
 * the owned rows, each stage system by a device Jacobi CG across the ranks.  comm and p must outlive the result. */
int ef_cl_fs_mpi_create(ef_cl_fs *fs, ef_comm comm, const ef_partition *p, double rtol, int max_it, int overlap,
                        ef_cl_fs_mpi **out);
void ef_cl_fs_mpi_destroy(ef_cl_fs_mpi **fsm);
/* The stable time step over the ranks (ef_cl_fs_compute_dt's rules on the global minimum). */
int ef_cl_fs_mpi_compute_dt(ef_cl_fs_mpi *fsm, const ef_fs_dt_settings *s, double *dt, double *dt_stable,
                            int *reduced);
/* One step t -> t + dt; the ghosts of velocity, pressure and reaction current after it. */
int ef_cl_fs_mpi_step(ef_cl_fs_mpi *fsm, double t, double dt, ef_cl_fs_stats *stats);
/* Seconds in halo exchanges and reductions so far. */
double ef_cl_fs_mpi_exchange_seconds(const ef_cl_fs_mpi *fsm);
/* iterations > 0: every pressure solve runs exactly that many CG iterations, whatever the residual (a fixed
 * amount of work for scaling benchmarks, device.mpi_fixed_cg_iterations); 0: the tolerance decides. */
void ef_cl_fs_mpi_set_fixed_iterations(ef_cl_fs_mpi *fsm, int iterations);
/* The pressure solve by the caller instead of the device Jacobi CG (psolve NULL: that CG again): b and x the
 * piece's device vectors (x the warm start, its ghosts current; the solver writes x's owned rows), null_space 1
 * when no rank fixes a pressure; *iterations, *residual as the CG's; *setup_seconds the part of the call that
 * set the solver up (the hierarchy's build at the first step, its refresh after), which the step's solve time
 * leaves out as one process's does.  x's ghosts are received after it (its exchanges and reductions are not in
 * ef_cl_fs_mpi_exchange_seconds). */
typedef int (*ef_cl_fs_mpi_pressure_fn)(void *ctx, cl_mem b, cl_mem x, int null_space, int *iterations,
                                        double *residual, double *setup_seconds);
void ef_cl_fs_mpi_set_pressure_solver(ef_cl_fs_mpi *fsm, ef_cl_fs_mpi_pressure_fn psolve, void *ctx);
/* 1 when the CG product overlaps its halo (then this rank's interior and boundary rows), else 0 (and 0 rows). */
int ef_cl_fs_mpi_overlap(const ef_cl_fs_mpi *fsm, int64_t *interior_rows, int64_t *boundary_rows);

#endif

/* ef_comm_mpi.h -- the MPI implementation of the communicator seam (ef_comm.h).
 *
 * libedgeflow_mpi (built with EDGEFLOW_MPI) links MPI; the core does not.  A program run under
 * mpirun calls ef_comm_mpi_init first and ef_comm_mpi_finalize last, and hands the communicator
 * to the core and the plugins, which see only ef_comm.  This header does not include mpi.h.
 *
 * The communicator is a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, so an MPI failure
 * comes back as EF_ERR_COMM with MPI's message; ef_comm_abort calls MPI_Abort on MPI_COMM_WORLD.
 */
#ifndef EF_COMM_MPI_H
#define EF_COMM_MPI_H

#include "edgeflow/ef_comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MPI_Init (unless MPI is initialized already) and the world communicator. */
int ef_comm_mpi_init(int *argc, char ***argv, ef_comm *world);
/* Free the communicator and MPI_Finalize (when ef_comm_mpi_init initialized MPI). */
int ef_comm_mpi_finalize(ef_comm *world);

#ifdef __cplusplus
}
#endif
#endif

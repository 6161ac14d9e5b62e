/* ef_comm.h -- the communicator seam: what the core and the plugins need from MPI, behind a table.
 *
 * An ef_comm is a group of processes (ranks 0..size-1).  The core defines the operations and a
 * serial communicator (one process: reductions return their input, there are no peers); an MPI
 * implementation (libedgeflow_mpi, application/mpi/ef_comm_mpi.h, built with EDGEFLOW_MPI)
 * registers its table through ef_comm_create.  Callers use the functions below and never
 * #ifdef: a NULL ef_comm is the serial one (as in ef_layout of ef_linear_solver.h).
 *
 * Failure policy: every function returns EF_SUCCESS or an error code with its message, like the
 * rest of the library.  A collective operation must be called by every rank; a rank that fails
 * before a collective cannot tell the others, so a program that gets an error on any rank calls
 * ef_comm_abort, which prints that rank's message and stops every rank (MPI_Abort): no rank
 * waits forever for one that has given up.
 */
#ifndef EF_COMM_H
#define EF_COMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Also declared (identically) by ef_linear_solver.h. */
typedef struct ef_comm_s *ef_comm;

typedef enum { EF_COMM_SUM = 0, EF_COMM_MIN = 1, EF_COMM_MAX = 2 } ef_comm_op;

/* The operations an implementation provides; context is its own state. */
typedef struct {
  const char *name; /* "serial", "mpi" */
  /* values[0..n) := op over ranks of values[0..n), in place, on every rank. */
  int (*allreduce)(void *context, double *values, int n, ef_comm_op op);
  int (*barrier)(void *context);
  /* Stop every rank with exit status code; does not return. */
  void (*abort)(void *context, int code);
  /* Nonblocking point-to-point exchange with n_peers ranks: receive recv_count[k] doubles
   * from peers[k] into recv[k] and send send_count[k] doubles of send[k] to peers[k], with
   * message tag `tag`.  begin posts everything and returns at once with *pending; end waits
   * for all of it (the buffers must not be touched in between).  Every peer must post the
   * matching exchange with the same tag. */
  int (*exchange_begin)(void *context, int n_peers, const int *peers, double *const *send,
                        const int64_t *send_count, double *const *recv, const int64_t *recv_count, int tag,
                        void **pending);
  int (*exchange_end)(void *context, void *pending);
  /* Free context (the communicator, not the library); may be NULL. */
  void (*destroy)(void *context);
} ef_comm_ops;

/* A communicator over an implementation's context; ops must outlive it. */
int ef_comm_create(const ef_comm_ops *ops, void *context, int rank, int size, ef_comm *comm);
/* Free (calls ops->destroy); accepts NULL, the serial communicator, and sets *comm to NULL. */
void ef_comm_destroy(ef_comm *comm);

/* The one-process communicator (static; destroying it does nothing). */
ef_comm ef_comm_serial(void);

/* Rank and size; NULL: 0 and 1. */
int ef_comm_rank(ef_comm comm);
int ef_comm_size(ef_comm comm);
/* "serial", "mpi", ... */
const char *ef_comm_name(ef_comm comm);

/* In-place reduction of n doubles over all ranks (collective). */
int ef_comm_allreduce(ef_comm comm, double *values, int n, ef_comm_op op);
/* Wait until every rank is here (collective). */
int ef_comm_barrier(ef_comm comm);

/* Print "edgeflow: rank R of P: <message>" on stderr and stop every rank with exit status
 * code (1 when code is not in 1..255).  Only programs call it (tools, the CLI): library
 * functions return errors.  Does not return. */
void ef_comm_abort(ef_comm comm, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;

/* The number of processes a launcher started this one among (mpirun / mpiexec: Open MPI's
 * OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI_SIZE), from the environment; 0 when no launcher did. */
int ef_comm_launched_size(void);

/* The MPI world communicator of this process, collective on the first call (MPI_Init): from
 * libedgeflow_mpi, loaded by name as the plugins are, so the program and the Python workflow link
 * the core only; MPI_Finalize runs at exit.  Later calls return the same communicator (do not
 * destroy it).  EF_ERR_UNSUPPORTED in a build without MPI (EDGEFLOW_MPI off), EF_ERR_NOT_FOUND when
 * the library cannot be loaded. */
int ef_comm_world(ef_comm *world);
/* 1 in builds with MPI (ef_comm_world can work), 0 otherwise. */
int ef_comm_have_mpi(void);

/* Point-to-point exchange (see ef_comm_ops); on the serial communicator only n_peers = 0. */
int ef_comm_exchange_begin(ef_comm comm, int n_peers, const int *peers, double *const *send,
                           const int64_t *send_count, double *const *recv, const int64_t *recv_count, int tag,
                           void **pending);
int ef_comm_exchange_end(ef_comm comm, void *pending);

#ifdef __cplusplus
}
#endif
#endif

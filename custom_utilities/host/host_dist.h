/* host_dist.h -- the rows of a host vector spread over the ranks of a communicator, as the
 * distributed host solvers see them (ef_linear_solver.h's layout): n_owned owned rows, then
 * n_ghost ghost rows received from their owners; every rank's owned rows are one block of the
 * global numbering, the blocks in rank order.
 *
 * Built from the ghosts' global numbers alone (collective, once per pattern): the owners from
 * the blocks' offsets (one reduction of the owned counts), the peers made symmetric through one
 * reduction of a ranks x ranks table (a rank that needs nothing from a peer still answers its
 * requests), then two exchanges with the peers: how many rows each asks for, and which.  The
 * exchange that follows sends the owned values asked for and writes the ghosts; nothing else is
 * assumed of the ghosts' order.  A NULL ef_host_dist is one process: the exchange does nothing
 * and the sums return their input, so serial callers run the same code with the same bits. */
#ifndef EF_HOST_DIST_H
#define EF_HOST_DIST_H

#include <stdint.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_linear_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_host_dist_s ef_host_dist;

/* Collective over comm: rows n_owned + n_ghost, ghost_global[k] the global row of local row
 * n_owned + k (owned by another rank).  tag: the exchanges' message tag. */
int ef_host_dist_create(ef_comm comm, int64_t n_owned, int64_t n_ghost, const int64_t *ghost_global, int tag,
                        ef_host_dist **out);
/* The rows of a distributed host matrix (global_row, layout.comm); *out NULL on one process. */
int ef_host_dist_from_matrix(const ef_matrix *A, int tag, ef_host_dist **out);
void ef_host_dist_destroy(ef_host_dist **d);

/* x's ghost rows := their owners' values (collective; d NULL: nothing). */
int ef_host_dist_exchange(ef_host_dist *d, double *x);
/* values[0..n) summed over the ranks in place (collective; d NULL: nothing). */
int ef_host_dist_sum(const ef_host_dist *d, double *values, int n);

/* Global rows (sum of the owned counts) and this rank's first global row; NULL: one process
 * (n_global is then the caller's n). */
int64_t ef_host_dist_global_rows(const ef_host_dist *d);
int64_t ef_host_dist_first_row(const ef_host_dist *d);
/* Ghost rows (0 for NULL). */
int64_t ef_host_dist_ghost_rows(const ef_host_dist *d);
ef_comm ef_host_dist_comm(const ef_host_dist *d);
/* The exchange's plan, for callers that move the values themselves (the device halo of
 * opencl/opencl_amg_mpi.c): the peers (ascending), per peer how many rows are sent and received,
 * the owned rows sent (send_idx, peer by peer, send_count[k] each) and the local rows received
 * (recv_idx, peer by peer), and the message tag.  The arrays belong to d. */
void ef_host_dist_plan(const ef_host_dist *d, int *n_peers, const int **peers, const int64_t **send_count,
                       const int64_t **send_idx, const int64_t **recv_count, const int64_t **recv_idx, int *tag);

#ifdef __cplusplus
}
#endif
#endif

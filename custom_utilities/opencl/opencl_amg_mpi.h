/* opencl_amg_mpi.h -- the device AMG and its (flexible) CG across ranks (docs/mpi.md, "AMG across ranks"):
 * the hierarchy of ef_amg_create_ranks (aggregates inside each rank, coarse rows numbered globally, a halo
 * per level) uploaded once, its values refreshed on the device from the fine matrix every set-up (each rank
 * its own rows), the cycle of amg.cl on the owned rows with a device halo exchange of the level's vector
 * before each product, sweep, residual and prolongation that reads a ghost, the K-cycle's and the outer
 * (F)CG's inner products reduced over the ranks (the products that are ready together in one reduction),
 * and the coarsest level gathered on the host as the host path does (every rank inverts the same dense
 * matrix; the right-hand side gathered by one reduction, each rank its owned and ghost rows of the
 * solution written back).  With settings.gather_rows > 0 a whole coarse sub-hierarchy is gathered instead: from
 * the first level (after the fine one, before the coarsest) of at most that many rows over all ranks, its pattern,
 * values and aggregate maps gathered on every rank, cycled there by a one-process device AMG (opencl_amg.c) built
 * from those maps, level g's K-cycle run on the gathered rows without a message.
 *
 * A device halo (ef_cl_halo): the rows a host halo (host_dist.h) sends packed by a kernel, read into
 * pinned host memory, ef_comm's nonblocking exchange, the received rows written back (one write when
 * they are one block, as every level's ghosts are; else through a scatter kernel). */
#ifndef EF_OPENCL_AMG_MPI_H
#define EF_OPENCL_AMG_MPI_H

#include "amg.h"
#include "host_dist.h"
#include "opencl_cg.h"
#include "opencl_pcg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_cl_halo_s ef_cl_halo;
/* The device twin of the host halo d (NULL d: one process, *out NULL and every exchange does nothing). */
int ef_cl_halo_create(ef_cl_context *ctx, const ef_host_dist *d, ef_cl_halo **out);
void ef_cl_halo_destroy(ef_cl_halo **h);
/* x's ghost rows := their owners' values (collective over the halo's ranks; blocking). */
int ef_cl_halo_exchange(ef_cl_halo *h, cl_mem x);
/* Seconds in halo exchanges so far (pack, copies and the exchange). */
double ef_cl_halo_seconds(const ef_cl_halo *h);

typedef struct ef_cl_amg_mpi_s ef_cl_amg_mpi;
/* The hierarchy of the device matrix A (its n_owned rows, columns owned then ghosts, which stays alive with its
 * pattern) over ranks (global rows, comm): host_A its pattern on the host (values NULL: downloaded once);
 * maps: NULL or the owned rows' aggregate maps of a restart (ef_amg_create_ranks).  Collective. */
int ef_cl_amg_mpi_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A,
                         const ef_amg_ranks *ranks, const ef_amg_settings *settings, int n_maps,
                         int32_t *const *maps, ef_cl_amg_mpi **out);
void ef_cl_amg_mpi_destroy(ef_cl_amg_mpi **a);
/* A's device values changed: coarse values and l1 diagonals on the device, the coarsest gathered and inverted
 * on the host (collective). */
int ef_cl_amg_mpi_refresh(ef_cl_amg_mpi *a);
/* z = M^-1 r (r: the owned rows; z: owned and ghost rows of the fine level, the ghosts used as scratch).
 * Collective. */
int ef_cl_amg_mpi_apply(ef_cl_amg_mpi *a, cl_mem r, cl_mem z);
const ef_amg *ef_cl_amg_mpi_host(const ef_cl_amg_mpi *a);
/* Seconds in halo exchanges and reductions so far. */
double ef_cl_amg_mpi_exchange_seconds(const ef_cl_amg_mpi *a);

typedef struct ef_cl_pcg_mpi_s ef_cl_pcg_mpi;
/* The (flexible) preconditioned CG of opencl_pcg.h across ranks on A (n_owned rows, the halo d of its ghost
 * columns): the same iterate and stopping test (||r||^2 <= rtol^2 ||b||^2 by the recurrence residual, b
 * taken as given; null_space: z's mean over all ranks' rows removed), three reductions an iteration
 * (r.z with r_old.z and the null space's sums; p.Ap; r.r).  n_global: the rows over all ranks. */
int ef_cl_pcg_mpi_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_host_dist *d, int64_t n_ghost,
                         int64_t n_global, const ef_cl_pcg_settings *s, ef_cl_precond_fn precond, void *pctx,
                         ef_cl_pcg_mpi **out);
void ef_cl_pcg_mpi_destroy(ef_cl_pcg_mpi **c);
/* b, x: owned and ghost rows (x's ghosts exchanged first).  Fails with EF_ERR_SOLVER on a breakdown. */
int ef_cl_pcg_mpi_solve(ef_cl_pcg_mpi *c, cl_mem b, cl_mem x, ef_cl_pcg_result *res);
double ef_cl_pcg_mpi_exchange_seconds(const ef_cl_pcg_mpi *c);

#ifdef __cplusplus
}
#endif
#endif

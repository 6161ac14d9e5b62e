/* amg.h -- aggregation algebraic multigrid for the pressure matrix: the backend-neutral
 * hierarchy (built once per mesh on the host) and the host refresh and apply.
 *
 * Set-up (ef_amg_create, once per matrix pattern):
 *   - aggregation by pairwise matching on the strong NEGATIVE couplings (a_ij < 0 and
 *     -a_ij >= strength * max_k(-a_ik), coarse_strength on the coarse levels); each pass pairs every row with its strongest
 *     unmatched neighbour (ties: smallest index), in row order, on the Galerkin matrix of the
 *     previous pass; `passes` passes per level give aggregates of at most 2^passes rows
 *     (Notay's double pairwise aggregation with passes = 2; 3 suits tetrahedra).  Rows without
 *     any off-diagonal entry (fixed-pressure identity rows) are left out of the coarse levels;
 *   - piecewise-constant prolongation; per level the aggregate map, the member lists and the
 *     coarse CSR pattern of P^T A P;
 *   - levels are added until a level has at most coarse_enough rows (or max_levels, or the
 *     coarsening stalls); that coarsest level is solved with a dense inverse of A_c
 *     (+ (mean diagonal / n_c) 1 1^T when A has the constant null space), recomputed with the
 *     values.
 * Refresh (ef_amg_refresh_host, or its device twin in opencl_amg.c; every time the fine
 * values change, pattern fixed): coarse values by segmented sums of fine entries, l1
 * diagonals, dense coarsest inverse.
 * Cycle (the same on host and device): at level l, with r the level's right-hand side,
 *     x = omega D^-1 r, then pre_sweeps - 1 further sweeps      (l1-Jacobi, D = diag(sum |a_ij|))
 *     r_c = P^T (r - A x)
 *     x_c = coarse correction (below)
 *     x = x + alpha P x_c, then pre_sweeps sweeps              (post-smoothing adjoint to pre)
 * Coarse correction: the coarsest level's dense inverse; otherwise one V-cycle ("V"), or at
 * levels below kcycle_levels the K-cycle: two steps of flexible CG on A_{l+1} preconditioned
 * by the cycle of level l+1 (Notay and Vassilevski 2008), needing flexible CG outside.  The
 * V-cycle is symmetric (each sweep is self-adjoint in the Euclidean product, post sweeps mirror
 * pre sweeps) and positive definite for 0 < omega < 2, alpha > 0, so plain CG may use it.
 *
 * Several ranks (ef_amg_create_ranks, docs/mpi.md "AMG across ranks"): the same set-up on each rank's
 * owned rows (aggregates never cross ranks), coarse rows numbered globally, ghost columns on every level
 * with a halo (host/host_dist.h); the cycle's loops as above with a halo exchange before each product
 * and one reduction per inner product; the coarsest level (coarse_enough counts the rows over all
 * ranks) gathered on every rank and inverted there.
 *
 * Memory (ef_amg_memory): the hierarchy's bytes (coarse matrices, aggregate maps, member
 * lists, l1 diagonals, dense coarsest inverse) against the fine matrix's bytes (4|8 (n+1) +
 * 12 nnz); work vectors are reported apart.  The host refresh adds 4 bytes per entry of every
 * level but the coarsest (cpos: each entry's place in the coarse values), which this does not count. */
#ifndef EF_AMG_H
#define EF_AMG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { EF_AMG_CYCLE_V = 0, EF_AMG_CYCLE_K = 1 } ef_amg_cycle;

typedef struct {
  int max_levels;        /* levels, the fine one included (>= 1) */
  int64_t coarse_enough; /* stop coarsening at this many rows (dense coarsest solve) */
  int passes;            /* pairwise matching passes per level: aggregates of <= 2^passes rows */
  double strength;       /* strong coupling: -a_ij >= strength * max_k(-a_ik), fine level */
  double coarse_strength; /* the same on the coarse levels (0: every negative coupling) */
  double omega;          /* l1-Jacobi damping (0 < omega < 2) */
  double alpha;          /* coarse-correction scaling (1: none; > 1: over-correction) */
  int sweeps;            /* pre = post smoothing sweeps (>= 1) */
  ef_amg_cycle cycle;
  int kcycle_levels;     /* K-cycle: Krylov-accelerated coarse corrections at levels 1..this */
  int64_t small_rows;    /* device: levels of at most this many rows run in one work-group, one
                            launch per refresh and per visit (0: never); the host ignores it */
  int small_group;       /* device: items of those one-group kernels, rounded up to a power of
                            two and down to the device's limit (0: the
                            device's, 256; tests under oclgrind use
                            fewer); the host ignores it */
  int refresh_direct;    /* device: places of a coarse row that the refresh reads from a byte per
                            fine entry (1..254; 0: 254); it searches the row for the others (tests
                            use a few); the host ignores it */
  int64_t gather_rows;   /* device across ranks (opencl_amg_mpi.c): the first coarse level (not the
                            coarsest) of at most this many rows over all ranks is gathered on every rank
                            and cycled by a one-process device AMG (0: only the coarsest is gathered);
                            the host and one process ignore it */
} ef_amg_settings;

/* Defaults: 10 levels, coarse_enough 128, 3 passes, strength 0.25 (coarse levels 0), omega 4/3, alpha 1,
 * 1 sweep, K-cycle on levels 1..2, small_rows 1024 (see docs/parameters.md). */
void ef_amg_settings_default(ef_amg_settings *s);

/* A square CSR (sorted columns, diagonal stored) seen by the set-up. */
typedef struct {
  int64_t n, nnz;
  const int64_t *row_ptr;
  const int32_t *col;
  const double *val;
  int constant_null_space;
} ef_amg_matrix;

/* Several ranks: the matrix holds the n owned rows, its columns the owned and n_ghost ghost
 * rows, global_row the global number of every local row (as ef_linear_solver.h's ef_matrix). */
typedef struct {
  int64_t n_ghost;
  const int64_t *global_row;
  struct ef_comm_s *comm;
} ef_amg_ranks;

/* One level of the hierarchy.  Level 0's matrix is the caller's (row_ptr64/col/val point to
 * it); coarse levels own int32 offsets, columns and values. */
typedef struct {
  int64_t n, nnz;           /* rows (owned rows on several ranks) and entries */
  int64_t n_ghost;          /* several ranks: ghost columns n..n+n_ghost-1 (0 on one process) */
  int64_t n_global;         /* rows over all ranks (n on one process) */
  struct ef_host_dist_s *halo; /* several ranks: the level's halo exchange (NULL on one process) */
  int64_t *ghost_global;    /* several ranks: global row of each ghost column */
  const int64_t *row_ptr64; /* level 0 only */
  int32_t *row_ptr;         /* coarse levels (level 0: NULL) */
  const int32_t *col;
  const double *val;
  int32_t *own_col;         /* what the level owns (coarse levels) */
  double *own_val;
  double *dinv;             /* n: l1 inverse diagonal */
  /* transfer to level + 1 (absent on the coarsest level) */
  int32_t *agg;     /* n (+ n_ghost: the ghosts' aggregates as level + 1's columns): row of level + 1, or -1 */
  int32_t *mem_ptr; /* n_{l+1} + 1 */
  int32_t *mem;     /* members, ordered by aggregate then row */
  int32_t *cpos;    /* nnz: host refresh only, built at its first call: where entry j of a member row
                       adds into level + 1's values (-1: a column outside every aggregate) */
  /* work vectors of the host apply: rhs, solution, temporary, K-cycle vectors (q: the second
   * right-hand side r - a1 A v1) */
  double *r, *x, *t, *v1, *v2, *w1, *w2, *q;
} ef_amg_level;

typedef struct ef_amg_s {
  ef_amg_settings s;
  int n_levels;
  ef_amg_level lev[32];
  int constant_null_space;
  int64_t nc;         /* rows of the coarsest level (over all ranks) */
  double *coarse_inv; /* nc x nc, symmetric */
  double setup_seconds, refresh_seconds;
  /* Several ranks: the coarsest level gathered on every rank (global numbering): its CSR, the
   * values summed from each rank's rows, and the gathered right-hand side; the first error of a
   * halo exchange or reduction inside a cycle. */
  int distributed;
  int32_t *g_rp, *g_col;
  double *g_val, *g_r;
  int err;
} ef_amg;

/* Build the hierarchy of A (pattern and current values); A's arrays must stay alive and keep
 * their pattern.  The coarse values are computed (ef_amg_refresh_host). */
int ef_amg_create(const ef_amg_settings *s, const ef_amg_matrix *A, ef_amg **out);
/* The same with the aggregate maps given (maps[l]: level l's map, n_maps levels; from a restart
 * file): the hierarchy of the run that saved them, whatever the values are now. */
int ef_amg_create_from_maps(const ef_amg_settings *s, const ef_amg_matrix *A, int n_maps, int32_t *const *maps,
                            ef_amg **out);
/* Several ranks (collective over ranks->comm; docs/mpi.md): aggregates inside each rank's owned
 * rows (couplings to ghosts left out), coarse rows numbered globally (each rank's aggregates one
 * block, the blocks in rank order), the coarse ghosts by one exchange of the ghosts' aggregate
 * numbers, coarsening until the global rows are at most coarse_enough; that level is gathered on
 * every rank and inverted there (the same dense inverse).  maps: NULL, or the owned rows' maps of
 * ef_amg_create_from_maps.  A communicator of one rank gives ef_amg_create's hierarchy. */
int ef_amg_create_ranks(const ef_amg_settings *s, const ef_amg_matrix *A, const ef_amg_ranks *ranks, int n_maps,
                        int32_t *const *maps, ef_amg **out);
/* Free; accepts NULL and *h == NULL, sets *h to NULL. */
void ef_amg_destroy(ef_amg **h);

/* The fine values changed (same pattern; fine_val replaces the pointer given at creation, NULL
 * keeps it): recompute coarse values, l1 diagonals and the coarsest inverse (OpenMP). */
int ef_amg_refresh_host(ef_amg *h, const double *fine_val);
/* The same, coarse values recomputed only when coarse_values (0: l1 diagonals and the
 * coarsest inverse from the coarse values in place, as the set-up leaves them). */
int ef_amg_refresh_host_part(ef_amg *h, const double *fine_val, int coarse_values);

/* Several ranks (h->distributed): the coarsest level's values (Lc->val, this rank's owned rows) gathered on
 * every rank by one reduction and the same dense inverse computed everywhere (the end of the host refresh;
 * the device one, opencl_amg_mpi.c, reads its coarsest values into Lc->val first); and the gathered coarsest
 * solve: rc (the coarsest level's owned rows) gathered by one reduction of nc doubles, xc = W rc on the owned
 * and ghost rows.  Collective. */
int ef_amg_coarsest_ranks_refresh(ef_amg *h);
int ef_amg_coarsest_ranks_solve(ef_amg *h, const double *rc, double *xc);

/* z = M^-1 r: one cycle on the host (OpenMP, deterministic for any thread count). */
int ef_amg_apply_host(ef_amg *h, const double *r, double *z);

/* Bytes of the hierarchy (coarse matrices, maps, diagonals, dense inverse), of the fine
 * matrix (int32 offsets when nnz < 2^31) and of the work vectors; operator complexity
 * (sum of nnz over levels / fine nnz).  Any pointer may be NULL. */
void ef_amg_memory(const ef_amg *h, double *hierarchy_bytes, double *fine_bytes, double *work_bytes,
                   double *operator_complexity);

/* Dense inverse of the nc x nc SPD matrix W in place (Gauss-Jordan, no pivoting), then
 * symmetrised; the host twin of the device kernel amg_dense_invert.  Fails on a pivot <= 0. */
int ef_amg_dense_invert(int64_t nc, double *W);

/* Fill the dense W = A_c (+ beta 1 1^T, beta = mean diagonal / nc, when null_space). */
void ef_amg_dense_fill(int64_t nc, const int32_t *rp, const int32_t *col, const double *val,
                       int null_space, double *W);

#ifdef __cplusplus
}
#endif
#endif

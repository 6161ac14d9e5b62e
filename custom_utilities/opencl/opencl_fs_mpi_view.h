/* opencl_fs_mpi_view.h -- private seam between the device executor (opencl_fs.c) and its distributed step
 * (opencl_fs_mpi.c): the executor's buffers and enqueue steps, nothing else includes it. */
#ifndef EF_OPENCL_FS_MPI_VIEW_H
#define EF_OPENCL_FS_MPI_VIEW_H

#include "opencl_fs.h"

typedef struct {
  ef_cl_context *ctx;
  const ef_cl_fs_settings *s;
  int64_t n;
  size_t wgs;
  cl_mem *u, *p; /* [2]: the double-buffered state, current one *cur */
  int *cur;
  cl_mem tau, xi, xp, ua, ub, uh, f, reaction, fixu, fixp, partials, state, flags, hmin;
  const ef_cl_csr *H;
  const uint8_t *h_pfix;
  size_t partial_bytes;
  int64_t assembly_groups;
  int dt_groups;
  const int64_t *fixed_dofs; /* their count */
  cl_mem *fixed_vals;        /* [3] */
  cl_kernel k_sum, k_mean, k_dt_partial, k_dt_final, k_dt_convective;
  /* The implicit viscosity (NULL without it): the stage state and right-hand side, the stage CG's r, u (the
   * preconditioned residual), p, w = A u (3 a node) and diagonal; fs_visc_apply_dots' groups over all rows; the
   * viscous cap's min h^2/nu over the piece; tau's step bound of the next step (TAU_TIME_STEP, set by the caller). */
  cl_mem imex_u, imex_rhs, cg_r, cg_z, cg_p, cg_q, vdiag;
  int64_t visc_groups;
  double hmin2_over_nu;
  double *tau_dt;
} ef_cl_fs_mpi_view_s;

/* Fill v and restrict the edge kernels to the owned rows 0..n_owned-1 (for good: the executor then serves the
 * distributed step only). */
int ef_cl_fs_mpi_view(ef_cl_fs *fs, int64_t n_owned, ef_cl_fs_mpi_view_s *v);
int ef_cl_fs_mpi_fixed_values(ef_cl_fs *fs, double t, int slot);
int ef_cl_fs_mpi_scatter(ef_cl_fs *fs, cl_mem vals, cl_mem u, cl_mem p);
int ef_cl_fs_mpi_prepare(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn);
int ef_cl_fs_mpi_stage(ef_cl_fs *fs, int stage, double dt, cl_mem un, cl_mem pn, cl_mem us, cl_mem out, int use_fixed,
                       cl_mem pnew);
/* Flags reset and the assembly of H and f with the partial flux sums only (no mean removal). */
int ef_cl_fs_mpi_assembly(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pnew);
/* Flags reset and the correction. */
int ef_cl_fs_mpi_correct(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pnew, cl_mem unew);
/* One of the executor's kernels (its arguments set) over global items, profiled. */
int ef_cl_fs_mpi_launch(ef_cl_fs *fs, cl_kernel k, size_t global);
/* The step done: profile collected, the state buffers swapped, the last step's figures kept. */
int ef_cl_fs_mpi_finish(ef_cl_fs *fs, double dt, int iterations, double residual);
void ef_cl_fs_mpi_collect(ef_cl_fs *fs);
/* The implicit viscosity: F and V of us into stage slice `stage`; stage st's right-hand side, prescribed values and
 * slip projection of the start (every local node); the end of the stages (uh, Rbar, the reactions, pnew). */
int ef_cl_fs_mpi_imex_residual(ef_cl_fs *fs, int stage, cl_mem us, cl_mem pn);
int ef_cl_fs_mpi_imex_stage_start(ef_cl_fs *fs, int stage, double dt, cl_mem un, int fixed_values);
int ef_cl_fs_mpi_imex_final(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn, cl_mem pnew, int fixed_values);
/* The stage CG's start on the owned rows (fs_visc_init: r = P (rhs - A x), u = p = r / diag; partials |P rhs|^2,
 * r.u, r.r; 3 a group into part, *groups: their count) and product (fs_visc_apply_dots: w = P A u; partials r.u,
 * w.u, r.r, 3 a group into part from group *groups on, *groups: the next group) on the owned rows (rows NULL) or
 * on the rows of the list rows (ascending), block b's at [block_first[b], block_first[b + 1]). */
int ef_cl_fs_mpi_visc_start(ef_cl_fs *fs, double dscale, cl_mem rhs, cl_mem x, cl_mem r, cl_mem u, cl_mem p,
                            cl_mem diag, cl_mem part, int64_t *groups);
int ef_cl_fs_mpi_visc_product(ef_cl_fs *fs, double dscale, cl_mem rows, const int64_t *block_first, cl_mem r,
                              cl_mem u, cl_mem w, cl_mem part, int64_t *groups);
/* The row blocks' first rows (row_begin[0 .. blocks], the last n_owned after ef_cl_fs_mpi_view); returns blocks. */
int ef_cl_fs_mpi_block_rows(const ef_cl_fs *fs, int64_t *row_begin);

#endif

/* edge_kernels.cl -- the phases of one fractional step as OpenCL kernels, one work-item
 * per row (node), calling the same row functions as the OpenMP executor
 * (edge_physics.h), so both compute the same arithmetic.
 *
 * Build options: -D EF_DIM=2 or 3 (default 3).
 *
 * Row blocks: every kernel handles rows [row_begin, row_begin + get_global_size(0)) of a
 * block whose edge records and columns start at edge `edge_base` (row_ptr holds global
 * offsets; ev and col point at the block's buffers).  One block: row_begin = 0,
 * edge_base = 0.  Node arrays are global (3 doubles per node for vectors).
 * Optional arrays (body force, fixity, slip) may be passed as NULL buffers.
 */
#include "edge_physics.h"

#ifndef EF_DIM
#define EF_DIM 3
#endif

#define EF_ROW_ARGS \
  const long row_begin, const long n_rows, const long edge_base, __global const long *row_ptr, \
      __global const int *col, __global const double *ev

/* Local row view: edge count, column and record pointers of row i. */
#define EF_ROW(i) (int)(row_ptr[(i) + 1] - row_ptr[i]), col + (row_ptr[i] - edge_base), \
                  ev + (row_ptr[i] - edge_base) * EF_EDGE_STRIDE(EF_DIM)

/* Step 1: tau_I, xi_I = M^-1 A_I(u; u), xp_I = M^-1 sum nabla_IJ (p_J - p_I). */
__kernel void ef_fs_prepare(EF_ROW_ARGS, __global const double *u, __global const double *p,
                            __global const double *inv_mass, __global const double *h, const double nu,
                            const double dt, const double c1, const double c2, const double c3,
                            const int stabilization, __global double *tau, __global double *xi,
                            __global double *xp) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows) return;
  double a[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
  ef_row_projections(EF_DIM, i, EF_ROW(i), u, p, inv_mass[i], a, g);
  for (int c = 0; c < 3; ++c) {
    xi[3 * i + c] = a[c];
    xp[3 * i + c] = g[c];
  }
  tau[i] = stabilization ? ef_node_tau(h[i], ef_node_norm(EF_DIM, i, u), nu, dt, c1, c2, c3) : 0.0;
}

/* Step 2, one RK4 stage (0..3): R = R(us); acc = R (stage 0) or acc + w R (w = 2, 2, 1);
 * uout = u_n + a M^-1 R (a = dt/2, dt/2, dt) or u_n + dt/6 M^-1 acc (stage 3); fixed
 * components take u_n's values, slip nodes are projected. */
__kernel void ef_fs_rk_stage(EF_ROW_ARGS, const int stage, const double dt, const double nu,
                             __global const double *mass, __global const double *inv_mass,
                             __global const double *tau, __global const double *xi,
                             __global const double *body_force, __global const double *u_n,
                             __global const double *p_n, __global const double *us, __global double *acc,
                             __global double *uout, __global const uchar *velocity_fixed,
                             __global const uchar *slip_type, __global const double *slip_normal,
                             __global const double *slip_tangent) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows) return;
  double b[3] = {0.0, 0.0, 0.0}, R[3] = {0.0, 0.0, 0.0};
  if (body_force)
    for (int c = 0; c < EF_DIM; ++c) b[c] = body_force[3 * i + c];
  ef_row_momentum_residual(EF_DIM, i, EF_ROW(i), us, p_n, xi, mass[i], b, tau[i], nu, R);
  const double a = stage == 0 || stage == 1 ? 0.5 * dt : stage == 2 ? dt : dt / 6.0;
  const double w = stage == 0 || stage == 3 ? 1.0 : 2.0;
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0}, nrm[3] = {0.0, 0.0, 0.0}, tng[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < EF_DIM; ++c) {
    const double ac = stage == 0 ? R[c] : acc[3 * i + c] + w * R[c];
    acc[3 * i + c] = ac;
    uref[c] = u_n[3 * i + c];
    u[c] = uref[c] + a * inv_mass[i] * (stage == 3 ? ac : R[c]);
  }
  uchar fixed[3] = {0, 0, 0};
  if (velocity_fixed)
    for (int c = 0; c < 3; ++c) fixed[c] = velocity_fixed[3 * i + c];
  const int slip = slip_type ? slip_type[i] : EF_SLIP_NONE;
  if (slip != EF_SLIP_NONE)
    for (int c = 0; c < 3; ++c) {
      nrm[c] = slip_normal[3 * i + c];
      if (slip_tangent) tng[c] = slip_tangent[3 * i + c];
    }
  ef_node_apply_bc(EF_DIM, fixed, slip, nrm, tng, uref, u);
  for (int c = 0; c < 3; ++c) uout[3 * i + c] = u[c];
}

/* Step 3 assembly: the H row (row_ptr[i] + i .. : diagonal inserted, same layout as the
 * host CSR) and f_I, fixed pressures eliminated symmetrically. */
__kernel void ef_fs_pressure_system(EF_ROW_ARGS, const double cc, __global const double *tau,
                                    __global const double *uh, __global const double *p_n,
                                    __global const double *p_fixed_values, __global const double *xp,
                                    __global const uchar *pressure_fixed, __global double *h_val,
                                    __global double *f) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows) return;
  f[i] = ef_row_pressure_system(EF_DIM, i, EF_ROW(i), tau, cc, uh, p_n, p_fixed_values, xp, pressure_fixed,
                                pressure_fixed ? 1 : 0, h_val + row_ptr[i] + i);
}

/* Step 4: u = uh - c M^-1 sum nabla_IJ (dp_J - dp_I) with the boundary conditions. */
__kernel void ef_fs_correct(EF_ROW_ARGS, const double cc, __global const double *inv_mass,
                            __global const double *uh, __global const double *p_n, __global const double *p_new,
                            __global double *u_new, __global const uchar *velocity_fixed,
                            __global const uchar *slip_type, __global const double *slip_normal,
                            __global const double *slip_tangent) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows) return;
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0}, nrm[3] = {0.0, 0.0, 0.0}, tng[3] = {0.0, 0.0, 0.0};
  ef_row_correction(EF_DIM, i, EF_ROW(i), p_new, p_n, inv_mass[i], cc, uh, u);
  for (int c = 0; c < EF_DIM; ++c) uref[c] = uh[3 * i + c];
  uchar fixed[3] = {0, 0, 0};
  if (velocity_fixed)
    for (int c = 0; c < 3; ++c) fixed[c] = velocity_fixed[3 * i + c];
  const int slip = slip_type ? slip_type[i] : EF_SLIP_NONE;
  if (slip != EF_SLIP_NONE)
    for (int c = 0; c < 3; ++c) {
      nrm[c] = slip_normal[3 * i + c];
      if (slip_tangent) tng[c] = slip_tangent[3 * i + c];
    }
  ef_node_apply_bc(EF_DIM, fixed, slip, nrm, tng, uref, u);
  for (int c = 0; c < 3; ++c) u_new[3 * i + c] = u[c];
}

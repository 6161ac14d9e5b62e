/* fs_kernels.cl -- the whole edge-based fractional step on the device (opencl_fs.c), one
 * work-item per row (node) for every edge loop, calling the row functions of
 * edge_physics.h that the OpenMP executor calls, in the same order, so both compute the
 * same arithmetic (the device compiler may still contract a*b+c into fma).
 *
 * Build options:
 *   -D EF_DIM=2|3   dimension (default 3)
 *   -D FS_WGS=W     work-group size of every kernel (a power of two; the reductions use
 *                   local arrays of W doubles and are launched with exactly W items)
 *   -D FS_VISC_LANES=L  work-items per row of the stage CG's operator (fs_visc_apply; a power of
 *                   two dividing W, default 4): neighbouring items read neighbouring entries of a
 *                   row, so the row's columns and L_IJ are read in whole memory segments
 *
 * Row blocks: an edge kernel handles rows [row_begin, row_begin + n_rows) whose edge
 * records and columns start at global edge offset edge_base (row_ptr holds global offsets;
 * col and ev are the block's buffers).  One block: row_begin = 0, edge_base = 0.
 *
 * Fusion: tau and both projections share one pass (fs_prepare); an RK stage is residual,
 * accumulator, update and boundary conditions in one pass, the last stage also writing the
 * reactions and the warm start of the pressure solve (fs_rk_stage); the pressure row, its
 * right-hand side, the non-finite check and the null-space partial sums share one pass
 * (fs_pressure_system); correction, boundary conditions and the divergence check share
 * one pass (fs_correct).
 *
 * Aliasing: no kernel writes an array through one argument that it reads through another
 * (the RK stages and the CG alternate their buffers), so every pointer is restrict, which
 * lets the compiler use the read-only data path.
 *
 * Determinism: no floating-point atomics.  Partial sums and minima are formed in a fixed
 * tree inside each work-group and added in group order by a single work-group (the stage
 * CG's: by every work-group of the next kernel, each in that same order), so a result
 * never depends on scheduling.  The only atomics are integer minima of node
 * indices (first bad node), which are exact.
 */
#include "edge_physics.h"

#ifndef EF_DIM
#define EF_DIM 3
#endif
#ifndef FS_WGS
#define FS_WGS 128
#endif
#ifndef FS_VISC_LANES
#define FS_VISC_LANES 4
#endif

#define FS_ROW_ARGS                                                                                     \
  const long row_begin, const long n_rows, const long edge_base, __global const long *restrict row_ptr, \
      __global const int *restrict col, __global const double *restrict ev

/* Edge count, column pointer and record pointer of row i inside its block. */
#define FS_ROW(i)                                                       \
  (int)(row_ptr[(i) + 1] - row_ptr[i]), col + (row_ptr[i] - edge_base), \
      ev + (row_ptr[i] - edge_base) * EF_EDGE_STRIDE(EF_DIM)

#define FS_KERNEL __kernel __attribute__((reqd_work_group_size(FS_WGS, 1, 1)))

/* The boundary conditions of node i on its new velocity u: fixed components take uref,
 * a slip node without a fixed component is projected (ef_node_apply_bc). */
EF_INLINE void fs_node_bc(const long i, __global const uchar *vfix, __global const uchar *slip_type,
                          __global const double *slip_normal, __global const double *slip_tangent, const double *uref,
                          double *u) {
  uchar fixed[3];
  double nrm[3] = {0.0, 0.0, 0.0}, tng[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < 3; ++c)
    fixed[c] = vfix[3 * i + c];
  const int slip = slip_type[i];
  if (slip != EF_SLIP_NONE)
    for (int c = 0; c < 3; ++c) {
      nrm[c] = slip_normal[3 * i + c];
      tng[c] = slip_tangent[3 * i + c];
    }
  ef_node_apply_bc(EF_DIM, fixed, slip, nrm, tng, uref, u);
}

/* Sum of v over the work-group in a fixed tree order; every item gets the total. */
EF_INLINE double fs_group_sum(double v, __local double *scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = FS_WGS >> 1; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

/* Minimum of v over the work-group (`b < a` keeps a, as the host's `if (d < m)`). */
EF_INLINE double fs_group_min(double v, __local double *scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = FS_WGS >> 1; s > 0; s >>= 1) {
    if (lid < s && scratch[lid + s] < scratch[lid])
      scratch[lid] = scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double m = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return m;
}

/* Step 1: tau_I = 1/(c1/dt + c2 nu/h^2 + c3 |u_I|/h) (0 without stabilisation),
 * xi_I = M_II^-1 sum (u_I.nabla_IJ)(u_J - u_I), xp_I = M_II^-1 sum nabla_IJ (p_J - p_I) (eq. 48). */
FS_KERNEL void fs_prepare(FS_ROW_ARGS, __global const double *restrict u, __global const double *restrict p,
                          __global const double *restrict inv_mass, __global const double *restrict h,
                          const double nu, const double dt, const double c1, const double c2, const double c3,
                          const int stabilization, __global double *restrict tau, __global double *restrict xi,
                          __global double *restrict xp) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  double a[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
  ef_row_projections(EF_DIM, i, FS_ROW(i), u, p, inv_mass[i], a, g);
  for (int c = 0; c < 3; ++c) {
    xi[3 * i + c] = a[c];
    xp[3 * i + c] = g[c];
  }
  tau[i] = stabilization ? ef_node_tau(h[i], ef_node_norm(EF_DIM, i, u), nu, dt, c1, c2, c3) : 0.0;
}

/* One classical RK4 stage (0..3) of M du/dt = R(u) with p_n, xi, tau frozen:
 * R = R(us) (ef_row_momentum_residual); acc = R (stage 0) or acc + w R (w = 2, 2, 1);
 * uout = u_n + a M^-1 R (a = dt/2, dt/2, dt) or u_n + dt/6 M^-1 acc (stage 3); then the
 * boundary conditions, the fixed components taking u_n's values or, with
 * use_fixed_values, the prescribed values of the stage time in fixu.  Stage 3 also writes
 * reaction = acc/6 - M (uh - u_n)/dt on fixed components (0 elsewhere) and pnew = p_n with
 * the prescribed pressures of t + dt (fixp) on fixed nodes: the warm start of step 2. */
FS_KERNEL void fs_rk_stage(FS_ROW_ARGS, const int stage, const double dt, const double inv_dt, const double nu,
                           __global const double *restrict mass, __global const double *restrict inv_mass,
                           __global const double *restrict tau, __global const double *restrict xi,
                           __global const double *restrict body_force, __global const double *restrict u_n,
                           __global const double *restrict p_n, __global const double *restrict us,
                           __global double *restrict acc, __global double *restrict uout,
                           __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                           __global const double *restrict slip_normal, __global const double *restrict slip_tangent,
                           const int use_fixed_values, __global const double *restrict fixu,
                           __global const double *restrict fixp, __global const uchar *restrict pfix,
                           __global double *restrict reaction, __global double *restrict pnew) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  double b[3] = {0.0, 0.0, 0.0}, R[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < EF_DIM; ++c)
    b[c] = body_force[3 * i + c];
  ef_row_momentum_residual(EF_DIM, i, FS_ROW(i), us, p_n, xi, mass[i], b, tau[i], nu, R);
  if (pfix[i] && !(vfix[3 * i] || vfix[3 * i + 1] || vfix[3 * i + 2]))
    ef_row_open_boundary_traction(EF_DIM, i, FS_ROW(i), p_n, R);
  const double a = stage == 0 || stage == 1 ? 0.5 * dt : stage == 2 ? dt : dt / 6.0;
  const double w = stage == 0 || stage == 3 ? 1.0 : 2.0;
  const double im = inv_mass[i];
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0}, accp[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < EF_DIM; ++c) {
    const double ac = stage == 0 ? R[c] : acc[3 * i + c] + w * R[c];
    acc[3 * i + c] = ac;
    accp[c] = ac;
    uref[c] = u_n[3 * i + c];
    u[c] = uref[c] + a * im * (stage == 3 ? ac : R[c]);
  }
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, uref, u);
  /* As the host executor, which lets the boundary-value callback overwrite the stage's
   * fixed components after the stage (a node with a fixed component is never projected). */
  if (use_fixed_values)
    for (int c = 0; c < 3; ++c)
      if (vfix[3 * i + c])
        u[c] = fixu[3 * i + c];
  for (int c = 0; c < 3; ++c)
    uout[3 * i + c] = u[c];
  if (stage == 3) {
    const double m = mass[i];
    for (int c = 0; c < 3; ++c) {
      const long q = 3 * i + c;
      reaction[q] = vfix[q] ? accp[c] / 6.0 - m * (u[c] - u_n[q]) * inv_dt : 0.0;
    }
    pnew[i] = use_fixed_values && pfix[i] ? fixp[i] : p_n[i];
  }
}

/* Step 2 assembly: row i of H (diagonal inserted, the host CSR's layout at row_ptr[i] + i)
 * and f_I with the fixed pressures (pf) eliminated symmetrically (ef_row_pressure_system).
 * The first row with a non-finite f_I goes to flags[1] (atomic minimum); with want_sums,
 * each work-group writes the sums of f and |f| over its free rows to
 * partials[2 (group_base + group)], the null-space check's partials. */
FS_KERNEL void fs_pressure_system(FS_ROW_ARGS, const double cc, __global const double *restrict tau,
                                  __global const double *restrict uh, __global const double *restrict p_n,
                                  __global const double *restrict pf, __global const double *restrict xp,
                                  __global const uchar *restrict pfix, const int has_fixed,
                                  __global double *restrict hval, __global double *restrict f,
                                  __global int *restrict flags, const int want_sums, const long group_base,
                                  __global double *restrict partials) {
  __local double scratch[FS_WGS];
  const long i = row_begin + get_global_id(0);
  double sf = 0.0, sa = 0.0;
  if (i < row_begin + n_rows) {
    const double fi = ef_row_pressure_system(EF_DIM, i, FS_ROW(i), tau, cc, uh, p_n, pf, xp, pfix, has_fixed,
                                             hval + row_ptr[i] + i);
    f[i] = fi;
    if (!isfinite(fi))
      atomic_min(&flags[1], (int)i);
    if (!(has_fixed && pfix[i])) {
      sf = fi;
      sa = fabs(fi);
    }
  }
  if (want_sums) {
    const double tf = fs_group_sum(sf, scratch);
    const double ta = fs_group_sum(sa, scratch);
    if (get_local_id(0) == 0) {
      partials[2 * (group_base + get_group_id(0))] = tf;
      partials[2 * (group_base + get_group_id(0)) + 1] = ta;
    }
  }
}

/* One work-group: state[0] = sum f, state[1] = sum |f| over the count partial pairs, in a
 * fixed order; state[2] = the mean sum f / n (removed by fs_remove_mean). */
FS_KERNEL void fs_sum_partials(const long count, __global const double *restrict partials, const long n,
                               __global double *restrict state) {
  __local double scratch[FS_WGS];
  double sf = 0.0, sa = 0.0;
  for (long k = get_local_id(0); k < count; k += FS_WGS) {
    sf += partials[2 * k];
    sa += partials[2 * k + 1];
  }
  sf = fs_group_sum(sf, scratch);
  sa = fs_group_sum(sa, scratch);
  if (get_local_id(0) == 0) {
    state[0] = sf;
    state[1] = sa;
    state[2] = sf / (double)n;
  }
}

/* f_I -= mean: the null-space component of f removed, so the singular system (no fixed
 * pressure) is consistent. */
FS_KERNEL void fs_remove_mean(const long n, __global double *restrict f, __global const double *restrict state) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  f[i] -= state[2];
}

/* Step 3: u_I = uh_I - c M_II^-1 sum nabla_IJ (dp_J - dp_I), dp = p_{n+1} - p_n, then the
 * boundary conditions (fixed components keep uh's values).  A node with |u|^2 > bound2, a
 * NaN, or a non-finite pressure goes to flags[0] (atomic minimum of the node index). */
FS_KERNEL void fs_correct(FS_ROW_ARGS, const double cc, __global const double *restrict inv_mass,
                          __global const double *restrict uh, __global const double *restrict p_n,
                          __global const double *restrict p_new, __global double *restrict u_new,
                          __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                          __global const double *restrict slip_normal, __global const double *restrict slip_tangent,
                          const double bound2, __global int *restrict flags) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
  ef_row_correction(EF_DIM, i, FS_ROW(i), p_new, p_n, inv_mass[i], cc, uh, u);
  for (int c = 0; c < EF_DIM; ++c)
    uref[c] = uh[3 * i + c];
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, uref, u);
  double u2 = 0.0;
  for (int c = 0; c < 3; ++c) {
    u_new[3 * i + c] = u[c];
    u2 += u[c] * u[c];
  }
  /* !(u2 <= bound2) also catches NaN. */
  if (!(u2 <= bound2) || !isfinite(p_new[i]))
    atomic_min(&flags[0], (int)i);
}

/* Time step, first stage: each work-group of a fixed grid writes the minimum over its
 * strided nodes of the local limit dt_I = 1 / (|u_I|/hmin_I + 4 nu/hmin_I^2) (cfl = 1). */
FS_KERNEL void fs_dt_partial(const long n, __global const double *restrict hmin, __global const double *restrict u,
                             const double nu, __global double *restrict partials) {
  __local double scratch[FS_WGS];
  double m = 1.0e300;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double d = ef_node_dt(hmin[i], ef_node_norm(EF_DIM, i, u), nu, 1.0);
    if (d < m)
      m = d;
  }
  m = fs_group_min(m, scratch);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = m;
}

/* Time step, second stage (one work-group): state[3] = min of the count partials. */
FS_KERNEL void fs_dt_final(const long count, __global const double *restrict partials,
                           __global double *restrict state) {
  __local double scratch[FS_WGS];
  double m = 1.0e300;
  for (long k = get_local_id(0); k < count; k += FS_WGS)
    if (partials[k] < m)
      m = partials[k];
  m = fs_group_min(m, scratch);
  if (get_local_id(0) == 0)
    state[3] = m;
}

/* Prescribed values into place: dof d < n3 is velocity component d, else the pressure of
 * node d - n3. */
FS_KERNEL void fs_scatter_fixed(const int count, __global const int *restrict dofs,
                                __global const double *restrict values, const int n3, __global double *restrict u,
                                __global double *restrict p) {
  const int k = get_global_id(0);
  if (k >= count)
    return;
  const int d = dofs[k];
  if (d < n3)
    u[d] = values[k];
  else
    p[d - n3] = values[k];
}

/* The current values of the fixed dofs (the inverse of fs_scatter_fixed). */
FS_KERNEL void fs_gather_fixed(const int count, __global const int *restrict dofs, const int n3,
                               __global const double *restrict u, __global const double *restrict p,
                               __global double *restrict values) {
  const int k = get_global_id(0);
  if (k >= count)
    return;
  const int d = dofs[k];
  values[k] = d < n3 ? u[d] : p[d - n3];
}

/* ---------------------------------------------------------------------------
 * Implicit viscosity: the IMEX ARS(3,4,3) stages (fractional_step.h, 2'; docs/implicit_viscosity.md), the
 * projected Jacobi CG of the stage systems, and the velocity corrections of implicit_viscosity.correction.
 * Node vectors of the stages: F and V hold the four stage residuals, stage j at offset 3 n j. */

/* Row i's edge count, columns and records (as FS_ROW, for the functions that take them apart). */
#define FS_ROW_NE(i) (int)(row_ptr[(i) + 1] - row_ptr[i])
#define FS_ROW_EV(i) (ev + (row_ptr[i] - edge_base) * EF_EDGE_STRIDE(EF_DIM))
/* Edge count, columns and compact stage operator of row i: L_IJ, one double per edge in the block's `lij`
 * buffer (laid out as the columns), for the implicit stage operator's row. */
#define FS_ROW_LIJ(i) \
  (int)(row_ptr[(i) + 1] - row_ptr[i]), col + (row_ptr[i] - edge_base), lij + (row_ptr[i] - edge_base)

/* The constraint projection of the stage solves on w (private, 3): fixed components 0, slip projected. */
EF_INLINE void fs_node_project(const long i, __global const uchar *vfix, __global const uchar *slip_type,
                               __global const double *slip_normal, __global const double *slip_tangent, double *w) {
  const double zero[3] = {0.0, 0.0, 0.0};
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, zero, w);
}

/* F and V of ef_row_imex_residual at the state us into stage slice `off` (doubles) of F and V, with the
 * open-boundary traction in F as the explicit stage has it. */
FS_KERNEL void fs_imex_residual(FS_ROW_ARGS, const double nu, __global const double *restrict mass,
                                __global const double *restrict tau, __global const double *restrict xi,
                                __global const double *restrict body_force, __global const double *restrict us,
                                __global const double *restrict p_n, __global const uchar *restrict vfix,
                                __global const uchar *restrict pfix, const long off, __global double *restrict F,
                                __global double *restrict V) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  double b[3] = {0.0, 0.0, 0.0}, f[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < EF_DIM; ++c)
    b[c] = body_force[3 * i + c];
  ef_row_imex_residual(EF_DIM, i, FS_ROW(i), us, p_n, xi, mass[i], b, tau[i], nu, f, v);
  if (pfix[i] && !(vfix[3 * i] || vfix[3 * i + 1] || vfix[3 * i + 2]))
    ef_row_open_boundary_traction(EF_DIM, i, FS_ROW(i), p_n, f);
  for (int c = 0; c < 3; ++c) {
    F[off + 3 * i + c] = f[c];
    V[off + 3 * i + c] = v[c];
  }
}

/* Stage s's scaled right-hand side (ef_dof_imex_rhs), w = 1/(nu gamma dt); a0..a2, ai0..ai2: row s of the
 * explicit and implicit tableaux. */
FS_KERNEL void fs_imex_rhs(const long n, const int s, const double a0, const double a1, const double a2,
                           const double ai0, const double ai1, const double ai2, const double dt, const double w,
                           __global const double *restrict mass, __global const double *restrict u_n,
                           __global const double *restrict F, __global const double *restrict V,
                           __global double *restrict rhs) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  const double as[3] = {a0, a1, a2}, ais[3] = {ai0, ai1, ai2};
  for (int c = 0; c < 3; ++c) {
    const long k = 3 * i + c;
    rhs[k] = ef_dof_imex_rhs(s, as, ais, F, V, 3 * n, k, mass[i], u_n[k], dt, w);
  }
}

/* The stage's start: slip nodes without a fixed component projected (fixed components keep their
 * values, the prescribed ones of the stage time). */
FS_KERNEL void fs_imex_project(const long n, __global double *restrict u, __global const uchar *restrict vfix,
                               __global const uchar *restrict slip_type, __global const double *restrict slip_normal,
                               __global const double *restrict slip_tangent) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  double w[3], ref[3];
  for (int c = 0; c < 3; ++c)
    w[c] = ref[c] = u[3 * i + c];
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, ref, w);
  for (int c = 0; c < 3; ++c)
    u[3 * i + c] = w[c];
}

/* End of the stages (ef_dof_imex_final): uh = U_3 + dt M^-1 sum (b_j - a_3j) F_j, acc = Rbar, the boundary
 * conditions with u_n's values (or, with use_fixed_values, the prescribed values of t + dt, which U_3
 * carries), reaction = Rbar - M (uh - u_n)/dt on fixed components, pnew = p_n with the prescribed
 * pressures of t + dt (fixp): the warm start of the pressure solve. */
FS_KERNEL void fs_imex_final(const long n, const double b0, const double b1, const double b2, const double b3,
                             const double a30, const double a31, const double a32, const double a33, const double dt,
                             const double inv_dt, __global const double *restrict mass,
                             __global const double *restrict inv_mass, __global const double *restrict u_n,
                             __global const double *restrict p_n, __global const double *restrict U,
                             __global const double *restrict F, __global const double *restrict V,
                             __global double *restrict acc, __global double *restrict uh,
                             __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                             __global const double *restrict slip_normal, __global const double *restrict slip_tangent,
                             const int use_fixed_values, __global const double *restrict fixp,
                             __global const uchar *restrict pfix, __global double *restrict reaction,
                             __global double *restrict pnew) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  const double b[4] = {b0, b1, b2, b3}, a3[4] = {a30, a31, a32, a33};
  const double im = inv_mass[i];
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0}, rb[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < 3; ++c) {
    const long k = 3 * i + c;
    const double v = ef_dof_imex_final(b, a3, F, V, 3 * n, k, U[k], im, dt, &rb[c]);
    acc[k] = rb[c];
    uref[c] = u_n[k];
    u[c] = c < EF_DIM ? v : 0.0;
  }
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, uref, u);
  if (use_fixed_values)
    for (int c = 0; c < 3; ++c)
      if (vfix[3 * i + c])
        u[c] = U[3 * i + c];
  const double m = mass[i];
  for (int c = 0; c < 3; ++c) {
    const long q = 3 * i + c;
    uh[q] = u[c];
    reaction[q] = vfix[q] ? rb[c] - m * (u[c] - u_n[q]) * inv_dt : 0.0;
  }
  pnew[i] = use_fixed_values && pfix[i] ? fixp[i] : p_n[i];
}

/* The stage solve's CG state (FS_CG_SIZE doubles of a state buffer: fs_visc_reduce writes the start's, then every
 * iteration fs_visc_update reads one buffer and writes the other, fs_visc_direction the reverse). */
#define FS_CG_SIZE 10
#define FS_CG_BNORM 0
#define FS_CG_TARGET 1
#define FS_CG_RZ 2
#define FS_CG_RNORM 3
#define FS_CG_PQ 4
#define FS_CG_ALPHA 5
#define FS_CG_BETA 6
#define FS_CG_IT 7
#define FS_CG_DONE 8
#define FS_CG_BREAKDOWN 9

/* The compact stage operator of the rows of a block: L_IJ per directed edge, laid out as the columns
 * (ef_row_edge_laplacians), and the stiffness diagonal K_II (ef_row_stiffness_diagonal) of the Jacobi
 * preconditioner, which depends on the mesh only (the set-up of the implicit option). */
FS_KERNEL void fs_stage_operator(FS_ROW_ARGS, __global double *restrict lij, __global double *restrict kdiag) {
  const long i = row_begin + get_global_id(0);
  (void)col;
  if (i < row_begin + n_rows) {
    ef_row_edge_laplacians(EF_DIM, FS_ROW_NE(i), FS_ROW_EV(i), lij + (row_ptr[i] - edge_base));
    kdiag[i] = ef_row_stiffness_diagonal(EF_DIM, FS_ROW_NE(i), FS_ROW_EV(i));
  }
}

/* Projected Jacobi CG for P (D + K) P x = P rhs, D_I = M_II dscale/nu, start: r = P (rhs - A x),
 * z = r/diag, p = z, diag = D_I + K_II (K_II from fs_stage_operator); per work-group the sums of |P rhs|^2,
 * r.z and r.r into partials[3 (group_base + group) + 0..2]. */
FS_KERNEL void fs_visc_init(FS_ROW_ARGS, __global const double *restrict lij, const double dscale, const double nu,
                            __global const double *restrict mass, __global const double *restrict kdiag,
                            __global const double *restrict x, __global const double *restrict rhs,
                            __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                            __global const double *restrict slip_normal, __global const double *restrict slip_tangent,
                            __global double *restrict r, __global double *restrict z, __global double *restrict p,
                            __global double *restrict diag, const long group_base, __global double *restrict partials) {
  __local double scratch[FS_WGS];
  const long i = row_begin + get_global_id(0);
  double sb = 0.0, srz = 0.0, srr = 0.0;
  (void)ev; /* the compact lij and kdiag instead of the records */
  if (i < row_begin + n_rows) {
    const double d = mass[i] * dscale / nu;
    double y[3] = {0.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0};
    ef_row_stage_operator(EF_DIM, i, FS_ROW_LIJ(i), d, x, y);
    const double dg = d + kdiag[i];
    diag[i] = dg;
    for (int c = 0; c < EF_DIM; ++c) {
      w[c] = rhs[3 * i + c];
      y[c] = w[c] - y[c];
    }
    fs_node_project(i, vfix, slip_type, slip_normal, slip_tangent, w);
    fs_node_project(i, vfix, slip_type, slip_normal, slip_tangent, y);
    for (int c = 0; c < 3; ++c) {
      const double zc = y[c] / dg;
      r[3 * i + c] = y[c];
      z[3 * i + c] = zc;
      p[3 * i + c] = zc;
      sb += w[c] * w[c];
      srz += y[c] * zc;
      srr += y[c] * y[c];
    }
  }
  sb = fs_group_sum(sb, scratch);
  srz = fs_group_sum(srz, scratch);
  srr = fs_group_sum(srr, scratch);
  if (get_local_id(0) == 0) {
    const long g = 3 * (group_base + get_group_id(0));
    partials[g] = sb;
    partials[g + 1] = srz;
    partials[g + 2] = srr;
  }
}

/* The stage operator's row i, FS_VISC_LANES work-items a row (every item of the group calls it: it has a
 * barrier): each item sums every FS_VISC_LANES-th entry of the row (ef_row_stage_laplacian_part), the row's
 * first item adds the others' sums in lane order, the diagonal d_I x_I and the constraint projection into y
 * and returns 1; the others (and items without a row, row = 0) return 0. */
EF_INLINE int fs_visc_row(const long i, const int row, __global const long *restrict row_ptr, const long edge_base,
                          __global const int *restrict col, __global const double *restrict lij, const double dscale,
                          const double nu, __global const double *restrict mass, __global const double *restrict x,
                          __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                          __global const double *restrict slip_normal, __global const double *restrict slip_tangent,
                          __local double *lanes, double *y) {
  const int lid = get_local_id(0), lane = lid % FS_VISC_LANES;
  for (int c = 0; c < 3; ++c)
    y[c] = 0.0;
  if (row) {
    const long e0 = row_ptr[i] - edge_base;
    ef_row_stage_laplacian_part(EF_DIM, i, lane, FS_VISC_LANES, (int)(row_ptr[i + 1] - row_ptr[i]), col + e0,
                                lij + e0, x, y);
  }
  for (int c = 0; c < 3; ++c)
    lanes[3 * lid + c] = y[c];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!row || lane != 0)
    return 0;
  for (int l = 1; l < FS_VISC_LANES; ++l)
    for (int c = 0; c < 3; ++c)
      y[c] += lanes[3 * (lid + l) + c];
  const double d = mass[i] * dscale / nu;
  for (int c = 0; c < EF_DIM; ++c)
    y[c] += d * x[3 * i + c];
  fs_node_project(i, vfix, slip_type, slip_normal, slip_tangent, y);
  return 1;
}

/* q = P A p, FS_VISC_LANES work-items a row (the first adds the others' partial sums of the row, in lane
 * order); per work-group the sum of p.q into partials[group_base + group].  Once the solve is done (the
 * iterations up to the next read-back), no edge pass: q and the sums are not used any more. */
FS_KERNEL void fs_visc_apply(FS_ROW_ARGS, __global const double *restrict lij, const double dscale, const double nu,
                             __global const double *restrict mass,
                             __global const double *restrict p, __global const uchar *restrict vfix,
                             __global const uchar *restrict slip_type, __global const double *restrict slip_normal,
                             __global const double *restrict slip_tangent, __global const double *restrict cgs,
                             __global double *restrict q, const long group_base, __global double *restrict partials) {
  __local double scratch[FS_WGS];
  __local double lanes[3 * FS_WGS];
  const long i = row_begin + get_global_id(0) / FS_VISC_LANES;
  const int row = i < row_begin + n_rows && cgs[FS_CG_DONE] == 0.0;
  double y[3], spq = 0.0;
  (void)ev; /* the compact lij instead of the records */
  if (fs_visc_row(i, row, row_ptr, edge_base, col, lij, dscale, nu, mass, p, vfix, slip_type, slip_normal,
                  slip_tangent, lanes, y))
    for (int c = 0; c < 3; ++c) {
      q[3 * i + c] = y[c];
      spq += p[3 * i + c] * y[c];
    }
  spq = fs_group_sum(spq, scratch);
  if (get_local_id(0) == 0)
    partials[group_base + get_group_id(0)] = spq;
}

/* Entry c of `count` partials of `width` sums (partials[width k + c]) added in a fixed order: each item adds
 * every FS_WGS-th in k order, then the group's tree (fs_group_sum).  Every item gets the total, and every
 * work-group of a launch the same bits. */
EF_INLINE double fs_partials_sum(const long count, const int width, const int c,
                                 __global const double *restrict partials, __local double *scratch) {
  double s = 0.0;
  for (long k = get_local_id(0); k < count; k += FS_WGS)
    s += partials[width * k + c];
  return fs_group_sum(s, scratch);
}

/* One work-group: the start's count partials of 3 sums (fs_visc_init) into the CG state in cgs: |P b|,
 * target = rtol |P b| (|P b| = 0: the residual's norm, or 1), rz, |r|, it = 0, done when |r| <= target
 * (a converged warm start) or max_iterations = 0. */
FS_KERNEL void fs_visc_reduce(const long count, __global const double *restrict partials, const double rtol,
                              const int max_iterations, __global double *restrict cgs) {
  __local double scratch[FS_WGS];
  const double s0 = fs_partials_sum(count, 3, 0, partials, scratch);
  const double s1 = fs_partials_sum(count, 3, 1, partials, scratch);
  const double s2 = fs_partials_sum(count, 3, 2, partials, scratch);
  if (get_local_id(0) != 0)
    return;
  const double rnorm = sqrt(s2);
  double bnorm = sqrt(s0);
  if (bnorm == 0.0)
    bnorm = rnorm > 0.0 ? rnorm : 1.0;
  cgs[FS_CG_BNORM] = bnorm;
  cgs[FS_CG_TARGET] = rtol * bnorm;
  cgs[FS_CG_RZ] = s1;
  cgs[FS_CG_RNORM] = rnorm;
  cgs[FS_CG_PQ] = 0.0;
  cgs[FS_CG_ALPHA] = 0.0;
  cgs[FS_CG_BETA] = 0.0;
  cgs[FS_CG_IT] = 0.0;
  cgs[FS_CG_DONE] = rnorm > rtol * bnorm && max_iterations > 0 ? 0.0 : 1.0;
  cgs[FS_CG_BREAKDOWN] = 0.0;
}

/* An iteration's CG state: every work-group of fs_visc_update and fs_visc_direction forms it from the state
 * buffer `in` and the previous kernel's partial sums (the same bits in every group), and only the first item of
 * group 0 writes it to the other buffer `out`, so no group reads a buffer that another writes.  Once done,
 * nothing changes any more (alpha = 0, fs_visc_direction leaves p), so the host may read the state back only
 * every check_every iterations. */
EF_INLINE void fs_cg_load(double *cg, __global const double *restrict in) {
  for (int k = 0; k < FS_CG_SIZE; ++k)
    cg[k] = in[k];
}

EF_INLINE void fs_cg_store(const double *cg, __global double *restrict out) {
  if (get_global_id(0) == 0)
    for (int k = 0; k < FS_CG_SIZE; ++k)
      out[k] = cg[k];
}

/* After the product: alpha = rz / p.q; p.q not positive or not finite: breakdown (and done), alpha = 0. */
EF_INLINE void fs_cg_alpha(double *cg, const double pq) {
  if (cg[FS_CG_DONE] != 0.0) {
    cg[FS_CG_ALPHA] = 0.0;
  } else {
    cg[FS_CG_PQ] = pq;
    if (pq > 0.0 && isfinite(pq)) {
      cg[FS_CG_ALPHA] = cg[FS_CG_RZ] / pq;
    } else {
      cg[FS_CG_ALPHA] = 0.0;
      cg[FS_CG_BREAKDOWN] = 1.0;
      cg[FS_CG_DONE] = 1.0;
    }
  }
}

/* After the update (rz = r.z, rr = r.r): beta = rz / rz_old, rz, |r|, it + 1; done when |r| <= target or
 * it = max_iterations. */
EF_INLINE void fs_cg_beta(double *cg, const double rz, const double rr, const int max_iterations) {
  if (cg[FS_CG_DONE] != 0.0) {
    cg[FS_CG_ALPHA] = 0.0;
  } else {
    const double rnorm = sqrt(rr), it = cg[FS_CG_IT] + 1.0;
    cg[FS_CG_BETA] = rz / cg[FS_CG_RZ];
    cg[FS_CG_RZ] = rz;
    cg[FS_CG_RNORM] = rnorm;
    cg[FS_CG_IT] = it;
    if (rnorm <= cg[FS_CG_TARGET] || it >= (double)max_iterations)
      cg[FS_CG_DONE] = 1.0;
  }
}

/* The stage CG's vector kernels run on a grid of their own (the host's choice, at most one work-group per block):
 * work-group g handles the FS_WGS-node blocks g, g + G, g + 2G, ... (G work-groups), block b's nodes
 * b FS_WGS .. b FS_WGS + FS_WGS - 1, item l node b FS_WGS + l, as one work-group per block would, and each
 * work-group adds the previous kernel's partial sums once, not once per block. */

/* alpha from cgs_in and fs_visc_apply's count partials of p.q (fs_cg_alpha; state into cgs_out), then
 * x += alpha p, r -= alpha q (nothing once done); per block b the sums of r.z and r.r, z = r/diag, into
 * partials[2 b + 0..1]. */
FS_KERNEL void fs_visc_update(const long n, const long count, __global const double *restrict pq_partials,
                              __global const double *restrict cgs_in, __global double *restrict cgs_out,
                              __global double *restrict x, __global const double *restrict p,
                              __global const double *restrict q, __global double *restrict r,
                              __global const double *restrict diag, __global double *restrict partials) {
  __local double scratch[FS_WGS];
  double cg[FS_CG_SIZE];
  const double pq = fs_partials_sum(count, 1, 0, pq_partials, scratch);
  fs_cg_load(cg, cgs_in);
  fs_cg_alpha(cg, pq);
  fs_cg_store(cg, cgs_out);
  const double alpha = cg[FS_CG_ALPHA];
  const int live = cg[FS_CG_DONE] == 0.0;
  const long blocks = (n + FS_WGS - 1) / FS_WGS;
  for (long b = get_group_id(0); b < blocks; b += get_num_groups(0)) {
    const long i = b * FS_WGS + get_local_id(0);
    double srz = 0.0, srr = 0.0;
    if (i < n && live) {
      const double dg = diag[i];
      for (int c = 0; c < 3; ++c) {
        const long k = 3 * i + c;
        x[k] += alpha * p[k];
        const double rk = r[k] - alpha * q[k];
        const double zk = rk / dg;
        r[k] = rk;
        srz += rk * zk;
        srr += rk * rk;
      }
    }
    srz = fs_group_sum(srz, scratch);
    srr = fs_group_sum(srr, scratch);
    if (get_local_id(0) == 0) {
      partials[2 * b] = srz;
      partials[2 * b + 1] = srr;
    }
  }
}

/* beta, |r|, it and done from cgs_in and fs_visc_update's count partials (fs_cg_beta; state into cgs_out), then
 * p = z + beta p with z = r/diag as fs_visc_update formed it (nothing once done). */
FS_KERNEL void fs_visc_direction(const long n, const long count, __global const double *restrict partials,
                                 const int max_iterations, __global const double *restrict cgs_in,
                                 __global double *restrict cgs_out, __global double *restrict p,
                                 __global const double *restrict r, __global const double *restrict diag) {
  __local double scratch[FS_WGS];
  double cg[FS_CG_SIZE];
  const double rz = fs_partials_sum(count, 2, 0, partials, scratch);
  const double rr = fs_partials_sum(count, 2, 1, partials, scratch);
  fs_cg_load(cg, cgs_in);
  fs_cg_beta(cg, rz, rr, max_iterations);
  fs_cg_store(cg, cgs_out);
  if (cg[FS_CG_DONE] != 0.0)
    return;
  const double beta = cg[FS_CG_BETA];
  const long blocks = (n + FS_WGS - 1) / FS_WGS;
  for (long b = get_group_id(0); b < blocks; b += get_num_groups(0)) {
    const long i = b * FS_WGS + get_local_id(0);
    if (i < n) {
      const double dg = diag[i];
      for (int c = 0; c < 3; ++c)
        p[3 * i + c] = r[3 * i + c] / dg + beta * p[3 * i + c];
    }
  }
}

/* The stage CG's product on a rank's piece (opencl_fs_mpi.c: fractional_step_mpi.c's stage_solve in the
 * Chronopoulos-Gear form): w = P A u, FS_VISC_LANES work-items a row as fs_visc_apply, on the rows of a block
 * (count < 0) or on rows[first .. first + count), rows of the block (the overlap: the interior rows, which read no
 * ghost, while u's halo is in flight, then the boundary rows); per work-group the sums of r.u, w.u and r.r into
 * partials[3 (group_base + group) + 0..2]. */
FS_KERNEL void fs_visc_apply_dots(FS_ROW_ARGS, __global const int *restrict rows, const long first, const long count,
                                  __global const double *restrict lij, const double dscale,
                                  const double nu, __global const double *restrict mass,
                                  __global const double *restrict r, __global const double *restrict u,
                                  __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                                  __global const double *restrict slip_normal,
                                  __global const double *restrict slip_tangent, __global double *restrict w,
                                  const long group_base, __global double *restrict partials) {
  __local double scratch[FS_WGS];
  __local double lanes[3 * FS_WGS];
  const long k = get_global_id(0) / FS_VISC_LANES;
  const int row = k < (count < 0 ? n_rows : count);
  const long i = !row ? 0 : count < 0 ? row_begin + k : rows[first + k];
  double y[3], sru = 0.0, swu = 0.0, srr = 0.0;
  (void)ev; /* the compact lij instead of the records */
  if (fs_visc_row(i, row, row_ptr, edge_base, col, lij, dscale, nu, mass, u, vfix, slip_type, slip_normal,
                  slip_tangent, lanes, y))
    for (int c = 0; c < 3; ++c) {
      const long kc = 3 * i + c;
      w[kc] = y[c];
      sru += r[kc] * u[kc];
      swu += y[c] * u[kc];
      srr += r[kc] * r[kc];
    }
  sru = fs_group_sum(sru, scratch);
  swu = fs_group_sum(swu, scratch);
  srr = fs_group_sum(srr, scratch);
  if (get_local_id(0) == 0) {
    const long g = 3 * (group_base + get_group_id(0));
    partials[g] = sru;
    partials[g + 1] = swu;
    partials[g + 2] = srr;
  }
}

/* Time step of the implicit option, first stage: as fs_dt_partial with the convective limit
 * dt_I = hmin_I / |u_I| (ef_node_dt_convective, cfl = 1) into partials[group], and the explicit rule's
 * limit (ef_node_dt, cfl = 1; tau's step, TAU_TIME_STEP) into partials[groups + group]. */
FS_KERNEL void fs_dt_partial_convective(const long n, __global const double *restrict hmin,
                                        __global const double *restrict u, const double nu,
                                        __global double *restrict partials) {
  __local double scratch[FS_WGS];
  double m = 1.0e300, e = 1.0e300;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double unorm = ef_node_norm(EF_DIM, i, u);
    const double d = ef_node_dt_convective(hmin[i], unorm, 1.0), de = ef_node_dt(hmin[i], unorm, nu, 1.0);
    if (d < m)
      m = d;
    if (de < e)
      e = de;
  }
  m = fs_group_min(m, scratch);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = m;
  e = fs_group_min(e, scratch);
  if (get_local_id(0) == 0)
    partials[get_num_groups(0) + get_group_id(0)] = e;
}

/* Correction "viscous" / "viscous_unfiltered", start (ef_row_viscous_correction_start): rhs = -c G dp w, the
 * lumped start x = -c M^-1 G dp projected (fixed components 0, slip nodes projected). */
FS_KERNEL void fs_imex_correction_start(FS_ROW_ARGS, const double cc, const double w,
                                        __global const double *restrict inv_mass, __global const double *restrict p_n,
                                        __global const double *restrict p_new, __global const uchar *restrict vfix,
                                        __global const uchar *restrict slip_type,
                                        __global const double *restrict slip_normal,
                                        __global const double *restrict slip_tangent, __global double *restrict x,
                                        __global double *restrict rhs) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  double x0[3], r0[3];
  ef_row_viscous_correction_start(EF_DIM, i, FS_ROW(i), p_new, p_n, cc, inv_mass[i], w, x0, r0);
  fs_node_project(i, vfix, slip_type, slip_normal, slip_tangent, x0);
  for (int c = 0; c < 3; ++c) {
    x[3 * i + c] = x0[c];
    rhs[3 * i + c] = r0[c];
  }
}

/* Correction "viscous" / "viscous_unfiltered", end: u = uh + delta with the boundary conditions (fixed
 * components keep uh's values) and the divergence check of fs_correct. */
FS_KERNEL void fs_imex_correct(const long n, __global const double *restrict uh, __global const double *restrict delta,
                               __global const double *restrict p_new, __global double *restrict u_new,
                               __global const uchar *restrict vfix, __global const uchar *restrict slip_type,
                               __global const double *restrict slip_normal,
                               __global const double *restrict slip_tangent, const double bound2,
                               __global int *restrict flags) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  double u[3] = {0.0, 0.0, 0.0}, uref[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < EF_DIM; ++c) {
    u[c] = uh[3 * i + c] + delta[3 * i + c];
    uref[c] = uh[3 * i + c];
  }
  fs_node_bc(i, vfix, slip_type, slip_normal, slip_tangent, uref, u);
  double u2 = 0.0;
  for (int c = 0; c < 3; ++c) {
    u_new[3 * i + c] = u[c];
    u2 += u[c] * u[c];
  }
  if (!(u2 <= bound2) || !isfinite(p_new[i]))
    atomic_min(&flags[0], (int)i);
}

/* q = M^-1 E(p_n) = M^-1 (H p_n - f) at the free-pressure rows (ef_row_csr_residual on row i of H, which
 * starts at row_ptr[i] + i), 0 at fixed ones, into component 0 of q (the others 0). */
FS_KERNEL void fs_imex_continuity(FS_ROW_ARGS, __global const int *restrict hcol, __global const double *restrict hval,
                                  __global const double *restrict f, __global const double *restrict p_n,
                                  __global const double *restrict inv_mass, __global const uchar *restrict pfix,
                                  __global double *restrict q) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  (void)col;
  (void)ev;
  (void)edge_base;
  double e = 0.0;
  if (!pfix[i]) {
    const long o = row_ptr[i] + i;
    e = ef_row_csr_residual(FS_ROW_NE(i) + 1, hcol + o, hval + o, f[i], p_n);
  }
  q[3 * i] = e * inv_mass[i];
  q[3 * i + 1] = q[3 * i + 2] = 0.0;
}

/* Correction "viscous": f_I -= gamma dt nu (K q)_I at the free-pressure rows; per work-group the sums of
 * f and |f| over the free rows into partials[2 (group_base + group)] as fs_pressure_system's. */
FS_KERNEL void fs_imex_filter(FS_ROW_ARGS, __global const double *restrict lij, const double gdt_nu,
                              __global const double *restrict q,
                              __global const uchar *restrict pfix, __global double *restrict f, const long group_base,
                              __global double *restrict partials) {
  __local double scratch[FS_WGS];
  const long i = row_begin + get_global_id(0);
  double sf = 0.0, sa = 0.0;
  (void)ev; /* the compact lij instead of the records */
  if (i < row_begin + n_rows && !pfix[i]) {
    double y[3] = {0.0, 0.0, 0.0};
    ef_row_stage_operator(EF_DIM, i, FS_ROW_LIJ(i), 0.0, q, y);
    const double fi = f[i] - gdt_nu * y[0];
    f[i] = fi;
    sf = fi;
    sa = fabs(fi);
  }
  sf = fs_group_sum(sf, scratch);
  sa = fs_group_sum(sa, scratch);
  if (get_local_id(0) == 0) {
    partials[2 * (group_base + get_group_id(0))] = sf;
    partials[2 * (group_base + get_group_id(0)) + 1] = sa;
  }
}

/* Correction "rotational" (experiment): p_{n+1} -= 2 gamma nu q at the free-pressure nodes. */
FS_KERNEL void fs_imex_rotational(const long n, const double g2_nu, __global const double *restrict q,
                                  __global const uchar *restrict pfix, __global double *restrict p) {
  const long i = get_global_id(0);
  if (i >= n || pfix[i])
    return;
  p[i] -= g2_nu * q[3 * i];
}

/* The pressure solve's initial guess (pressure_guess, fractional_step.h) at the free-pressure nodes:
 * ef_node_pressure_guess from p_n, p_{n-1} (p1), p_{n-2} (p2) with weights a, b; the fixed nodes keep the prescribed
 * values the last RK stage wrote into p. */
FS_KERNEL void fs_pressure_guess(const long n, __global const double *restrict pn, __global const double *restrict p1,
                                 __global const double *restrict p2, __global const uchar *restrict pfix,
                                 const double a, const double b, __global double *restrict p) {
  const long i = get_global_id(0);
  if (i >= n || pfix[i])
    return;
  p[i] = ef_node_pressure_guess(pn[i], p1[i], p2[i], a, b);
}

/* ---------------------------------------------------------------------------
 * The projection "converged" (viscous_projection 1; fs_cp_solve of opencl_fs.c, cp_solve of
 * fractional_step.c). */

/* r_I = f_I - (H p)_I at the free-pressure rows (-ef_row_csr_residual on row i of H, which starts at
 * row_ptr[i] + i), 0 at fixed ones. */
FS_KERNEL void fs_cp_residual(FS_ROW_ARGS, __global const int *restrict hcol, __global const double *restrict hval,
                              __global const double *restrict f, __global const double *restrict p,
                              __global const uchar *restrict pfix, __global double *restrict r) {
  const long i = row_begin + get_global_id(0);
  if (i >= row_begin + n_rows)
    return;
  (void)col;
  (void)ev;
  (void)edge_base;
  const long o = row_ptr[i] + i;
  r[i] = pfix[i] ? 0.0 : -ef_row_csr_residual(FS_ROW_NE(i) + 1, hcol + o, hval + o, f[i], p);
}

/* y = a x + b y (a == 0 does not read x, b == 0 does not read y: y = 0 from any contents). */
FS_KERNEL void fs_cp_axpby(const long n, const double a, __global const double *restrict x, const double b,
                           __global double *restrict y) {
  const long i = get_global_id(0);
  if (i >= n)
    return;
  const double ax = a != 0.0 ? a * x[i] : 0.0;
  y[i] = b != 0.0 ? ax + b * y[i] : ax;
}

/* Per work-group: the sum of a_I b_I in a fixed tree into partials[group] (added in group order on the
 * host). */
FS_KERNEL void fs_cp_dot(const long n, __global const double *restrict a, __global const double *restrict b,
                         __global double *restrict partials) {
  __local double scratch[FS_WGS];
  const long i = get_global_id(0);
  const double s = fs_group_sum(i < n ? a[i] * b[i] : 0.0, scratch);
  if (get_local_id(0) == 0)
    partials[get_group_id(0)] = s;
}

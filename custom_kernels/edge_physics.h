/* edge_physics.h -- per-node (row) operators of the edge-based fractional-step
 * Navier-Stokes method (Rossi, Mossaiby & Idelsohn, Comput. Fluids 81, 2013),
 * shared word for word by the OpenMP executor (C11, host compiler) and the
 * OpenCL kernels (OpenCL C 1.2 with cl_khr_fp64; the kernel loader includes
 * this file textually).
 *
 * ---------------------------------------------------------------------------
 * Data layout (the only place that knows it is the accessor block below)
 *
 * Edge graph: non-symmetric CSR over directed edges IJ, I != J, each
 * undirected edge stored twice (row I and row J), columns sorted, diagonal NOT
 * stored (the per-node arrays hold the diagonal terms).  Row offsets are
 * 64-bit; columns are 32-bit node indices.
 *
 * Edge record (doubles, one record per directed edge IJ, in row order):
 *     3D (16 doubles): Mc | Ld[0..8] row-major | nabla[0..2] | G[0..2]
 *     2D  (9 doubles): Mc | Ld[0..3] row-major | nabla[0..1] | G[0..1]
 *   Mc      = int N_I N_J                      (consistent mass)
 *   Ld[a,b] = int dN_I/dx_a dN_J/dx_b          (L^d_IJ; L_IJ = trace)
 *   nabla   = int N_I grad N_J                 (nabla_IJ)
 *   G       = int grad N_I N_J = nabla_JI      (G_IJ, stored for streaming)
 * 2D records are not padded: 9 doubles = 72 bytes.
 *
 * The row functions never see absolute edge offsets: they take `ev`, a pointer
 * to the first record of the row, `col`, a pointer to the first column of the
 * row, and `ne`, the number of edges in the row.  A caller that splits the
 * edge arrays over several buffers (by contiguous row blocks, see
 * ef_edge_data_row_blocks in edge_data.h) hands in pointers into the block
 * that holds the row; nothing here changes.
 *
 * Node vectors (velocity, projections, body force, normals) are always 3
 * doubles per node (z = 0 in 2D), node scalars one double per node.  The
 * pressure in every function is the kinematic pressure p/rho.
 *
 * Dimension: every function takes `dim` (2 or 3) as its first argument.  The
 * OpenCL kernels pass the compile-time constant EF_DIM; the host executor calls
 * through a dispatch that passes the literal 2 or 3, so after inlining the
 * compiler sees a constant and unrolls the component loops in both worlds.
 * Private arrays are sized 3 and only the first dim entries are used.
 */
#ifndef EF_EDGE_PHYSICS_H
#define EF_EDGE_PHYSICS_H

/* ---------------------------------------------------------------------------
 * Portability block. */
#ifdef __OPENCL_VERSION__
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define EF_GLOBAL __global
#if __OPENCL_VERSION__ >= 120
#define EF_INLINE static inline
#else
#define EF_INLINE inline
#endif
typedef long ef_i64;
typedef int ef_i32;
typedef uchar ef_u8;
#else
#include <math.h>
#include <stdint.h>
#define EF_GLOBAL
#if defined(__GNUC__)
/* Forced so that the literal dim of the host dispatch reaches the loops. */
#define EF_INLINE static inline __attribute__((always_inline))
#else
#define EF_INLINE static inline
#endif
typedef int64_t ef_i64;
typedef int32_t ef_i32;
typedef uint8_t ef_u8;
#endif

/* ---------------------------------------------------------------------------
 * Accessors of the edge record (change the layout here and only here).
 * ev: pointer to the first record of a row; k: edge index inside the row.
 * EF_EDGE_OFF_*: offsets of the entries inside one record (used by the writer too). */
#define EF_EDGE_STRIDE(dim) (1 + (dim) * (dim) + 2 * (dim))
#define EF_EDGE_OFF_MC(dim) 0
#define EF_EDGE_OFF_LD(dim, a, b) (1 + (a) * (dim) + (b))
#define EF_EDGE_OFF_NABLA(dim, c) (1 + (dim) * (dim) + (c))
#define EF_EDGE_OFF_G(dim, c) (1 + (dim) * (dim) + (dim) + (c))
#define EF_EDGE_REC(ev, k, dim) ((ev) + (ef_i64)(k) * EF_EDGE_STRIDE(dim))
#define EF_EDGE_MC(ev, k, dim) (EF_EDGE_REC(ev, k, dim)[EF_EDGE_OFF_MC(dim)])
#define EF_EDGE_LD(ev, k, dim, a, b) (EF_EDGE_REC(ev, k, dim)[EF_EDGE_OFF_LD(dim, a, b)])
#define EF_EDGE_NABLA(ev, k, dim, c) (EF_EDGE_REC(ev, k, dim)[EF_EDGE_OFF_NABLA(dim, c)])
#define EF_EDGE_G(ev, k, dim, c) (EF_EDGE_REC(ev, k, dim)[EF_EDGE_OFF_G(dim, c)])

/* Slip types of a node (ef_fs_settings.slip_type). */
#define EF_SLIP_NONE 0
#define EF_SLIP_FACE 1   /* u <- u - (u.n) n */
#define EF_SLIP_EDGE 2   /* u <- (u.t) t, t along the crease where two slip faces meet (3D) */
#define EF_SLIP_CORNER 3 /* u <- 0 */

/* Streamline stabilisation time of a node: tau = 1 / (c1/dt + c2 nu/h^2 + c3 |u|/h). */
EF_INLINE double ef_node_tau(const double h, const double unorm, const double nu, const double dt,
                             const double c1, const double c2, const double c3) {
  return 1.0 / (c1 / dt + c2 * nu / (h * h) + c3 * unorm / h);
}

/* The pressure solve's initial guess at a free node (pressure_guess, fractional_step.h): p_n + a (p_n - p1) +
 * b (p1 - p2), p1 = p_{n-1}, p2 = p_{n-2}; linear: a = dt/dt_{n-1}, b = 0; previous: a = b = 0 (p_n itself). */
EF_INLINE double ef_node_pressure_guess(const double pn, const double p1, const double p2, const double a,
                                        const double b) {
  return pn + a * (pn - p1) + b * (p1 - p2);
}

/* The weights (a, b) of ef_node_pressure_guess for the step dt after the steps h1 = dt_{n-1}, h2 = dt_{n-2}:
 * order 1 linear, order 2 the parabola through the three levels (Lagrange at t_n + dt). */
EF_INLINE void ef_pressure_guess_weights(const int order, const double dt, const double h1, const double h2,
                                         double *a, double *b) {
  if (order == 2) {
    const double l0 = (dt + h1) * (dt + h1 + h2) / (h1 * (h1 + h2)), l2 = dt * (dt + h1) / ((h1 + h2) * h2);
    *a = l0 - 1.0;
    *b = -l2;
  } else if (order == 1) {
    *a = dt / h1;
    *b = 0.0;
  } else {
    *a = 0.0;
    *b = 0.0;
  }
}

/* Local stable time step of a node for explicit RK4: dt = cfl / (|u|/hmin + 4 nu/hmin^2).
 * The 4 keeps cfl = 1 inside RK4's stability interval (2.78 on the real axis) for the
 * lumped P1 Laplacian, whose Gershgorin bound is 2 (d+1) nu / hmin^2: 0.25 hmin^2/nu is
 * below 2.78 / (2 (d+1)) hmin^2/nu in 2D and 3D.  Returns 1e300 when the node has neither
 * velocity nor viscosity, and NaN for a non-finite velocity. */
EF_INLINE double ef_node_dt(const double hmin, const double unorm, const double nu, const double cfl) {
  const double rate = unorm / hmin + 4.0 * nu / (hmin * hmin);
  return rate == 0.0 ? 1.0e300 : cfl / rate;
}

/* Local convective time step of a node (implicit viscosity: the viscous term does not limit the
 * explicit part): dt = cfl hmin / |u|; 1e300 for a node at rest, NaN for a non-finite velocity. */
EF_INLINE double ef_node_dt_convective(const double hmin, const double unorm, const double cfl) {
  const double rate = unorm / hmin;
  return rate == 0.0 ? 1.0e300 : cfl / rate;
}

/* Euclidean norm of the node vector v[3i..3i+dim). */
EF_INLINE double ef_node_norm(const int dim, const ef_i64 i, EF_GLOBAL const double *v) {
  double s = 0.0;
  for (int c = 0; c < dim; ++c) s += v[3 * i + c] * v[3 * i + c];
  return sqrt(s);
}

/* ---------------------------------------------------------------------------
 * Elementary row operators (used alone by the tests; fused below for speed). */

/* Edge-based convective term A_I(a; w) = sum_{J!=I} (a_I . nabla_IJ)(w_J - w_I)
 * (eq. 41 with the convecting velocity a_I in front; w is a node vector). */
EF_INLINE void ef_row_convection(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                 EF_GLOBAL const double *ev, EF_GLOBAL const double *a,
                                 EF_GLOBAL const double *w, double *out) {
  double ai[3] = {0.0, 0.0, 0.0}, wi[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    ai[c] = a[3 * i + c];
    wi[c] = w[3 * i + c];
    out[c] = 0.0;
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double an = 0.0;
    for (int c = 0; c < dim; ++c) an += ai[c] * EF_EDGE_NABLA(ev, k, dim, c);
    for (int c = 0; c < dim; ++c) out[c] += an * (w[3 * j + c] - wi[c]);
  }
}

/* L_IJ = tr L^d_IJ of edge k of a row (ev: the row's first record), summed from 0 in component order as
 * the row functions sum it (so the compact stage operator below reproduces their values bit for bit). */
EF_INLINE double ef_edge_laplacian(const int dim, EF_GLOBAL const double *ev, const int k) {
  double l = 0.0;
  for (int c = 0; c < dim; ++c) l += EF_EDGE_LD(ev, k, dim, c, c);
  return l;
}

/* The compact stage operator of a row: lij[k] = L_IJ of its ne edges (8 bytes per directed edge). */
EF_INLINE void ef_row_edge_laplacians(const int dim, const int ne, EF_GLOBAL const double *ev,
                                      EF_GLOBAL double *lij) {
  for (int k = 0; k < ne; ++k) lij[k] = ef_edge_laplacian(dim, ev, k);
}

/* Edge Laplacian of a node vector: sum_{J!=I} L_IJ (w_J - w_I), L_IJ = tr L^d_IJ
 * (= sum_J L_IJ w_J by sum_J L_IJ = 0); the viscous term is -nu times this. */
EF_INLINE void ef_row_vector_laplacian(const int dim, const ef_i64 i, const int ne,
                                       EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                       EF_GLOBAL const double *w, double *out) {
  double wi[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    wi[c] = w[3 * i + c];
    out[c] = 0.0;
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    const double l = ef_edge_laplacian(dim, ev, k);
    for (int c = 0; c < dim; ++c) out[c] += l * (w[3 * j + c] - wi[c]);
  }
}

/* Edge Laplacian of a node scalar: sum_{J!=I} L_IJ (p_J - p_I). */
EF_INLINE double ef_row_scalar_laplacian(const int dim, const ef_i64 i, const int ne,
                                         EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                         EF_GLOBAL const double *p) {
  const double pi = p[i];
  double s = 0.0;
  for (int k = 0; k < ne; ++k) {
    double l = 0.0;
    for (int c = 0; c < dim; ++c) l += EF_EDGE_LD(ev, k, dim, c, c);
    s += l * (p[col[k]] - pi);
  }
  return s;
}

/* Low-order streamline term S_low,I = sum_{J!=I} (u_I^T L^d_IJ u_I)(u_J - u_I),
 * the edge form of int (u.grad N_I)(u.grad u_h). */
EF_INLINE void ef_row_s_low(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                            EF_GLOBAL const double *ev, EF_GLOBAL const double *u, double *out) {
  double ui[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    ui[c] = u[3 * i + c];
    out[c] = 0.0;
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double q = 0.0;
    for (int a = 0; a < dim; ++a)
      for (int b = 0; b < dim; ++b) q += ui[a] * EF_EDGE_LD(ev, k, dim, a, b) * ui[b];
    for (int c = 0; c < dim; ++c) out[c] += q * (u[3 * j + c] - ui[c]);
  }
}

/* High-order (projection) streamline term S_high,I = -sum_{J!=I} (u_I . nabla_IJ)(xi_J - xi_I),
 * the edge form of int (u.grad N_I) xi after integration by parts. */
EF_INLINE void ef_row_s_high(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                             EF_GLOBAL const double *ev, EF_GLOBAL const double *u,
                             EF_GLOBAL const double *xi, double *out) {
  ef_row_convection(dim, i, ne, col, ev, u, xi, out);
  for (int c = 0; c < dim; ++c) out[c] = -out[c];
}

/* Weak pressure gradient P_I(p) = sum_{J!=I} (G_IJ p_J - nabla_IJ p_I) = int grad N_I p_h
 * (eq. 32, no boundary integral). */
EF_INLINE void ef_row_weak_gradient(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                    EF_GLOBAL const double *ev, EF_GLOBAL const double *p, double *out) {
  const double pi = p[i];
  for (int c = 0; c < dim; ++c) out[c] = 0.0;
  for (int k = 0; k < ne; ++k) {
    const double pj = p[col[k]];
    for (int c = 0; c < dim; ++c) out[c] += EF_EDGE_G(ev, k, dim, c) * pj - EF_EDGE_NABLA(ev, k, dim, c) * pi;
  }
}

/* Strong gradient sum_{J!=I} nabla_IJ (p_J - p_I) = int N_I grad p_h (divide by M_II for the
 * nodal gradient, eq. 48). */
EF_INLINE void ef_row_strong_gradient(const int dim, const ef_i64 i, const int ne,
                                      EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                      EF_GLOBAL const double *p, double *out) {
  const double pi = p[i];
  for (int c = 0; c < dim; ++c) out[c] = 0.0;
  for (int k = 0; k < ne; ++k) {
    const double dp = p[col[k]] - pi;
    for (int c = 0; c < dim; ++c) out[c] += EF_EDGE_NABLA(ev, k, dim, c) * dp;
  }
}

/* Divergence D_I(u) = sum_{J!=I} nabla_IJ . (u_J - u_I) = int N_I div u_h. */
EF_INLINE double ef_row_divergence(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                   EF_GLOBAL const double *ev, EF_GLOBAL const double *u) {
  double s = 0.0;
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    for (int c = 0; c < dim; ++c) s += EF_EDGE_NABLA(ev, k, dim, c) * (u[3 * j + c] - u[3 * i + c]);
  }
  return s;
}

/* Stabilising pressure right-hand side sum_{J!=I} tau_IJ (G_IJ . xp_J - nabla_IJ . xp_I),
 * tau_IJ = (tau_I + tau_J)/2: the edge form of int tau grad N_I . xi_p. */
EF_INLINE double ef_row_pressure_stab_rhs(const int dim, const ef_i64 i, const int ne,
                                          EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                          EF_GLOBAL const double *tau, EF_GLOBAL const double *xp) {
  const double ti = tau[i];
  double s = 0.0;
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double g = 0.0;
    for (int c = 0; c < dim; ++c)
      g += EF_EDGE_G(ev, k, dim, c) * xp[3 * j + c] - EF_EDGE_NABLA(ev, k, dim, c) * xp[3 * i + c];
    s += 0.5 * (ti + tau[j]) * g;
  }
  return s;
}

/* Edge-weighted Laplacian sum_{J!=I} w_IJ L_IJ (p_J - p_I), w_IJ = (tau_I + tau_J)/2 + c,
 * i.e. (H p)_I of the pressure matrix before boundary conditions. */
EF_INLINE double ef_row_pressure_operator(const int dim, const ef_i64 i, const int ne,
                                          EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                          EF_GLOBAL const double *tau, const double cc,
                                          EF_GLOBAL const double *p) {
  const double ti = tau[i], pi = p[i];
  double s = 0.0;
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double l = 0.0;
    for (int c = 0; c < dim; ++c) l += EF_EDGE_LD(ev, k, dim, c, c);
    s += (0.5 * (ti + tau[j]) + cc) * l * (p[j] - pi);
  }
  return s;
}

/* ---------------------------------------------------------------------------
 * Fused row operators: one pass over the row's edges each. */

/* Projections at the start of a step, one pass: xi_I = M_II^-1 A_I(u; u) (convective projection)
 * and xp_I = M_II^-1 sum_{J!=I} nabla_IJ (p_J - p_I) (pressure projection, eq. 48). */
EF_INLINE void ef_row_projections(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                  EF_GLOBAL const double *ev, EF_GLOBAL const double *u,
                                  EF_GLOBAL const double *p, const double inv_mass, double *xi, double *xp) {
  double ui[3] = {0.0, 0.0, 0.0};
  const double pi = p[i];
  for (int c = 0; c < dim; ++c) {
    ui[c] = u[3 * i + c];
    xi[c] = 0.0;
    xp[c] = 0.0;
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    const double dp = p[j] - pi;
    double an = 0.0;
    for (int c = 0; c < dim; ++c) an += ui[c] * EF_EDGE_NABLA(ev, k, dim, c);
    for (int c = 0; c < dim; ++c) {
      xi[c] += an * (u[3 * j + c] - ui[c]);
      xp[c] += EF_EDGE_NABLA(ev, k, dim, c) * dp;
    }
  }
  for (int c = 0; c < dim; ++c) {
    xi[c] *= inv_mass;
    xp[c] *= inv_mass;
  }
}

/* Momentum residual of node I (step 2 of the scheme):
 *   R_I = M_II b_I - A_I(u; u) - nu_I sum L_IJ (u_J - u_I) + P_I(p) - tau_I (S_low,I - S_high,I)
 * with u the stage velocity (also the convecting one), p = p_n, xi the convective projection
 * of u_n.  Folded into one accumulator:
 *   R_I = M_II b_I + P_I - sum_{J!=I} [ (a + nu L + tau q)(u_J - u_I) + tau a (xi_J - xi_I) ],
 * a = u_I . nabla_IJ, L = tr L^d_IJ, q = u_I^T L^d_IJ u_I.  b is the body force per unit mass
 * of node I (private array of 3). */
EF_INLINE void ef_row_momentum_residual(const int dim, const ef_i64 i, const int ne,
                                        EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                        EF_GLOBAL const double *u, EF_GLOBAL const double *p,
                                        EF_GLOBAL const double *xi, const double mass, const double *b,
                                        const double tau, const double nu, double *R) {
  double ui[3] = {0.0, 0.0, 0.0}, xii[3] = {0.0, 0.0, 0.0};
  double acc[3] = {0.0, 0.0, 0.0}, gp[3] = {0.0, 0.0, 0.0}, nsum[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    ui[c] = u[3 * i + c];
    xii[c] = xi[3 * i + c];
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double an = 0.0, l = 0.0, q = 0.0;
    for (int a = 0; a < dim; ++a) {
      double row = 0.0;
      for (int bb = 0; bb < dim; ++bb) row += EF_EDGE_LD(ev, k, dim, a, bb) * ui[bb];
      q += ui[a] * row;
      l += EF_EDGE_LD(ev, k, dim, a, a);
      an += ui[a] * EF_EDGE_NABLA(ev, k, dim, a);
    }
    const double wu = an + nu * l + tau * q;
    const double wx = tau * an;
    const double pj = p[j];
    for (int c = 0; c < dim; ++c) {
      acc[c] += wu * (u[3 * j + c] - ui[c]) + wx * (xi[3 * j + c] - xii[c]);
      gp[c] += EF_EDGE_G(ev, k, dim, c) * pj;
      nsum[c] += EF_EDGE_NABLA(ev, k, dim, c);
    }
  }
  const double pi = p[i];
  for (int c = 0; c < dim; ++c) R[c] = mass * b[c] + (gp[c] - nsum[c] * pi) - acc[c];
}

/* The momentum residual of ef_row_momentum_residual split for the IMEX scheme, one pass:
 *   F_I = M_II b_I + P_I(p) - sum_{J!=I} [ (a + tau q)(u_J - u_I) + tau a (xi_J - xi_I) ]  (explicit part)
 *   V_I = -nu sum_{J!=I} L_IJ (u_J - u_I) = -nu (K u)_I                                 (viscous part)
 * so that F + V = R of ef_row_momentum_residual (same a, q, L; the sums are grouped differently). */
EF_INLINE void ef_row_imex_residual(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                    EF_GLOBAL const double *ev, EF_GLOBAL const double *u,
                                    EF_GLOBAL const double *p, EF_GLOBAL const double *xi, const double mass,
                                    const double *b, const double tau, const double nu, double *F, double *V) {
  double ui[3] = {0.0, 0.0, 0.0}, xii[3] = {0.0, 0.0, 0.0};
  double acc[3] = {0.0, 0.0, 0.0}, vis[3] = {0.0, 0.0, 0.0}, gp[3] = {0.0, 0.0, 0.0}, nsum[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    ui[c] = u[3 * i + c];
    xii[c] = xi[3 * i + c];
  }
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double an = 0.0, l = 0.0, q = 0.0;
    for (int a = 0; a < dim; ++a) {
      double row = 0.0;
      for (int bb = 0; bb < dim; ++bb) row += EF_EDGE_LD(ev, k, dim, a, bb) * ui[bb];
      q += ui[a] * row;
      l += EF_EDGE_LD(ev, k, dim, a, a);
      an += ui[a] * EF_EDGE_NABLA(ev, k, dim, a);
    }
    const double wu = an + tau * q;
    const double wx = tau * an;
    const double pj = p[j];
    for (int c = 0; c < dim; ++c) {
      const double du = u[3 * j + c] - ui[c];
      acc[c] += wu * du + wx * (xi[3 * j + c] - xii[c]);
      vis[c] += l * du;
      gp[c] += EF_EDGE_G(ev, k, dim, c) * pj;
      nsum[c] += EF_EDGE_NABLA(ev, k, dim, c);
    }
  }
  const double pi = p[i];
  for (int c = 0; c < dim; ++c) {
    F[c] = mass * b[c] + (gp[c] - nsum[c] * pi) - acc[c];
    V[c] = -nu * vis[c];
  }
}

/* Diagonal of the stiffness K (K_II = sum_J L_IJ = tr L^d_II = -sum_{J!=I} L_IJ, the P1 row sum
 * being zero). */
EF_INLINE double ef_row_stiffness_diagonal(const int dim, const int ne, EF_GLOBAL const double *ev) {
  double s = 0.0;
  for (int k = 0; k < ne; ++k)
    for (int c = 0; c < dim; ++c) s -= EF_EDGE_LD(ev, k, dim, c, c);
  return s;
}

/* The (K x)_I part of ef_row_stage_operator over the row's entries k = first, first + stride, ... < ne
 * (first 0, stride 1: the whole row, in ef_row_stage_operator's order): lets a device kernel split a row
 * over `stride` work-items, whose partial sums the kernel adds. */
EF_INLINE void ef_row_stage_laplacian_part(const int dim, const ef_i64 i, const int first, const int stride,
                                          const int ne, EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *lij,
                                          EF_GLOBAL const double *x, double *y) {
  double xi[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    xi[c] = x[3 * i + c];
    y[c] = 0.0;
  }
  for (int k = first; k < ne; k += stride) {
    const ef_i64 j = col[k];
    const double l = lij[k];
    for (int c = 0; c < dim; ++c) y[c] += l * (x[3 * j + c] - xi[c]);
  }
}

/* Row of the implicit viscous stage operator, scaled by 1/nu_I so that it is symmetric:
 *   y_I = d_I x_I + (K x)_I,  d_I = M_II / (nu_I gamma dt),  (K x)_I = sum_{J!=I} L_IJ (x_J - x_I),
 * every velocity component alike (the constraint projection is applied by the caller).  Compact: lij
 * points at the row's first L_IJ (ef_row_edge_laplacians, built once), not at the 72/128-byte edge
 * records; the terms and their order are ef_row_vector_laplacian's, so the results are those of the records.
 * (Formerly ef_row_viscous_operator on the records: renamed so that a caller passing records fails to build.) */
EF_INLINE void ef_row_stage_operator(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                     EF_GLOBAL const double *lij, const double d, EF_GLOBAL const double *x,
                                     double *y) {
  ef_row_stage_laplacian_part(dim, i, 0, 1, ne, col, lij, x, y);
  for (int c = 0; c < dim; ++c) y[c] += d * x[3 * i + c];
}

/* IMEX stage right-hand side of dof k (fractional_step.h, 2'), scaled to the symmetric stage system:
 *   rhs_k = (M_II u_n,k + dt sum_{j<s} (a_sj F_j,k + ai_sj V_j,k)) w,   w = 1/(nu_I gamma dt),
 * F, V the stage residuals j = 0..s-1, stage j at offset j n3 (n3 = 3 n); as, ais: row s of the explicit and
 * implicit tableaux (private arrays of at least s entries). */
EF_INLINE double ef_dof_imex_rhs(const int s, const double *as, const double *ais, EF_GLOBAL const double *F,
                                 EF_GLOBAL const double *V, const ef_i64 n3, const ef_i64 k, const double mass,
                                 const double un, const double dt, const double w) {
  double e = 0.0;
  for (int j = 0; j < s; ++j) e += as[j] * F[j * n3 + k] + ais[j] * V[j * n3 + k];
  return (mass * un + dt * e) * w;
}

/* The end of the IMEX stages at dof k: uh_k = U_3,k + dt M_II^-1 sum_j (b_j - a_3j) F_j,k (returned; the
 * implicit part is stiffly accurate) and *rbar = sum_j b_j (F_j,k + V_j,k), the weighted residual of the
 * reaction; layout of F, V as ef_dof_imex_rhs, b and a3 (row 3 of the explicit tableau) 4 entries each. */
EF_INLINE double ef_dof_imex_final(const double *b, const double *a3, EF_GLOBAL const double *F,
                                   EF_GLOBAL const double *V, const ef_i64 n3, const ef_i64 k, const double u3,
                                   const double inv_mass, const double dt, double *rbar) {
  double e = 0.0, rb = 0.0;
  for (int j = 0; j < 4; ++j) {
    e += (b[j] - a3[j]) * F[j * n3 + k];
    rb += b[j] * (F[j * n3 + k] + V[j * n3 + k]);
  }
  *rbar = rb;
  return u3 + dt * inv_mass * e;
}

/* One CSR row's residual of a node scalar: -f_I + sum_k hval[k] p[hcol[k]] over the row's cnt entries
 * (the implicit option's continuity residual E(p) = H p - f, in the row's stored order). */
EF_INLINE double ef_row_csr_residual(const int cnt, EF_GLOBAL const ef_i32 *hcol, EF_GLOBAL const double *hval,
                                     const double fi, EF_GLOBAL const double *p) {
  double e = -fi;
  for (int k = 0; k < cnt; ++k) e += hval[k] * p[hcol[k]];
  return e;
}

/* Open-boundary traction at node I with a prescribed pressure and no fixed velocity component
 * (pressure inlet/outlet): the weak gradient P_I leaves out the boundary integral -p n; adding it
 * turns P_I into the Galerkin -int N_I grad p_h = -sum_{J!=I} nabla_IJ (p_J - p_I), i.e.
 * R_I -= P_I + sum_{J!=I} nabla_IJ (p_J - p_I).  Without it the open boundary is traction free
 * whatever pressure is prescribed there (nothing changes where that pressure is 0). */
EF_INLINE void ef_row_open_boundary_traction(const int dim, const ef_i64 i, const int ne,
                                             EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                             EF_GLOBAL const double *p, double *R) {
  double w[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
  ef_row_weak_gradient(dim, i, ne, col, ev, p, w);
  ef_row_strong_gradient(dim, i, ne, col, ev, p, g);
  for (int c = 0; c < dim; ++c) R[c] -= w[c] + g[c];
}

/* One row of the pressure system H p = f (step 3), with the fixed-pressure nodes eliminated
 * symmetrically:
 *   H_IJ = (tau_IJ + c) L_IJ (J != I),  H_II = -sum_{J!=I} H_IJ,
 *   f_I  = -sum nabla_IJ.(uh_J - uh_I) + c sum L_IJ (pn_J - pn_I) + sum tau_IJ (G_IJ.xp_J - nabla_IJ.xp_I).
 * A fixed row becomes the identity with f_I = pf_I; in a free row the column of a fixed
 * node J is zeroed and f_I -= H_IJ pf_J (H_II keeps H_IJ, so H stays SPD).
 * hrow receives ne + 1 values in the sorted order of the row with the diagonal inserted
 * (the layout of a standard CSR with diagonal); pf holds the fixed values (and p_n
 * elsewhere), fixed the per-node flags (has_fixed = 0: no flags array).  Returns f_I. */
EF_INLINE double ef_row_pressure_system(const int dim, const ef_i64 i, const int ne,
                                        EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                        EF_GLOBAL const double *tau, const double cc,
                                        EF_GLOBAL const double *uh, EF_GLOBAL const double *pn,
                                        EF_GLOBAL const double *pf, EF_GLOBAL const double *xp,
                                        EF_GLOBAL const ef_u8 *fixed, const int has_fixed,
                                        EF_GLOBAL double *hrow) {
  int kd = 0; /* position of the diagonal inside the row */
  while (kd < ne && col[kd] < i) ++kd;
  if (has_fixed && fixed[i]) {
    for (int k = 0; k <= ne; ++k) hrow[k] = 0.0;
    hrow[kd] = 1.0;
    return pf[i];
  }
  const double ti = tau[i], pni = pn[i];
  double uhi[3] = {0.0, 0.0, 0.0}, xpi[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < dim; ++c) {
    uhi[c] = uh[3 * i + c];
    xpi[c] = xp[3 * i + c];
  }
  double f = 0.0, diag = 0.0;
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    double l = 0.0, div = 0.0, st = 0.0;
    for (int c = 0; c < dim; ++c) {
      const double nb = EF_EDGE_NABLA(ev, k, dim, c);
      l += EF_EDGE_LD(ev, k, dim, c, c);
      div += nb * (uh[3 * j + c] - uhi[c]);
      st += EF_EDGE_G(ev, k, dim, c) * xp[3 * j + c] - nb * xpi[c];
    }
    const double tij = 0.5 * (ti + tau[j]);
    const double h = (tij + cc) * l;
    f += -div + cc * l * (pn[j] - pni) + tij * st;
    diag -= h;
    const int pos = k + (k >= kd ? 1 : 0);
    if (has_fixed && fixed[j]) {
      f -= h * pf[j];
      hrow[pos] = 0.0;
    } else {
      hrow[pos] = h;
    }
  }
  hrow[kd] = diag;
  return f;
}

/* The gradient of the pressure increment at I: g = sum_{J!=I} nabla_IJ (dp_J - dp_I), dp = p_{n+1} - p_n
 * (g[dim..2] are left 0). */
EF_INLINE void ef_row_increment_gradient(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                         EF_GLOBAL const double *ev, EF_GLOBAL const double *pnew,
                                         EF_GLOBAL const double *pold, double *g) {
  const double dpi = pnew[i] - pold[i];
  g[0] = g[1] = g[2] = 0.0;
  for (int k = 0; k < ne; ++k) {
    const ef_i64 j = col[k];
    const double dp = (pnew[j] - pold[j]) - dpi;
    for (int c = 0; c < dim; ++c) g[c] += EF_EDGE_NABLA(ev, k, dim, c) * dp;
  }
}

/* Start of the viscous velocity correction (implicit option, correction "viscous"): with g the increment
 * gradient, the scaled right-hand side r0 = -c g w (w = 1/(nu_I gamma dt)) and the lumped start
 * x0 = -c M_II^-1 g (components >= dim left 0; the caller projects x0). */
EF_INLINE void ef_row_viscous_correction_start(const int dim, const ef_i64 i, const int ne,
                                               EF_GLOBAL const ef_i32 *col, EF_GLOBAL const double *ev,
                                               EF_GLOBAL const double *pnew, EF_GLOBAL const double *pold,
                                               const double cc, const double inv_mass, const double w, double *x0,
                                               double *r0) {
  double g[3];
  ef_row_increment_gradient(dim, i, ne, col, ev, pnew, pold, g);
  for (int q = 0; q < 3; ++q) x0[q] = r0[q] = 0.0;
  for (int q = 0; q < dim; ++q) {
    r0[q] = -cc * g[q] * w;
    x0[q] = -cc * inv_mass * g[q];
  }
}

/* Velocity correction (step 4): u_I = uh_I - c M_II^-1 g_I, g from ef_row_increment_gradient. */
EF_INLINE void ef_row_correction(const int dim, const ef_i64 i, const int ne, EF_GLOBAL const ef_i32 *col,
                                 EF_GLOBAL const double *ev, EF_GLOBAL const double *pnew,
                                 EF_GLOBAL const double *pold, const double inv_mass, const double cc,
                                 EF_GLOBAL const double *uh, double *u) {
  double g[3];
  ef_row_increment_gradient(dim, i, ne, col, ev, pnew, pold, g);
  for (int c = 0; c < dim; ++c) u[c] = uh[3 * i + c] - cc * inv_mass * g[c];
}

/* Boundary conditions on one node's new velocity u (private, 3): each fixed component takes
 * its reference value uref (the value the fixed-BC callback overwrites later); a slip node
 * with no fixed component is projected: face u - (u.n)n, edge (u.t)t, corner 0.
 * fixed: 3 flags; n, t: unit normal / tangent (private, 3). */
EF_INLINE void ef_node_apply_bc(const int dim, const ef_u8 *fixed, const int slip, const double *n,
                                const double *t, const double *uref, double *u) {
  int any = 0;
  for (int c = 0; c < dim; ++c)
    if (fixed[c]) {
      u[c] = uref[c];
      any = 1;
    }
  if (any || slip == EF_SLIP_NONE) return;
  if (slip == EF_SLIP_FACE) {
    double un = 0.0;
    for (int c = 0; c < dim; ++c) un += u[c] * n[c];
    for (int c = 0; c < dim; ++c) u[c] -= un * n[c];
  } else if (slip == EF_SLIP_EDGE) {
    double ut = 0.0;
    for (int c = 0; c < dim; ++c) ut += u[c] * t[c];
    for (int c = 0; c < dim; ++c) u[c] = ut * t[c];
  } else {
    for (int c = 0; c < dim; ++c) u[c] = 0.0;
  }
}

#endif

/* pcg.cl -- preconditioned and flexible conjugate gradients on the device with any
 * preconditioner (applied by the host between these launches).  Host side:
 * custom_utilities/opencl/opencl_pcg.c.
 *
 * Iteration k (k = 0, 1, ...), r_k and z_k = M^-1 r_k given:
 *   pcg_dot        partials of r.z, r_old.z, sum z, sum r, sum r_old
 *   pcg_direction  rho_k = r.z' with z' = z - mean(z) when A has the constant null space (else
 *                  z' = z); beta = 0 (k = 0), rho_k / rho_{k-1} (PCG) or
 *                  (rho_k - r_old.z') / rho_{k-1} (flexible CG); p = z' + beta p;
 *                  the stop test ||r_k||^2 <= rtol^2 ||b||^2 (recording k)
 *   pcg_spmv       q = A p, partials of p.q
 *   pcg_update     alpha = rho_k / p.q, x += alpha p, r_old = r, r -= alpha q, partials of r.r
 * The stop test and breakdown (p.q <= 0) are recorded in the state buffer; every later launch
 * does nothing, so the host may read the state late and still gets the iterate and count at
 * which the test first held.  Reductions: a fixed grid of groups striding over the rows, one
 * partial per group, re-added in the same fixed order by every group that needs the total. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef PCG_WGS
#define PCG_WGS 256
#endif
#ifndef PCG_ROW_LANES
#define PCG_ROW_LANES 4
#endif
#ifdef EF_ROW_PTR_64
typedef long pcg_rp_t;
#else
typedef int pcg_rp_t;
#endif

/* State slots (doubles); mirrored in opencl_pcg.c. */
#define PS_BB 0    /* ||b||^2 */
#define PS_TOL2 1  /* rtol^2 ||b||^2 */
#define PS_SD 2    /* by parity of k: the stop seen by pcg_direction k (iterations, -1: running) */
#define PS_SU 11   /* iteration of a breakdown seen by pcg_update, -1: none */
#define PS_RHO 4   /* rho_k by parity of k (2 slots) */
#define PS_RR 6    /* ||r||^2 at the last test */
#define PS_OUT 7   /* results of pcg_reduce (4 slots) */
/* Each slot is written by one kernel kind and read only by later launches. */

double pcg_group_sum(double v, __local double *red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = PCG_WGS >> 1; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double t = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return t;
}

double pcg_sum_partials(__global const double *part, const int count, __local double *red) {
  double a = 0.0;
  for (int j = get_local_id(0); j < count; j += PCG_WGS) a += part[j];
  return pcg_group_sum(a, red);
}

#define PCG_LEAD (get_group_id(0) == 0 && get_local_id(0) == 0)

/* r = r_old = b - A x; partials of b.b (part_bb) and r.r (part_rr); state reset. */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_init(const int n, __global const pcg_rp_t *restrict rp, __global const int *restrict col,
              __global const double *restrict val, __global const double *restrict b,
              __global const double *restrict x, __global double *restrict r, __global double *restrict rold,
              __global double *restrict part_bb,
              __global double *restrict part_rr, __global double *state) {
  __local double red[PCG_WGS];
  double bb = 0.0, rr = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    double s = b[i];
    for (pcg_rp_t j = rp[i]; j < rp[i + 1]; ++j) s -= val[j] * x[col[j]];
    r[i] = s;
    rold[i] = s; /* defined before the first pcg_dot reads it (its term is unused at k = 0) */
    bb += b[i] * b[i];
    rr += s * s;
  }
  const double sb = pcg_group_sum(bb, red), sr = pcg_group_sum(rr, red);
  if (get_local_id(0) == 0) {
    part_bb[get_group_id(0)] = sb;
    part_rr[get_group_id(0)] = sr;
  }
  if (PCG_LEAD) {
    state[PS_SD] = state[PS_SD + 1] = -1.0;
    state[PS_SU] = -1.0;
  }
}

/* Partials (5 G doubles): r.z, r_old.z, sum z, sum r, sum r_old. */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_dot(const int n, __global const double *restrict r, __global const double *restrict z,
             __global const double *restrict rold, const int flexible, __global double *restrict part) {
  __local double red[PCG_WGS];
  double a = 0.0, b = 0.0, c = 0.0, d = 0.0, e = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double zi = z[i], ri = r[i], oi = flexible ? rold[i] : 0.0;
    a += ri * zi;
    b += oi * zi;
    c += zi;
    d += ri;
    e += oi;
  }
  const double sa = pcg_group_sum(a, red), sb = pcg_group_sum(b, red), sc = pcg_group_sum(c, red);
  const double sd = pcg_group_sum(d, red), se = pcg_group_sum(e, red);
  if (get_local_id(0) == 0) {
    const int g = get_group_id(0), G = get_num_groups(0);
    part[g] = sa;
    part[G + g] = sb;
    part[2 * G + g] = sc;
    part[3 * G + g] = sd;
    part[4 * G + g] = se;
  }
}

/* Stop test on ||r_k||, then beta and p = z' + beta p (see the file comment). */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_direction(const int n, __global const double *restrict z, __global double *restrict p,
                   __global const double *restrict part, __global const double *restrict part_rr,
                   __global const double *restrict part_bb, const int groups, const int k, const int flexible,
                   const int null_space, const double rtol, __global double *state) {
  __local double red[PCG_WGS];
  const double prev = k > 0 ? state[PS_SD + ((k + 1) & 1)] : -1.0; /* direction k - 1's */
  const int stopped = prev >= 0.0 || (k > 0 && state[PS_SU] >= 0.0);
  const double rr = pcg_sum_partials(part_rr, groups, red);
  /* Every barrier outside any branch (compilers differ on barriers in uniform branches). */
  const double bb = pcg_sum_partials(part_bb, groups, red);
  const double tol2 = k == 0 ? rtol * rtol * bb : state[PS_TOL2];
  if (k == 0 && PCG_LEAD) {
    state[PS_BB] = bb;
    state[PS_TOL2] = tol2;
  }
  const double rz = pcg_sum_partials(part, groups, red), oz = pcg_sum_partials(part + groups, groups, red);
  const double sz = pcg_sum_partials(part + 2 * groups, groups, red);
  const double sr = pcg_sum_partials(part + 3 * groups, groups, red);
  const double so = pcg_sum_partials(part + 4 * groups, groups, red);
  const double m = null_space ? sz / (double)n : 0.0;
  const double rho = rz - m * sr, rho_old_term = flexible ? oz - m * so : 0.0;
  const int stop = !stopped && rr <= tol2;
  if (PCG_LEAD) {
    state[PS_SD + (k & 1)] = stopped ? (prev >= 0.0 ? prev : state[PS_SU]) : stop ? (double)k : -1.0;
    if (!stopped) {
      state[PS_RR] = rr;
      state[PS_RHO + (k & 1)] = rho;
    }
  }
  /* No early return anywhere in these kernels: some compilers mishandle it around barriers. */
  const int active = !stopped && !stop;
  const double beta = (k == 0 || !active) ? 0.0 : (rho - rho_old_term) / state[PS_RHO + ((k + 1) & 1)];
  for (int i = get_global_id(0); active && i < n; i += get_global_size(0))
    p[i] = k == 0 ? z[i] - m : (z[i] - m) + beta * p[i];
}

/* q = A p, partials of p.q; PCG_ROW_LANES items per row (consecutive entries, lane sums added
 * in lane order), the groups striding over blocks of PCG_WGS / PCG_ROW_LANES rows. */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_spmv(const int n, __global const pcg_rp_t *restrict rp, __global const int *restrict col,
              __global const double *restrict val, __global const double *restrict p, __global double *restrict q,
              __global double *restrict part_pq, const int k, __global const double *state) {
  __local double red[PCG_WGS];
  const int stopped = state[PS_SD + (k & 1)] >= 0.0;
  const int rows_per_block = PCG_WGS / PCG_ROW_LANES;
  const int blocks = stopped ? 0 : (n + rows_per_block - 1) / rows_per_block;
  const int lid = get_local_id(0), lane = (int)(get_local_id(0) & (PCG_ROW_LANES - 1));
  const int base = (int)(get_local_id(0) & ~(size_t)(PCG_ROW_LANES - 1));
  double a = 0.0;
  for (int blk = get_group_id(0); blk < blocks; blk += get_num_groups(0)) {
    const int i = blk * rows_per_block + (int)(get_local_id(0) / PCG_ROW_LANES);
    double s = 0.0;
    if (i < n)
      for (pcg_rp_t j = rp[i] + lane; j < rp[i + 1]; j += PCG_ROW_LANES) s += val[j] * p[col[j]];
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && i < n) {
      double t = 0.0;
      for (int l = 0; l < PCG_ROW_LANES; ++l) t += red[base + l];
      q[i] = t;
      a += p[i] * t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double t = pcg_group_sum(a, red);
  if (get_local_id(0) == 0) part_pq[get_group_id(0)] = t;
}

/* alpha = rho_k / p.q; x += alpha p; r_old = r (flexible); r -= alpha q; partials of r.r. */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_update(const int n, __global const double *restrict p, __global const double *restrict q,
                __global double *restrict x, __global double *restrict r, __global double *restrict rold,
                __global const double *restrict part_pq, const int groups, const int k, const int flexible,
                __global double *restrict part_rr, __global double *state) {
  __local double red[PCG_WGS];
  const int stopped = state[PS_SD + (k & 1)] >= 0.0;
  const double pq = pcg_sum_partials(part_pq, groups, red);
  const int broken = !stopped && !(pq > 0.0 && isfinite(pq));
  if (broken && PCG_LEAD) state[PS_SU] = (double)k;
  const int active = !stopped && !broken;
  const double alpha = active ? state[PS_RHO + (k & 1)] / pq : 0.0;
  double a = 0.0;
  for (int i = get_global_id(0); active && i < n; i += get_global_size(0)) {
    x[i] += alpha * p[i];
    const double ri = r[i];
    if (flexible) rold[i] = ri;
    const double rn = ri - alpha * q[i];
    r[i] = rn;
    a += rn * rn;
  }
  const double t = pcg_group_sum(a, red);
  if (active && get_local_id(0) == 0) part_rr[get_group_id(0)] = t;
}

/* Partials of ||b - A x||^2 and ||b||^2. */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_residual(const int n, __global const pcg_rp_t *restrict rp, __global const int *restrict col,
                  __global const double *restrict val, __global const double *restrict b,
                  __global const double *restrict x, __global double *restrict part_a,
                  __global double *restrict part_b) {
  __local double red[PCG_WGS];
  double ra = 0.0, bb = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    double s = b[i];
    for (pcg_rp_t j = rp[i]; j < rp[i + 1]; ++j) s -= val[j] * x[col[j]];
    ra += s * s;
    bb += b[i] * b[i];
  }
  const double sa = pcg_group_sum(ra, red), sb = pcg_group_sum(bb, red);
  if (get_local_id(0) == 0) {
    part_a[get_group_id(0)] = sa;
    part_b[get_group_id(0)] = sb;
  }
}

/* state[slot] = sum of part[0..count) (one group). */
__kernel __attribute__((reqd_work_group_size(PCG_WGS, 1, 1)))
void pcg_reduce(__global const double *restrict part, const int count, __global double *state, const int slot) {
  __local double red[PCG_WGS];
  const double s = pcg_sum_partials(part, count, red);
  if (get_local_id(0) == 0) state[slot] = s;
}

/* renumber_spatial.c -- node order along a Morton (Z-order) curve of the coordinates: a locality
 * ordering that needs no node graph, for ef_mesh_renumber's "morton" (see ef_mesh_tools.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"
#include "renumber_private.h"
#include "core_parallel.h"

/* The low 21 bits of v spread to every third bit of the result (bit b to bit 3b), by shift-and-mask
 * steps that halve the block size each time. */
static uint64_t ef_spread3(uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & UINT64_C(0x001f00000000ffff);
  v = (v | v << 16) & UINT64_C(0x001f0000ff0000ff);
  v = (v | v << 8) & UINT64_C(0x100f00f00f00f00f);
  v = (v | v << 4) & UINT64_C(0x10c30c30c30c30c3);
  v = (v | v << 2) & UINT64_C(0x1249249249249249);
  return v;
}

/* The low 31 bits of v spread to every second bit (bit b to bit 2b). */
static uint64_t ef_spread2(uint64_t v) {
  v &= 0x7fffffff;
  v = (v | v << 16) & UINT64_C(0x0000ffff0000ffff);
  v = (v | v << 8) & UINT64_C(0x00ff00ff00ff00ff);
  v = (v | v << 4) & UINT64_C(0x0f0f0f0f0f0f0f0f);
  v = (v | v << 2) & UINT64_C(0x3333333333333333);
  v = (v | v << 1) & UINT64_C(0x5555555555555555);
  return v;
}

/* Stable sort of the m pairs of src by key into dst, where the keys differ only in their low `bits`
 * bits: insertion sort when short, else LSD radix passes of 8 bits over the digits that vary, between
 * dst and src (src is scratch). */
static void ef_sort_bucket(uint64_t *src_k, ef_index *src_v, uint64_t *dst_k, ef_index *dst_v, int64_t m, int bits) {
  if (m <= 48 || bits == 0) {
    memcpy(dst_k, src_k, (size_t)m * sizeof *dst_k);
    memcpy(dst_v, src_v, (size_t)m * sizeof *dst_v);
    for (int64_t i = 1; i < m; ++i) {
      const uint64_t k = dst_k[i];
      const ef_index v = dst_v[i];
      int64_t j = i - 1;
      while (j >= 0 && dst_k[j] > k) {
        dst_k[j + 1] = dst_k[j];
        dst_v[j + 1] = dst_v[j];
        --j;
      }
      dst_k[j + 1] = k;
      dst_v[j + 1] = v;
    }
    return;
  }
  uint64_t vary = 0;
  for (int64_t i = 1; i < m; ++i) vary |= src_k[i] ^ src_k[0];
  uint64_t *in_k = src_k, *out_k = dst_k;
  ef_index *in_v = src_v, *out_v = dst_v;
  for (int shift = 0; shift < bits; shift += 8) {
    if (!((vary >> shift) & 0xff)) continue;
    int64_t count[256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < m; ++i) count[(in_k[i] >> shift) & 0xff]++;
    int64_t offset = 0;
    for (int d = 0; d < 256; ++d) {
      const int64_t c = count[d];
      count[d] = offset;
      offset += c;
    }
    for (int64_t i = 0; i < m; ++i) {
      const int64_t to = count[(in_k[i] >> shift) & 0xff]++;
      out_k[to] = in_k[i];
      out_v[to] = in_v[i];
    }
    uint64_t *tk = in_k;
    in_k = out_k;
    out_k = tk;
    ef_index *tv = in_v;
    in_v = out_v;
    out_v = tv;
  }
  if (in_k != dst_k) {
    memcpy(dst_k, in_k, (size_t)m * sizeof *dst_k);
    memcpy(dst_v, in_v, (size_t)m * sizeof *dst_v);
  }
}

/* Stable sort of (key, value) pairs by key, in place.  One MSD pass on the 11 highest bits that vary
 * (the pairs cut into a chunk per thread, digits counted per chunk, every chunk scattered in order
 * from offsets ordered by (digit, chunk)), then each bucket sorted on its own by the bits below
 * (ef_sort_bucket).  A stable sort's result is unique: the same for any number of threads. */
int ef_radix_sort_pairs(uint64_t *key, ef_index *value, int64_t n) {
  enum { RADIX = 11, BUCKETS = 1 << RADIX };
  if (n <= 1) return EF_SUCCESS;
  uint64_t vary = 0;
  EF_CORE_FOR(ef_core_parallel(n), "omp parallel for schedule(static) reduction(| : vary)",
              for (int64_t i = 1; i < n; ++i) vary |= key[i] ^ key[0];);
  if (!vary) return EF_SUCCESS; /* all keys equal: already in order */
  int high = 63;
  while (!((vary >> high) & 1)) --high;
  const int shift = high + 1 > RADIX ? high + 1 - RADIX : 0;
  const int chunks = ef_core_chunks(n);
  int err = EF_SUCCESS;
  uint64_t *key2 = malloc((size_t)n * sizeof *key2);
  ef_index *value2 = malloc((size_t)n * sizeof *value2);
  int64_t *count = malloc((size_t)chunks * BUCKETS * sizeof *count), *start = malloc((BUCKETS + 1) * sizeof *start);
  EF_CHECK_GOTO(key2 && value2 && count && start, EF_ERR_MEMORY, done, "out of memory sorting %lld keys",
                (long long)n);
  EF_CORE_FOR(
      chunks > 1, "omp parallel for schedule(static, 1)", for (int c = 0; c < chunks; ++c) {
        int64_t *h = count + (int64_t)c * BUCKETS;
        memset(h, 0, BUCKETS * sizeof *h);
        const int64_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
        for (int64_t i = lo; i < hi; ++i) h[(key[i] >> shift) & (BUCKETS - 1)]++;
      });
  int64_t offset = 0;
  for (int d = 0; d < BUCKETS; ++d) {
    start[d] = offset;
    for (int c = 0; c < chunks; ++c) {
      const int64_t m = count[(int64_t)c * BUCKETS + d];
      count[(int64_t)c * BUCKETS + d] = offset;
      offset += m;
    }
  }
  start[BUCKETS] = offset;
  EF_CORE_FOR(
      chunks > 1, "omp parallel for schedule(static, 1)", for (int c = 0; c < chunks; ++c) {
        int64_t *h = count + (int64_t)c * BUCKETS;
        const int64_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
        for (int64_t i = lo; i < hi; ++i) {
          const int64_t to = h[(key[i] >> shift) & (BUCKETS - 1)]++;
          key2[to] = key[i];
          value2[to] = value[i];
        }
      });
  EF_CORE_FOR(
      chunks > 1, "omp parallel for schedule(dynamic, 16)", for (int d = 0; d < BUCKETS; ++d) {
        const int64_t lo = start[d];
        ef_sort_bucket(key2 + lo, value2 + lo, key + lo, value + lo, start[d + 1] - lo, shift);
      });
done:
  free(key2);
  free(value2);
  free(count);
  free(start);
  return err;
}

/* Morton order of nodes [0, n): each coordinate of the nodes' bounding box quantised to 21 bits (3D)
 * or 31 bits (2D), the bits interleaved (x lowest), nodes sorted by key with ties in index order (a
 * stable radix sort); perm[old] = new. */
int ef_morton_permutation(const double *coords, int dim, int64_t n, ef_index *perm) {
  if (n == 0) return EF_SUCCESS;
  EF_CHECK(coords && perm && (dim == 2 || dim == 3), EF_ERR_PARAMETER, "Morton order: bad arguments");
  const int bits = dim == 3 ? 21 : 31;
  const double scale_max = (double)((UINT64_C(1) << bits) - 1);
  /* the bounding box (min and max are exact in any order); a NaN is reported below */
  double lo0 = coords[0], lo1 = coords[1], lo2 = coords[2], hi0 = lo0, hi1 = lo1, hi2 = lo2;
  EF_CORE_FOR(
      ef_core_parallel(n),
      "omp parallel for schedule(static) reduction(min : lo0, lo1, lo2) reduction(max : hi0, hi1, hi2)",
      for (int64_t i = 1; i < n; ++i) {
        const double *x = coords + 3 * i;
        if (x[0] < lo0) lo0 = x[0];
        if (x[0] > hi0) hi0 = x[0];
        if (x[1] < lo1) lo1 = x[1];
        if (x[1] > hi1) hi1 = x[1];
        if (dim == 3) {
          if (x[2] < lo2) lo2 = x[2];
          if (x[2] > hi2) hi2 = x[2];
        }
      });
  const double lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
  int err = EF_SUCCESS;
  uint64_t *key = malloc((size_t)n * sizeof *key);
  ef_index *order = malloc((size_t)n * sizeof *order);
  EF_CHECK_GOTO(key && order, EF_ERR_MEMORY, done,
                "out of memory for the Morton order of %lld nodes", (long long)n);
  int64_t first_nan = n;
  EF_CORE_FOR(
      ef_core_parallel(n), "omp parallel for schedule(static) reduction(min : first_nan)",
      for (int64_t i = 0; i < n; ++i) {
        uint64_t k = 0;
        for (int c = 0; c < dim; ++c) {
          const double x = coords[3 * i + c], extent = hi[c] - lo[c];
          if (x != x && i < first_nan) first_nan = i;
          double q = extent > 0.0 && x == x ? (x - lo[c]) / extent * scale_max : 0.0;
          if (q > scale_max) q = scale_max;
          k |= (dim == 3 ? ef_spread3((uint64_t)q) : ef_spread2((uint64_t)q)) << c;
        }
        key[i] = k;
        order[i] = (ef_index)i;
      });
  EF_CHECK_GOTO(first_nan == n, EF_ERR_MESH, done, "node index %lld has a coordinate that is not a number",
                (long long)first_nan);
  EF_CALL_GOTO(ef_radix_sort_pairs(key, order, n), done);
  EF_CORE_FOR(ef_core_parallel(n), "omp parallel for schedule(static)",
              for (int64_t k = 0; k < n; ++k) perm[order[k]] = (ef_index)k;);
done:
  free(key);
  free(order);
  return err;
}

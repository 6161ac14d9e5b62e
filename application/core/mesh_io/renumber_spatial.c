/* renumber_spatial.c -- node order along a Morton (Z-order) curve of the coordinates: a locality
 * ordering that needs no node graph, for ef_mesh_renumber's "morton" (see ef_mesh_tools.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"
#include "renumber_private.h"

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

/* Morton order of nodes [0, n): each coordinate of the nodes' bounding box quantised to 21 bits (3D)
 * or 31 bits (2D), the bits interleaved (x lowest), nodes sorted by key with ties in index order (a
 * stable radix sort); perm[old] = new. */
int ef_morton_permutation(const double *coords, int dim, int64_t n, ef_index *perm) {
  if (n == 0) return EF_SUCCESS;
  EF_CHECK(coords && perm && (dim == 2 || dim == 3), EF_ERR_PARAMETER, "Morton order: bad arguments");
  const int bits = dim == 3 ? 21 : 31;
  const double scale_max = (double)((UINT64_C(1) << bits) - 1);
  double lo[3], hi[3];
  for (int c = 0; c < 3; ++c) lo[c] = hi[c] = coords[c];
  for (int64_t i = 1; i < n; ++i)
    for (int c = 0; c < dim; ++c) {
      const double x = coords[3 * i + c];
      if (x < lo[c]) lo[c] = x;
      if (x > hi[c]) hi[c] = x;
    }
  int err = EF_SUCCESS;
  uint64_t *key = malloc((size_t)n * sizeof *key), *key2 = malloc((size_t)n * sizeof *key2);
  ef_index *order = malloc((size_t)n * sizeof *order), *order2 = malloc((size_t)n * sizeof *order2);
  EF_CHECK_GOTO(key && key2 && order && order2, EF_ERR_MEMORY, done,
                "out of memory for the Morton order of %lld nodes", (long long)n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t k = 0;
    for (int c = 0; c < dim; ++c) {
      const double x = coords[3 * i + c], extent = hi[c] - lo[c];
      EF_CHECK_GOTO(x == x, EF_ERR_MESH, done, "node index %lld has a coordinate that is not a number",
                    (long long)i);
      double q = extent > 0.0 ? (x - lo[c]) / extent * scale_max : 0.0;
      if (q > scale_max) q = scale_max;
      k |= (dim == 3 ? ef_spread3((uint64_t)q) : ef_spread2((uint64_t)q)) << c;
    }
    key[i] = k;
    order[i] = (ef_index)i;
  }
  /* LSD radix sort, 16 bits a pass; a pass whose digit is the same in every key is skipped */
  int64_t *count = calloc(65537, sizeof *count);
  EF_CHECK_GOTO(count, EF_ERR_MEMORY, done, "out of memory for the Morton order's radix sort");
  for (int shift = 0; shift < dim * bits; shift += 16) {
    memset(count, 0, 65537 * sizeof *count);
    for (int64_t i = 0; i < n; ++i) count[((key[i] >> shift) & 0xffff) + 1]++;
    if (count[((key[0] >> shift) & 0xffff) + 1] == n) continue;
    for (int d = 0; d < 65536; ++d) count[d + 1] += count[d];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = count[(key[i] >> shift) & 0xffff]++;
      key2[to] = key[i];
      order2[to] = order[i];
    }
    uint64_t *tk = key;
    key = key2;
    key2 = tk;
    ef_index *to = order;
    order = order2;
    order2 = to;
  }
  free(count);
  for (int64_t k = 0; k < n; ++k) perm[order[k]] = (ef_index)k;
done:
  free(key);
  free(key2);
  free(order);
  free(order2);
  return err;
}

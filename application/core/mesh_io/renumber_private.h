/* renumber_private.h -- node orders of the renumbering methods (renumber.c) and the index-list remapping that
 * the renumbering and the node permutation (model_part.c) share. */
#ifndef EF_RENUMBER_PRIVATE_H
#define EF_RENUMBER_PRIVATE_H

#include <stdint.h>

#include "edgeflow/ef_model_part.h"

/* Morton (Z-order) order of nodes [0, n) by their coordinates (3 doubles a node): perm[old] = new. */
int ef_morton_permutation(const double *coords, int dim, int64_t n, ef_index *perm);

/* Stable sort of (key, value) pairs by key, in place (in parallel; the same result for any thread count). */
int ef_radix_sort_pairs(uint64_t *key, ef_index *value, int64_t n);

/* list[0..n) mapped through map (values in [0, range)), sorted ascending without repeats; returns the new length.
 * A long list (n log n > range) is sorted by setting its entries in flags (range bytes, all 0 on entry and on
 * return) and reading them back in order (linear), a short one by qsort. */
int64_t ef_index_list_remap(ef_index *list, int64_t n, const ef_index *map, int64_t range, uint8_t *flags);

#endif

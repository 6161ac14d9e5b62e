/* renumber_private.h -- node orders shared by the renumbering methods of renumber.c. */
#ifndef EF_RENUMBER_PRIVATE_H
#define EF_RENUMBER_PRIVATE_H

#include <stdint.h>

#include "edgeflow/ef_model_part.h"

/* Morton (Z-order) order of nodes [0, n) by their coordinates (3 doubles a node): perm[old] = new. */
int ef_morton_permutation(const double *coords, int dim, int64_t n, ef_index *perm);

#endif

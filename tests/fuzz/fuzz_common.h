/* fuzz_common.h -- invariants every fuzz harness checks on what a reader accepted, and the
 * message rule for what it refused.  A broken invariant aborts, which libFuzzer reports. */
#ifndef EF_FUZZ_COMMON_H
#define EF_FUZZ_COMMON_H

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EF_FUZZ_ASSERT(cond)                                                       \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                     \
    }                                                                              \
  } while (0)

/* Every sub model part references only existing nodes, elements and conditions, sorted and unique. */
static inline void ef_fuzz_check_smp(const ef_model_part mp, const ef_sub_model_part *smp) {
  for (int64_t i = 0; i < smp->n_nodes; ++i) {
    EF_FUZZ_ASSERT(smp->nodes[i] >= 0 && smp->nodes[i] < mp->n_nodes);
    EF_FUZZ_ASSERT(i == 0 || smp->nodes[i] > smp->nodes[i - 1]);
  }
  for (int64_t i = 0; i < smp->n_elements; ++i)
    EF_FUZZ_ASSERT(smp->elements[i] >= 0 && smp->elements[i] < mp->n_elements);
  for (int64_t i = 0; i < smp->n_conditions; ++i)
    EF_FUZZ_ASSERT(smp->conditions[i] >= 0 && smp->conditions[i] < mp->n_conditions);
  for (int c = 0; c < smp->n_children; ++c) ef_fuzz_check_smp(mp, smp->children[c]);
}

/* A mesh a reader accepted: finite coordinates, connectivity in range, positive measures. */
static inline void ef_fuzz_check_model_part(const ef_model_part mp) {
  EF_FUZZ_ASSERT(mp->dim == 2 || mp->dim == 3);
  EF_FUZZ_ASSERT(mp->n_nodes >= 0 && mp->n_elements >= 0 && mp->n_conditions >= 0);
  for (int64_t i = 0; i < 3 * mp->n_nodes; ++i) EF_FUZZ_ASSERT(isfinite(mp->coords[i]));
  int64_t n_entries = mp->n_elements * mp->nodes_per_element;
  for (int64_t i = 0; i < n_entries; ++i) EF_FUZZ_ASSERT(mp->elements[i] >= 0 && mp->elements[i] < mp->n_nodes);
  for (int64_t e = 0; e < mp->n_elements; ++e) EF_FUZZ_ASSERT(ef_model_part_element_measure(mp, e) > 0.0);
  int64_t c_entries = mp->n_conditions * mp->nodes_per_condition;
  for (int64_t i = 0; i < c_entries; ++i)
    EF_FUZZ_ASSERT(mp->conditions[i] >= 0 && mp->conditions[i] < mp->n_nodes);
  for (int c = 0; c < mp->n_children; ++c) ef_fuzz_check_smp(mp, mp->children[c]);
  for (int v = 0; v < mp->n_variables; ++v) EF_FUZZ_ASSERT(mp->variables[v].n_components > 0);
}

/* A refusal carries a message. */
static inline void ef_fuzz_check_message(int err) {
  EF_FUZZ_ASSERT(err > 0);
  EF_FUZZ_ASSERT(ef_error_message()[0] != '\0');
}

#endif

/* test_refine_alloc.c -- out-of-memory handling of refinement and renumbering:
 * the k-th allocation inside the call fails, for every k.  Refinement must
 * fail with EF_ERR_MEMORY and leave the model part exactly as it was, or
 * succeed with the right counts; renumbering must fail with EF_ERR_MEMORY or
 * succeed; either way nothing may leak once the model part is destroyed.
 *
 * The allocations are counted and refused by ef_test_alloc.h; under
 * AddressSanitizer, which owns the allocator, the test is skipped. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_model_part.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ef_test_alloc.h"

#if EF_TEST_ALLOC

#include "ef_test.h"

/* A 3 x 3 grid of squares (18 triangles) with boundary lines, three sub
 * model parts (conditions, elements, a single node) and two variables;
 * returns NULL if any allocation of the set-up itself failed. */
static ef_model_part make_grid(void) {
  enum { N = 3 };
  ef_model_part mp = NULL;
  if (ef_model_part_create("Grid", 2, &mp)) return NULL;
  int ok = !ef_model_part_alloc_nodes(mp, (N + 1) * (N + 1)) && !ef_model_part_alloc_elements(mp, 2 * N * N, 3) &&
           !ef_model_part_alloc_conditions(mp, 4 * N, 2);
  if (ok) {
    for (int j = 0; j <= N; ++j)
      for (int i = 0; i <= N; ++i) {
        mp->coords[3 * (j * (N + 1) + i)] = i;
        mp->coords[3 * (j * (N + 1) + i) + 1] = j;
      }
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        const ef_index a = (ef_index)(j * (N + 1) + i), b = a + 1, c = a + N + 2, d = a + N + 1;
        ef_index *t = mp->elements + 6 * (j * N + i);
        t[0] = a, t[1] = b, t[2] = c, t[3] = a, t[4] = c, t[5] = d;
      }
    for (int i = 0; i < N; ++i) {
      ef_index *l = mp->conditions + 8 * i;
      l[0] = (ef_index)i, l[1] = (ef_index)(i + 1);                                         /* bottom */
      l[2] = (ef_index)(i * (N + 1) + N), l[3] = (ef_index)((i + 1) * (N + 1) + N);         /* right */
      l[4] = (ef_index)(N * (N + 1) + i + 1), l[5] = (ef_index)(N * (N + 1) + i);           /* top */
      l[6] = (ef_index)((i + 1) * (N + 1)), l[7] = (ef_index)(i * (N + 1));                 /* left */
    }
  }
  ef_sub_model_part *walls = NULL, *fluid = NULL, *ref = NULL;
  ok = ok && !ef_model_part_add_sub_model_part(mp, NULL, "walls", &walls) &&
       !ef_model_part_add_sub_model_part(mp, NULL, "fluid", &fluid) &&
       !ef_model_part_add_sub_model_part(mp, NULL, "ref", &ref);
  for (ef_index k = 0; ok && k < 4 * N; ++k) ok = !ef_sub_model_part_add_conditions(walls, &k, 1);
  for (ef_index k = 0; ok && k < 2 * N * N; ++k) ok = !ef_sub_model_part_add_elements(fluid, &k, 1);
  for (ef_index k = 0; ok && k < (N + 1) * (N + 1); ++k) ok = !ef_sub_model_part_add_nodes(fluid, &k, 1);
  const ef_index zero = 0;
  ok = ok && !ef_sub_model_part_add_nodes(ref, &zero, 1) && !ef_model_part_finalize_sub_model_parts(mp) &&
       !ef_model_part_add_variable(mp, "PRESSURE", 1) && !ef_model_part_add_variable(mp, "VELOCITY", 3);
  if (!ok) ef_model_part_destroy(&mp);
  return mp;
}

/* Refinement: every refused allocation gives EF_ERR_MEMORY and an untouched mesh. */
static void test_refine(void) {
  counting = 1;
  for (long k = 0;; ++k) {
    live = 0;
    fail_at = -1;
    ef_model_part mp = make_grid();
    if (!mp) {
      fprintf(stderr, "set-up failed without an injected failure\n");
      ++failures;
      return;
    }
    const int64_t n0 = mp->n_nodes, e0 = mp->n_elements, c0 = mp->n_conditions;
    const double *coords0 = mp->coords;
    fail_at = n_calls + k;
    const int rc = ef_mesh_refine_uniform(mp, 1);
    const int injected = n_calls > fail_at;
    fail_at = -1;
    if (rc) {
      EXPECT(injected && rc == EF_ERR_MEMORY, "allocation %ld: %s (%s)", k, ef_error_name(rc), ef_error_message());
      EXPECT(mp->n_nodes == n0 && mp->n_elements == e0 && mp->n_conditions == c0 && mp->coords == coords0,
             "allocation %ld: a failed refinement changed the model part", k);
    } else {
      EXPECT(mp->n_nodes == 16 + 33 && mp->n_elements == 72 && mp->n_conditions == 24,
             "allocation %ld: wrong counts after refinement", k);
    }
    ef_model_part_destroy(&mp);
    EXPECT(live == 0, "refinement with allocation %ld refused: %ld blocks leaked", k, live);
    if (!injected) break;
  }
  counting = 0;
}

/* Renumbering: EF_ERR_MEMORY or success, never a leak. */
static void test_renumber(void) {
  counting = 1;
  for (long k = 0;; ++k) {
    live = 0;
    fail_at = -1;
    ef_model_part mp = make_grid();
    if (!mp || ef_mesh_refine_uniform(mp, 1)) {
      fprintf(stderr, "set-up failed without an injected failure\n");
      ++failures;
      ef_model_part_destroy(&mp);
      return;
    }
    fail_at = n_calls + k;
    const int rc = ef_mesh_renumber(mp, "rcm");
    const int injected = n_calls > fail_at;
    fail_at = -1;
    EXPECT(rc == EF_SUCCESS || (injected && rc == EF_ERR_MEMORY), "allocation %ld: %s (%s)", k, ef_error_name(rc),
           ef_error_message());
    ef_model_part_destroy(&mp);
    EXPECT(live == 0, "renumbering with allocation %ld refused: %ld blocks leaked", k, live);
    if (!injected) break;
  }
  counting = 0;
}

/* Run both sweeps; exit status 1 on any failure. */
int main(void) {
  test_refine();
  test_renumber();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
#else
/* Nothing to interpose here: skip. */
int main(void) { return 77; }
#endif

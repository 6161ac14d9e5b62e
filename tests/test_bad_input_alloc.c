/* test_bad_input_alloc.c -- out-of-memory handling of the readers and the model part:
 * the k-th allocation fails, for every k, and each read must either fail with
 * EF_ERR_MEMORY (or EF_ERR_IO when fopen's own buffer is the one refused) or
 * succeed with the right model part; either way nothing may stay allocated.
 *
 * The allocations are counted and refused by ef_test_alloc.h; under AddressSanitizer,
 * which owns the allocator, the test is skipped. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ef_test_alloc.h"

#if EF_TEST_ALLOC

typedef struct {
  long nodes, elements, conditions, children;
} shape;

/* Read path with allocation fail_at refused; 1 if the run hit the refusal. */
static int run(const char *path, long k, const shape *want, int *bad) {
  fail_at = k;
  n_calls = 0;
  live = 0;
  counting = 1;
  ef_model_part mp = NULL;
  int rc = ef_read_mesh(path, NULL, &mp);
  shape got = {0, 0, 0, 0};
  if (mp) got = (shape){(long)mp->n_nodes, (long)mp->n_elements, (long)mp->n_conditions, mp->n_children};
  ef_model_part_destroy(&mp);
  counting = 0;
  int hit = n_calls > k;
  long leaked = live;
  if (want) {
    int ok = rc == 0 ? memcmp(&got, want, sizeof got) == 0
                     : (rc == EF_ERR_MEMORY || rc == EF_ERR_IO) && hit && mp == NULL;
    if (!ok || leaked != 0) {
      fprintf(stderr, "%s, allocation %ld refused: rc=%s leaked=%ld (%s)\n", path, k, ef_error_name(rc), leaked,
              rc ? ef_error_message() : "result differs");
      ++*bad;
    }
  }
  return hit;
}

/* Renumbering with each of its allocations refused: failure leaves the model part as it was. */
static void check_permute(int *bad) {
  ef_model_part mp = NULL;
  if (ef_read_mesh(EF_TEST_DATA "/mesh_io/features.mdpa", NULL, &mp)) {
    ++*bad;
    return;
  }
  ef_index perm[6] = {5, 4, 3, 2, 1, 0};
  int64_t ids[6];
  memcpy(ids, mp->node_ids, sizeof ids);
  for (long k = 0;; ++k) {
    fail_at = k;
    n_calls = 0;
    counting = 1;
    long before = live = 0;
    int rc = ef_model_part_permute_nodes(mp, perm);
    counting = 0;
    if (n_calls <= k) { /* nothing refused: it must have worked */
      if (rc != 0 || mp->node_ids[0] != ids[5]) ++*bad;
      break;
    }
    if (rc != EF_ERR_MEMORY || live != before || memcmp(ids, mp->node_ids, sizeof ids) != 0) {
      fprintf(stderr, "permute, allocation %ld refused: rc=%s live=%ld\n", k, ef_error_name(rc), live);
      ++*bad;
    }
  }
  ef_model_part_destroy(&mp);
}

int main(void) {
  static const char *files[] = {EF_TEST_DATA "/mesh_io/features.mdpa", EF_TEST_DATA "/mesh_io/square_41.msh",
                                EF_TEST_DATA "/mesh_io/square_41_bin.msh", EF_TEST_DATA "/mesh_io/square_22.msh",
                                EF_TEST_DATA "/mesh_io/box_41.msh"};
  int bad = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f) {
    /* The reference: no refusal. */
    ef_model_part mp = NULL;
    if (ef_read_mesh(files[f], NULL, &mp)) {
      fprintf(stderr, "%s: %s\n", files[f], ef_error_message());
      return 1;
    }
    shape want = {(long)mp->n_nodes, (long)mp->n_elements, (long)mp->n_conditions, mp->n_children};
    ef_model_part_destroy(&mp);
    long k = 0;
    /* Every allocation in turn, until a run makes fewer allocations than k (none refused). */
    while (k < 100000 && run(files[f], k, &want, &bad)) ++k;
    if (k < 10) {
      fprintf(stderr, "%s: only %ld allocations seen; the interposition does not work\n", files[f], k);
      ++bad;
    }
  }
  check_permute(&bad);
  return bad ? 1 : 0;
}
#else
int main(void) {
  fprintf(stderr, "skipping: allocation interposition needs glibc without AddressSanitizer\n");
  return 77;
}
#endif

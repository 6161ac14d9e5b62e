/* test_model_part_split.c -- a rank's piece of a partitioned mesh as a model part
 * (ef_model_part_split of ef_partition.h, ef_model_part_extract of ef_model_part.h).
 *
 * On the 2D cavity (tests/data/petsc/cavity2d.msh) and the 3D cavity (test_examples) with their
 * conditions and sub model parts, every piece of slab partitions (P = 1, 2, 3; no METIS needed) and
 * of METIS partitions (MPI builds): nodes are the partition's (owned first, n_owned_nodes), with the
 * file's ids and coordinates; the elements are exactly those with an owned node; the conditions
 * exactly those with an owned node, each once per piece, in file order; every sub model part holds
 * exactly the piece's share of the global one (nodes, elements, conditions, compared by id); the
 * nodal variables (values and fixity) and properties are copied; P = 1 gives the whole mesh; a
 * condition that is no face of an element is an error naming it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_partition.h"

static void slabs(ef_model_part mp, int P, int *part) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    lo = fmin(lo, mp->coords[3 * i]);
    hi = fmax(hi, mp->coords[3 * i]);
  }
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    int q = (int)floor((mp->coords[3 * i] - lo) / (hi - lo) * P);
    part[i] = q < 0 ? 0 : q >= P ? P - 1 : q;
  }
}

/* 1 when the sorted list (of global indices) holds x. */
static int holds(const ef_index *list, int64_t n, ef_index x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (list[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && list[lo] == x;
}

typedef struct {
  ef_model_part mp, piece;
  const ef_partition *p;
  const char *what;
  int64_t *global_condition; /* piece condition -> global condition */
} split_check;

/* The piece's sub model part at path holds exactly the global one's nodes, elements and conditions
 * that are on the piece. */
static int check_smp(ef_sub_model_part *g, const char *path, void *user) {
  split_check *c = user;
  ef_sub_model_part *l = ef_model_part_find_sub_model_part(c->piece, path);
  EXPECT(l, "%s: sub model part %s missing on the piece", c->what, path);
  if (!l) return EF_SUCCESS;
  int64_t n = 0;
  for (int64_t i = 0; i < c->p->n_nodes; ++i) n += holds(g->nodes, g->n_nodes, (ef_index)c->p->global_node[i]);
  EXPECT(l->n_nodes == n, "%s: %s has %lld nodes on the piece, expected %lld", c->what, path, (long long)l->n_nodes,
         (long long)n);
  for (int64_t k = 0; k < l->n_nodes; ++k)
    EXPECT(holds(g->nodes, g->n_nodes, (ef_index)c->p->global_node[l->nodes[k]]), "%s: %s: node %lld is not the global part's",
           c->what, path, (long long)c->piece->node_ids[l->nodes[k]]);
  n = 0;
  for (int64_t e = 0; e < c->p->n_elements; ++e) n += holds(g->elements, g->n_elements, (ef_index)c->p->global_element[e]);
  EXPECT(l->n_elements == n, "%s: %s has %lld elements, expected %lld", c->what, path, (long long)l->n_elements,
         (long long)n);
  n = 0;
  for (int64_t k = 0; k < c->piece->n_conditions; ++k)
    n += holds(g->conditions, g->n_conditions, (ef_index)c->global_condition[k]);
  EXPECT(l->n_conditions == n, "%s: %s has %lld conditions, expected %lld", c->what, path, (long long)l->n_conditions,
         (long long)n);
  for (int64_t k = 0; k < l->n_conditions; ++k)
    EXPECT(holds(g->conditions, g->n_conditions, (ef_index)c->global_condition[l->conditions[k]]),
           "%s: %s: condition %lld is not the global part's", c->what, path,
           (long long)c->piece->condition_ids[l->conditions[k]]);
  return EF_SUCCESS;
}

static void check_split(ef_model_part mp, const int *part, int P, const char *kind) {
  const int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  int64_t owned_total = 0, elements_total = 0;
  int64_t *condition_count = calloc((size_t)mp->n_conditions + 1, sizeof *condition_count);
  for (int r = 0; r < P; ++r) {
    char what[128];
    snprintf(what, sizeof what, "%dD %s P=%d rank %d", mp->dim, kind, P, r);
    ef_partition p;
    ef_model_part q = NULL;
    EXPECT_OK(ef_partition_build(mp, part, r, P, &p));
    EXPECT_OK(ef_model_part_split(mp, &p, &q));
    if (!q) {
      ef_partition_free(&p);
      continue;
    }
    EXPECT(q->dim == mp->dim && !strcmp(q->name, mp->name), "%s: dimension and name", what);
    EXPECT(q->n_nodes == p.n_nodes && q->n_owned_nodes == p.n_owned, "%s: %lld nodes (%lld owned), expected %lld (%lld)",
           what, (long long)q->n_nodes, (long long)q->n_owned_nodes, (long long)p.n_nodes, (long long)p.n_owned);
    owned_total += q->n_owned_nodes;
    for (int64_t i = 0; i < q->n_nodes; ++i) {
      const int64_t g = p.global_node[i];
      EXPECT(q->node_ids[i] == mp->node_ids[g] && !memcmp(q->coords + 3 * i, mp->coords + 3 * g, 3 * sizeof(double)),
             "%s: node %lld: id or coordinates", what, (long long)i);
      EXPECT((i < q->n_owned_nodes) == (part[g] == r), "%s: node id %lld owned by %d, local %lld of %lld owned", what,
             (long long)mp->node_ids[g], part[g], (long long)i, (long long)q->n_owned_nodes);
    }
    /* Elements: exactly those with an owned node. */
    int64_t expect_elements = 0;
    for (int64_t e = 0; e < mp->n_elements; ++e) {
      int owned = 0;
      for (int k = 0; k < npe; ++k) owned |= part[mp->elements[e * npe + k]] == r;
      expect_elements += owned;
    }
    EXPECT(q->n_elements == expect_elements, "%s: %lld elements, expected %lld", what, (long long)q->n_elements,
           (long long)expect_elements);
    elements_total += q->n_elements;
    for (int64_t e = 0; e < q->n_elements; ++e) {
      const int64_t g = p.global_element[e];
      EXPECT(q->element_ids[e] == mp->element_ids[g] && q->element_properties[e] == mp->element_properties[g],
             "%s: element %lld id or property", what, (long long)e);
      for (int k = 0; k < npe; ++k)
        EXPECT(p.global_node[q->elements[e * npe + k]] == mp->elements[g * npe + k], "%s: element id %lld node %d", what,
               (long long)q->element_ids[e], k);
    }
    /* Conditions: exactly those with an owned node, in file order. */
    split_check c = {mp, q, &p, what, malloc((size_t)(q->n_conditions + 1) * sizeof(int64_t))};
    int64_t k = 0;
    for (int64_t g = 0; g < mp->n_conditions; ++g) {
      int owned = 0;
      for (int j = 0; j < npc; ++j) owned |= part[mp->conditions[g * npc + j]] == r;
      if (!owned) continue;
      condition_count[g]++;
      EXPECT(k < q->n_conditions && q->condition_ids[k] == mp->condition_ids[g], "%s: condition %lld should be id %lld",
             what, (long long)k, (long long)mp->condition_ids[g]);
      if (k < q->n_conditions) {
        c.global_condition[k] = g;
        for (int j = 0; j < npc; ++j)
          EXPECT(p.global_node[q->conditions[k * npc + j]] == mp->conditions[g * npc + j], "%s: condition id %lld node %d",
                 what, (long long)mp->condition_ids[g], j);
      }
      k++;
    }
    EXPECT(k == q->n_conditions, "%s: %lld conditions, expected %lld", what, (long long)q->n_conditions, (long long)k);
    if (k == q->n_conditions) EXPECT_OK(ef_model_part_visit_sub_model_parts(mp, check_smp, &c));
    free(c.global_condition);
    /* Variables and properties. */
    EXPECT(q->n_variables == mp->n_variables, "%s: %d variables, expected %d", what, q->n_variables, mp->n_variables);
    for (int v = 0; v < mp->n_variables; ++v) {
      ef_variable *a = &mp->variables[v], *b = ef_model_part_find_variable(q, a->name);
      EXPECT(b && b->n_components == a->n_components, "%s: variable %s", what, a->name);
      if (!b) continue;
      for (int64_t i = 0; i < q->n_nodes; ++i)
        for (int m = 0; m < a->n_components; ++m) {
          const int64_t gi = p.global_node[i] * a->n_components + m, li = i * a->n_components + m;
          EXPECT(b->values[li] == a->values[gi] && b->fixed[li] == a->fixed[gi], "%s: %s at node id %lld", what, a->name,
                 (long long)q->node_ids[i]);
        }
    }
    double rho = 0.0;
    EXPECT(ef_model_part_get_property(q, 1, "DENSITY", &rho) && rho == 1.25, "%s: property 1 DENSITY", what);
    if (P == 1) {
      EXPECT(q->n_nodes == mp->n_nodes && q->n_elements == mp->n_elements && q->n_conditions == mp->n_conditions &&
                 !memcmp(q->coords, mp->coords, (size_t)mp->n_nodes * 3 * sizeof(double)) &&
                 !memcmp(q->elements, mp->elements, (size_t)(mp->n_elements * npe) * sizeof(ef_index)),
             "%s: one piece is the whole mesh", what);
    }
    ef_model_part_destroy(&q);
    ef_partition_free(&p);
  }
  EXPECT(owned_total == mp->n_nodes, "%dD %s P=%d: %lld owned nodes of %lld", mp->dim, kind, P, (long long)owned_total,
         (long long)mp->n_nodes);
  EXPECT(elements_total >= mp->n_elements, "%dD %s P=%d: the pieces cover the elements", mp->dim, kind, P);
  for (int64_t g = 0; g < mp->n_conditions; ++g)
    EXPECT(condition_count[g] >= 1, "%dD %s P=%d: condition id %lld on no piece", mp->dim, kind, P,
           (long long)mp->condition_ids[g]);
  free(condition_count);
}

int main(void) {
  const char *meshes[2] = {EF_TEST_DATA "/petsc/cavity2d.msh", EF_SOURCE_DIR "/test_examples/cavity3d/cavity3d.msh"};
  for (int m = 0; m < 2; ++m) {
    ef_model_part mp = NULL;
    EXPECT_OK(ef_read_mesh(meshes[m], "gmsh", &mp));
    if (!mp) continue;
    EXPECT(mp->n_conditions > 0 && mp->n_children > 0, "%s has conditions and sub model parts", meshes[m]);
    EXPECT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
    EXPECT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
    EXPECT_OK(ef_model_part_set_property(mp, 1, "DENSITY", 1.25));
    ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY"), *pr = ef_model_part_find_variable(mp, "PRESSURE");
    for (int64_t i = 0; i < mp->n_nodes; ++i) {
      for (int c = 0; c < 3; ++c) u->values[3 * i + c] = 1000.0 * (double)mp->node_ids[i] + c;
      u->fixed[3 * i] = (uint8_t)(i % 3 == 0);
      pr->values[i] = -0.5 * (double)mp->node_ids[i];
      pr->fixed[i] = (uint8_t)(i % 7 == 0);
    }
    int *part = malloc((size_t)mp->n_nodes * sizeof *part);
    ASSERT(part, "out of memory");
    for (int P = 1; P <= 3; ++P) {
      slabs(mp, P, part);
      check_split(mp, part, P, "slabs");
      int err = ef_mesh_partition_nodes(mp, P, part);
      if (err == EF_ERR_UNSUPPORTED) {
        ef_error_clear(); /* no METIS in this build */
        continue;
      }
      EXPECT_OK(err);
      if (!err) check_split(mp, part, P, "METIS");
    }
    /* A condition whose nodes are on no common element with an owned node: not a face of an element. */
    if (mp->dim == 2) {
      slabs(mp, 2, part);
      ef_partition p;
      EXPECT_OK(ef_partition_build(mp, part, 0, 2, &p));
      int64_t owned = -1, far = -1;
      for (int64_t i = 0; i < mp->n_nodes && (owned < 0 || far < 0); ++i) {
        int on_piece = 0;
        for (int64_t l = 0; l < p.n_nodes; ++l) on_piece |= p.global_node[l] == i;
        if (part[i] == 0 && owned < 0) owned = i;
        if (!on_piece && far < 0) far = i;
      }
      ASSERT(owned >= 0 && far >= 0, "nodes for the bad condition");
      mp->conditions[0] = (ef_index)owned;
      mp->conditions[1] = (ef_index)far;
      ef_model_part q = NULL;
      EXPECT_FAIL(ef_model_part_split(mp, &p, &q), EF_ERR_MESH, "a condition must be a face of an element");
      EXPECT(!q, "no piece on failure");
      ef_partition_free(&p);
    }
    free(part);
    ef_model_part_destroy(&mp);
  }
  if (failures) fprintf(stderr, "test_model_part_split: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}

/* test_renumber.c -- reverse Cuthill-McKee renumbering: the bandwidth drops,
 * the mesh is the same mesh (every element id keeps its node-id tuple, every
 * node id its coordinates and values, the volume is unchanged), sub model
 * parts name the same file ids, elements come sorted by smallest node,
 * components stay contiguous and halo nodes stay in place. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_model_part.h"

#include "ef_test.h"

/* Zeroed, so that the gaps between file ids compare equal. */
static void *xmalloc(size_t bytes) {
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* qsort order of ids: ascending. */
static int cmp_i64(const void *pa, const void *pb) {
  const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return (a > b) - (a < b);
}

/* A picture of the mesh in file ids only, independent of internal numbering. */
typedef struct {
  int64_t n_nodes, n_elements, n_conditions, max_node_id, max_element_id, max_condition_id;
  double *coords_by_id;     /* 3 per node id */
  double *pressure_by_id;   /* a nodal value per node id */
  int64_t *element_by_id;   /* 4 node ids per element id */
  int64_t *condition_by_id; /* 3 node ids per condition id */
  int64_t *element_prop_by_id;
  double volume;
  int n_smps;
  int64_t *smp_counts[3];   /* node, element, condition counts per sub model part */
  int64_t **smp_ids[3];     /* sorted file ids per sub model part */
} snapshot;

static const char *smp_names[] = {"lid", "walls", "fluid", "pressure_reference", "fluid.left"};
enum { N_SMPS = 5 };

/* Largest entry of a (0 when empty). */
static int64_t max_of(const int64_t *a, int64_t n) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i)
    if (a[i] > m) m = a[i];
  return m;
}

/* Record the mesh by file ids (coordinates, tuples, values, parts, volume). */
static void take_snapshot(ef_model_part mp, snapshot *s) {
  memset(s, 0, sizeof *s);
  s->n_nodes = mp->n_nodes;
  s->n_elements = mp->n_elements;
  s->n_conditions = mp->n_conditions;
  s->max_node_id = max_of(mp->node_ids, mp->n_nodes);
  s->max_element_id = max_of(mp->element_ids, mp->n_elements);
  s->max_condition_id = max_of(mp->condition_ids, mp->n_conditions);
  s->coords_by_id = xmalloc((size_t)(3 * (s->max_node_id + 1)) * sizeof(double));
  s->pressure_by_id = xmalloc((size_t)(s->max_node_id + 1) * sizeof(double));
  s->element_by_id = xmalloc((size_t)(4 * (s->max_element_id + 1)) * sizeof(int64_t));
  s->element_prop_by_id = xmalloc((size_t)(s->max_element_id + 1) * sizeof(int64_t));
  s->condition_by_id = xmalloc((size_t)(3 * (s->max_condition_id + 1)) * sizeof(int64_t));
  const ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    memcpy(s->coords_by_id + 3 * mp->node_ids[i], mp->coords + 3 * i, 3 * sizeof(double));
    s->pressure_by_id[mp->node_ids[i]] = p ? p->values[i] : 0.0;
  }
  s->volume = 0.0;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    for (int k = 0; k < 4; ++k) s->element_by_id[4 * mp->element_ids[e] + k] = mp->node_ids[mp->elements[4 * e + k]];
    s->element_prop_by_id[mp->element_ids[e]] = mp->element_properties[e];
    s->volume += ef_model_part_element_measure(mp, e);
  }
  for (int64_t c = 0; c < mp->n_conditions; ++c)
    for (int k = 0; k < 3; ++k)
      s->condition_by_id[3 * mp->condition_ids[c] + k] = mp->node_ids[mp->conditions[3 * c + k]];
  s->n_smps = N_SMPS;
  for (int w = 0; w < 3; ++w) {
    s->smp_counts[w] = xmalloc(N_SMPS * sizeof(int64_t));
    s->smp_ids[w] = xmalloc(N_SMPS * sizeof(int64_t *));
  }
  for (int k = 0; k < N_SMPS; ++k) {
    ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, smp_names[k]);
    if (!smp) {
      fprintf(stderr, "sub model part %s missing\n", smp_names[k]);
      exit(1);
    }
    const int64_t counts[3] = {smp->n_nodes, smp->n_elements, smp->n_conditions};
    const ef_index *lists[3] = {smp->nodes, smp->elements, smp->conditions};
    const int64_t *ids[3] = {mp->node_ids, mp->element_ids, mp->condition_ids};
    for (int w = 0; w < 3; ++w) {
      s->smp_counts[w][k] = counts[w];
      s->smp_ids[w][k] = xmalloc((size_t)counts[w] * sizeof(int64_t));
      for (int64_t j = 0; j < counts[w]; ++j) s->smp_ids[w][k][j] = ids[w][lists[w][j]];
      qsort(s->smp_ids[w][k], (size_t)counts[w], sizeof(int64_t), cmp_i64);
    }
  }
}

/* Free a snapshot. */
static void free_snapshot(snapshot *s) {
  free(s->coords_by_id);
  free(s->pressure_by_id);
  free(s->element_by_id);
  free(s->element_prop_by_id);
  free(s->condition_by_id);
  for (int w = 0; w < 3; ++w) {
    for (int k = 0; k < s->n_smps; ++k) free(s->smp_ids[w][k]);
    free(s->smp_ids[w]);
    free(s->smp_counts[w]);
  }
}

/* The two snapshots describe the same mesh. */
static void compare_snapshots(const snapshot *a, const snapshot *b) {
  EXPECT(a->n_nodes == b->n_nodes && a->n_elements == b->n_elements && a->n_conditions == b->n_conditions,
         "counts changed");
  EXPECT(a->max_node_id == b->max_node_id && a->max_element_id == b->max_element_id, "id ranges changed");
  if (a->max_node_id != b->max_node_id || a->max_element_id != b->max_element_id ||
      a->max_condition_id != b->max_condition_id)
    return;
  EXPECT(memcmp(a->coords_by_id, b->coords_by_id, (size_t)(3 * (a->max_node_id + 1)) * sizeof(double)) == 0,
         "a node id moved");
  EXPECT(memcmp(a->pressure_by_id, b->pressure_by_id, (size_t)(a->max_node_id + 1) * sizeof(double)) == 0,
         "a nodal value did not follow its node");
  EXPECT(memcmp(a->element_by_id, b->element_by_id, (size_t)(4 * (a->max_element_id + 1)) * sizeof(int64_t)) == 0,
         "an element id changed its node-id tuple");
  EXPECT(memcmp(a->element_prop_by_id, b->element_prop_by_id, (size_t)(a->max_element_id + 1) * sizeof(int64_t)) ==
             0,
         "an element lost its properties id");
  EXPECT(memcmp(a->condition_by_id, b->condition_by_id,
                (size_t)(3 * (a->max_condition_id + 1)) * sizeof(int64_t)) == 0,
         "a condition id changed its node-id tuple");
  /* the same elements in another order: the sum of volumes differs by rounding only (1e-13 relative) */
  EXPECT(fabs(a->volume - b->volume) <= 1e-13 * fabs(a->volume), "volume %.17g -> %.17g", a->volume, b->volume);
  for (int k = 0; k < a->n_smps; ++k)
    for (int w = 0; w < 3; ++w) {
      EXPECT(a->smp_counts[w][k] == b->smp_counts[w][k], "%s: list %d size changed", smp_names[k], w);
      if (a->smp_counts[w][k] == b->smp_counts[w][k])
        EXPECT(memcmp(a->smp_ids[w][k], b->smp_ids[w][k], (size_t)a->smp_counts[w][k] * sizeof(int64_t)) == 0,
               "%s: list %d names other file ids", smp_names[k], w);
    }
}

/* 1 when a is strictly increasing. */
static int sorted_unique(const ef_index *a, int64_t n) {
  for (int64_t i = 1; i < n; ++i)
    if (a[i] <= a[i - 1]) return 0;
  return 1;
}

/* Structural invariants after renumbering. */
static void check_order(ef_model_part mp) {
  ef_index previous = -1;
  int64_t unsorted = 0;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    ef_index lo = mp->elements[4 * e];
    for (int k = 1; k < 4; ++k)
      if (mp->elements[4 * e + k] < lo) lo = mp->elements[4 * e + k];
    unsorted += lo < previous;
    previous = lo;
  }
  EXPECT(unsorted == 0, "%lld elements out of smallest-node order", (long long)unsorted);
  for (int k = 0; k < N_SMPS; ++k) {
    const ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, smp_names[k]);
    EXPECT(sorted_unique(smp->nodes, smp->n_nodes) && sorted_unique(smp->elements, smp->n_elements) &&
               sorted_unique(smp->conditions, smp->n_conditions),
           "%s: lists must stay sorted and unique", smp_names[k]);
  }
}

/* The committed cavity with a PRESSURE variable and a part "fluid.left" holding the elements whose centre
 * has x < 0.3, so that element lists really get remapped. */
static ef_model_part cavity_with_left_part(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_read_mesh(EF_SOURCE_DIR "/test_examples/cavity3d/cavity3d.msh", NULL, &mp));
  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ef_sub_model_part *fluid = NULL, *left = NULL;
  ASSERT_OK(ef_model_part_get_sub_model_part(mp, "fluid", &fluid));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, fluid, "left", &left));
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    double x = 0.0;
    for (int k = 0; k < 4; ++k) x += 0.25 * mp->coords[3 * mp->elements[4 * e + k]];
    const ef_index idx = (ef_index)e;
    if (x < 0.3) ASSERT_OK(ef_sub_model_part_add_elements(left, &idx, 1));
  }
  ASSERT_OK(ef_model_part_finalize_sub_model_parts(mp));
  return mp;
}

/* The committed cavity, one level finer (new nodes at the end: a wide band). */
static void test_cavity(void) {
  ef_model_part mp = cavity_with_left_part();
  const int64_t bw_file = ef_mesh_bandwidth(mp);
  {
    /* the reader's numbering already improves under RCM */
    snapshot before, after;
    take_snapshot(mp, &before);
    ASSERT_OK(ef_mesh_renumber(mp, "rcm"));
    take_snapshot(mp, &after);
    compare_snapshots(&before, &after);
    free_snapshot(&before);
    free_snapshot(&after);
    const int64_t bw = ef_mesh_bandwidth(mp);
    EXPECT(bw < bw_file, "level 0: bandwidth %lld -> %lld did not decrease", (long long)bw_file, (long long)bw);
    printf("level 0: %lld nodes, bandwidth %lld (file order) -> %lld (rcm)\n", (long long)mp->n_nodes,
           (long long)bw_file, (long long)bw);
  }
  ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
  ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; ++i) p->values[i] = mp->coords[3 * i] + 2.0 * mp->coords[3 * i + 1];
  const int64_t bw0 = ef_mesh_bandwidth(mp);
  snapshot before, after;
  take_snapshot(mp, &before);
  ASSERT_OK(ef_mesh_renumber(mp, "none"));
  EXPECT(ef_mesh_bandwidth(mp) == bw0, "\"none\" must leave the numbering alone");
  ASSERT_OK(ef_mesh_renumber(mp, "rcm"));
  const int64_t bw1 = ef_mesh_bandwidth(mp);
  take_snapshot(mp, &after);
  compare_snapshots(&before, &after);
  check_order(mp);
  /* RCM on a 3D mesh of n nodes gives a band ~ n^(2/3); refinement order is ~ n */
  EXPECT(bw1 < bw0 / 4, "level 1: bandwidth %lld -> %lld, expected at least a 4x drop", (long long)bw0,
         (long long)bw1);
  printf("level 1: %lld nodes, bandwidth %lld (refined order) -> %lld (rcm)\n", (long long)mp->n_nodes,
         (long long)bw0, (long long)bw1);
  /* a second pass finds an equivalent order: the band does not grow */
  ASSERT_OK(ef_mesh_renumber(mp, "rcm"));
  EXPECT(ef_mesh_bandwidth(mp) <= bw1 + bw1 / 10, "second pass widened the band: %lld -> %lld", (long long)bw1,
         (long long)ef_mesh_bandwidth(mp));
  free_snapshot(&before);
  free_snapshot(&after);
  EXPECT(ef_mesh_renumber(mp, "metis") == EF_ERR_PARAMETER, "unknown method must be refused");
  EXPECT(ef_mesh_renumber(NULL, "rcm") == EF_ERR_PARAMETER, "NULL model part must be refused");
  ef_model_part_destroy(&mp);
}

/* Mean |i - j| over the element edges: how far apart neighbours are stored. */
static double mean_edge_span(ef_model_part mp) {
  const int npe = mp->nodes_per_element;
  double sum = 0.0;
  for (int64_t e = 0; e < mp->n_elements; ++e)
    for (int a = 0; a < npe; ++a)
      for (int b = a + 1; b < npe; ++b) sum += fabs((double)mp->elements[npe * e + a] - mp->elements[npe * e + b]);
  return sum / ((double)mp->n_elements * npe * (npe - 1) / 2);
}

/* "morton" on the refined cavity: the same mesh, the same invariants, neighbours stored close. */
static void test_cavity_morton(void) {
  ef_model_part mp = cavity_with_left_part();
  ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
  ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; ++i) p->values[i] = mp->coords[3 * i] - 3.0 * mp->coords[3 * i + 2];
  const double span0 = mean_edge_span(mp);
  snapshot before, after;
  take_snapshot(mp, &before);
  ASSERT_OK(ef_mesh_renumber(mp, "morton"));
  take_snapshot(mp, &after);
  compare_snapshots(&before, &after);
  const double span1 = mean_edge_span(mp);
  /* refinement order puts a new node's neighbours ~n/2 away; a space-filling curve keeps most close */
  EXPECT(span1 < span0 / 8.0, "morton: mean edge span %.1f -> %.1f, expected at least an 8x drop", span0, span1);
  printf("level 1: %lld nodes, mean edge span %.1f (refined order) -> %.1f (morton)\n", (long long)mp->n_nodes,
         span0, span1);
  check_order(mp);
  free_snapshot(&before);
  free_snapshot(&after);
  ef_model_part_destroy(&mp);
}

/* A 4 x 4 grid of points numbered backwards comes out in Z order, x varying fastest within each 2 x 2
 * block and y before x at every level: (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1) (0,2) ... */
static void test_morton_grid(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Grid", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 16));
  ASSERT_OK(ef_model_part_alloc_elements(mp, 18, 3));
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int64_t node = 15 - (4 * y + x);
      mp->coords[3 * node] = 10.0 + 2.0 * x; /* an offset box: the curve is on the bounding box */
      mp->coords[3 * node + 1] = -1.0 + 0.5 * y;
    }
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) {
      const ef_index a = (ef_index)(15 - (4 * y + x)), b = a - 1, c = a - 4, d = a - 5;
      ef_index *t = mp->elements + 3 * (2 * (3 * y + x));
      t[0] = a, t[1] = b, t[2] = d;
      t[3] = a, t[4] = d, t[5] = c;
    }
  ASSERT_OK(ef_mesh_renumber(mp, "morton"));
  static const int z[16][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {2, 1}, {3, 1},
                               {0, 2}, {1, 2}, {0, 3}, {1, 3}, {2, 2}, {3, 2}, {2, 3}, {3, 3}};
  for (int k = 0; k < 16; ++k) {
    const int x = (int)((mp->coords[3 * k] - 10.0) / 2.0 + 0.5), y = (int)((mp->coords[3 * k + 1] + 1.0) / 0.5 + 0.5);
    EXPECT(x == z[k][0] && y == z[k][1], "morton: node %d is (%d, %d), expected (%d, %d)", k, x, y, z[k][0],
           z[k][1]);
  }
  for (int64_t e = 0; e < mp->n_elements; ++e)
    EXPECT(ef_model_part_element_measure(mp, e) != 0.0, "element %lld degenerate", (long long)e);
  ef_model_part_destroy(&mp);
}

/* Build a 2D strip of n_x by 1 squares (two triangles each), numbered badly
 * (columns scattered), strip s shifted by 100 s in x. */
static void strips(ef_model_part mp, int n_strips, int n_x) {
  const int64_t nodes_per = 2 * (n_x + 1), tris_per = 2 * n_x;
  ASSERT_OK(ef_model_part_alloc_nodes(mp, n_strips * nodes_per));
  ASSERT_OK(ef_model_part_alloc_elements(mp, n_strips * tris_per, 3));
  for (int s = 0; s < n_strips; ++s) {
    /* node of column i, row j gets a scrambled index: i*7 mod (n_x+1) spreads neighbours */
    for (int i = 0; i <= n_x; ++i)
      for (int j = 0; j < 2; ++j) {
        const int64_t node = s * nodes_per + 2 * ((i * 7) % (n_x + 1)) + j;
        mp->coords[3 * node] = i + 100.0 * s;
        mp->coords[3 * node + 1] = j;
      }
    for (int i = 0; i < n_x; ++i) {
      const ef_index a = (ef_index)(s * nodes_per + 2 * ((i * 7) % (n_x + 1)));
      const ef_index b = (ef_index)(s * nodes_per + 2 * (((i + 1) * 7) % (n_x + 1)));
      ef_index *t = mp->elements + 3 * (s * tris_per + 2 * i);
      t[0] = a, t[1] = b, t[2] = b + 1;
      t[3] = a, t[4] = b + 1, t[5] = a + 1;
    }
  }
}

/* Disconnected pieces are numbered one after another (each contiguous). */
static void test_components(void) {
  enum { S = 3, NX = 40 };
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Strips", 2, &mp));
  strips(mp, S, NX);
  const int64_t bw0 = ef_mesh_bandwidth(mp);
  ASSERT_OK(ef_mesh_renumber(mp, "rcm"));
  const int64_t bw1 = ef_mesh_bandwidth(mp);
  /* a strip two nodes wide has an ordering of bandwidth 2..3 */
  EXPECT(bw1 <= 3, "strip bandwidth %lld -> %lld, expected <= 3", (long long)bw0, (long long)bw1);
  int64_t lo[S], hi[S];
  for (int s = 0; s < S; ++s) lo[s] = INT64_MAX, hi[s] = -1;
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    const int s = (int)(mp->coords[3 * i] / 100.0 + 0.5);
    if (i < lo[s]) lo[s] = i;
    if (i > hi[s]) hi[s] = i;
  }
  for (int s = 0; s < S; ++s)
    EXPECT(hi[s] - lo[s] + 1 == 2 * (NX + 1), "strip %d spans indices %lld..%lld: not contiguous", s,
           (long long)lo[s], (long long)hi[s]);
  for (int64_t e = 0; e < mp->n_elements; ++e)
    EXPECT(ef_model_part_element_measure(mp, e) > 0.0, "element %lld inverted", (long long)e);
  ef_model_part_destroy(&mp);
}

/* With n_owned_nodes < n_nodes only the owned nodes move. */
static void test_halo(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Halo", 2, &mp));
  strips(mp, 1, 30);
  const int64_t n = mp->n_nodes, n_halo = 10;
  mp->n_owned_nodes = n - n_halo;
  double halo_coords[3 * 10];
  memcpy(halo_coords, mp->coords + 3 * (n - n_halo), sizeof halo_coords);
  ASSERT_OK(ef_mesh_renumber(mp, "rcm"));
  EXPECT(mp->n_owned_nodes == n - n_halo, "owned count changed");
  EXPECT(memcmp(halo_coords, mp->coords + 3 * (n - n_halo), sizeof halo_coords) == 0, "a halo node moved");
  for (int64_t i = n - n_halo; i < n; ++i) EXPECT(mp->node_ids[i] == i + 1, "halo node %lld changed id", (long long)i);
  ef_model_part_destroy(&mp);
}

/* Run every case; exit status 1 on any failure. */
int main(void) {
  test_cavity();
  test_cavity_morton();
  test_morton_grid();
  test_components();
  test_halo();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

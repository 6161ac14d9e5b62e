/* test_refine_rules.c -- the rules of uniform refinement on hand-made meshes:
 * child counts, 1/2^dim measure of every child, orientation, the shortest
 * octahedron diagonal, sub model part growth (only along their own entities),
 * variables, ids, properties, refusal of a condition that is not on an
 * element face, and the arithmetic of the paper's mesh series. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_model_part.h"

#include "ef_test.h"

/* Measures are sums and products of O(1) coordinates: 1e-13 relative covers rounding. */
static const double measure_tol = 1e-13;

/* 1 when the sub model part lists node. */
static int smp_has_node(const ef_sub_model_part *smp, ef_index node) {
  for (int64_t k = 0; k < smp->n_nodes; ++k)
    if (smp->nodes[k] == node) return 1;
  return 0;
}

/* 1 when list is strictly increasing. */
static int smp_sorted_unique(const ef_index *list, int64_t n) {
  for (int64_t k = 1; k < n; ++k)
    if (list[k] <= list[k - 1]) return 0;
  return 1;
}

/* Index of the node at (x, y, z), or -1. */
static ef_index find_node(ef_model_part mp, double x, double y, double z) {
  for (int64_t i = 0; i < mp->n_nodes; ++i)
    if (fabs(mp->coords[3 * i] - x) < 1e-14 && fabs(mp->coords[3 * i + 1] - y) < 1e-14 &&
        fabs(mp->coords[3 * i + 2] - z) < 1e-14)
      return (ef_index)i;
  return -1;
}

/* 2D: unit square of two triangles whose diagonal 0-2 joins two wall nodes. */
static void test_square(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Square", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4));
  const double xy[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int i = 0; i < 4; ++i) {
    mp->coords[3 * i] = xy[i][0];
    mp->coords[3 * i + 1] = xy[i][1];
    mp->node_ids[i] = 10 * (i + 1); /* ids 10..40: new ids must start at 41 */
  }
  ASSERT_OK(ef_model_part_alloc_elements(mp, 2, 3));
  const ef_index tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
  memcpy(mp->elements, tris, sizeof tris);
  mp->element_properties[0] = 1;
  mp->element_properties[1] = 2;
  ASSERT_OK(ef_model_part_alloc_conditions(mp, 4, 2));
  const ef_index lines[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  memcpy(mp->conditions, lines, sizeof lines);
  mp->condition_properties[2] = 7;

  ef_sub_model_part *walls, *top, *ref, *fluid;
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "walls", &walls));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, walls, "top", &top));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "pressure_reference", &ref));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "fluid", &fluid));
  const ef_index all_nodes[4] = {0, 1, 2, 3}, all_lines[4] = {0, 1, 2, 3}, top_nodes[2] = {2, 3};
  const ef_index top_line[1] = {2}, ref_node[1] = {0}, both[2] = {0, 1};
  ASSERT_OK(ef_sub_model_part_add_nodes(walls, all_nodes, 4));
  ASSERT_OK(ef_sub_model_part_add_conditions(walls, all_lines, 4));
  ASSERT_OK(ef_sub_model_part_add_nodes(top, top_nodes, 2));
  ASSERT_OK(ef_sub_model_part_add_conditions(top, top_line, 1));
  ASSERT_OK(ef_sub_model_part_add_nodes(ref, ref_node, 1));
  ASSERT_OK(ef_sub_model_part_add_nodes(fluid, all_nodes, 4));
  ASSERT_OK(ef_sub_model_part_add_elements(fluid, both, 2));
  ASSERT_OK(ef_model_part_finalize_sub_model_parts(mp));

  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ASSERT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY");
  for (int i = 0; i < 4; ++i) {
    p->values[i] = (double)(i + 1);
    p->fixed[i] = 1;
    for (int c = 0; c < 3; ++c) u->values[3 * i + c] = 10.0 * i + c;
  }

  ASSERT_OK(ef_mesh_refine_uniform(mp, 0));
  EXPECT(mp->n_nodes == 4 && mp->n_elements == 2, "level 0 must change nothing");

  ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
  /* 4 nodes + 5 edges (4 sides and the diagonal) */
  EXPECT(mp->n_nodes == 9, "nodes %lld, expected 9", (long long)mp->n_nodes);
  EXPECT(mp->n_owned_nodes == 9, "owned nodes %lld", (long long)mp->n_owned_nodes);
  EXPECT(mp->n_elements == 8, "elements %lld, expected 8", (long long)mp->n_elements);
  EXPECT(mp->n_conditions == 8, "conditions %lld, expected 8", (long long)mp->n_conditions);
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    const double area = ef_model_part_element_measure(mp, e);
    EXPECT(fabs(area - 0.125) < measure_tol * 0.125, "child %lld area %.17g, expected 1/8", (long long)e, area);
    EXPECT(mp->element_ids[e] == e + 1, "element ids must be 1..n");
    EXPECT(mp->element_properties[e] == (e < 4 ? 1 : 2), "element %lld property %lld", (long long)e,
           (long long)mp->element_properties[e]);
  }
  for (int64_t k = 0; k < mp->n_conditions; ++k) {
    EXPECT(mp->condition_properties[k] == (k / 2 == 2 ? 7 : 0), "condition property not inherited");
    /* halves keep the parent's direction: the a->m->b chain */
    const double *a = mp->coords + 3 * mp->conditions[2 * k], *b = mp->coords + 3 * mp->conditions[2 * k + 1];
    const ef_index *parent = lines[k / 2];
    const double dx = xy[parent[1]][0] - xy[parent[0]][0], dy = xy[parent[1]][1] - xy[parent[0]][1];
    EXPECT(fabs((b[0] - a[0]) - 0.5 * dx) < 1e-15 && fabs((b[1] - a[1]) - 0.5 * dy) < 1e-15,
           "condition child %lld is not half of its parent with the same direction", (long long)k);
  }
  /* node ids: old ones kept, new ones max_id + 1 + j */
  for (int i = 0; i < 4; ++i) EXPECT(mp->node_ids[i] == 10 * (i + 1), "old node ids must be kept");
  for (int i = 4; i < 9; ++i) EXPECT(mp->node_ids[i] == 41 + (i - 4), "new node id %lld", (long long)mp->node_ids[i]);

  const ef_index centre = find_node(mp, 0.5, 0.5, 0.0);
  EXPECT(centre >= 4, "the diagonal midpoint (0.5, 0.5) must exist as a new node");
  /* the interior diagonal between two wall nodes does not bring its midpoint into walls */
  EXPECT(walls->n_nodes == 8, "walls has %lld nodes, expected 8", (long long)walls->n_nodes);
  EXPECT(!smp_has_node(walls, centre), "the interior diagonal's midpoint joined walls");
  EXPECT(walls->n_conditions == 8, "walls conditions %lld", (long long)walls->n_conditions);
  EXPECT(top->n_nodes == 3 && smp_has_node(top, find_node(mp, 0.5, 1.0, 0.0)), "top must gain its midpoint only");
  EXPECT(top->n_conditions == 2 && top->conditions[0] == 4 && top->conditions[1] == 5,
         "top's conditions must be the children 4, 5 of condition 2");
  EXPECT(ref->n_nodes == 1 && ref->nodes[0] == 0, "a node-only part must not grow");
  EXPECT(fluid->n_nodes == 9 && smp_has_node(fluid, centre), "the volume part gains every midpoint");
  EXPECT(fluid->n_elements == 8, "fluid elements %lld", (long long)fluid->n_elements);
  EXPECT(smp_sorted_unique(walls->nodes, walls->n_nodes) && smp_sorted_unique(fluid->nodes, fluid->n_nodes),
         "sub model part node lists must stay sorted");
  /* every wall node lies on the square's boundary */
  for (int64_t k = 0; k < walls->n_nodes; ++k) {
    const double *x = mp->coords + 3 * walls->nodes[k];
    EXPECT(x[0] == 0.0 || x[0] == 1.0 || x[1] == 0.0 || x[1] == 1.0, "wall node inside the square");
  }
  /* variables: averaged, free */
  for (int64_t i = 0; i < 4; ++i) EXPECT(p->values[i] == (double)(i + 1) && p->fixed[i] == 1, "old values kept");
  p = ef_model_part_find_variable(mp, "PRESSURE");
  u = ef_model_part_find_variable(mp, "VELOCITY");
  EXPECT(p->values[centre] == 2.0 && p->fixed[centre] == 0, "centre pressure %g (mean of 1 and 3), fixed %d",
         p->values[centre], p->fixed[centre]);
  EXPECT(u->values[3 * centre + 1] == 11.0, "centre velocity y %g, expected mean of 1 and 21",
         u->values[3 * centre + 1]);
  ef_model_part_destroy(&mp);
  EXPECT(mp == NULL, "destroy must clear the handle");
}

/* Boundary faces of a tetrahedron set, outward: face opposite k of a positive tet. */
static const int face_opposite[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

/* 1 when two node triples are the same set. */
static int same_triple(const ef_index *a, const ef_index *b) {
  int match = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) match += a[i] == b[j];
  return match == 3;
}

/* 3D: the unit cube as six Kuhn tetrahedra around the body diagonal 0-6,
 * walls = the 12 boundary triangles.  The body diagonal joins two wall
 * nodes but is interior. */
static void test_cube(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Cube", 3, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 8));
  for (int i = 0; i < 8; ++i) {
    /* node bits: 1 -> x, 2 -> y, 4 -> z; index 7 = (1,1,1) */
    mp->coords[3 * i] = (double)(i & 1);
    mp->coords[3 * i + 1] = (double)((i >> 1) & 1);
    mp->coords[3 * i + 2] = (double)((i >> 2) & 1);
  }
  /* Kuhn: paths 0 -> 7 adding one coordinate bit at a time */
  const int paths[6][3] = {{1, 2, 4}, {1, 4, 2}, {2, 1, 4}, {2, 4, 1}, {4, 1, 2}, {4, 2, 1}};
  ASSERT_OK(ef_model_part_alloc_elements(mp, 6, 4));
  for (int t = 0; t < 6; ++t) {
    ef_index *v = mp->elements + 4 * t;
    v[0] = 0;
    v[1] = (ef_index)paths[t][0];
    v[2] = (ef_index)(paths[t][0] | paths[t][1]);
    v[3] = 7;
    if (ef_model_part_element_measure(mp, t) < 0) {
      ef_index s = v[1];
      v[1] = v[2];
      v[2] = s;
    }
  }
  /* boundary faces: faces of exactly one tetrahedron */
  ef_index faces[24][3];
  int n_faces = 0;
  for (int t = 0; t < 6; ++t)
    for (int f = 0; f < 4; ++f) {
      ef_index tri[3];
      for (int i = 0; i < 3; ++i) tri[i] = mp->elements[4 * t + face_opposite[f][i]];
      int shared = 0;
      for (int t2 = 0; t2 < 6; ++t2)
        for (int f2 = 0; f2 < 4 && t2 != t; ++f2) {
          ef_index other[3];
          for (int i = 0; i < 3; ++i) other[i] = mp->elements[4 * t2 + face_opposite[f2][i]];
          shared |= same_triple(tri, other);
        }
      if (!shared) memcpy(faces[n_faces++], tri, sizeof tri);
    }
  EXPECT(n_faces == 12, "cube has %d boundary faces, expected 12", n_faces);
  ASSERT_OK(ef_model_part_alloc_conditions(mp, n_faces, 3));
  memcpy(mp->conditions, faces, (size_t)n_faces * sizeof faces[0]);
  ef_sub_model_part *walls, *ref;
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "walls", &walls));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "pressure_reference", &ref));
  for (ef_index k = 0; k < n_faces; ++k) ASSERT_OK(ef_sub_model_part_add_conditions(walls, &k, 1));
  const ef_index all_nodes[8] = {0, 1, 2, 3, 4, 5, 6, 7}, corner[1] = {1};
  ASSERT_OK(ef_sub_model_part_add_nodes(walls, all_nodes, 8));
  ASSERT_OK(ef_sub_model_part_add_nodes(ref, corner, 1));
  ASSERT_OK(ef_model_part_finalize_sub_model_parts(mp));

  int64_t n_edges = 0;
  ASSERT_OK(ef_mesh_count_edges(mp, &n_edges));
  EXPECT(n_edges == 19, "cube edges %lld, expected 12 sides + 6 face diagonals + 1 body diagonal",
         (long long)n_edges);

  ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
  EXPECT(mp->n_nodes == 27, "nodes %lld, expected 8 + 19", (long long)mp->n_nodes);
  EXPECT(mp->n_elements == 48 && mp->n_conditions == 48, "elements %lld, conditions %lld",
         (long long)mp->n_elements, (long long)mp->n_conditions);
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    const double v = ef_model_part_element_measure(mp, e);
    EXPECT(fabs(v - 1.0 / 48.0) < measure_tol / 48.0, "child %lld volume %.17g, expected 1/48", (long long)e, v);
  }
  const ef_index body = find_node(mp, 0.5, 0.5, 0.5);
  EXPECT(body >= 8, "the body diagonal's midpoint must exist");
  EXPECT(!smp_has_node(walls, body), "the interior body diagonal's midpoint joined walls");
  EXPECT(walls->n_nodes == 26, "walls nodes %lld, expected 8 + 12 + 6", (long long)walls->n_nodes);
  EXPECT(ref->n_nodes == 1, "a node-only part must not grow");
  /* refined boundary triangles: outward (normal away from the cube centre) and faces of child tets */
  for (int64_t k = 0; k < mp->n_conditions; ++k) {
    const ef_index *f = mp->conditions + 3 * k;
    const double *a = mp->coords + 3 * f[0], *b = mp->coords + 3 * f[1], *c = mp->coords + 3 * f[2];
    const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    const double out = n[0] * (a[0] + b[0] + c[0] - 1.5) + n[1] * (a[1] + b[1] + c[1] - 1.5) +
                       n[2] * (a[2] + b[2] + c[2] - 1.5);
    EXPECT(out > 0.0, "refined condition %lld points inwards", (long long)k);
    int found = 0;
    for (int64_t e = 0; e < mp->n_elements && !found; ++e)
      for (int j = 0; j < 4; ++j) {
        ef_index tri[3];
        for (int i = 0; i < 3; ++i) tri[i] = mp->elements[4 * e + face_opposite[j][i]];
        found |= same_triple(tri, f);
      }
    EXPECT(found, "refined condition %lld is not a face of any refined element", (long long)k);
  }
  ef_model_part_destroy(&mp);
}

/* A disk of 24 triangles around node 0: the centre's row of the edge table
 * is long enough for the bisection search, and the rim's rows are short. */
static void test_fan(void) {
  enum { M = 24 };
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Fan", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, M + 1));
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < M; ++i) {
    mp->coords[3 * (i + 1)] = cos(2.0 * pi * i / M);
    mp->coords[3 * (i + 1) + 1] = sin(2.0 * pi * i / M);
  }
  ASSERT_OK(ef_model_part_alloc_elements(mp, M, 3));
  ASSERT_OK(ef_model_part_alloc_conditions(mp, M, 2));
  double area = 0.0;
  for (int i = 0; i < M; ++i) {
    const ef_index tri[3] = {0, (ef_index)(i + 1), (ef_index)((i + 1) % M + 1)};
    memcpy(mp->elements + 3 * i, tri, sizeof tri);
    mp->conditions[2 * i] = tri[1];
    mp->conditions[2 * i + 1] = tri[2];
    area += ef_model_part_element_measure(mp, i);
  }
  int64_t n_edges = 0;
  ASSERT_OK(ef_mesh_count_edges(mp, &n_edges));
  EXPECT(n_edges == 2 * M, "fan edges %lld, expected %d spokes + %d rim", (long long)n_edges, M, M);
  ASSERT_OK(ef_mesh_refine_uniform(mp, 2));
  EXPECT(mp->n_elements == 16 * M && mp->n_conditions == 4 * M, "counts %lld %lld", (long long)mp->n_elements,
         (long long)mp->n_conditions);
  ef_mesh_quality q;
  ASSERT_OK(ef_mesh_compute_quality(mp, &q));
  /* a sum of 384 positive areas of ~1e-2: 1e-13 relative covers the rounding */
  EXPECT(fabs(q.total_measure - area) <= measure_tol * area, "area %.17g, expected %.17g", q.total_measure, area);
  EXPECT(q.min_measure > 0.0, "a child is inverted");
  ef_model_part_destroy(&mp);
}

/* Deterministic pseudo-random numbers in [0, 1) (64-bit LCG, high bits). */
static double lcg(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 9007199254740992.0;
}

/* Random separate tetrahedra: every child has 1/8 of the parent's volume and
 * the inner four share the shortest of the three octahedron diagonals. */
static void test_random_tets(void) {
  enum { N = 200 };
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Random", 3, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4 * N));
  ASSERT_OK(ef_model_part_alloc_elements(mp, N, 4));
  uint64_t state = 12345;
  double parent_volume[N];
  for (int t = 0; t < N; ++t) {
    /* stretched along a random axis so that each diagonal wins sometimes */
    const double stretch[3] = {1.0 + 4.0 * lcg(&state), 1.0 + 4.0 * lcg(&state), 1.0 + 4.0 * lcg(&state)};
    for (int i = 0; i < 4; ++i) {
      for (int c = 0; c < 3; ++c) mp->coords[3 * (4 * t + i) + c] = stretch[c] * lcg(&state);
      mp->elements[4 * t + i] = 4 * t + i;
    }
    if (ef_model_part_element_measure(mp, t) < 0) {
      mp->elements[4 * t + 1] = 4 * t + 2;
      mp->elements[4 * t + 2] = 4 * t + 1;
    }
    parent_volume[t] = ef_model_part_element_measure(mp, t);
  }
  double parents[N][4][3];
  for (int t = 0; t < N; ++t)
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) parents[t][i][c] = mp->coords[3 * mp->elements[4 * t + i] + c];

  ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
  EXPECT(mp->n_elements == 8 * N && mp->n_nodes == 10 * N, "counts %lld %lld", (long long)mp->n_elements,
         (long long)mp->n_nodes);
  int wins[3] = {0, 0, 0};
  for (int t = 0; t < N; ++t) {
    for (int k = 0; k < 8; ++k) {
      const double v = ef_model_part_element_measure(mp, 8 * t + k);
      /* 1/8 exactly in exact arithmetic; the determinant of edges up to 5*sqrt(3)
       * long rounds to a few eps * 650 ~ 1e-12 absolute, whatever the shape */
      EXPECT(fabs(v - parent_volume[t] / 8.0) <= 1e-11, "tet %d child %d volume %.17g vs %.17g", t,
             k, v, parent_volume[t] / 8.0);
    }
    /* the two nodes the four inner children share */
    ef_index shared[2];
    int n_shared = 0;
    for (int i = 0; i < 4; ++i) {
      const ef_index cand = mp->elements[4 * (8 * t + 4) + i];
      int in_all = 1;
      for (int k = 5; k < 8; ++k) {
        int in = 0;
        for (int j = 0; j < 4; ++j) in |= mp->elements[4 * (8 * t + k) + j] == cand;
        in_all &= in;
      }
      if (in_all && n_shared < 2) shared[n_shared++] = cand;
    }
    EXPECT(n_shared == 2, "tet %d: inner children share %d nodes, expected the 2 ends of a diagonal", t, n_shared);
    if (n_shared != 2) continue;
    double chosen = 0.0;
    for (int c = 0; c < 3; ++c) {
      const double d = mp->coords[3 * shared[0] + c] - mp->coords[3 * shared[1] + c];
      chosen += d * d;
    }
    double len[3] = {0, 0, 0};
    const int pairs[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}};
    for (int d = 0; d < 3; ++d)
      for (int c = 0; c < 3; ++c) {
        const double m = 0.5 * (parents[t][pairs[d][0]][c] + parents[t][pairs[d][1]][c]) -
                         0.5 * (parents[t][pairs[d][2]][c] + parents[t][pairs[d][3]][c]);
        len[d] += m * m;
      }
    const double shortest = fmin(len[0], fmin(len[1], len[2]));
    EXPECT(chosen <= shortest * (1.0 + 1e-12), "tet %d: diagonal^2 %.17g is not the shortest %.17g", t, chosen,
           shortest);
    for (int d = 0; d < 3; ++d)
      if (len[d] == shortest) wins[d]++;
  }
  EXPECT(wins[0] > 0 && wins[1] > 0 && wins[2] > 0, "every diagonal choice must be exercised (%d %d %d)", wins[0],
         wins[1], wins[2]);
  ef_model_part_destroy(&mp);
}

/* A condition whose edge is not an element edge is refused and the model part is kept. */
static void test_bad_condition(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("Bad", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4));
  const double xy[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int i = 0; i < 4; ++i) {
    mp->coords[3 * i] = xy[i][0];
    mp->coords[3 * i + 1] = xy[i][1];
  }
  ASSERT_OK(ef_model_part_alloc_elements(mp, 2, 3));
  const ef_index tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
  memcpy(mp->elements, tris, sizeof tris);
  ASSERT_OK(ef_model_part_alloc_conditions(mp, 1, 2));
  mp->conditions[0] = 1; /* 1-3 is the other diagonal: no element has it */
  mp->conditions[1] = 3;
  const int rc = ef_mesh_refine_uniform(mp, 1);
  EXPECT(rc == EF_ERR_MESH, "expected EF_ERR_MESH, got %s", ef_error_name(rc));
  EXPECT(strstr(ef_error_message(), "not an edge of any element") != NULL, "message: %s", ef_error_message());
  EXPECT(mp->n_nodes == 4 && mp->n_elements == 2 && mp->n_conditions == 1, "a failed refinement changed the mesh");
  EXPECT(ef_mesh_refine_uniform(NULL, 1) == EF_ERR_PARAMETER, "NULL model part");
  EXPECT(ef_mesh_refine_uniform(mp, -1) == EF_ERR_PARAMETER, "negative levels");
  mp->n_owned_nodes = 3;
  EXPECT(ef_mesh_refine_uniform(mp, 1) == EF_ERR_UNSUPPORTED, "a split mesh must be refused");
  ef_model_part_destroy(&mp);
}

/* The node graph refuses connectivity it cannot hold: the first node index out of range, in
 * element order, is named (element id and index), and so is a node an element repeats. */
static void test_bad_connectivity(void) {
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create("BadNodes", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4));
  ASSERT_OK(ef_model_part_alloc_elements(mp, 3, 3));
  const ef_index tris[3][3] = {{0, 1, 2}, {0, 2, 7}, {-1, 2, 3}};
  memcpy(mp->elements, tris, sizeof tris);
  for (int e = 0; e < 3; ++e) mp->element_ids[e] = 100 + e;
  int64_t n_edges = -1;
  EXPECT_FAIL(ef_mesh_count_edges(mp, &n_edges), EF_ERR_MESH,
              "element 101 (index 1) references node index 7 outside [0, 4)");
  mp->elements[5] = 3;
  EXPECT_FAIL(ef_mesh_count_edges(mp, &n_edges), EF_ERR_MESH,
              "element 102 (index 2) references node index -1 outside [0, 4)");
  mp->elements[6] = 3; /* element 102 is now 3, 2, 3 */
  EXPECT_FAIL(ef_mesh_count_edges(mp, &n_edges), EF_ERR_MESH, "element 102 repeats node index 3");
  int64_t *row_ptr = NULL;
  ef_index *cols = NULL;
  EXPECT_FAIL(ef_mesh_node_graph(mp, 1, &row_ptr, &cols), EF_ERR_MESH, "element 102 repeats node index 3");
  EXPECT(row_ptr == NULL && cols == NULL, "a failed node graph hands out arrays");
  EXPECT(n_edges == -1, "a failed count wrote its result");
  mp->elements[6] = 1; /* 1, 2, 3: the square 0-1-2-3 with both diagonals */
  ASSERT_OK(ef_mesh_count_edges(mp, &n_edges));
  EXPECT(n_edges == 6, "four sides and two diagonals: 6 edges, got %lld", (long long)n_edges);
  ef_model_part_destroy(&mp);
}

/* The seed paper's series 3347 -> 24202 -> 184755 nodes, 16579 -> 132632 ->
 * 1061056 tetrahedra, 20855 coarse edges, is exactly uniform 1:8 refinement:
 * V' = V + E, T' = 8T, E' = 2E + 3F + T (edge halves, 3 per face, the
 * octahedron diagonal), F = (4T + Fb)/2, Fb' = 4 Fb, and Euler V - E + F - T = 1
 * gives the boundary faces. */
static void test_paper_series(void) {
  const int64_t v0 = 3347, e0 = 20855, t0 = 16579;
  const int64_t fb0 = 2 * (e0 - v0 - t0 + 1); /* from Euler with F = (4T + Fb)/2 */
  const int64_t f0 = (4 * t0 + fb0) / 2;
  EXPECT(fb0 == 1860, "boundary faces of the paper's coarse mesh: %lld", (long long)fb0);
  EXPECT(v0 - e0 + f0 - t0 == 1, "Euler characteristic of a ball");
  const int64_t v1 = v0 + e0, t1 = 8 * t0, e1 = 2 * e0 + 3 * f0 + t0;
  EXPECT(v1 == 24202, "nodes(1) predicted %lld, paper 24202", (long long)v1);
  EXPECT(t1 == 132632, "tets(1) %lld", (long long)t1);
  const int64_t v2 = v1 + e1, t2 = 8 * t1;
  EXPECT(v2 == 184755, "nodes(2) predicted %lld, paper 184755", (long long)v2);
  EXPECT(t2 == 1061056, "tets(2) %lld", (long long)t2);
  const int64_t fb1 = 4 * fb0, f1 = (4 * t1 + fb1) / 2;
  EXPECT(v1 - e1 + f1 - t1 == 1, "Euler characteristic after refinement");
}

/* Run every case; exit status 1 on any failure. */
int main(void) {
  test_square();
  test_cube();
  test_fan();
  test_random_tets();
  test_bad_condition();
  test_bad_connectivity();
  test_paper_series();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

/* test_refine_cavity.c -- two levels of uniform refinement of the committed
 * 3D cavity mesh (test_examples/cavity3d/cavity3d.msh): counts follow
 * V' = V + E, T' = 8T, Fb' = 4Fb, E' = 2E + 3F + T; the volume is kept;
 * every element stays positive; the refined conditions are exactly the
 * boundary faces of the refined elements; lid/walls grow only along their own
 * faces; the pressure reference stays one node; quality does not collapse.
 * Prints the counts and quality of each level on stdout (ctest keeps them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_util.h"

#include "ef_test.h"

/* qsort order of 64-bit keys: ascending. */
static int cmp_u64(const void *pa, const void *pb) {
  const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return (a > b) - (a < b);
}

/* Key of an unordered node triple (indices < 2^21). */
static uint64_t triple_key(ef_index a, ef_index b, ef_index c) {
  ef_index t;
  if (a > b) t = a, a = b, b = t;
  if (b > c) t = b, b = c, c = t;
  if (a > b) t = a, a = b, b = t;
  return ((uint64_t)a << 42) | ((uint64_t)b << 21) | (uint64_t)c;
}

/* Every condition must be a face of exactly one element, and every face of
 * exactly one element must be a condition (the cavity's boundary is all
 * lid or walls). */
static void check_conditions_are_boundary_faces(ef_model_part mp) {
  if (mp->n_nodes >= (1 << 21)) {
    fprintf(stderr, "mesh too large for the face keys\n");
    ++failures;
    return;
  }
  const int64_t nf = 4 * mp->n_elements;
  uint64_t *faces = malloc((size_t)nf * sizeof *faces);
  uint64_t *boundary = malloc((size_t)nf * sizeof *boundary);
  uint64_t *conds = malloc((size_t)(mp->n_conditions + 1) * sizeof *conds);
  if (!faces || !boundary || !conds) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    const ef_index *v = mp->elements + 4 * e;
    faces[4 * e + 0] = triple_key(v[1], v[2], v[3]);
    faces[4 * e + 1] = triple_key(v[0], v[2], v[3]);
    faces[4 * e + 2] = triple_key(v[0], v[1], v[3]);
    faces[4 * e + 3] = triple_key(v[0], v[1], v[2]);
  }
  qsort(faces, (size_t)nf, sizeof *faces, cmp_u64);
  int64_t nb = 0, worst = 1;
  for (int64_t i = 0; i < nf;) {
    int64_t j = i;
    while (j < nf && faces[j] == faces[i]) ++j;
    if (j - i == 1) boundary[nb++] = faces[i];
    if (j - i > worst) worst = j - i;
    i = j;
  }
  EXPECT(worst <= 2, "a face is shared by %lld elements", (long long)worst);
  for (int64_t k = 0; k < mp->n_conditions; ++k) {
    const ef_index *c = mp->conditions + 3 * k;
    conds[k] = triple_key(c[0], c[1], c[2]);
  }
  qsort(conds, (size_t)mp->n_conditions, sizeof *conds, cmp_u64);
  EXPECT(nb == mp->n_conditions, "%lld boundary faces but %lld conditions", (long long)nb,
         (long long)mp->n_conditions);
  int64_t mismatches = 0;
  for (int64_t k = 0; k < nb && k < mp->n_conditions; ++k) mismatches += boundary[k] != conds[k];
  EXPECT(mismatches == 0, "%lld conditions are not boundary faces of the elements", (long long)mismatches);
  free(faces);
  free(boundary);
  free(conds);
}

/* Number of distinct edges of the triangle conditions listed by a sub model part. */
static int64_t count_condition_edges(ef_model_part mp, const ef_sub_model_part *smp) {
  uint64_t *keys = malloc((size_t)(3 * smp->n_conditions + 1) * sizeof *keys);
  if (!keys) exit(1);
  for (int64_t k = 0; k < smp->n_conditions; ++k) {
    const ef_index *c = mp->conditions + 3 * smp->conditions[k];
    for (int j = 0; j < 3; ++j) {
      ef_index a = c[j], b = c[(j + 1) % 3];
      if (a > b) {
        ef_index t = a;
        a = b;
        b = t;
      }
      keys[3 * k + j] = ((uint64_t)a << 32) | (uint64_t)b;
    }
  }
  qsort(keys, (size_t)(3 * smp->n_conditions), sizeof *keys, cmp_u64);
  int64_t unique = 0;
  for (int64_t i = 0; i < 3 * smp->n_conditions; ++i) unique += i == 0 || keys[i] != keys[i - 1];
  free(keys);
  return unique;
}

/* The boundary parts' nodes together are exactly the nodes of the conditions:
 * no midpoint of an interior edge between two boundary nodes got in. */
static void check_boundary_nodes(ef_model_part mp, const ef_sub_model_part *lid, const ef_sub_model_part *walls) {
  uint8_t *on_condition = calloc((size_t)mp->n_nodes, 1), *in_part = calloc((size_t)mp->n_nodes, 1);
  if (!on_condition || !in_part) exit(1);
  for (int64_t k = 0; k < 3 * mp->n_conditions; ++k) on_condition[mp->conditions[k]] = 1;
  for (int64_t k = 0; k < lid->n_nodes; ++k) in_part[lid->nodes[k]] = 1;
  for (int64_t k = 0; k < walls->n_nodes; ++k) in_part[walls->nodes[k]] = 1;
  int64_t extra = 0, missing = 0;
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    extra += in_part[i] && !on_condition[i];
    missing += on_condition[i] && !in_part[i];
  }
  EXPECT(extra == 0, "%lld lid/walls nodes are on no boundary face", (long long)extra);
  EXPECT(missing == 0, "%lld boundary face nodes are in neither lid nor walls", (long long)missing);
  /* the lid owns the z = 1 faces only (midpoints of z = 1 nodes are exactly z = 1) */
  for (int64_t k = 0; k < lid->n_nodes; ++k)
    if (mp->coords[3 * lid->nodes[k] + 2] != 1.0) {
      EXPECT(0, "lid node %lld is not on z = 1", (long long)lid->nodes[k]);
      break;
    }
  int64_t walls_on_lid = 0;
  for (int64_t k = 0; k < walls->n_conditions; ++k) {
    const ef_index *c = mp->conditions + 3 * walls->conditions[k];
    walls_on_lid += mp->coords[3 * c[0] + 2] == 1.0 && mp->coords[3 * c[1] + 2] == 1.0 &&
                    mp->coords[3 * c[2] + 2] == 1.0;
  }
  EXPECT(walls_on_lid == 0, "%lld walls faces lie on the lid", (long long)walls_on_lid);
  /* the lid rim (z = 1 and x or y in {0, 1}) is in both parts, nothing else is */
  uint8_t *in_walls = calloc((size_t)mp->n_nodes, 1);
  if (!in_walls) exit(1);
  for (int64_t k = 0; k < walls->n_nodes; ++k) in_walls[walls->nodes[k]] = 1;
  int64_t rim = 0, rim_wrong = 0;
  for (int64_t k = 0; k < lid->n_nodes; ++k) {
    const double *x = mp->coords + 3 * lid->nodes[k];
    const int on_rim = x[0] == 0.0 || x[0] == 1.0 || x[1] == 0.0 || x[1] == 1.0;
    rim += on_rim;
    rim_wrong += on_rim != in_walls[lid->nodes[k]];
  }
  EXPECT(rim > 0 && rim_wrong == 0, "%lld lid nodes disagree with walls about the rim (%lld rim nodes)",
         (long long)rim_wrong, (long long)rim);
  free(in_walls);
  free(on_condition);
  free(in_part);
}

/* argv: [mesh path] [levels, default 2]. */
int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : EF_SOURCE_DIR "/test_examples/cavity3d/cavity3d.msh";
  const int levels = argc > 2 ? atoi(argv[2]) : 2;
  ef_model_part mp = NULL;
  ASSERT_OK(ef_read_mesh(path, NULL, &mp));
  ef_sub_model_part *lid = NULL, *walls = NULL, *fluid = NULL, *ref = NULL;
  ASSERT_OK(ef_model_part_get_sub_model_part(mp, "lid", &lid));
  ASSERT_OK(ef_model_part_get_sub_model_part(mp, "walls", &walls));
  ASSERT_OK(ef_model_part_get_sub_model_part(mp, "fluid", &fluid));
  ASSERT_OK(ef_model_part_get_sub_model_part(mp, "pressure_reference", &ref));
  EXPECT(mp->nodes_per_element == 4 && mp->nodes_per_condition == 3, "expected tetrahedra and triangles");
  EXPECT(ref->n_nodes == 1, "pressure_reference has %lld nodes", (long long)ref->n_nodes);

  printf("level      nodes       edges        tets   bnd faces  lid nodes  refine[s]  min dihedral  min rr  mean rr\n");
  double first_min_rr = 0.0;
  for (int level = 0; level <= levels; ++level) {
    double seconds = 0.0;
    /* the previous level's counts give the predictions for this one */
    const int64_t v0 = mp->n_nodes, t0 = mp->n_elements, fb0 = mp->n_conditions;
    const int64_t lid_nodes0 = lid->n_nodes, lid_edges0 = count_condition_edges(mp, lid);
    int64_t e0 = 0;
    ASSERT_OK(ef_mesh_count_edges(mp, &e0));
    const int64_t f0 = (4 * t0 + fb0) / 2;
    if (level > 0) {
      const double t = ef_wtime();
      ASSERT_OK(ef_mesh_refine_uniform(mp, 1));
      seconds = ef_wtime() - t;
      EXPECT(mp->n_nodes == v0 + e0, "level %d: nodes %lld, expected V + E = %lld", level, (long long)mp->n_nodes,
             (long long)(v0 + e0));
      EXPECT(mp->n_elements == 8 * t0, "level %d: tets %lld, expected 8T", level, (long long)mp->n_elements);
      EXPECT(mp->n_conditions == 4 * fb0, "level %d: boundary faces %lld, expected 4Fb", level,
             (long long)mp->n_conditions);
      EXPECT(lid->n_nodes == lid_nodes0 + lid_edges0, "level %d: lid nodes %lld, expected %lld + %lld", level,
             (long long)lid->n_nodes, (long long)lid_nodes0, (long long)lid_edges0);
      EXPECT(fluid->n_elements == mp->n_elements && fluid->n_nodes == mp->n_nodes, "fluid must hold everything");
      EXPECT(lid->n_conditions + walls->n_conditions == mp->n_conditions, "lid + walls must own every face");
    }
    int64_t e1 = 0;
    ASSERT_OK(ef_mesh_count_edges(mp, &e1));
    if (level > 0)
      EXPECT(e1 == 2 * e0 + 3 * f0 + t0, "level %d: edges %lld, expected 2E + 3F + T = %lld", level,
             (long long)e1, (long long)(2 * e0 + 3 * f0 + t0));
    const int64_t f1 = (4 * mp->n_elements + mp->n_conditions) / 2;
    EXPECT(mp->n_nodes - e1 + f1 - mp->n_elements == 1, "level %d: Euler characteristic of the cube is not 1",
           level);

    ef_mesh_quality q;
    ASSERT_OK(ef_mesh_compute_quality(mp, &q));
    /* the unit cube: sums of ~1e6 positive terms of size 1e-6 round to ~1e-13 relative */
    EXPECT(fabs(q.total_measure - 1.0) <= 1e-12, "level %d: volume %.17g, expected 1", level, q.total_measure);
    EXPECT(q.min_measure > 0.0, "level %d: an element has volume %g", level, q.min_measure);
    if (level == 0) first_min_rr = q.min_radius_ratio;
    /* The shortest octahedron diagonal keeps the worst shape: on the committed
     * mesh the minimum radius ratio stays 0.400 over three levels, while
     * always cutting the same local diagonal gives 0.13-0.17 at level 1 and
     * down to 0.022 at level 3.  0.6 of the coarse minimum separates the two. */
    EXPECT(q.min_radius_ratio >= 0.6 * first_min_rr, "level %d: min radius ratio %.3f collapsed from %.3f", level,
           q.min_radius_ratio, first_min_rr);
    check_conditions_are_boundary_faces(mp);
    check_boundary_nodes(mp, lid, walls);
    EXPECT(ref->n_nodes == 1, "pressure_reference grew to %lld nodes", (long long)ref->n_nodes);
    if (ref->n_nodes == 1) {
      const double *x = mp->coords + 3 * ref->nodes[0];
      EXPECT(x[0] == 0.5 && x[1] == 0.0 && x[2] == 0.0, "pressure reference at (%g, %g, %g)", x[0], x[1], x[2]);
    }
    printf("%5d %10lld  %10lld  %10lld  %10lld %10lld  %9.3f  %12.2f  %6.3f  %7.3f\n", level, (long long)mp->n_nodes,
           (long long)e1, (long long)mp->n_elements, (long long)mp->n_conditions, (long long)lid->n_nodes, seconds,
           q.min_dihedral_deg, q.min_radius_ratio, q.mean_radius_ratio);
  }
  ef_model_part_destroy(&mp);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

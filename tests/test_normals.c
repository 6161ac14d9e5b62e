/* test_normals.c -- area-weighted outward nodal normals of boundary conditions. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"
#include "edgeflow/ef_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "ef_test_mesh.h"

/* Unit normals are sums of a few exact axis vectors divided by a square root:
 * 1e-14 absolute is a few ulps. */
#define TOL 1e-14

/* The expected nodal normal at node i of part smp, from geometry alone: the
 * area of each side's conditions around i times that side's axis normal. */
static void expected_normal(ef_model_part mp, const ef_sub_model_part *smp, ef_index i, double *out) {
  double sum[3] = {0, 0, 0};
  int nf = mp->dim;
  for (int64_t k = 0; k < smp->n_conditions; k++) {
    const ef_index *cn = mp->conditions + (int64_t)smp->conditions[k] * nf;
    int has = 0;
    for (int q = 0; q < nf; q++) has |= cn[q] == i;
    if (!has) continue;
    int sides = ~0;
    for (int q = 0; q < nf; q++) sides &= ef_test_box_sides(mp->coords + 3 * (int64_t)cn[q], mp->dim);
    double measure;
    const double *a = mp->coords + 3 * (int64_t)cn[0], *b = mp->coords + 3 * (int64_t)cn[1];
    if (nf == 2) {
      measure = hypot(b[0] - a[0], b[1] - a[1]);
    } else {
      const double *c = mp->coords + 3 * (int64_t)cn[2];
      double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
      double w[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
      measure = 0.5 * sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    for (int s = 0; s < 2 * mp->dim; s++)
      if (sides & (1 << s)) sum[s / 2] += (s % 2 ? 1.0 : -1.0) * measure;
  }
  double len = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
  for (int d = 0; d < 3; d++) out[d] = len > 0 ? sum[d] / len : 0.0;
}

/* Every node of the model part: the computed normal matches the expected one. */
static void check_part(ef_model_part mp, const char *part) {
  ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, part);
  EXPECT(smp != NULL);
  if (!smp) return;
  double *nrm = malloc((size_t)mp->n_nodes * 3 * sizeof *nrm);
  uint8_t *in = calloc((size_t)mp->n_nodes, 1);
  if (!nrm || !in) {
    failures++;
    free(nrm);
    free(in);
    return;
  }
  for (int64_t k = 0; k < smp->n_nodes; k++) in[smp->nodes[k]] = 1;
  for (int64_t i = 0; i < mp->n_nodes * 3; i++) nrm[i] = 99.0; /* must be overwritten with 0 */
  EXPECT_OK(ef_model_part_nodal_normals(mp, smp, nrm));
  for (int64_t i = 0; i < mp->n_nodes; i++) {
    double want[3] = {0, 0, 0};
    if (in[i]) expected_normal(mp, smp, (ef_index)i, want);
    for (int d = 0; d < 3; d++) EXPECT_NEAR(nrm[3 * i + d], want[d], TOL);
  }
  free(nrm);
  free(in);
}

static void test_square(int reverse) {
  const int n = 4;
  ef_model_part mp = ef_test_box(2, n, reverse);
  EXPECT(mp != NULL);
  if (!mp) return;
  check_part(mp, "XMin");
  check_part(mp, "Walls");
  double *nrm = malloc((size_t)mp->n_nodes * 3 * sizeof *nrm);
  ef_sub_model_part *walls = ef_model_part_find_sub_model_part(mp, "Walls");
  ef_sub_model_part *xmax = ef_model_part_find_sub_model_part(mp, "XMax");
  if (nrm && walls && xmax) {
    /* Spelled out: a side node has the axis normal, a corner the diagonal. */
    const double r = 1.0 / sqrt(2.0);
    EXPECT_OK(ef_model_part_nodal_normals(mp, walls, nrm));
    ef_index side = ef_test_box_node(mp, n, 0.0, 0.5, 0), corner = ef_test_box_node(mp, n, 0.0, 0.0, 0);
    ef_index top = ef_test_box_node(mp, n, 0.25, 1.0, 0), far = ef_test_box_node(mp, n, 1.0, 1.0, 0);
    EXPECT_NEAR(nrm[3 * side], -1.0, TOL);
    EXPECT_NEAR(nrm[3 * side + 1], 0.0, TOL);
    EXPECT_NEAR(nrm[3 * corner], -r, TOL);
    EXPECT_NEAR(nrm[3 * corner + 1], -r, TOL);
    EXPECT_NEAR(nrm[3 * top + 1], 1.0, TOL);
    EXPECT_NEAR(nrm[3 * far], r, TOL);
    EXPECT_NEAR(nrm[3 * far + 1], r, TOL);
    EXPECT_OK(ef_model_part_nodal_normals(mp, xmax, nrm));
    EXPECT_NEAR(nrm[3 * far], 1.0, TOL); /* only the XMax faces count here */
    EXPECT_NEAR(nrm[3 * far + 1], 0.0, TOL);
    /* The whole model part (NULL): every condition. */
    EXPECT_OK(ef_model_part_nodal_normals(mp, NULL, nrm));
    EXPECT_NEAR(nrm[3 * corner], -r, TOL);
    EXPECT_NEAR(nrm[3 * ef_test_box_node(mp, n, 0.5, 0.5, 0)], 0.0, 0.0);
  }
  free(nrm);
  ef_model_part_destroy(&mp);
}

static void test_cube(int reverse) {
  const int n = 3;
  ef_model_part mp = ef_test_box(3, n, reverse);
  EXPECT(mp != NULL);
  if (!mp) return;
  check_part(mp, "Walls");
  check_part(mp, "ZMax");
  double *nrm = malloc((size_t)mp->n_nodes * 3 * sizeof *nrm);
  ef_sub_model_part *walls = ef_model_part_find_sub_model_part(mp, "Walls");
  if (nrm && walls) {
    EXPECT_OK(ef_model_part_nodal_normals(mp, walls, nrm));
    ef_index face = ef_test_box_node(mp, n, 1.0 / 3, 2.0 / 3, 1.0);
    EXPECT_NEAR(nrm[3 * face + 2], 1.0, TOL);
    /* Edge and corner nodes point outward, between the axes of their sides. */
    ef_index edge = ef_test_box_node(mp, n, 0.0, 0.0, 1.0 / 3), corner = ef_test_box_node(mp, n, 1, 1, 1);
    EXPECT(nrm[3 * edge] < -0.3 && nrm[3 * edge + 1] < -0.3 && fabs(nrm[3 * edge + 2]) < TOL);
    EXPECT(nrm[3 * corner] > 0.3 && nrm[3 * corner + 1] > 0.3 && nrm[3 * corner + 2] > 0.3);
    EXPECT_NEAR(nrm[3 * ef_test_box_node(mp, n, 1.0 / 3, 1.0 / 3, 1.0 / 3)], 0.0, 0.0); /* interior */
  }
  free(nrm);
  ef_model_part_destroy(&mp);
}

/* A condition that is no element's face cannot be oriented: an error naming its id. */
static void test_orphan(void) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  EXPECT(mp != NULL);
  if (!mp) return;
  /* Nodes (0,0) and (1,1) are not an edge of any triangle. */
  mp->conditions[0] = ef_test_box_node(mp, 2, 0, 0, 0);
  mp->conditions[1] = ef_test_box_node(mp, 2, 1, 1, 0);
  mp->condition_ids[0] = 4242;
  double *nrm = malloc((size_t)mp->n_nodes * 3 * sizeof *nrm);
  if (nrm) EXPECT_FAIL(ef_model_part_nodal_normals(mp, NULL, nrm), EF_ERR_MESH, "condition 4242");
  free(nrm);
  ef_model_part_destroy(&mp);
}

int main(void) {
  test_square(0);
  test_square(1);
  test_cube(0);
  test_cube(1);
  test_orphan();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

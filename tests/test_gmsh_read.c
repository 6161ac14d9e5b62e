/* test_gmsh_read.c -- the Gmsh reader on square.geo (2D) and box.geo (3D) meshed in
 * MSH 4.1 ASCII, 4.1 binary and 2.2 ASCII: the three encodings give the same model
 * part, geometric invariants hold, and the mdpa twin of the square agrees.
 *
 * usage: test_gmsh_read DIR EXACT
 *   DIR holds square_41.msh, square_41_bin.msh, square_22.msh, box_*.msh and
 *   square_nophys_41.msh.  EXACT=1 for the committed files (counts, coordinates and
 *   connectivity are known); EXACT=0 for files just made by the installed gmsh,
 *   whose mesh may differ between gmsh versions, so only invariants are checked. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ef_test.h"

/* Gmsh writes ASCII coordinates with 16 significant digits, binary ones exactly:
 * on this unit-sized geometry the two differ by at most ~1e-16; 1e-14 leaves room. */
#define COORD_TOL 1e-14
/* Sums of a few hundred measures of O(1e-2): round-off ~1e-15. */
#define MEASURE_TOL 1e-12

static ef_model_part load(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ef_model_part mp = NULL;
  if (ef_read_mesh(path, NULL, &mp)) {
    fprintf(stderr, "reading %s: %s\n", path, ef_error_message());
    failures++;
    return NULL;
  }
  return mp;
}

typedef struct {
  ef_model_part other;
  int same;
} smp_compare;

static int same_list(const ef_index *a, int64_t na, const ef_index *b, int64_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

static int compare_smp(ef_sub_model_part *smp, const char *path, void *user) {
  smp_compare *c = user;
  ef_sub_model_part *o = ef_model_part_find_sub_model_part(c->other, path);
  if (!o || !same_list(smp->nodes, smp->n_nodes, o->nodes, o->n_nodes) ||
      !same_list(smp->elements, smp->n_elements, o->elements, o->n_elements) ||
      !same_list(smp->conditions, smp->n_conditions, o->conditions, o->n_conditions) ||
      smp->n_children != o->n_children) {
    fprintf(stderr, "sub model part %s differs\n", path);
    c->same = 0;
  }
  return 0;
}

/* Same nodes (ids, coordinates), cells (ids, connectivity) and sub model parts. */
static int same_model_part(ef_model_part a, ef_model_part b) {
  if (!a || !b) return 0;
  if (a->dim != b->dim || a->n_nodes != b->n_nodes || a->n_elements != b->n_elements ||
      a->n_conditions != b->n_conditions || a->n_children != b->n_children)
    return 0;
  for (int64_t i = 0; i < a->n_nodes; ++i) {
    if (a->node_ids[i] != b->node_ids[i]) return 0;
    for (int c = 0; c < 3; ++c)
      if (fabs(a->coords[3 * i + c] - b->coords[3 * i + c]) > COORD_TOL) return 0;
  }
  int64_t ne = a->n_elements * a->nodes_per_element, nc = a->n_conditions * a->nodes_per_condition;
  if (memcmp(a->elements, b->elements, (size_t)ne * sizeof(ef_index)) != 0) return 0;
  if (memcmp(a->element_ids, b->element_ids, (size_t)a->n_elements * sizeof(int64_t)) != 0) return 0;
  if (nc && memcmp(a->conditions, b->conditions, (size_t)nc * sizeof(ef_index)) != 0) return 0;
  if (nc && memcmp(a->condition_ids, b->condition_ids, (size_t)a->n_conditions * sizeof(int64_t)) != 0) return 0;
  smp_compare ab = {b, 1}, ba = {a, 1};
  ef_model_part_visit_sub_model_parts(a, compare_smp, &ab);
  ef_model_part_visit_sub_model_parts(b, compare_smp, &ba);
  return ab.same && ba.same;
}

/* Length (2D) or area (3D) of condition c. */
static double condition_measure(ef_model_part mp, int64_t c) {
  const ef_index *n = mp->conditions + c * mp->nodes_per_condition;
  const double *x0 = mp->coords + 3 * n[0], *x1 = mp->coords + 3 * n[1];
  double a[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
  if (mp->nodes_per_condition == 2) return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  const double *x2 = mp->coords + 3 * n[2];
  double b[3] = {x2[0] - x0[0], x2[1] - x0[1], x2[2] - x0[2]};
  double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
  return 0.5 * sqrt(cx * cx + cy * cy + cz * cz);
}

static double smp_boundary_measure(ef_model_part mp, const char *path) {
  ef_sub_model_part *s = ef_model_part_find_sub_model_part(mp, path);
  if (!s) return -1.0;
  double sum = 0.0;
  for (int64_t i = 0; i < s->n_conditions; ++i) sum += condition_measure(mp, s->conditions[i]);
  return sum;
}

/* All nodes of a sub model part have coordinate `axis` equal to value. */
static int smp_on_plane(ef_model_part mp, const char *path, int axis, double value) {
  ef_sub_model_part *s = ef_model_part_find_sub_model_part(mp, path);
  if (!s || s->n_nodes == 0) return 0;
  for (int64_t i = 0; i < s->n_nodes; ++i)
    if (fabs(mp->coords[3 * s->nodes[i] + axis] - value) > COORD_TOL) return 0;
  return 1;
}

static int has_node_at(ef_model_part mp, double x, double y, double z) {
  for (int64_t i = 0; i < mp->n_nodes; ++i)
    if (fabs(mp->coords[3 * i] - x) < COORD_TOL && fabs(mp->coords[3 * i + 1] - y) < COORD_TOL &&
        fabs(mp->coords[3 * i + 2] - z) < COORD_TOL)
      return 1;
  return 0;
}

/* Facts of square.geo / box.geo that hold for any mesh gmsh makes of them. */
static void check_invariants(ef_model_part mp, int dim) {
  double total = 0.0;
  int positive = 1;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    double m = ef_model_part_element_measure(mp, e);
    positive &= m > 0;
    total += m;
  }
  EXPECT(mp->dim == dim && positive);
  EXPECT(fabs(total - 1.0) < MEASURE_TOL); /* unit square / unit cube */
  ef_sub_model_part *fluid = ef_model_part_find_sub_model_part(mp, "Fluid");
  EXPECT(fluid && fluid->n_elements == mp->n_elements && fluid->n_nodes == mp->n_nodes);
  ef_sub_model_part *ref = ef_model_part_find_sub_model_part(mp, "PressureRef");
  EXPECT(ref && ref->n_nodes == 1 && ref->n_elements == 0 && ref->n_conditions == 0);
  if (ref && ref->n_nodes == 1) {
    const double *x = mp->coords + 3 * ref->nodes[0];
    EXPECT(fabs(x[0] - 1) < COORD_TOL && fabs(x[1] - 1) < COORD_TOL && fabs(x[2]) < COORD_TOL);
  }
  EXPECT(smp_on_plane(mp, "Inlet", 0, 0.0));
  EXPECT(fabs(smp_boundary_measure(mp, "Inlet") - 1.0) < MEASURE_TOL);
  if (dim == 2) {
    EXPECT(!has_node_at(mp, 2, 2, 0)); /* the construction point */
    EXPECT(mp->n_children == 5);
    EXPECT(fabs(smp_boundary_measure(mp, "Walls") - 2.0) < MEASURE_TOL);
    EXPECT(fabs(smp_boundary_measure(mp, "Physical_1_7") - 1.0) < MEASURE_TOL); /* unnamed group */
    EXPECT(smp_on_plane(mp, "Physical_1_7", 0, 1.0));
  } else {
    EXPECT(!has_node_at(mp, 3, 3, 3));
    EXPECT(mp->n_children == 6);
    EXPECT(fabs(smp_boundary_measure(mp, "Outlet") - 1.0) < MEASURE_TOL);
    EXPECT(smp_on_plane(mp, "Outlet", 0, 1.0));
    EXPECT(fabs(smp_boundary_measure(mp, "Walls") - 4.0) < MEASURE_TOL);
    ef_sub_model_part *edge = ef_model_part_find_sub_model_part(mp, "BottomEdge");
    EXPECT(edge && edge->n_nodes >= 2 && edge->n_conditions == 0 && edge->n_elements == 0);
    EXPECT(smp_on_plane(mp, "BottomEdge", 1, 0.0) && smp_on_plane(mp, "BottomEdge", 2, 0.0));
  }
  /* Boundary groups do not overlap in these geometries: every condition is in exactly one. */
  int64_t in_groups = 0;
  for (int i = 0; i < mp->n_children; ++i) in_groups += mp->children[i]->n_conditions;
  EXPECT(in_groups == mp->n_conditions);
}

static void check_square_exact(ef_model_part mp) {
  EXPECT(mp->n_nodes == 12 && mp->n_elements == 14 && mp->n_conditions == 8);
  ef_index n5 = ef_model_part_node_index(mp, 5);
  EXPECT(n5 == 4 && mp->coords[3 * n5] == 0.499999999998694 && mp->coords[3 * n5 + 1] == 0.0);
  /* element 10 is (6, 3, 11) in the file and counter-clockwise, so kept as is */
  EXPECT(mp->element_ids[0] == 10 && mp->elements[0] == ef_model_part_node_index(mp, 6) &&
         mp->elements[1] == ef_model_part_node_index(mp, 3) && mp->elements[2] == ef_model_part_node_index(mp, 11));
  /* condition ids are the gmsh tags of the lines (2..9, file order) */
  EXPECT(mp->condition_ids[0] == 2 && mp->condition_ids[7] == 9);
  ef_sub_model_part *walls = ef_model_part_find_sub_model_part(mp, "Walls");
  EXPECT(walls && walls->n_nodes == 6 && walls->n_conditions == 4);
  ef_sub_model_part *inlet = ef_model_part_find_sub_model_part(mp, "Inlet");
  EXPECT(inlet && inlet->n_nodes == 3 && inlet->n_conditions == 2);
}

static void check_box_exact(ef_model_part mp) {
  EXPECT(mp->n_nodes == 45 && mp->n_elements == 100 && mp->n_conditions == 84);
  static const struct {
    const char *name;
    int nodes, conditions;
  } want[] = {{"Inlet", 12, 14}, {"Outlet", 12, 14}, {"Walls", 36, 56}, {"BottomEdge", 3, 0}};
  for (int i = 0; i < 4; ++i) {
    ef_sub_model_part *s = ef_model_part_find_sub_model_part(mp, want[i].name);
    EXPECT(s && s->n_nodes == want[i].nodes && s->n_conditions == want[i].conditions);
  }
}

static void check_geometry(const char *dir, const char *stem, int dim, int exact) {
  char n41[64], nbin[64], n22[64];
  snprintf(n41, sizeof n41, "%s_41.msh", stem);
  snprintf(nbin, sizeof nbin, "%s_41_bin.msh", stem);
  snprintf(n22, sizeof n22, "%s_22.msh", stem);
  ef_model_part a = load(dir, n41), b = load(dir, nbin), c = load(dir, n22);
  EXPECT(same_model_part(a, b));
  EXPECT(same_model_part(a, c));
  if (a) {
    check_invariants(a, dim);
    if (exact) (dim == 2 ? check_square_exact : check_box_exact)(a);
  }
  ef_model_part_destroy(&a);
  ef_model_part_destroy(&b);
  ef_model_part_destroy(&c);
}

/* MSH 4.1 without $PhysicalNames and $Entities (as some other writers produce it):
 * no physical groups, so triangles only, no conditions, no sub model parts. */
static void check_without_entities(void) {
  FILE *in = fopen(EF_TEST_DATA "/mesh_io/square_41.msh", "r");
  char dir[] = "/tmp/ef_gmsh_XXXXXX", path[64], line[256];
  if (!in || !mkdtemp(dir)) {
    if (in) fclose(in);
    EXPECT(!"cannot prepare the file without $Entities");
    return;
  }
  snprintf(path, sizeof path, "%s/plain.msh", dir);
  FILE *out = fopen(path, "w");
  int n = 0;
  while (out && fgets(line, sizeof line, in))
    if (++n < 4 || n > 23) fputs(line, out); /* lines 4-23: $PhysicalNames and $Entities */
  fclose(in);
  if (out) fclose(out);
  ef_model_part mp = NULL;
  int rc = ef_read_mesh(path, NULL, &mp);
  if (rc) fprintf(stderr, "%s\n", ef_error_message());
  EXPECT(rc == 0 && mp && mp->n_elements == 14 && mp->n_nodes == 12 && mp->n_conditions == 0 && mp->n_children == 0);
  ef_model_part_destroy(&mp);
  remove(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DIR EXACT(0|1)\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  int exact = atoi(argv[2]);
  check_geometry(dir, "square", 2, exact);
  check_geometry(dir, "box", 3, exact);

  /* Without physical groups gmsh saves every cell, the construction point's too. */
  ef_model_part np = load(dir, "square_nophys_41.msh");
  if (np) {
    EXPECT(np->n_conditions == 0 && np->n_children == 0); /* lines in no group are dropped */
    EXPECT(!has_node_at(np, 2, 2, 0));
    if (exact) EXPECT(np->n_nodes == 12); /* the file has 13 */
  }
  ef_model_part_destroy(&np);

  /* square.mdpa was written from the committed square_22.msh with the same ids. */
  if (exact) {
    check_without_entities();
    ef_model_part m = load(EF_TEST_DATA "/mesh_io", "square.mdpa");
    ef_model_part g = load(dir, "square_41.msh");
    EXPECT(same_model_part(m, g));
    ef_model_part_destroy(&m);
    ef_model_part_destroy(&g);
  }
  if (failures) fprintf(stderr, "%d expectation(s) failed\n", failures);
  return failures ? 1 : 0;
}

/* test_mdpa_read.c -- the .mdpa reader on a hand-written file using every block kind,
 * the same file with CRLF line ends, and ef_read_mesh's format dispatch. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ef_test.h"

#define FEATURES EF_TEST_DATA "/mesh_io/features.mdpa"

static ef_index idx(ef_model_part mp, int64_t id) { return ef_model_part_node_index(mp, id); }

static int has_nodes(const ef_sub_model_part *s, int n, const ef_index *want) {
  if (!s || s->n_nodes != n) return 0;
  for (int i = 0; i < n; ++i)
    if (s->nodes[i] != want[i]) return 0;
  return 1;
}

/* Everything features.mdpa states, checked value by value.  Comparisons are
 * exact: every coordinate and value is a short decimal that parses to the same
 * double each time, and areas are sums of halves. */
static void check_features(ef_model_part mp, const char *path) {
  EXPECT(mp->dim == 2);
  EXPECT(mp->source_file && strcmp(mp->source_file, path) == 0);
  EXPECT(mp->n_nodes == 6);
  static const int64_t ids[6] = {10, 20, 30, 40, 50, 60};
  for (int i = 0; i < 6 && i < mp->n_nodes; ++i) EXPECT(mp->node_ids[i] == ids[i]); /* file order */
  EXPECT(idx(mp, 50) == 4 && mp->coords[3 * 4] == 1.0 && mp->coords[3 * 4 + 1] == 1.0 && mp->coords[3 * 4 + 2] == 0.0);
  EXPECT(idx(mp, 30) == 2 && mp->coords[3 * 2] == 2.0);

  EXPECT(mp->n_elements == 4 && mp->nodes_per_element == 3);
  if (mp->n_elements == 4) {
    for (int e = 0; e < 4; ++e) {
      EXPECT(mp->element_ids[e] == e + 1);
      EXPECT(mp->element_properties[e] == 1);
      EXPECT(ef_model_part_element_measure(mp, e) == 0.5); /* element 4 was clockwise: re-oriented */
    }
    EXPECT(mp->elements[0] == idx(mp, 10) && mp->elements[1] == idx(mp, 20) && mp->elements[2] == idx(mp, 50));
    /* element 4 was (20, 50, 60); re-orientation swaps its first two nodes */
    EXPECT(mp->elements[9] == idx(mp, 50) && mp->elements[10] == idx(mp, 20) && mp->elements[11] == idx(mp, 60));
  }
  EXPECT(mp->n_conditions == 2 && mp->nodes_per_condition == 2);
  if (mp->n_conditions == 2) {
    EXPECT(mp->condition_ids[0] == 101 && mp->condition_ids[1] == 102);
    EXPECT(mp->conditions[0] == idx(mp, 10) && mp->conditions[1] == idx(mp, 40));
    EXPECT(mp->conditions[2] == idx(mp, 30) && mp->conditions[3] == idx(mp, 60));
    EXPECT(mp->condition_properties[1] == 0);
  }

  double v = 0;
  EXPECT(ef_model_part_get_property(mp, 1, "DENSITY", &v) && v == 1000.0);
  EXPECT(ef_model_part_get_property(mp, 1, "DYNAMIC_VISCOSITY", &v) && v == 1e-3);
  EXPECT(!ef_model_part_get_property(mp, 1, "CONSTITUTIVE_LAW_NAME", &v)); /* a string: skipped */
  EXPECT(!ef_model_part_get_property(mp, 1, "GRAVITY", &v));               /* a vector: skipped */
  EXPECT(!ef_model_part_get_property(mp, 1, "TEMPERATURE", &v));           /* inside a table */

  ef_variable *vel = ef_model_part_find_variable(mp, "VELOCITY");
  ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  EXPECT(mp->n_variables == 2 && vel && p);
  if (vel && p && vel->n_components == 3 && p->n_components == 1) {
    ef_index a = idx(mp, 10), b = idx(mp, 40), c = idx(mp, 60), d = idx(mp, 30), e = idx(mp, 20);
    EXPECT(vel->values[3 * a] == 1.5 && vel->fixed[3 * a] == 1 && vel->fixed[3 * a + 1] == 1 && vel->fixed[3 * a + 2] == 0);
    EXPECT(vel->values[3 * b] == 1.5 && vel->fixed[3 * b] == 1 && vel->fixed[3 * b + 1] == 0);
    EXPECT(vel->values[3 * c] == 0.1 && vel->values[3 * c + 1] == 0.2 && vel->fixed[3 * c] == 0);
    EXPECT(vel->values[3 * e] == 0.0 && vel->fixed[3 * e] == 0);
    EXPECT(p->values[d] == -25.0 && p->fixed[d] == 1 && p->fixed[a] == 0);
  } else {
    EXPECT(!"VELOCITY[3] and PRESSURE[1]");
  }

  EXPECT(mp->n_children == 2);
  ef_sub_model_part *parts = ef_model_part_find_sub_model_part(mp, "Parts_Fluid");
  EXPECT(parts && parts->n_nodes == 6 && parts->n_elements == 4 && parts->n_conditions == 0);
  ef_sub_model_part *inlet = ef_model_part_find_sub_model_part(mp, "FluidModelPart.Boundaries.Inlet");
  const ef_index inlet_nodes[2] = {idx(mp, 10), idx(mp, 40)}; /* listed 40, 10, 10: sorted, unique */
  EXPECT(has_nodes(inlet, 2, inlet_nodes) && inlet->n_conditions == 1 && inlet->conditions[0] == 0);
  ef_sub_model_part *outlet = ef_model_part_find_sub_model_part(mp, "Boundaries.Outlet");
  EXPECT(outlet && outlet->n_conditions == 1 && outlet->conditions[0] == 1 && outlet->n_nodes == 2);
  ef_sub_model_part *empty = ef_model_part_find_sub_model_part(mp, "Boundaries.Empty");
  EXPECT(empty && empty->n_nodes == 0 && empty->n_elements == 0 && empty->n_conditions == 0);
  ef_sub_model_part *bnd = ef_model_part_find_sub_model_part(mp, "Boundaries");
  EXPECT(bnd && bnd->n_children == 3 && bnd->n_nodes == 4 && inlet && inlet->parent == bnd);
}

static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = '\0';
      *size = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

static void test_features(void) {
  ef_model_part mp = NULL;
  int rc = ef_read_mesh(FEATURES, NULL, &mp);
  if (rc) fprintf(stderr, "reading %s: %s\n", FEATURES, ef_error_message());
  EXPECT(rc == 0 && mp);
  if (mp) {
    check_features(mp, FEATURES);
    int64_t again = -1;
    EXPECT(ef_model_part_check_mesh(mp, &again) == 0 && again == 0); /* already re-oriented */
  }
  ef_model_part_destroy(&mp);

  /* The same file with Windows line ends, through ef_read_mdpa on a caller's model part. */
  size_t n = 0;
  char *text = slurp(FEATURES, &n);
  EXPECT(text);
  char dir[] = "/tmp/ef_mdpa_XXXXXX";
  if (text && mkdtemp(dir)) {
    char path[256];
    snprintf(path, sizeof path, "%s/features_crlf.mdpa", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
      for (size_t i = 0; i < n; ++i) {
        if (text[i] == '\n') fputc('\r', f);
        fputc(text[i], f);
      }
      fclose(f);
      EXPECT(ef_model_part_create("FluidModelPart", 3, &mp) == 0);
      rc = ef_read_mdpa(path, mp);
      if (rc) fprintf(stderr, "reading %s: %s\n", path, ef_error_message());
      EXPECT(rc == 0);
      if (!rc) check_features(mp, path);
      /* A second read into a filled model part is refused. */
      EXPECT(ef_read_mdpa(path, mp) == EF_ERR_PARAMETER && strstr(ef_error_message(), "already holds a mesh"));
      ef_model_part_destroy(&mp);
      remove(path);
    }
    rmdir(dir);
  }
  free(text);
}

static void test_dispatch(void) {
  ef_model_part mp = (ef_model_part)&failures; /* must be reset to NULL on failure */
  EXPECT(ef_read_mesh("mesh.vtk", NULL, &mp) == EF_ERR_PARAMETER && mp == NULL &&
         strstr(ef_error_message(), "extension"));
  EXPECT(ef_read_mesh(FEATURES, "exodus", &mp) == EF_ERR_PARAMETER && strstr(ef_error_message(), "exodus"));
  EXPECT(ef_read_mesh("/nonexistent/dir/mesh.mdpa", NULL, &mp) == EF_ERR_IO &&
         strstr(ef_error_message(), "/nonexistent/dir/mesh.mdpa") && mp == NULL);
  /* An explicit type wins over the extension: the mdpa read as gmsh fails at line 1. */
  EXPECT(ef_read_mesh(FEATURES, "gmsh", &mp) == EF_ERR_PARSE && strstr(ef_error_message(), "features.mdpa:1:") &&
         strstr(ef_error_message(), "$MeshFormat"));
  EXPECT(ef_read_mesh(FEATURES, "mdpa", &mp) == 0 && mp && mp->n_elements == 4);
  ef_model_part_destroy(&mp);
}

int main(void) {
  test_features();
  test_dispatch();
  if (failures) fprintf(stderr, "%d expectation(s) failed\n", failures);
  return failures ? 1 : 0;
}

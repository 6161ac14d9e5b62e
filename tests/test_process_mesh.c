/* test_process_mesh.c -- shared by the process, normals and VTK-process tests
 * (#included, not a test of its own): a structured simplex mesh of the unit
 * square or cube built through the model part API, its boundary faces as
 * conditions and one sub model part per side, plus the check macros.
 *
 * 2D: n x n cells, each split into two triangles along its (0,0)-(1,1) diagonal.
 * 3D: n x n x n cubes, each split into the six Kuhn tetrahedra around its
 *     (0,0,0)-(1,1,1) diagonal (conforming across cubes).
 * Node ids are 1001, 1002, ... so nothing can confuse ids with indices.
 * Sub model parts: XMin, XMax, YMin, YMax (ZMin, ZMax in 3D) with the
 * conditions on that side and their nodes, and Walls with every condition.
 */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"
#include "edgeflow/ef_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not every test uses every helper. */
#define TP_HELPER static __attribute__((unused))

static int failures = 0;
#define EXPECT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                                     \
    }                                                                                 \
  } while (0)
#define EXPECT_NEAR(a, b, tol)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b);                                                                     \
    if (!(fabs(a_ - b_) <= (tol))) {                                                               \
      fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g (tolerance %g)\n", __FILE__, __LINE__, #a, \
              a_, b_, (double)(tol));                                                              \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)
#define EXPECT_OK(expr)                                                                                      \
  do {                                                                                                       \
    int rc_ = (expr);                                                                                        \
    if (rc_) {                                                                                               \
      fprintf(stderr, "%s:%d: %s failed (%s): %s\n", __FILE__, __LINE__, #expr, ef_error_name(rc_),          \
              ef_error_message());                                                                           \
      failures++;                                                                                            \
    }                                                                                                        \
  } while (0)
#define EXPECT_FAIL(expr, code, needle)                                                                      \
  do {                                                                                                       \
    int rc_ = (expr);                                                                                        \
    if (rc_ != (code) || !strstr(ef_error_message(), (needle))) {                                            \
      fprintf(stderr, "%s:%d: %s: expected %s with '%s', got %s: %s\n", __FILE__, __LINE__, #expr,           \
              ef_error_name(code), needle, ef_error_name(rc_), ef_error_message());                          \
      failures++;                                                                                            \
    }                                                                                                        \
  } while (0)

typedef struct {
  ef_index key[3];
  ef_index nodes[3];
} tp_face;

TP_HELPER int tp_face_cmp(const void *pa, const void *pb) {
  const tp_face *a = pa, *b = pb;
  for (int k = 0; k < 3; k++)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return 0;
}

/* Side bit of a point: 1 XMin, 2 XMax, 4 YMin, 8 YMax, 16 ZMin, 32 ZMax. */
TP_HELPER int tp_sides(const double *x, int dim) {
  int s = 0;
  for (int d = 0; d < dim; d++) {
    if (x[d] == 0.0) s |= 1 << (2 * d);
    if (x[d] == 1.0) s |= 2 << (2 * d);
  }
  return s;
}

TP_HELPER const char *tp_side_names[6] = {"XMin", "XMax", "YMin", "YMax", "ZMin", "ZMax"};

/* The unit box mesh; reverse: flip the node order of every other condition
 * (the normals must not care).  NULL on failure (message printed). */
TP_HELPER ef_model_part tp_box(int dim, int n, int reverse) {
  ef_model_part mp = NULL;
  int np = n + 1;
  int64_t n_nodes = dim == 2 ? (int64_t)np * np : (int64_t)np * np * np;
  int64_t n_cells = dim == 2 ? (int64_t)n * n : (int64_t)n * n * n;
  int per = dim + 1;
  int64_t n_elements = n_cells * (dim == 2 ? 2 : 6);
  tp_face *faces = NULL;
  int err = ef_model_part_create("FluidModelPart", dim, &mp);
  if (!err) err = ef_model_part_alloc_nodes(mp, n_nodes);
  if (!err) err = ef_model_part_alloc_elements(mp, n_elements, per);
  if (err) goto fail;
  for (int64_t i = 0; i < n_nodes; i++) {
    int64_t ix = i % np, iy = (i / np) % np, iz = i / ((int64_t)np * np);
    mp->coords[3 * i] = (double)ix / n;
    mp->coords[3 * i + 1] = (double)iy / n;
    mp->coords[3 * i + 2] = dim == 3 ? (double)iz / n : 0.0;
    mp->node_ids[i] = 1001 + i;
  }
#define TP_NODE(i, j, k) ((ef_index)((i) + (int64_t)np * ((j) + (int64_t)np * (k))))
  int64_t e = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    int i = (int)(c % n), j = (int)((c / n) % n), k = dim == 3 ? (int)(c / ((int64_t)n * n)) : 0;
    if (dim == 2) {
      ef_index t[2][3] = {{TP_NODE(i, j, 0), TP_NODE(i + 1, j, 0), TP_NODE(i + 1, j + 1, 0)},
                          {TP_NODE(i, j, 0), TP_NODE(i + 1, j + 1, 0), TP_NODE(i, j + 1, 0)}};
      memcpy(mp->elements + e * 3, t, sizeof t);
      e += 2;
    } else {
      static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      for (int q = 0; q < 6; q++) {
        int p[3] = {i, j, k};
        ef_index *en = mp->elements + e * 4;
        en[0] = TP_NODE(p[0], p[1], p[2]);
        for (int s = 0; s < 3; s++) {
          p[perm[q][s]]++;
          en[s + 1] = TP_NODE(p[0], p[1], p[2]);
        }
        if (ef_model_part_element_measure(mp, e) < 0) {
          ef_index t = en[1];
          en[1] = en[2];
          en[2] = t;
        }
        e++;
      }
    }
  }
#undef TP_NODE
  /* Boundary faces: element faces met once. */
  int64_t nf = n_elements * per;
  faces = malloc((size_t)nf * sizeof *faces);
  if (!faces) goto fail;
  for (int64_t q = 0; q < n_elements; q++)
    for (int o = 0; o < per; o++) {
      tp_face *f = faces + q * per + o;
      int m = 0;
      for (int l = 0; l < per; l++)
        if (l != o) f->nodes[m++] = mp->elements[q * per + l];
      if (dim == 2) f->nodes[2] = -1;
      memcpy(f->key, f->nodes, sizeof f->key);
      for (int a = 0; a < dim; a++)
        for (int b = a + 1; b < dim; b++)
          if (f->key[b] < f->key[a]) {
            ef_index t = f->key[a];
            f->key[a] = f->key[b];
            f->key[b] = t;
          }
    }
  qsort(faces, (size_t)nf, sizeof *faces, tp_face_cmp);
  int64_t nb = 0;
  for (int64_t a = 0; a < nf;) {
    int64_t b = a + 1;
    while (b < nf && !tp_face_cmp(faces + a, faces + b)) b++;
    if (b - a == 1) faces[nb++] = faces[a];
    a = b;
  }
  err = ef_model_part_alloc_conditions(mp, nb, dim);
  if (err) goto fail;
  ef_sub_model_part *side[6] = {NULL}, *walls = NULL;
  err = ef_model_part_add_sub_model_part(mp, NULL, "Walls", &walls);
  for (int s = 0; s < 2 * dim && !err; s++) err = ef_model_part_add_sub_model_part(mp, NULL, tp_side_names[s], &side[s]);
  if (err) goto fail;
  for (int64_t c = 0; c < nb && !err; c++) {
    ef_index *cn = mp->conditions + c * dim;
    memcpy(cn, faces[c].nodes, (size_t)dim * sizeof *cn);
    if (reverse && (c % 2)) {
      ef_index t = cn[0];
      cn[0] = cn[1];
      cn[1] = t;
    }
    mp->condition_ids[c] = 501 + c;
    int sides = ~0;
    for (int q = 0; q < dim; q++) sides &= tp_sides(mp->coords + 3 * (int64_t)cn[q], dim);
    ef_index ci = (ef_index)c;
    err = ef_sub_model_part_add_conditions(walls, &ci, 1);
    if (!err) err = ef_sub_model_part_add_nodes(walls, cn, dim);
    for (int s = 0; s < 2 * dim && !err; s++)
      if (sides & (1 << s)) {
        err = ef_sub_model_part_add_conditions(side[s], &ci, 1);
        if (!err) err = ef_sub_model_part_add_nodes(side[s], cn, dim);
      }
  }
  if (!err) err = ef_model_part_finalize_sub_model_parts(mp);
  const char *vars[][2] = {{"VELOCITY", "3"}, {"PRESSURE", "1"}, {"BODY_FORCE", "3"}, {"REACTION", "3"},
                           {"NORMAL", "3"},   {"IS_SLIP", "1"},  {"SLIP_TANGENT", "3"}};
  for (int v = 0; v < 7 && !err; v++) err = ef_model_part_add_variable(mp, vars[v][0], atoi(vars[v][1]));
  if (err) goto fail;
  free(faces);
  return mp;
fail:
  fprintf(stderr, "tp_box(%d, %d): %s\n", dim, n, ef_error_message());
  free(faces);
  ef_model_part_destroy(&mp);
  return NULL;
}

/* Index of the node at (x, y, z) of a tp_box mesh. */
TP_HELPER ef_index tp_node_at(ef_model_part mp, int n, double x, double y, double z) {
  int np = n + 1;
  int i = (int)lround(x * n), j = (int)lround(y * n), k = mp->dim == 3 ? (int)lround(z * n) : 0;
  return (ef_index)(i + np * (j + np * k));
}

/* A process from a JSON text of its Parameters; the document is destroyed
 * right away, so a process keeping views of it would be caught by ASan. */
TP_HELPER int tp_process(ef_model_part mp, const char *module, const char *json, const ef_process_ops **ops,
                      void **data) {
  *data = NULL;
  EF_CALL(ef_register_core_processes());
  EF_CALL(ef_registry_load_application("fluid")); /* inlet, outlet, walls, forces */
  *ops = ef_registry_lookup_process(module);
  EF_CHECK(*ops, EF_ERR_NOT_FOUND, "process '%s' is not registered", module);
  ef_parameters root = NULL, p = NULL;
  char text[4096];
  snprintf(text, sizeof text, "{\"Parameters\": %s}", json);
  EF_CALL(ef_parameters_parse(text, "test.json", &root));
  int err = ef_parameters_get(root, "Parameters", &p);
  ef_process_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.model_part = mp;
  EF_CALL(ef_model_part_set_value(mp, "DENSITY", 1000.0));
  if (!err) err = (*ops)->create(&ctx, p, data);
  ef_parameters_destroy(&root);
  return err;
}

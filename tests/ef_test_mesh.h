/* ef_test_mesh.h -- the meshes of the tests and benchmarks: simplex meshes of a box.
 *
 * As arrays (ef_test_mesh_2d / _3d), with their boundary faces, for the edge-data and
 * fractional-step tests and benchmarks:
 * 2D: (nx+1)(ny+1) nodes on [0,Lx]x[0,Ly], each cell split into two triangles along
 *     alternating diagonals.
 * 3D: (nx+1)(ny+1)(nz+1) nodes on [0,Lx]x[0,Ly]x[0,Lz], each cell split into the six
 *     Kuhn tetrahedra along its 000-111 diagonal (conforming across cells).
 * Jitter moves every node that is not on the boundary by a uniform random offset of up to
 * jitter * (cell size) per direction (deterministic generator, fixed seed), so the mesh
 * has no symmetry the tests could rely on while the box and its volume stay exact.
 * Every element is checked to keep its orientation.
 *
 * As a model part (ef_test_box), built through the model part API, for the process, normals
 * and VTK-process tests: the unit square or cube,
 * 2D: n x n cells, each split into two triangles along its (0,0)-(1,1) diagonal.
 * 3D: n x n x n cubes, each split into the six Kuhn tetrahedra around its
 *     (0,0,0)-(1,1,1) diagonal (conforming across cubes).
 * Node ids are 1001, 1002, ... so nothing can confuse ids with indices.  Its boundary faces
 * are conditions; sub model parts XMin, XMax, YMin, YMax (ZMin, ZMax in 3D) hold the
 * conditions on that side and their nodes, and Walls every condition.
 *
 * Header-only (static functions): include it in one test or tool source.
 */
#ifndef EF_TEST_MESH_H
#define EF_TEST_MESH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"

/* Boundary bits of a node. */
#define EF_TM_XMIN 1
#define EF_TM_XMAX 2
#define EF_TM_YMIN 4
#define EF_TM_YMAX 8
#define EF_TM_ZMIN 16
#define EF_TM_ZMAX 32

typedef struct {
  int dim;
  int64_t n_nodes, n_elements, n_faces;
  double *coords;       /* 3 per node */
  int32_t *elements;    /* dim+1 per element */
  uint8_t *boundary;    /* EF_TM_* bits per node */
  int32_t *faces;       /* dim per boundary face (segments in 2D, triangles in 3D) */
  double *face_normal;  /* 3 per face: outward unit normal */
  double *face_measure; /* length / area */
  double lx, ly, lz;
} ef_test_mesh;

static inline void ef_test_mesh_free(ef_test_mesh *m) {
  free(m->coords);
  free(m->elements);
  free(m->boundary);
  free(m->faces);
  free(m->face_normal);
  free(m->face_measure);
  memset(m, 0, sizeof *m);
}

/* Deterministic uniform numbers in [-1, 1] (xorshift64*). */
static inline double ef_test_rand(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ULL) >> 11) / 4503599627370496.0 - 1.0;
}

/* Signed measure (x6 in 3D, x2 in 2D) of element e. */
static inline double ef_test_signed_measure(const ef_test_mesh *m, int64_t e) {
  const int32_t *en = m->elements + e * (m->dim + 1);
  const double *x0 = m->coords + 3 * (int64_t)en[0];
  double a[3][3];
  for (int k = 0; k < m->dim; ++k)
    for (int c = 0; c < 3; ++c) a[k][c] = m->coords[3 * (int64_t)en[k + 1] + c] - x0[c];
  if (m->dim == 2) return a[0][0] * a[1][1] - a[0][1] * a[1][0];
  return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

typedef struct {
  int32_t key[3];   /* sorted face nodes */
  int32_t nodes[3]; /* as in the element */
  int64_t element;
  int opposite;     /* local index of the vertex not on the face */
} ef_test_face;

static inline int ef_test_face_cmp(const void *pa, const void *pb) {
  const ef_test_face *a = pa, *b = pb;
  for (int k = 0; k < 3; ++k)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return 0;
}

/* Boundary faces: element faces that occur once, with outward normals. */
static inline int ef_test_mesh_faces(ef_test_mesh *m) {
  const int d = m->dim, npe = d + 1;
  const int64_t nf = m->n_elements * npe;
  ef_test_face *f = malloc((size_t)nf * sizeof *f);
  if (!f) return 1;
  for (int64_t e = 0; e < m->n_elements; ++e)
    for (int o = 0; o < npe; ++o) {
      ef_test_face *q = f + e * npe + o;
      int c = 0;
      for (int l = 0; l < npe; ++l)
        if (l != o) q->nodes[c++] = m->elements[e * npe + l];
      if (d == 2) q->nodes[2] = -1;
      memcpy(q->key, q->nodes, sizeof q->key);
      for (int i = 0; i < 3; ++i) /* sort the key */
        for (int j = i + 1; j < 3; ++j)
          if (q->key[j] < q->key[i]) {
            int32_t t = q->key[i];
            q->key[i] = q->key[j];
            q->key[j] = t;
          }
      q->element = e;
      q->opposite = o;
    }
  qsort(f, (size_t)nf, sizeof *f, ef_test_face_cmp);
  int64_t nb = 0;
  for (int64_t i = 0; i < nf;) {
    int64_t j = i + 1;
    while (j < nf && ef_test_face_cmp(f + i, f + j) == 0) ++j;
    if (j - i == 1) f[nb++] = f[i];
    i = j;
  }
  m->n_faces = nb;
  m->faces = malloc((size_t)nb * d * sizeof *m->faces);
  m->face_normal = malloc((size_t)nb * 3 * sizeof *m->face_normal);
  m->face_measure = malloc((size_t)nb * sizeof *m->face_measure);
  if (!m->faces || !m->face_normal || !m->face_measure) {
    free(f);
    return 1;
  }
  for (int64_t b = 0; b < nb; ++b) {
    const double *x0 = m->coords + 3 * (int64_t)f[b].nodes[0];
    const double *x1 = m->coords + 3 * (int64_t)f[b].nodes[1];
    const double *xo = m->coords + 3 * (int64_t)m->elements[f[b].element * npe + f[b].opposite];
    double nrm[3], meas;
    if (d == 2) {
      double t[2] = {x1[0] - x0[0], x1[1] - x0[1]};
      meas = sqrt(t[0] * t[0] + t[1] * t[1]);
      nrm[0] = t[1] / meas;
      nrm[1] = -t[0] / meas;
      nrm[2] = 0.0;
    } else {
      const double *x2 = m->coords + 3 * (int64_t)f[b].nodes[2];
      double a[3], c[3];
      for (int k = 0; k < 3; ++k) {
        a[k] = x1[k] - x0[k];
        c[k] = x2[k] - x0[k];
      }
      double cr[3] = {a[1] * c[2] - a[2] * c[1], a[2] * c[0] - a[0] * c[2], a[0] * c[1] - a[1] * c[0]};
      double l = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
      meas = 0.5 * l;
      for (int k = 0; k < 3; ++k) nrm[k] = cr[k] / l;
    }
    double dot = 0.0;
    for (int k = 0; k < 3; ++k) dot += nrm[k] * (xo[k] - x0[k]);
    if (dot > 0.0)
      for (int k = 0; k < 3; ++k) nrm[k] = -nrm[k];
    for (int k = 0; k < d; ++k) m->faces[b * d + k] = f[b].nodes[k];
    for (int k = 0; k < 3; ++k) m->face_normal[3 * b + k] = nrm[k];
    m->face_measure[b] = meas;
  }
  free(f);
  return 0;
}

/* Move interior nodes and check orientation; returns 0 on success. */
static inline int ef_test_mesh_jitter(ef_test_mesh *m, const double *h, double jitter, uint64_t seed) {
  if (jitter <= 0.0) return 0;
  double *sign = malloc((size_t)m->n_elements * sizeof *sign);
  if (!sign) return 1;
  for (int64_t e = 0; e < m->n_elements; ++e) sign[e] = ef_test_signed_measure(m, e);
  uint64_t st = seed ? seed : 0x9E3779B97F4A7C15ULL;
  for (int64_t i = 0; i < m->n_nodes; ++i) {
    double r[3];
    for (int c = 0; c < 3; ++c) r[c] = ef_test_rand(&st);
    if (m->boundary[i]) continue;
    for (int c = 0; c < m->dim; ++c) m->coords[3 * i + c] += jitter * h[c] * r[c];
  }
  int bad = 0;
  for (int64_t e = 0; e < m->n_elements; ++e)
    if (ef_test_signed_measure(m, e) * sign[e] <= 0.0) bad = 1;
  free(sign);
  if (bad) fprintf(stderr, "test mesh: jitter %g inverted an element\n", jitter);
  return bad;
}

/* 2D box mesh; returns 0 on success. */
static inline int ef_test_mesh_2d(int nx, int ny, double lx, double ly, double jitter, uint64_t seed, ef_test_mesh *m) {
  memset(m, 0, sizeof *m);
  m->dim = 2;
  m->lx = lx;
  m->ly = ly;
  m->n_nodes = (int64_t)(nx + 1) * (ny + 1);
  m->n_elements = 2 * (int64_t)nx * ny;
  m->coords = calloc((size_t)m->n_nodes * 3, sizeof(double));
  m->elements = malloc((size_t)m->n_elements * 3 * sizeof(int32_t));
  m->boundary = calloc((size_t)m->n_nodes, 1);
  if (!m->coords || !m->elements || !m->boundary) return 1;
#define EF_TM_ID2(i, j) ((int32_t)((j) * (nx + 1) + (i)))
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      int32_t id = EF_TM_ID2(i, j);
      m->coords[3 * id] = lx * i / nx;
      m->coords[3 * id + 1] = ly * j / ny;
      m->boundary[id] = (uint8_t)((i == 0 ? EF_TM_XMIN : 0) | (i == nx ? EF_TM_XMAX : 0) |
                                  (j == 0 ? EF_TM_YMIN : 0) | (j == ny ? EF_TM_YMAX : 0));
    }
  int64_t e = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      int32_t a = EF_TM_ID2(i, j), b = EF_TM_ID2(i + 1, j), c = EF_TM_ID2(i + 1, j + 1), d = EF_TM_ID2(i, j + 1);
      int32_t *t = m->elements + 6 * e;
      if ((i + j) % 2 == 0) {
        int32_t v[6] = {a, b, c, a, c, d};
        memcpy(t, v, sizeof v);
      } else {
        int32_t v[6] = {a, b, d, b, c, d};
        memcpy(t, v, sizeof v);
      }
      ++e;
    }
#undef EF_TM_ID2
  double h[3] = {lx / nx, ly / ny, 0.0};
  if (ef_test_mesh_jitter(m, h, jitter, seed)) return 1;
  return ef_test_mesh_faces(m);
}

/* 3D box mesh of Kuhn tetrahedra; returns 0 on success. */
static inline int ef_test_mesh_3d(int nx, int ny, int nz, double lx, double ly, double lz, double jitter, uint64_t seed,
                           ef_test_mesh *m) {
  memset(m, 0, sizeof *m);
  m->dim = 3;
  m->lx = lx;
  m->ly = ly;
  m->lz = lz;
  m->n_nodes = (int64_t)(nx + 1) * (ny + 1) * (nz + 1);
  m->n_elements = 6 * (int64_t)nx * ny * nz;
  m->coords = calloc((size_t)m->n_nodes * 3, sizeof(double));
  m->elements = malloc((size_t)m->n_elements * 4 * sizeof(int32_t));
  m->boundary = calloc((size_t)m->n_nodes, 1);
  if (!m->coords || !m->elements || !m->boundary) return 1;
#define EF_TM_ID3(i, j, k) ((int32_t)(((int64_t)(k) * (ny + 1) + (j)) * (nx + 1) + (i)))
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i) {
        int32_t id = EF_TM_ID3(i, j, k);
        m->coords[3 * (int64_t)id] = lx * i / nx;
        m->coords[3 * (int64_t)id + 1] = ly * j / ny;
        m->coords[3 * (int64_t)id + 2] = lz * k / nz;
        m->boundary[id] = (uint8_t)((i == 0 ? EF_TM_XMIN : 0) | (i == nx ? EF_TM_XMAX : 0) |
                                    (j == 0 ? EF_TM_YMIN : 0) | (j == ny ? EF_TM_YMAX : 0) |
                                    (k == 0 ? EF_TM_ZMIN : 0) | (k == nz ? EF_TM_ZMAX : 0));
      }
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int64_t e = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (int p = 0; p < 6; ++p) {
          int v[3] = {i, j, k};
          int32_t *t = m->elements + 4 * e++;
          t[0] = EF_TM_ID3(v[0], v[1], v[2]);
          for (int s = 0; s < 3; ++s) {
            v[perms[p][s]]++;
            t[s + 1] = EF_TM_ID3(v[0], v[1], v[2]);
          }
        }
#undef EF_TM_ID3
  double h[3] = {lx / nx, ly / ny, lz / nz};
  if (ef_test_mesh_jitter(m, h, jitter, seed)) return 1;
  return ef_test_mesh_faces(m);
}

/* ---------------------------------------------------------------------------
 * The unit box as a model part. */

/* Not every test uses every helper. */
#define EF_TEST_HELPER static __attribute__((unused))

typedef struct {
  ef_index key[3];
  ef_index nodes[3];
} ef_test_face_;

EF_TEST_HELPER int ef_test_face_cmp_(const void *pa, const void *pb) {
  const ef_test_face_ *a = pa, *b = pb;
  for (int k = 0; k < 3; k++)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return 0;
}

/* Side bit of a point: 1 XMin, 2 XMax, 4 YMin, 8 YMax, 16 ZMin, 32 ZMax. */
EF_TEST_HELPER int ef_test_box_sides(const double *x, int dim) {
  int s = 0;
  for (int d = 0; d < dim; d++) {
    if (x[d] == 0.0) s |= 1 << (2 * d);
    if (x[d] == 1.0) s |= 2 << (2 * d);
  }
  return s;
}

EF_TEST_HELPER const char *ef_test_box_side_names[6] = {"XMin", "XMax", "YMin", "YMax", "ZMin", "ZMax"};

/* The unit box mesh; reverse: flip the node order of every other condition
 * (the normals must not care).  NULL on failure (message printed). */
EF_TEST_HELPER ef_model_part ef_test_box(int dim, int n, int reverse) {
  ef_model_part mp = NULL;
  int np = n + 1;
  int64_t n_nodes = dim == 2 ? (int64_t)np * np : (int64_t)np * np * np;
  int64_t n_cells = dim == 2 ? (int64_t)n * n : (int64_t)n * n * n;
  int per = dim + 1;
  int64_t n_elements = n_cells * (dim == 2 ? 2 : 6);
  ef_test_face_ *faces = NULL;
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
#define EF_TB_NODE(i, j, k) ((ef_index)((i) + (int64_t)np * ((j) + (int64_t)np * (k))))
  int64_t e = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    int i = (int)(c % n), j = (int)((c / n) % n), k = dim == 3 ? (int)(c / ((int64_t)n * n)) : 0;
    if (dim == 2) {
      ef_index t[2][3] = {{EF_TB_NODE(i, j, 0), EF_TB_NODE(i + 1, j, 0), EF_TB_NODE(i + 1, j + 1, 0)},
                          {EF_TB_NODE(i, j, 0), EF_TB_NODE(i + 1, j + 1, 0), EF_TB_NODE(i, j + 1, 0)}};
      memcpy(mp->elements + e * 3, t, sizeof t);
      e += 2;
    } else {
      static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      for (int q = 0; q < 6; q++) {
        int p[3] = {i, j, k};
        ef_index *en = mp->elements + e * 4;
        en[0] = EF_TB_NODE(p[0], p[1], p[2]);
        for (int s = 0; s < 3; s++) {
          p[perm[q][s]]++;
          en[s + 1] = EF_TB_NODE(p[0], p[1], p[2]);
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
#undef EF_TB_NODE
  /* Boundary faces: element faces met once. */
  int64_t nf = n_elements * per;
  faces = malloc((size_t)nf * sizeof *faces);
  if (!faces) goto fail;
  for (int64_t q = 0; q < n_elements; q++)
    for (int o = 0; o < per; o++) {
      ef_test_face_ *f = faces + q * per + o;
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
  qsort(faces, (size_t)nf, sizeof *faces, ef_test_face_cmp_);
  int64_t nb = 0;
  for (int64_t a = 0; a < nf;) {
    int64_t b = a + 1;
    while (b < nf && !ef_test_face_cmp_(faces + a, faces + b)) b++;
    if (b - a == 1) faces[nb++] = faces[a];
    a = b;
  }
  err = ef_model_part_alloc_conditions(mp, nb, dim);
  if (err) goto fail;
  ef_sub_model_part *side[6] = {NULL}, *walls = NULL;
  err = ef_model_part_add_sub_model_part(mp, NULL, "Walls", &walls);
  for (int s = 0; s < 2 * dim && !err; s++)
    err = ef_model_part_add_sub_model_part(mp, NULL, ef_test_box_side_names[s], &side[s]);
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
    for (int q = 0; q < dim; q++) sides &= ef_test_box_sides(mp->coords + 3 * (int64_t)cn[q], dim);
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
  fprintf(stderr, "ef_test_box(%d, %d): %s\n", dim, n, ef_error_message());
  free(faces);
  ef_model_part_destroy(&mp);
  return NULL;
}

/* Index of the node at (x, y, z) of an ef_test_box mesh. */
EF_TEST_HELPER ef_index ef_test_box_node(ef_model_part mp, int n, double x, double y, double z) {
  int np = n + 1;
  int i = (int)lround(x * n), j = (int)lround(y * n), k = mp->dim == 3 ? (int)lround(z * n) : 0;
  return (ef_index)(i + np * (j + np * k));
}

#endif

/* test_vtu_writer.c -- the raw-array .vtu writer: every encoding reads back bit
 * for bit (with the independent reader in test_vtu_readback.c; ascii below 17
 * digits as the values printf's %.*g rounds them to), bad input is refused
 * without leaving files, and a sidecar .expect is left beside each file for
 * vtk_roundtrip.py.  Usage: test_vtu_writer OUTPUT_FOLDER */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "edgeflow/ef_vtk_output.h"
#include "test_vtu_readback.h"

#include "ef_test.h"

static const char *dir;

typedef struct {
  const char *tag;
  ef_vtu_write_options opt;
  int compressed, ascii;
} encoding;

static const encoding encodings[] = {
    {"binary", {.format = EF_VTK_FORMAT_BINARY}, 0, 0},
#ifdef TVR_HAVE_ZLIB
    {"zlib", {.format = EF_VTK_FORMAT_BINARY, .compress = 1}, 1, 0},
    {"zlib1", {.format = EF_VTK_FORMAT_BINARY, .compress = 1, .compression_level = 1, .block_size = 1 << 15}, 1, 0},
    {"zlib9", {.format = EF_VTK_FORMAT_BINARY, .compress = 1, .compression_level = 9, .block_size = 1 << 20}, 1, 0},
#endif
    {"ascii", {.format = EF_VTK_FORMAT_ASCII}, 0, 1}, /* precision 0: 17 digits */
    {"ascii17", {.format = EF_VTK_FORMAT_ASCII, .precision = 17}, 0, 1},
    /* Below 17 digits the file holds rounded values (1.7976931348623157e308 of mesh A at 15 or 3
     * digits would round up past the largest double: the writer keeps 17 digits there). */
    {"ascii15", {.format = EF_VTK_FORMAT_ASCII, .precision = 15}, 0, 1},
    {"ascii12", {.format = EF_VTK_FORMAT_ASCII, .precision = 12}, 0, 1},
    {"ascii7", {.format = EF_VTK_FORMAT_ASCII, .precision = 7}, 0, 1},
    {"ascii3", {.format = EF_VTK_FORMAT_ASCII, .precision = 3}, 0, 1},
};
#define N_ENCODINGS ((int)(sizeof encodings / sizeof encodings[0]))

/* v as printf's %.*g text of it reads back (17 digits from 1.5e308 up, as the writer). */
static double printf_rounded(double v, int digits) {
  char text[64];
  snprintf(text, sizeof text, "%.*g", fabs(v) < 1.5e308 ? digits : 17, v);
  return strtod(text, NULL);
}

/* n doubles of v, each printf_rounded, in a new array kept in keep[*n_keep]. */
static const double *rounded_copy(const double *v, uint64_t n, int digits, double **keep, int *n_keep) {
  double *r = malloc((n ? n : 1) * sizeof *r);
  if (!r) return v;
  for (uint64_t i = 0; i < n; ++i) r[i] = printf_rounded(v[i], digits);
  keep[(*n_keep)++] = r;
  return r;
}

/* m with every Float64 value (points, point and cell data) as an ascii file at digits holds it. */
typedef struct {
  ef_vtu_mesh mesh;
  ef_vtk_data_array point_data[8], cell_data[8];
  double *keep[17];
  int n_keep;
} rounded_mesh;

static void round_mesh(const ef_vtu_mesh *m, int digits, rounded_mesh *r) {
  memset(r, 0, sizeof *r);
  r->mesh = *m;
  if (m->n_point_data > 8 || m->n_cell_data > 8) return;
  r->mesh.points = rounded_copy(m->points, 3 * (uint64_t)m->n_points, digits, r->keep, &r->n_keep);
  for (int i = 0; i < m->n_point_data; ++i) {
    r->point_data[i] = m->point_data[i];
    if (m->point_data[i].type == EF_VTK_FLOAT64)
      r->point_data[i].values = rounded_copy(m->point_data[i].values,
                                             (uint64_t)m->n_points * (uint64_t)m->point_data[i].n_components,
                                             digits, r->keep, &r->n_keep);
  }
  for (int i = 0; i < m->n_cell_data; ++i) {
    r->cell_data[i] = m->cell_data[i];
    if (m->cell_data[i].type == EF_VTK_FLOAT64)
      r->cell_data[i].values = rounded_copy(m->cell_data[i].values,
                                            (uint64_t)m->n_cells * (uint64_t)m->cell_data[i].n_components,
                                            digits, r->keep, &r->n_keep);
  }
  r->mesh.point_data = m->n_point_data ? r->point_data : NULL;
  r->mesh.cell_data = m->n_cell_data ? r->cell_data : NULL;
}

static void free_rounded_mesh(rounded_mesh *r) {
  for (int i = 0; i < r->n_keep; ++i) free(r->keep[i]);
}

/* Write m as <dir>/<name>.vtu with e, read it back, compare (ascii below 17 digits: with m's
 * values rounded by printf, which the writer's own formatter must reproduce), leave the sidecar. */
static void write_and_check(const char *name, const ef_vtu_mesh *m, const encoding *e) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.vtu", dir, name);
  int err = ef_vtu_write(path, m, &e->opt);
  rounded_mesh rounded;
  int digits = e->ascii ? e->opt.precision : 0;
  if (err == EF_SUCCESS && digits > 0 && digits < 17) {
    round_mesh(m, digits, &rounded);
    m = &rounded.mesh;
  } else {
    digits = 0;
  }
  EXPECT(err == EF_SUCCESS, "%s: %s", path, ef_error_message());
  if (err) return;
  tvr_doc doc;
  char why[512];
  if (tvr_read(path, &doc, why, sizeof why)) {
    EXPECT(0, "%s: %s", path, why);
    if (digits) free_rounded_mesh(&rounded);
    return;
  }
  EXPECT(doc.compressed == e->compressed && doc.ascii == e->ascii, "%s: compressed %d ascii %d", path,
        doc.compressed, doc.ascii);
  EXPECT(tvr_compare(&doc, m, why, sizeof why) == 0, "%s: %s", path, why);
  tvr_free(&doc);
  EXPECT(tvr_write_expect(path, m) == 0, "%s", path);
  if (digits) free_rounded_mesh(&rounded);
}

/* A call that must fail with code and create nothing at path. */
static void expect_refused(const char *name, const ef_vtu_mesh *m, const ef_vtu_write_options *opt,
                           int code, const char *message_part) {
  char path[4096];
  snprintf(path, sizeof path, "%s/refused_%s.vtu", dir, name);
  ef_error_clear();
  int err = ef_vtu_write(path, m, opt);
  EXPECT(err == code, "%s: got %s (%s), want %s", name, ef_error_name(err), ef_error_message(),
        ef_error_name(code));
  EXPECT(strstr(ef_error_message(), message_part) != NULL, "%s: message '%s' lacks '%s'", name,
        ef_error_message(), message_part);
  EXPECT(!tvr_exists(path), "%s: %s exists after a refused write", name, path);
}

/* Lettered blocks: meshes A-D written in every encoding, then E refused input. */
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUTPUT_FOLDER\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  if (tvr_remove_tree(dir) || ef_make_folders(dir)) {
    fprintf(stderr, "cannot reset %s\n", dir);
    return 1;
  }

  /* A: every supported cell type in one piece, explicit offsets and types, int64 connectivity,
   * values that only round-trip if every bit is kept (-0, subnormal, extremes, 1/3). */
  const double pts[6 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1.0 / 3.0, 2.0 / 3.0, -1e-7, 2, 2, 2};
  const int64_t conn64[] = {0, 1, 2, 3, 1, 2, 4, 4, 5, 5};
  const int64_t offs[] = {4, 7, 9, 10};
  const uint8_t types[] = {EF_VTK_TETRA, EF_VTK_TRIANGLE, EF_VTK_LINE, EF_VTK_VERTEX};
  const double pressure[6] = {-0.0, 4.9406564584124654e-324, 1.7976931348623157e308, 1.0 / 3.0, -2.5,
                              3.141592653589793};
  double velocity[18];
  for (int i = 0; i < 18; ++i) velocity[i] = sin(0.7 * i) * pow(10.0, (i % 7) - 3);
  const int32_t tag[6] = {-7, 0, 1, 2147483647, -2147483647 - 1, 42};
  const int64_t gid[6] = {1, 2, 3, INT64_MAX, INT64_MIN, -1};
  const double cell_value[4] = {0.1, 0.2, 0.30000000000000004, -1e-300};
  const int64_t cell_id[4] = {10, 20, 30, 40};
  const double nonfinite[6] = {NAN, INFINITY, -INFINITY, -NAN, 0.0, 1.0};
  ef_vtk_data_array pdata[5] = {{"PRESSURE", EF_VTK_FLOAT64, 1, pressure},
                                {"VELOCITY", EF_VTK_FLOAT64, 3, velocity},
                                {"TAG", EF_VTK_INT32, 1, tag},
                                {"GID", EF_VTK_INT64, 1, gid},
                                {"NON&FINITE<\"x\">", EF_VTK_FLOAT64, 1, nonfinite}};
  ef_vtk_data_array cdata[2] = {{"CELL_VALUE", EF_VTK_FLOAT64, 1, cell_value},
                                {"CELL_ID", EF_VTK_INT64, 1, cell_id}};
  ef_vtu_mesh mixed = {.n_points = 6, .points = pts, .n_cells = 4, .connectivity_type = EF_VTK_INT64,
                       .connectivity = conn64, .offsets = offs, .types = types, .n_point_data = 4,
                       .point_data = pdata, .n_cell_data = 2, .cell_data = cdata};
  for (int e = 0; e < N_ENCODINGS; ++e) {
    char name[64];
    snprintf(name, sizeof name, "mixed_%s", encodings[e].tag);
    /* VTK's ascii parser cannot read nan/inf, so non-finite values are a binary-only case. */
    mixed.n_point_data = encodings[e].ascii ? 4 : 5;
    write_and_check(name, &mixed, &encodings[e]);
  }
  /* Writing again over an existing file replaces it whole. */
  mixed.n_point_data = 3;
  write_and_check("mixed_binary", &mixed, &encodings[0]);
  mixed.n_point_data = 5;

  /* B: a triangulated 2D grid, int32 connectivity, implicit offsets and types. */
  enum { NX = 7, NY = 5 };
  double grid[NX * NY * 3];
  int32_t tri[(NX - 1) * (NY - 1) * 6];
  double h[NX * NY];
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      int n = j * NX + i;
      grid[3 * n] = i / 6.0;
      grid[3 * n + 1] = j / 7.0;
      grid[3 * n + 2] = 0.0;
      h[n] = exp(-grid[3 * n]) * cos(grid[3 * n + 1]);
    }
  int nt = 0;
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      int a = j * NX + i, b = a + 1, c = a + NX, d = c + 1;
      int32_t two[6] = {a, b, d, a, d, c};
      memcpy(tri + 3 * nt, two, sizeof two);
      nt += 2;
    }
  ef_vtk_data_array hdata = {"H", EF_VTK_FLOAT64, 1, h};
  ef_vtu_mesh grid_mesh = {.n_points = NX * NY, .points = grid, .n_cells = nt,
                           .connectivity_type = EF_VTK_INT32, .connectivity = tri, .nodes_per_cell = 3,
                           .cell_type = EF_VTK_TRIANGLE, .n_point_data = 1, .point_data = &hdata};
  for (int e = 0; e < N_ENCODINGS; ++e) {
    char name[64];
    snprintf(name, sizeof name, "grid_%s", encodings[e].tag);
    write_and_check(name, &grid_mesh, &encodings[e]);
  }

  /* C: large enough for several zlib blocks and several stdio buffers; 4096 points makes the
   * scalar array exactly one 32 KiB block and the points exactly three (last-block size 0). */
  const int64_t sizes[2] = {10007, 4096};
  for (int s = 0; s < 2; ++s) {
    int64_t n = sizes[s];
    double *xyz = malloc((size_t)n * 3 * sizeof *xyz);
    double *f = malloc((size_t)n * sizeof *f);
    int64_t *tets = malloc((size_t)(n - 3) * 4 * sizeof *tets);
    if (!xyz || !f || !tets) return 1;
    uint64_t state = 12345;
    for (int64_t i = 0; i < 3 * n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      xyz[i] = (double)(state >> 11) * 0x1.0p-53;
    }
    for (int64_t i = 0; i < n; ++i) f[i] = i % 3 ? sqrt((double)i) : (double)i;
    for (int64_t c = 0; c < n - 3; ++c)
      for (int k = 0; k < 4; ++k) tets[4 * c + k] = c + k;
    ef_vtk_data_array fdata = {"F", EF_VTK_FLOAT64, 1, f};
    ef_vtu_mesh big = {.n_points = n, .points = xyz, .n_cells = n - 3, .connectivity_type = EF_VTK_INT64,
                       .connectivity = tets, .nodes_per_cell = 4, .cell_type = EF_VTK_TETRA,
                       .n_point_data = 1, .point_data = &fdata};
    for (int e = 0; e < N_ENCODINGS; ++e) {
      if (encodings[e].ascii && s == 1) continue;
      char name[64];
      snprintf(name, sizeof name, "big%lld_%s", (long long)n, encodings[e].tag);
      write_and_check(name, &big, &encodings[e]);
    }
    free(xyz);
    free(f);
    free(tets);
  }

  /* D: nothing at all. */
  ef_vtu_mesh empty = {.connectivity_type = EF_VTK_INT32, .nodes_per_cell = 3, .cell_type = EF_VTK_TRIANGLE};
  for (int e = 0; e < N_ENCODINGS; ++e) {
    char name[64];
    snprintf(name, sizeof name, "empty_%s", encodings[e].tag);
    write_and_check(name, &empty, &encodings[e]);
  }

  /* E: refused input. */
  const int64_t bad_conn[] = {0, 1, 2, 6, 1, 2, 4, 4, 5, 5};
  ef_vtu_mesh bad = mixed;
  bad.connectivity = bad_conn;
  expect_refused("bad_index", &bad, NULL, EF_ERR_PARAMETER, "refers to point 6");
  const uint8_t bad_types[] = {EF_VTK_TETRA, EF_VTK_TETRA, EF_VTK_LINE, EF_VTK_VERTEX};
  bad = mixed;
  bad.types = bad_types;
  expect_refused("bad_size", &bad, NULL, EF_ERR_PARAMETER, "cell 1 of VTK type 10 has 3 points");
  bad = grid_mesh;
  bad.cell_type = 9;
  expect_refused("bad_type", &bad, NULL, EF_ERR_PARAMETER, "unsupported VTK cell type 9");
  bad = grid_mesh;
  ef_vtk_data_array no_values = {"H", EF_VTK_FLOAT64, 1, NULL};
  bad.point_data = &no_values;
  expect_refused("no_values", &bad, NULL, EF_ERR_PARAMETER, "'H' has no values");
  ef_vtu_write_options ascii_zlib = {.format = EF_VTK_FORMAT_ASCII, .compress = 1};
  expect_refused("ascii_zlib", &grid_mesh, &ascii_zlib, EF_ERR_PARAMETER, "binary");
  ef_vtu_write_options digits18 = {.format = EF_VTK_FORMAT_ASCII, .precision = 18};
  expect_refused("digits18", &grid_mesh, &digits18, EF_ERR_PARAMETER, "precision 18 is not 1..17");
  ef_vtu_write_options digits_negative = {.format = EF_VTK_FORMAT_ASCII, .precision = -1};
  expect_refused("digits_negative", &grid_mesh, &digits_negative, EF_ERR_PARAMETER, "precision -1");
#ifdef TVR_HAVE_ZLIB
  ef_vtu_write_options odd_block = {.format = EF_VTK_FORMAT_BINARY, .compress = 1, .block_size = 1000};
  expect_refused("odd_block", &grid_mesh, &odd_block, EF_ERR_PARAMETER, "block size 1000");
#else
  ef_vtu_write_options zlib = {.format = EF_VTK_FORMAT_BINARY, .compress = 1};
  expect_refused("no_zlib", &grid_mesh, &zlib, EF_ERR_UNSUPPORTED, "zlib");
#endif

  /* No temporary file is left behind by anything above. */
  DIR *d = opendir(dir);
  EXPECT(d != NULL, "cannot list %s", dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
      EXPECT(e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
            "left-over %s/%s", dir, e->d_name);
    closedir(d);
  }

  /* Format names as Kratos spells them. */
  ef_vtk_format fmt;
  EXPECT(ef_vtk_format_from_string("ascii", &fmt) == 0 && fmt == EF_VTK_FORMAT_ASCII, "ascii");
  EXPECT(ef_vtk_format_from_string("binary", &fmt) == 0 && fmt == EF_VTK_FORMAT_BINARY, "binary");
  EXPECT(ef_vtk_format_from_string("Binary", &fmt) == EF_ERR_PARAMETER, "case matters");
  return failures ? 1 : 0;
}

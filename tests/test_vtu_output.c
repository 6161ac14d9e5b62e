/* test_vtu_output.c -- ef_vtk_output on a 2D and a 3D model part with sub model
 * parts, in binary, binary+zlib and ascii: every file must read back (test
 * reader) exactly as computed here independently of the writer, the .pvd
 * collections must list the written steps, and a sidecar .expect is left for
 * vtk_roundtrip.py.  Usage: test_vtu_output OUTPUT_FOLDER */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_util.h"
#include "edgeflow/ef_vtk_output.h"
#include "test_vtu_readback.h"

#include "ef_test.h"

/* Known nodal patterns; step shifts them so each write is distinguishable. */
static void set_values(ef_model_part mp, int step) {
  ef_variable *v = ef_model_part_find_variable(mp, "VELOCITY");
  ef_variable *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    const double *x = mp->coords + 3 * i;
    v->values[3 * i] = x[0] * x[0] - x[1] / 3.0 + step;
    v->values[3 * i + 1] = sin(x[0] + x[1]) * step;
    v->values[3 * i + 2] = mp->dim == 3 ? x[2] / 7.0 : 0.0;
    p->values[i] = exp(-x[0]) * cos(3.0 * x[1]) + 1e-3 * (double)mp->node_ids[i] - step;
  }
}

/* A device that "computed" PRESSURE: the writer must sync before reading it. */
static int fake_device_sync(void *context, struct ef_model_part_s *mp) {
  int step = *(const int *)context;
  set_values(mp, step);
  return EF_SUCCESS;
}

/* A 5 x 4 node grid of triangles, spacings 1/3 and 1/7 so coordinates are not exact in binary,
 * with non-trivial ids, the x = 0 side as conditions and four kinds of sub model part. */
static ef_model_part build_2d(void) {
  enum { NX = 5, NY = 4 };
  ef_model_part mp;
  ASSERT_OK(ef_model_part_create("FluidModelPart", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, NX * NY));
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      int n = j * NX + i;
      mp->coords[3 * n] = i / 3.0;
      mp->coords[3 * n + 1] = j / 7.0;
      mp->node_ids[n] = 100 + 3 * n;
    }
  ASSERT_OK(ef_model_part_alloc_elements(mp, 2 * (NX - 1) * (NY - 1), 3));
  int e = 0;
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      int a = j * NX + i, b = a + 1, c = a + NX, d = c + 1;
      ef_index two[6] = {a, b, d, a, d, c};
      memcpy(mp->elements + 3 * e, two, sizeof two);
      mp->element_ids[e] = 1000 + e;
      mp->element_ids[e + 1] = 1000 + e + 1;
      e += 2;
    }
  ASSERT_OK(ef_model_part_alloc_conditions(mp, NY - 1, 2)); /* the x = 0 side */
  for (int k = 0; k + 1 < NY; ++k) {
    mp->conditions[2 * k] = (k + 1) * NX;
    mp->conditions[2 * k + 1] = k * NX;
    mp->condition_ids[k] = 500 + k;
  }
  ASSERT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ASSERT_OK(ef_model_part_add_variable(mp, "UNUSED", 1));
  ef_sub_model_part *inlet, *fluid, *core, *probe;
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Inlet", &inlet));
  ef_index conds[] = {2, 0, 1}, inlet_nodes[] = {0, 5, 10, 15};
  ASSERT_OK(ef_sub_model_part_add_conditions(inlet, conds, 3));
  ASSERT_OK(ef_sub_model_part_add_nodes(inlet, inlet_nodes, 4));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Fluid", &fluid));
  ef_index fluid_el[] = {9, 0, 1, 2, 3, 8};
  ASSERT_OK(ef_sub_model_part_add_elements(fluid, fluid_el, 6));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, fluid, "Core", &core));
  ef_index core_el[] = {9, 8};
  ASSERT_OK(ef_sub_model_part_add_elements(core, core_el, 2));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Probe", &probe));
  ef_index probe_nodes[] = {17, 3};
  ASSERT_OK(ef_sub_model_part_add_nodes(probe, probe_nodes, 2));
  ASSERT_OK(ef_model_part_finalize_sub_model_parts(mp));
  return mp;
}

/* A 2x2x2 block of cubes, each cut into 6 tetrahedra around its main diagonal. */
static ef_model_part build_3d(void) {
  enum { N = 3 };
  ef_model_part mp;
  ASSERT_OK(ef_model_part_create("FluidModelPart3D", 3, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, N * N * N));
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        int n = (k * N + j) * N + i;
        mp->coords[3 * n] = 0.1 * i;
        mp->coords[3 * n + 1] = j / 3.0;
        mp->coords[3 * n + 2] = k * 1e-5;
        mp->node_ids[n] = n + 1;
      }
  ASSERT_OK(ef_model_part_alloc_elements(mp, 6 * 8, 4));
  static const int paths[6][2] = {{1, 2}, {1, 4}, {2, 1}, {2, 4}, {4, 1}, {4, 2}};
  int e = 0;
  for (int k = 0; k + 1 < N; ++k)
    for (int j = 0; j + 1 < N; ++j)
      for (int i = 0; i + 1 < N; ++i) {
        int c[8];
        for (int b = 0; b < 8; ++b) c[b] = ((k + (b >> 2 & 1)) * N + j + (b >> 1 & 1)) * N + i + (b & 1);
        for (int t = 0; t < 6; ++t, ++e) {
          ef_index *tet = mp->elements + 4 * e;
          tet[0] = c[0];
          tet[1] = c[paths[t][0]];
          tet[2] = c[paths[t][0] | paths[t][1]];
          tet[3] = c[7];
          mp->element_ids[e] = 10 * e + 7;
        }
      }
  ASSERT_OK(ef_model_part_alloc_conditions(mp, 8, 3)); /* the z = 0 face */
  int f = 0;
  for (int j = 0; j + 1 < N; ++j)
    for (int i = 0; i + 1 < N; ++i) {
      int a = j * N + i, b = a + 1, c = a + N, d = c + 1;
      ef_index two[6] = {a, d, b, a, c, d};
      memcpy(mp->conditions + 3 * f, two, sizeof two);
      mp->condition_ids[f] = 900 + f;
      mp->condition_ids[f + 1] = 900 + f + 1;
      f += 2;
    }
  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ASSERT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  ef_sub_model_part *walls, *outlet;
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Walls", &walls));
  ef_index wc[] = {7, 6, 1, 0};
  ASSERT_OK(ef_sub_model_part_add_conditions(walls, wc, 4));
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Outlet", &outlet));
  ef_index oe[] = {47, 46, 45, 44, 43, 42};
  ASSERT_OK(ef_sub_model_part_add_elements(outlet, oe, 6));
  ASSERT_OK(ef_model_part_finalize_sub_model_parts(mp));
  return mp;
}

/* What the writer should produce for mp (smp NULL) or a sub model part, computed here. */
typedef struct {
  ef_vtu_mesh m;
  ef_vtk_data_array pd[3], cd[2];
  double *xyz, *vel, *p;
  int64_t *nid, *eid, *cid, *offsets;
  int32_t *conn;
  uint8_t *types;
} expected_piece;

/* Free the arrays of an expectation. */
static void expected_free(expected_piece *x) {
  free(x->xyz);
  free(x->vel);
  free(x->p);
  free(x->nid);
  free(x->eid);
  free(x->cid);
  free(x->offsets);
  free(x->conn);
  free(x->types);
}

/* The arrays the writer must produce, computed from the model part directly. */
static void expect_piece(ef_model_part mp, const ef_sub_model_part *smp, int with_conditions,
                         int with_ids, expected_piece *x) {
  memset(x, 0, sizeof *x);
  int64_t ne = 0, nc = 0, nv = 0;
  const ef_index *el = NULL, *co = NULL, *vx = NULL;
  ef_index *all_e = malloc((size_t)mp->n_elements * sizeof *all_e);
  ef_index *all_c = malloc((size_t)(mp->n_conditions + 1) * sizeof *all_c);
  for (int64_t i = 0; i < mp->n_elements; ++i) all_e[i] = (ef_index)i;
  for (int64_t i = 0; i < mp->n_conditions; ++i) all_c[i] = (ef_index)i;
  if (!smp) {
    ne = mp->n_elements, el = all_e;
    if (with_conditions) nc = mp->n_conditions, co = all_c;
  } else if (smp->n_elements) {
    ne = smp->n_elements, el = smp->elements;
  } else if (smp->n_conditions) {
    nc = smp->n_conditions, co = smp->conditions;
  } else {
    nv = smp->n_nodes, vx = smp->nodes;
  }
  int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  /* Used nodes in increasing order of their model part index. */
  int64_t *local = malloc((size_t)mp->n_nodes * sizeof *local);
  for (int64_t i = 0; i < mp->n_nodes; ++i) local[i] = smp ? -1 : i;
  if (smp) {
    for (int64_t c = 0; c < ne; ++c)
      for (int j = 0; j < npe; ++j) local[mp->elements[el[c] * npe + j]] = 0;
    for (int64_t c = 0; c < nc; ++c)
      for (int j = 0; j < npc; ++j) local[mp->conditions[co[c] * npc + j]] = 0;
    for (int64_t c = 0; c < nv; ++c) local[vx[c]] = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < mp->n_nodes; ++i)
      if (local[i] == 0) local[i] = n++;
  }
  int64_t np = 0;
  for (int64_t i = 0; i < mp->n_nodes; ++i) np += local[i] >= 0;
  ef_variable *vel = ef_model_part_find_variable(mp, "VELOCITY");
  ef_variable *pre = ef_model_part_find_variable(mp, "PRESSURE");
  x->xyz = malloc((size_t)(3 * np + 1) * sizeof(double));
  x->vel = malloc((size_t)(3 * np + 1) * sizeof(double));
  x->p = malloc((size_t)(np + 1) * sizeof(double));
  x->nid = malloc((size_t)(np + 1) * sizeof(int64_t));
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    if (local[i] < 0) continue;
    int64_t l = local[i];
    memcpy(x->xyz + 3 * l, mp->coords + 3 * i, 3 * sizeof(double));
    memcpy(x->vel + 3 * l, vel->values + 3 * i, 3 * sizeof(double));
    x->p[l] = pre->values[i];
    x->nid[l] = mp->node_ids[i];
  }
  int64_t ncell = ne + nc + nv;
  x->conn = malloc((size_t)(ne * npe + nc * npc + nv + 1) * sizeof(int32_t));
  x->offsets = malloc((size_t)(ncell + 1) * sizeof(int64_t));
  x->types = malloc((size_t)(ncell + 1));
  x->eid = malloc((size_t)(ncell + 1) * sizeof(int64_t));
  x->cid = malloc((size_t)(ncell + 1) * sizeof(int64_t));
  int64_t k = 0, c = 0;
  for (int64_t i = 0; i < ne; ++i, ++c) {
    for (int j = 0; j < npe; ++j) x->conn[k++] = (int32_t)local[mp->elements[el[i] * npe + j]];
    x->offsets[c] = k;
    x->types[c] = npe == 3 ? 5 : 10;
    x->eid[c] = mp->element_ids[el[i]];
    x->cid[c] = -1;
  }
  for (int64_t i = 0; i < nc; ++i, ++c) {
    for (int j = 0; j < npc; ++j) x->conn[k++] = (int32_t)local[mp->conditions[co[i] * npc + j]];
    x->offsets[c] = k;
    x->types[c] = npc == 2 ? 3 : 5;
    x->eid[c] = -1;
    x->cid[c] = mp->condition_ids[co[i]];
  }
  for (int64_t i = 0; i < nv; ++i, ++c) {
    x->conn[k++] = (int32_t)local[vx[i]];
    x->offsets[c] = k;
    x->types[c] = 1;
  }
  x->pd[0] = (ef_vtk_data_array){"VELOCITY", EF_VTK_FLOAT64, 3, x->vel};
  x->pd[1] = (ef_vtk_data_array){"PRESSURE", EF_VTK_FLOAT64, 1, x->p};
  x->pd[2] = (ef_vtk_data_array){"NODE_ID", EF_VTK_INT64, 1, x->nid};
  int ncd = 0;
  if (!with_ids) ne = nc = 0; /* no id arrays at all */
  if (ne) x->cd[ncd++] = (ef_vtk_data_array){"ELEMENT_ID", EF_VTK_INT64, 1, x->eid};
  if (nc) x->cd[ncd++] = (ef_vtk_data_array){"CONDITION_ID", EF_VTK_INT64, 1, x->cid};
  x->m = (ef_vtu_mesh){.n_points = np, .points = x->xyz, .n_cells = ncell,
                       .connectivity_type = EF_VTK_INT32, .connectivity = x->conn,
                       .offsets = x->offsets, .types = x->types, .n_point_data = with_ids ? 3 : 2,
                       .point_data = x->pd, .n_cell_data = ncd, .cell_data = x->cd};
  free(local);
  free(all_e);
  free(all_c);
}

/* Check one written piece against the independent expectation and leave the sidecar. */
static void check_piece(const char *path, ef_model_part mp, const ef_sub_model_part *smp,
                        const ef_vtk_output_options *opt) {
  expected_piece x;
  expect_piece(mp, smp, smp ? 0 : opt->write_conditions, opt->write_ids, &x);
  EXPECT(tvr_check_file(path, &x.m) == 0, "%s does not hold what was written", path);
  EXPECT(tvr_write_expect(path, &x.m) == 0, "%s", path);
  expected_free(&x);
}

/* The .pvd must list exactly these (time, file) pairs; leaves <pvd>.expect for Python. */
static void check_pvd(const char *path, int n, const double *times, char files[][256]) {
  char *text = tvr_slurp(path, NULL);
  EXPECT(text != NULL, "cannot read %s", path);
  if (!text) return;
  EXPECT(strstr(text, "<VTKFile type=\"Collection\"") != NULL, "%s: not a collection", path);
  int k = 0;
  for (const char *p = strstr(text, "<DataSet "); p; p = strstr(p + 1, "<DataSet "), ++k) {
    double t = 0;
    char file[256] = "";
    const char *ts = strstr(p, "timestep=\""), *fs = strstr(p, "file=\"");
    if (ts) t = strtod(ts + 10, NULL);
    if (fs) sscanf(fs + 6, "%255[^\"]", file);
    EXPECT(k < n && ts && fs && t == times[k] && strcmp(file, files[k]) == 0,
          "%s: DataSet %d is (%.17g, %s)", path, k, t, file);
  }
  EXPECT(k == n, "%s: %d DataSets instead of %d", path, k, n);
  free(text);
  char expect[4096];
  snprintf(expect, sizeof expect, "%s.expect", path);
  FILE *f = fopen(expect, "w");
  EXPECT(f != NULL, "cannot write %s", expect);
  if (!f) return;
  for (int i = 0; i < n; ++i) fprintf(f, "%.17g %s\n", times[i], files[i]);
  EXPECT(fclose(f) == 0, "cannot write %s", expect);
}

typedef struct {
  const char *tag;
  ef_vtk_format format;
  int compress;
} encoding;

static const encoding encodings[] = {
    {"binary", EF_VTK_FORMAT_BINARY, 0},
#ifdef TVR_HAVE_ZLIB
    {"zlib", EF_VTK_FORMAT_BINARY, 1},
#endif
    {"ascii", EF_VTK_FORMAT_ASCII, 0},
};

/* One configuration: write steps 1, 2, 2 again (replacing it), 3 and check everything. */
static void run_case(const char *root, const char *name, ef_model_part mp, const encoding *enc,
                     ef_vtk_output_options opt, const char *base, int n_parts,
                     const char *const *part_paths) {
  char folder[2048];
  /* A nested folder that does not exist yet: the output creates it with its parents. */
  snprintf(folder, sizeof folder, "%s/%s_%s/results/vtk", root, name, enc->tag);
  opt.output_folder = folder;
  opt.format = enc->format;
  opt.compress = enc->compress;
  ef_vtk_output out = NULL;
  ASSERT_OK(ef_vtk_output_create(&opt, &out));
  static const int steps[4] = {1, 2, 2, 3};
  static const double times[4] = {0.1, 0.2, 0.25, 1.0 / 3.0};
  int device_step = 0;
  mp->device = (ef_device_hooks){.context = &device_step, .sync_to_host = fake_device_sync};
  for (int s = 0; s < 4; ++s) {
    /* The host copy is stale: only the sync hook puts this step's values in place. */
    set_values(mp, -99);
    device_step = 10 * s + 1;
    mp->device_newer = 1;
    int err = ef_vtk_output_write(out, mp, steps[s], times[s]);
    EXPECT(err == EF_SUCCESS, "%s/%s step %d: %s", name, enc->tag, steps[s], ef_error_message());
    EXPECT(mp->device_newer == 0, "the writer did not sync the model part to the host");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%d.vtu", folder, base, steps[s]);
    check_piece(path, mp, NULL, &opt);
    for (int i = 0; i < n_parts; ++i) {
      snprintf(path, sizeof path, "%s/%s_%s_%d.vtu", folder, base, part_paths[i], steps[s]);
      check_piece(path, mp, ef_model_part_find_sub_model_part(mp, part_paths[i]), &opt);
    }
  }
  double want_t[3] = {0.1, 0.25, 1.0 / 3.0};
  char want_f[3][256], path[4096];
  for (int i = 0; i < 3; ++i) snprintf(want_f[i], sizeof want_f[i], "%s_%d.vtu", base, i + 1);
  snprintf(path, sizeof path, "%s/%s.pvd", folder, base);
  check_pvd(path, 3, want_t, want_f);
  for (int p = 0; p < n_parts; ++p) {
    for (int i = 0; i < 3; ++i)
      snprintf(want_f[i], sizeof want_f[i], "%s_%s_%d.vtu", base, part_paths[p], i + 1);
    snprintf(path, sizeof path, "%s/%s_%s.pvd", folder, base, part_paths[p]);
    check_pvd(path, 3, want_t, want_f);
  }
  /* A restart in the same folder starts a new collection and overwrites what it writes. */
  if (enc->format == EF_VTK_FORMAT_BINARY && !enc->compress) {
    ef_vtk_output again = NULL;
    ASSERT_OK(ef_vtk_output_create(&opt, &again));
    mp->device_newer = 0;
    set_values(mp, 7);
    EXPECT(ef_vtk_output_write(again, mp, 2, 0.5) == EF_SUCCESS, "restart: %s", ef_error_message());
    snprintf(path, sizeof path, "%s/%s_2.vtu", folder, base);
    check_piece(path, mp, NULL, &opt);
    for (int i = 0; i < n_parts; ++i) {
      snprintf(path, sizeof path, "%s/%s_%s_2.vtu", folder, base, part_paths[i]);
      check_piece(path, mp, ef_model_part_find_sub_model_part(mp, part_paths[i]), &opt);
    }
    double t = 0.5;
    snprintf(want_f[0], sizeof want_f[0], "%s_2.vtu", base);
    snprintf(path, sizeof path, "%s/%s.pvd", folder, base);
    check_pvd(path, 1, &t, want_f);
    for (int p = 0; p < n_parts; ++p) {
      snprintf(want_f[0], sizeof want_f[0], "%s_%s_2.vtu", base, part_paths[p]);
      snprintf(path, sizeof path, "%s/%s_%s.pvd", folder, base, part_paths[p]);
      check_pvd(path, 1, &t, want_f);
    }
    ef_vtk_output_destroy(&again);
  }
  /* Nothing besides the expected files: no sub model part that was not asked for. */
  int n_vtu = 0, n_pvd = 0;
  DIR *d = opendir(folder);
  EXPECT(d != NULL, "cannot list %s", folder);
  for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
    size_t l = strlen(de->d_name);
    n_vtu += l > 4 && !strcmp(de->d_name + l - 4, ".vtu");
    n_pvd += l > 4 && !strcmp(de->d_name + l - 4, ".pvd");
  }
  if (d) closedir(d);
  EXPECT(n_vtu == 3 * (1 + n_parts) && n_pvd == 1 + n_parts, "%s: %d .vtu and %d .pvd files", folder,
        n_vtu, n_pvd);
  mp->device = (ef_device_hooks){.context = NULL};
  ef_vtk_output_destroy(&out);
  EXPECT(out == NULL, "destroy did not clear the handle");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUTPUT_FOLDER\n", argv[0]);
    return 2;
  }
  const char *root = argv[1];
  if (tvr_remove_tree(root) || ef_make_folders(root)) {
    fprintf(stderr, "cannot reset %s\n", root);
    return 1;
  }
  ef_model_part mp2 = build_2d(), mp3 = build_3d();
  static const char *const variables[] = {"VELOCITY", "PRESSURE"};
  /* 2D: every sub model part (elements, nested, conditions only, nodes only), conditions in the
   * main file, default base name (the model part's). */
  static const char *const parts2[] = {"Fluid", "Fluid.Core", "Inlet", "Probe"};
  /* 3D: a listed selection, one spelled with the root name in front. */
  static const char *const listed3[] = {"Walls", "FluidModelPart3D.Outlet"};
  static const char *const parts3[] = {"Walls", "Outlet"};
  for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; ++e) {
    ef_vtk_output_options o2 = {.variables = variables, .n_variables = 2, .write_ids = 1,
                                .write_conditions = 1, .output_sub_model_parts = 1};
    run_case(root, "2d", mp2, &encodings[e], o2, "FluidModelPart", 4, parts2);
    ef_vtk_output_options o3 = {.base_name = "cube", .variables = variables, .n_variables = 2,
                                .write_ids = 1, .output_sub_model_parts = 1,
                                .n_sub_model_parts = 2, .sub_model_parts = listed3};
    run_case(root, "3d", mp3, &encodings[e], o3, "cube", 2, parts3);
  }
  /* The plainest output: no ids, no conditions, no sub model parts. */
  ef_vtk_output_options plain = {.variables = variables, .n_variables = 2};
  run_case(root, "2d_plain", mp2, &encodings[0], plain, "FluidModelPart", 0, NULL);
  run_case(root, "3d_plain", mp3, &encodings[0], plain, "FluidModelPart3D", 0, NULL);
  ef_model_part_destroy(&mp2);
  ef_model_part_destroy(&mp3);
  ef_vtk_output_destroy(NULL);
  return failures ? 1 : 0;
}

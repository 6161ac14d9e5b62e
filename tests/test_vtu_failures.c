/* test_vtu_failures.c -- injected write failures: an output folder below a
 * regular file, a full disk (the temporary file routed to /dev/full through a
 * symbolic link), a folder squatting on the final name, and names that do not
 * exist.  Each must return the right code, name the path, leave no file under
 * the final name and no temporary file, and keep the previous .pvd intact.
 * Usage: test_vtu_failures SCRATCH_FOLDER */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_util.h"
#include "edgeflow/ef_vtk_output.h"
#include "test_vtu_readback.h"

#include "ef_test.h"

/* err must be code and the message must contain each of the given parts. */
static void expect_error(int line, int err, int code, const char *part1, const char *part2) {
  if (err != code) {
    fprintf(stderr, "line %d: got %s, want %s (%s)\n", line, ef_error_name(err), ef_error_name(code),
            ef_error_message());
    ++failures;
    return;
  }
  const char *parts[2] = {part1, part2};
  for (int i = 0; i < 2; ++i)
    if (parts[i] && !strstr(ef_error_message(), parts[i])) {
      fprintf(stderr, "line %d: message '%s' lacks '%s'\n", line, ef_error_message(), parts[i]);
      ++failures;
    }
}
#define EXPECT_ERROR(err, code, p1, p2) expect_error(__LINE__, (err), (code), (p1), (p2))

/* Number of .vtu files and of hidden (temporary) files under path. */
static void count_files(const char *path, int *n_vtu, int *n_hidden) {
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.') ++*n_hidden;
    if (l > 4 && !strcmp(e->d_name + l - 4, ".vtu")) ++*n_vtu;
    struct stat st;
    if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) count_files(child, n_vtu, n_hidden);
  }
  closedir(d);
}

/* Route the next write of final_path to /dev/full through its temporary name. */
static int route_to_dev_full(const char *final_path, char *link, size_t link_size) {
  const char *slash = strrchr(final_path, '/');
  snprintf(link, link_size, "%.*s/.%s.tmp.%ld", (int)(slash - final_path), final_path, slash + 1,
           (long)getpid());
  return symlink("/dev/full", link);
}

/* A 2D square of two triangles with VELOCITY and PRESSURE. */
static ef_model_part small_model_part(void) {
  ef_model_part mp;
  ASSERT_OK(ef_model_part_create("FluidModelPart", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4));
  const double xy[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int i = 0; i < 4; ++i) mp->coords[3 * i] = xy[i][0], mp->coords[3 * i + 1] = xy[i][1];
  ASSERT_OK(ef_model_part_alloc_elements(mp, 2, 3));
  const ef_index tris[6] = {0, 1, 2, 0, 2, 3};
  memcpy(mp->elements, tris, sizeof tris);
  ASSERT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ef_sub_model_part *smp;
  ASSERT_OK(ef_model_part_add_sub_model_part(mp, NULL, "Left", &smp));
  ef_index one = 1;
  ASSERT_OK(ef_sub_model_part_add_elements(smp, &one, 1));
  return mp;
}

/* Each numbered block injects one failure. */
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SCRATCH_FOLDER\n", argv[0]);
    return 2;
  }
  const char *root = argv[1];
  if (tvr_remove_tree(root) || ef_make_folders(root)) {
    fprintf(stderr, "cannot reset %s\n", root);
    return 1;
  }
  char path[4096], plain[2048], link[4096];
  ef_model_part mp = small_model_part();
  static const char *const vars[] = {"VELOCITY", "PRESSURE"};
  const double xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  const int32_t tri[3] = {0, 1, 2};
  ef_vtu_mesh m = {.n_points = 3, .points = xyz, .n_cells = 1, .connectivity_type = EF_VTK_INT32,
                   .connectivity = tri, .nodes_per_cell = 3, .cell_type = EF_VTK_TRIANGLE};

  /* 1. The output folder's parent is a regular file. */
  snprintf(plain, sizeof plain, "%s/plainfile", root);
  FILE *f = fopen(plain, "w");
  EXPECT(f && fclose(f) == 0, "cannot create %s", plain);
  snprintf(path, sizeof path, "%s/out/vtk", plain);
  ef_vtk_output_options opt = {.output_folder = path, .n_variables = 2, .variables = vars,
                               .output_sub_model_parts = 1};
  ef_vtk_output out = NULL;
  ASSERT_OK(ef_vtk_output_create(&opt, &out));
  EXPECT_ERROR(ef_vtk_output_write(out, mp, 1, 0.5), EF_ERR_IO, path, strerror(ENOTDIR));
  ef_vtk_output_destroy(&out);
  snprintf(path, sizeof path, "%s/x.vtu", plain);
  EXPECT_ERROR(ef_vtu_write(path, &m, NULL), EF_ERR_IO, path, strerror(ENOTDIR));
  EXPECT_ERROR(ef_vtk_pvd_write(path, 0, NULL, NULL), EF_ERR_IO, path, strerror(ENOTDIR));

  /* 2. A folder already holds the final name: rename() fails after a complete write. */
  snprintf(path, sizeof path, "%s/squatter.vtu", root);
  EXPECT(mkdir(path, 0777) == 0, "mkdir %s", path);
  EXPECT_ERROR(ef_vtu_write(path, &m, NULL), EF_ERR_IO, path, "rename");
  struct stat st;
  EXPECT(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "%s was replaced", path);

  /* 3. Names that do not exist: nothing is written, not even the folder. */
  snprintf(path, sizeof path, "%s/never", root);
  static const char *const bad_vars[] = {"VELOCITY", "TEMPERATURE"};
  ef_vtk_output_options bad = {.output_folder = path, .n_variables = 2, .variables = bad_vars};
  ASSERT_OK(ef_vtk_output_create(&bad, &out));
  EXPECT_ERROR(ef_vtk_output_write(out, mp, 1, 0.0), EF_ERR_NOT_FOUND, "TEMPERATURE",
               "VELOCITY, PRESSURE");
  ef_vtk_output_destroy(&out);
  static const char *const bad_parts[] = {"Left", "Right"};
  bad = (ef_vtk_output_options){.output_folder = path, .output_sub_model_parts = 1,
                                .n_sub_model_parts = 2, .sub_model_parts = bad_parts};
  ASSERT_OK(ef_vtk_output_create(&bad, &out));
  EXPECT_ERROR(ef_vtk_output_write(out, mp, 1, 0.0), EF_ERR_NOT_FOUND, "Right", "Left");
  ef_vtk_output_destroy(&out);
  EXPECT(!tvr_exists(path), "%s was created by a failed write", path);

  /* 4. A sub model part pointing past the elements is a mesh error naming it. */
  ef_sub_model_part *left = ef_model_part_find_sub_model_part(mp, "Left");
  left->elements[0] = 7;
  bad = (ef_vtk_output_options){.output_folder = path, .output_sub_model_parts = 1};
  ASSERT_OK(ef_vtk_output_create(&bad, &out));
  EXPECT_ERROR(ef_vtk_output_write(out, mp, 1, 0.0), EF_ERR_MESH, "'Left'", "element index 7");
  ef_vtk_output_destroy(&out);
  left->elements[0] = 1;
  EXPECT(!tvr_exists(path), "%s was created by a failed write", path);

  /* 5. Options that cannot work are refused at creation. */
  ef_vtk_output_options wrong = {.format = EF_VTK_FORMAT_ASCII, .compress = 1};
  EXPECT_ERROR(ef_vtk_output_create(&wrong, &out), EF_ERR_PARAMETER, "ascii", NULL);
  EXPECT(out == NULL, "handle set on failure");
  wrong = (ef_vtk_output_options){.base_name = "a/b"};
  EXPECT_ERROR(ef_vtk_output_create(&wrong, &out), EF_ERR_PARAMETER, "a/b", NULL);
  static const char *const null_var[] = {"VELOCITY", NULL};
  wrong = (ef_vtk_output_options){.n_variables = 2, .variables = null_var};
  EXPECT_ERROR(ef_vtk_output_create(&wrong, &out), EF_ERR_PARAMETER, "variable 1", NULL);
#ifndef TVR_HAVE_ZLIB
  wrong = (ef_vtk_output_options){.compress = 1};
  EXPECT_ERROR(ef_vtk_output_create(&wrong, &out), EF_ERR_UNSUPPORTED, "zlib", NULL);
#endif

  /* 6. A full disk: the temporary name is a link to /dev/full, so every write gets ENOSPC. */
  if (access("/dev/full", W_OK) == 0) {
    const char *nospace = strerror(ENOSPC);
    /* Small enough to fail only when flushed, and large enough to fail inside fwrite. */
    enum { BIG = 200000 };
    double *big_xyz = calloc(3 * BIG, sizeof *big_xyz);
    EXPECT(big_xyz != NULL, "out of memory");
    ef_vtu_mesh big = {.n_points = BIG, .points = big_xyz, .connectivity_type = EF_VTK_INT32};
    const ef_vtu_mesh *meshes[2] = {&m, &big};
    static const ef_vtu_write_options encs[3] = {
        {.format = EF_VTK_FORMAT_BINARY}, {.format = EF_VTK_FORMAT_ASCII}, {.format = EF_VTK_FORMAT_BINARY, .compress = 1}};
#ifdef TVR_HAVE_ZLIB
    const int n_encs = 3;
#else
    const int n_encs = 2;
#endif
    for (int k = 0; k < 2 && big_xyz; ++k)
      for (int e = 0; e < n_encs; ++e) {
        snprintf(path, sizeof path, "%s/full_%d_%d.vtu", root, k, e);
        EXPECT(route_to_dev_full(path, link, sizeof link) == 0, "symlink %s: %s", link, strerror(errno));
        EXPECT_ERROR(ef_vtu_write(path, meshes[k], &encs[e]), EF_ERR_IO, path, nospace);
        EXPECT(!tvr_exists(path), "%s exists after ENOSPC", path);
        EXPECT(!tvr_exists(link), "temporary %s left behind", link);
      }
    free(big_xyz);
    snprintf(path, sizeof path, "%s/full.pvd", root);
    EXPECT(route_to_dev_full(path, link, sizeof link) == 0, "symlink %s", link);
    double t = 1.0;
    const char *file = "a.vtu";
    EXPECT_ERROR(ef_vtk_pvd_write(path, 1, &t, &file), EF_ERR_IO, path, nospace);
    EXPECT(!tvr_exists(path) && !tvr_exists(link), "%s or its temporary exists", path);

    /* Through the model part output: a good step, then a step whose .vtu hits the full disk,
     * then one whose .pvd does; the collection on disk must still be the last good one. */
    char folder[2048], pvd[3072];
    snprintf(folder, sizeof folder, "%s/series", root);
    snprintf(pvd, sizeof pvd, "%s/FluidModelPart.pvd", folder);
    opt = (ef_vtk_output_options){.output_folder = folder, .n_variables = 2, .variables = vars};
    ASSERT_OK(ef_vtk_output_create(&opt, &out));
    EXPECT(ef_vtk_output_write(out, mp, 1, 0.1) == EF_SUCCESS, "%s", ef_error_message());
    char *good = tvr_slurp(pvd, NULL);
    EXPECT(good != NULL, "no %s after a good step", pvd);
    snprintf(path, sizeof path, "%s/FluidModelPart_2.vtu", folder);
    EXPECT(route_to_dev_full(path, link, sizeof link) == 0, "symlink %s", link);
    EXPECT_ERROR(ef_vtk_output_write(out, mp, 2, 0.2), EF_ERR_IO, path, nospace);
    EXPECT(!tvr_exists(path) && !tvr_exists(link), "%s or its temporary exists", path);
    EXPECT(route_to_dev_full(pvd, link, sizeof link) == 0, "symlink %s", link);
    EXPECT_ERROR(ef_vtk_output_write(out, mp, 3, 0.3), EF_ERR_IO, pvd, nospace);
    EXPECT(!tvr_exists(link), "temporary %s left behind", link);
    char *now = tvr_slurp(pvd, NULL);
    EXPECT(good && now && !strcmp(good, now), "%s changed by failed writes", pvd);
    free(now);
    /* The disk has room again: the next write lists the good steps only. */
    EXPECT(ef_vtk_output_write(out, mp, 3, 0.3) == EF_SUCCESS, "%s", ef_error_message());
    now = tvr_slurp(pvd, NULL);
    EXPECT(now && strstr(now, "FluidModelPart_1.vtu") && strstr(now, "FluidModelPart_3.vtu") &&
              !strstr(now, "FluidModelPart_2.vtu"),
          "%s after recovery:\n%s", pvd, now ? now : "(unreadable)");
    free(now);
    free(good);
    ef_vtk_output_destroy(&out);
    EXPECT(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full was replaced");
  } else {
    fprintf(stderr, "note: no writable /dev/full; the ENOSPC cases were not run\n");
  }

  /* Nothing under a final name from any failed write, and no temporary anywhere. */
  int n_vtu = 0, n_hidden = 0;
  count_files(root, &n_vtu, &n_hidden);
  EXPECT(n_hidden == 0, "%d temporary files left under %s", n_hidden, root);
  EXPECT(n_vtu == 3, "%d .vtu files under %s; only the squatting folder and steps 1 and 3 expected",
        n_vtu, root);
  ef_model_part_destroy(&mp);
  if (!failures) tvr_remove_tree(root);
  return failures ? 1 : 0;
}

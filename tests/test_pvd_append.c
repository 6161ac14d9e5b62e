/* test_pvd_append.c -- a .pvd entry costs O(1) however long the run.
 *
 * 10,000 outputs of a two-triangle model part: the bytes one ef_vtk_output_write reads and
 * writes (the .vtu and the .pvd entry; the process's rchar + wchar in /proc/self/io, which no
 * other load changes) over outputs 9,951..10,050 must stay below 1.5x those over outputs
 * 51..150 (whole-file rewrites of the .pvd would make it ~100x).  The median wall times are
 * printed beside them, not tested: a timed assertion fails on a busy machine (directory growth
 * and other processes move it by 1.7x there).  Then the
 * collection must list every step in order with the closing tags; rewriting the last step
 * (shorter file name: padded) and an early step (whole rewrite) must keep it a valid collection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_util.h"
#include "edgeflow/ef_vtk_output.h"
#include "test_vtu_readback.h"

#include "ef_test.h"

enum { N_OUT = 10100, WINDOW = 100 };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Bytes this process has read and written through read/write calls so far (-1: unknown). */
static double io_bytes(void) {
  FILE *f = fopen("/proc/self/io", "r");
  if (!f) return -1.0;
  char line[128];
  double total = 0.0;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long v;
    if (sscanf(line, "rchar: %llu", &v) == 1 || sscanf(line, "wchar: %llu", &v) == 1) total += (double)v, ++found;
  }
  fclose(f);
  return found == 2 ? total : -1.0;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* Check the collection: n DataSet lines, step k at time 0.001 k, then the closing tags and only
 * whitespace after them. */
static void check_pvd(const char *path, int n, int replaced_step, double replaced_time) {
  char *text = tvr_slurp(path, NULL);
  ASSERT(text, "cannot read %s", path);
  int count = 0;
  const char *p = text;
  while ((p = strstr(p, "<DataSet ")) != NULL) {
    ++count;
    double t = 0;
    char file[256];
    if (sscanf(p, "<DataSet timestep=\"%lf\" group=\"\" part=\"0\" file=\"%255[^\"]\"/>", &t, file) != 2) {
      EXPECT(0, "%s: entry %d unreadable", path, count);
      break;
    }
    char want[256];
    snprintf(want, sizeof want, "FluidModelPart_%d.vtu", count);
    double want_t = count == replaced_step ? replaced_time : 0.001 * count;
    EXPECT(!strcmp(file, want) && t == want_t, "%s: entry %d is (%g, %s), want (%g, %s)", path, count, t, file,
           want_t, want);
    ++p;
  }
  EXPECT(count == n, "%s lists %d steps, want %d", path, count, n);
  const char *close = strstr(text, "</Collection>\n</VTKFile>\n");
  EXPECT(close != NULL, "%s has no closing tags", path);
  if (close) {
    for (const char *c = close + strlen("</Collection>\n</VTKFile>\n"); *c; ++c)
      EXPECT(*c == ' ' || *c == '\n', "%s: '%c' after the closing tags", path, *c);
  }
  free(text);
}

int main(int argc, char **argv) {
  ASSERT(argc >= 2, "usage: %s SCRATCH_FOLDER", argv[0]);
  const char *root = argv[1];
  ASSERT(!tvr_remove_tree(root) && !ef_make_folders(root), "cannot reset %s", root);
  ef_model_part mp;
  ASSERT_OK(ef_model_part_create("FluidModelPart", 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 4));
  const double xy[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int i = 0; i < 4; ++i) mp->coords[3 * i] = xy[i][0], mp->coords[3 * i + 1] = xy[i][1];
  ASSERT_OK(ef_model_part_alloc_elements(mp, 2, 3));
  const ef_index tris[6] = {0, 1, 2, 0, 2, 3};
  memcpy(mp->elements, tris, sizeof tris);
  ASSERT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  static const char *const vars[] = {"PRESSURE"};
  ef_vtk_output_options opt = {.output_folder = root, .n_variables = 1, .variables = vars};
  ef_vtk_output out;
  ASSERT_OK(ef_vtk_output_create(&opt, &out));

  static double cost[N_OUT + 1], bytes[N_OUT + 1];
  ASSERT(io_bytes() >= 0.0, "/proc/self/io is not readable");
  for (int k = 1; k <= N_OUT; ++k) {
    const double t0 = ef_wtime(), b0 = io_bytes();
    ASSERT_OK(ef_vtk_output_write(out, mp, k, 0.001 * k));
    cost[k] = ef_wtime() - t0;
    bytes[k] = io_bytes() - b0;
  }
  double early[WINDOW], late[WINDOW], bearly[WINDOW], blate[WINDOW];
  for (int i = 0; i < WINDOW; ++i) {
    early[i] = cost[51 + i], late[i] = cost[N_OUT - 150 + i];
    bearly[i] = bytes[51 + i], blate[i] = bytes[N_OUT - 150 + i];
  }
  const double m_early = median(early, WINDOW), m_late = median(late, WINDOW);
  const double b_early = median(bearly, WINDOW), b_late = median(blate, WINDOW);
  printf("pvd append: median output %.0f bytes read + written at output 100, %.0f at output 10,000 (ratio %.3f; "
         "limit 1.5); wall %.1f us and %.1f us (ratio %.2f, not tested)\n", b_early, b_late, b_late / b_early,
         1e6 * m_early, 1e6 * m_late, m_late / m_early);
  EXPECT(b_early > 0.0 && b_late < 1.5 * b_early, "an output at 10,000 moves %.2fx the bytes of one at 100",
         b_late / b_early);

  char pvd[4200];
  snprintf(pvd, sizeof pvd, "%s/FluidModelPart.pvd", root);
  check_pvd(pvd, N_OUT, -1, 0);
  /* The last step again at another time: its line is replaced in place. */
  ASSERT_OK(ef_vtk_output_write(out, mp, N_OUT, 99.0));
  check_pvd(pvd, N_OUT, N_OUT, 99.0);
  /* An early step again: the whole file is rewritten, and appends go on after it. */
  ASSERT_OK(ef_vtk_output_write(out, mp, 7, 7.5));
  ASSERT_OK(ef_vtk_output_write(out, mp, N_OUT + 1, 0.001 * (N_OUT + 1)));
  char *text = tvr_slurp(pvd, NULL);
  EXPECT(text && strstr(text, "timestep=\"7.5\" group=\"\" part=\"0\" file=\"FluidModelPart_7.vtu\"") &&
             strstr(text, "file=\"FluidModelPart_10101.vtu\"/>\n  </Collection>\n</VTKFile>\n"),
         "%s after an early step was rewritten", pvd);
  free(text);
  ASSERT_OK(ef_vtk_output_sync(out));
  ef_vtk_output_destroy(&out);
  ef_model_part_destroy(&mp);
  if (!failures) tvr_remove_tree(root);
  return failures ? 1 : 0;
}

/* test_probes.c -- probes_output_process on hand-made meshes: location, P1 interpolation,
 * scheduling, CSV format and the error for a point outside the mesh.
 *
 * Fields linear in x, y, z are interpolated exactly by P1, so every sampled value must
 * match the field at the probe to 1e-11 (values are printed with 13 significant digits,
 * so the round trip through the CSV costs ~1e-12 relative on values of order 10). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"
#include "process_internal.h"

#include "ef_test.h"
#include "ef_test_mesh.h"

static double f_u(const double *x) { return 1.0 + 2.0 * x[0] + 3.0 * x[1] - 0.5 * x[2]; }
static double f_v(const double *x) { return x[0] - x[1] + 4.0 * x[2]; }
static double f_p(const double *x) { return 5.0 * x[0] - 2.0 * x[1] + 1.0 + x[2]; }

/* The unit box of ef_test_mesh.h (n x n squares split into triangles, or n^3 cubes into 6
 * tetrahedra) with the linear fields above on its nodes. */
static int make_mesh(int dim, int n, ef_model_part *out) {
  ef_model_part mp = ef_test_box(dim, n, 0);
  if (!mp) return 1;
  ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY"), *p = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; i++) {
    const double *x = mp->coords + 3 * i;
    u->values[3 * i] = f_u(x);
    u->values[3 * i + 1] = f_v(x);
    p->values[i] = f_p(x);
  }
  *out = mp;
  return 0;
}

/* Create the process from JSON text; returns its error code. */
static int create(ef_model_part mp, const char *folder, const char *json, ef_parameters *p, void **data) {
  ef_process_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.model_part = mp;
  ctx.output_folder = folder;
  ctx.case_folder = ".";
  if (ef_parameters_parse(json, "<test>", p)) return 1;
  return ef_probes_output_process_ops.create(&ctx, *p, data);
}

/* Check every row of file against the fields; returns the number of rows, -1 on error. */
static int check_file(const char *path, int n_probes, const double *times, int n_times) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  char line[1024];
  int rows = 0;
  if (!fgets(line, sizeof line, f)) line[0] = '\0';
  EXPECT(!strcmp(line, "time,probe,x,y,z,VELOCITY_X,VELOCITY_Y,VELOCITY_Z,PRESSURE\n"), "header '%s'", line);
  while (fgets(line, sizeof line, f)) {
    double v[9];
    char *p = line;
    for (int c = 0; c < 9; c++) {
      v[c] = strtod(p, &p);
      if (*p == ',') p++;
    }
    EXPECT(*p == '\n', "row %d does not end after 9 columns: '%s'", rows + 2, line);
    int sample = rows / n_probes, probe = rows % n_probes;
    EXPECT((int)v[1] == probe, "row %d: probe %g, expected %d", rows + 2, v[1], probe);
    if (sample < n_times) EXPECT(fabs(v[0] - times[sample]) < 1e-12, "row %d: time %g, expected %g", rows + 2, v[0], times[sample]);
    const double *x = v + 2;
    EXPECT(fabs(v[5] - f_u(x)) < 1e-11 && fabs(v[6] - f_v(x)) < 1e-11 && v[7] == 0.0 && fabs(v[8] - f_p(x)) < 1e-11,
           "row %d at (%g, %g, %g): (%.15g, %.15g, %.15g, %.15g) vs (%.15g, %.15g, 0, %.15g)", rows + 2, x[0], x[1],
           x[2], v[5], v[6], v[7], v[8], f_u(x), f_v(x), f_p(x));
    rows++;
  }
  fclose(f);
  return rows;
}

/* Drive the output hooks the way the analysis does: step 0 at t0, then steps of dt. */
static int drive(void *data, int steps, double dt) {
  if (ef_probes_output_process_ops.execute_initialize(data)) return 1;
  for (int s = 0; s <= steps; s++) {
    double t = s * dt;
    if (ef_probes_output_process_ops.is_output_step(data, t, s) && ef_probes_output_process_ops.print_output(data, t, s))
      return 1;
  }
  return ef_probes_output_process_ops.execute_finalize(data);
}

int main(int argc, char **argv) {
  const char *out = argc > 1 ? argv[1] : "test_probes_output";
  char path[4096];
  ef_model_part mp2 = NULL, mp3 = NULL;
  if (make_mesh(2, 4, &mp2) || make_mesh(3, 3, &mp3)) {
    fprintf(stderr, "mesh: %s\n", ef_error_message());
    return 1;
  }
  ef_parameters p = NULL;
  void *data = NULL;

  /* 2D: points (one inside, one on a node, one on the corner, one on a diagonal edge) and a
   * line of 5 points along the diagonal, every 2 steps: samples at steps 0, 2, 4. */
  int err = create(mp2, out,
                   "{\"output_file_name\": \"p2.csv\", \"points\": [[0.3, 0.7], [0.25, 0.5, 0.0], [1, 1], [0.125, 0.125]],"
                   " \"lines\": [{\"start\": [0, 0], \"end\": [1, 1], \"n_points\": 5}], \"output_interval\": 2}",
                   &p, &data);
  if (!err) err = drive(data, 5, 0.1);
  EXPECT(!err, "2D probes: %s", ef_error_message());
  ef_probes_output_process_ops.destroy(&data);
  EXPECT(data == NULL, "destroy must reset the handle");
  ef_probes_output_process_ops.destroy(&data); /* NULL-safe */
  ef_parameters_destroy(&p);
  const double t2[3] = {0.0, 0.2, 0.4};
  snprintf(path, sizeof path, "%s/p2.csv", out);
  int rows = check_file(path, 9, t2, 3);
  EXPECT(rows == 27, "2D: %d rows, expected 3 samples x 9 probes", rows);

  /* 3D, at listed times (unsorted in the file): the first steps reaching 0.15 and 0.35. */
  err = create(mp3, out,
               "{\"output_file_name\": \"p3.csv\", \"output_path\": \"sub\", \"points\": [[0.31, 0.52, 0.77], [1, 0, 1]],"
               " \"output_times\": [0.35, 0.15], \"variables\": [\"VELOCITY\", \"PRESSURE\"]}",
               &p, &data);
  if (!err) err = drive(data, 6, 0.1);
  EXPECT(!err, "3D probes: %s", ef_error_message());
  ef_probes_output_process_ops.destroy(&data);
  ef_parameters_destroy(&p);
  const double t3[2] = {0.2, 0.4};
  snprintf(path, sizeof path, "%s/sub/p3.csv", out);
  rows = check_file(path, 2, t3, 2);
  EXPECT(rows == 4, "3D: %d rows, expected 2 samples x 2 probes", rows);

  /* A point outside the mesh is an error naming the probe. */
  err = create(mp2, out, "{\"output_file_name\": \"bad.csv\", \"lines\": [{\"start\": [0.5, 0.5], \"end\": [1.5, 0.5], \"n_points\": 3}]}",
               &p, &data);
  if (!err) err = ef_probes_output_process_ops.execute_initialize(data);
  EXPECT(err == EF_ERR_PARAMETER && strstr(ef_error_message(), "lines[0] point 2") &&
             strstr(ef_error_message(), "outside the mesh"),
         "outside point: code %d, message '%s'", err, ef_error_message());
  ef_probes_output_process_ops.destroy(&data);
  ef_parameters_destroy(&p);

  /* An unknown variable and an empty probe set are parameter errors. */
  err = create(mp2, out, "{\"points\": [[0.5, 0.5]], \"variables\": [\"TEMPERATURE\"]}", &p, &data);
  EXPECT(err && strstr(ef_error_message(), "TEMPERATURE"), "unknown variable: code %d, '%s'", err, ef_error_message());
  ef_probes_output_process_ops.destroy(&data);
  ef_parameters_destroy(&p);
  err = create(mp2, out, "{}", &p, &data);
  EXPECT(err == EF_ERR_PARAMETER && strstr(ef_error_message(), "no probes"), "empty: code %d, '%s'", err,
         ef_error_message());
  ef_probes_output_process_ops.destroy(&data);
  ef_parameters_destroy(&p);

  ef_model_part_destroy(&mp2);
  ef_model_part_destroy(&mp3);
  return failures ? 1 : 0;
}

/* test_process_vtk.c -- vtk_output_process: Kratos' output scheduling, file
 * placement and the .pvd time list (the VTK format itself is tested by the
 * writer's own tests). */
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

#include <unistd.h>

static int file_exists(const char *folder, const char *name) {
  char path[2200];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  return access(path, R_OK) == 0;
}

/* The timestep values listed in a .pvd, in file order. */
static int pvd_times(const char *path, double *times, int max) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  int count = 0;
  for (const char *p = strstr(text, "timestep=\""); p && count < max; p = strstr(p + 1, "timestep=\""))
    times[count++] = strtod(p + strlen("timestep=\""), NULL);
  return count;
}

/* NumberOfPoints of the first piece of a .vtu (-1 when unreadable). */
static long vtu_points(const char *folder, const char *name) {
  char path[2200];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  static char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *p = strstr(text, "NumberOfPoints=\"");
  return p ? strtol(p + strlen("NumberOfPoints=\""), NULL, 10) : -1;
}

/* Create with a context whose output folder is `run`. */
static int make_vtk(ef_model_part mp, const char *run, const char *json, void **data) {
  const ef_process_ops *ops;
  EF_CALL(ef_register_core_processes());
  ops = ef_registry_lookup_process("vtk_output_process");
  EF_CHECK(ops, EF_ERR_NOT_FOUND, "vtk_output_process is not registered");
  ef_parameters root = NULL, p = NULL, project = NULL;
  EF_CALL(ef_parameters_parse(json, "vtk.json", &root));
  EF_CALL(ef_parameters_parse("{\"problem_data\": {\"start_time\": 0.0}}", "project.json", &project));
  int err = ef_parameters_get(root, "Parameters", &p);
  ef_process_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.model_part = mp;
  ctx.project = project;
  ctx.output_folder = run;
  if (!err) err = ops->create(&ctx, p, data);
  ef_parameters_destroy(&root);
  ef_parameters_destroy(&project);
  return err;
}

static void test_step_control(const char *run) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  ASSERT(mp, "the test mesh");
  const ef_process_ops *ops = ef_registry_lookup_process("vtk_output_process");
  void *v = NULL;
  /* The warning about NODAL_H goes to stderr: capture it to check it is one line naming it. */
  char warn_path[1100];
  snprintf(warn_path, sizeof warn_path, "%s/stderr.txt", run);
  fflush(stderr);
  int saved = dup(2);
  FILE *warn = fopen(warn_path, "w+");
  if (warn) dup2(fileno(warn), 2);
  /* Interval 2 in steps: steps 2 and 4 of 1..5 are written; NODAL_H is only warned about. */
  EXPECT_OK(make_vtk(mp, run,
                     "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"output_control_type\": \"step\","
                     " \"output_interval\": 2, \"file_format\": \"ascii\", \"output_precision\": 7,"
                     " \"output_sub_model_parts\": false, \"output_path\": \"vtk_output\","
                     " \"save_output_files_in_folder\": true,"
                     " \"nodal_solution_step_data_variables\": [\"VELOCITY\", \"PRESSURE\"],"
                     " \"nodal_data_value_variables\": [\"NODAL_H\"], \"element_data_value_variables\": [],"
                     " \"condition_data_value_variables\": []}}",
                     &v));
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  if (warn) {
    static char text[4096];
    rewind(warn);
    size_t got = fread(text, 1, sizeof text - 1, warn);
    text[got] = '\0';
    fclose(warn);
    const char *first = strstr(text, "NODAL_H");
    EXPECT(first && !strstr(first + 1, "NODAL_H") && strchr(text, '\n') == text + got - 1);
    EXPECT(!strstr(text, "VELOCITY"));
  }
  if (!v || !ops) {
    failures++;
    ef_model_part_destroy(&mp);
    return;
  }
  int written[6] = {0};
  for (int step = 1; step <= 5; step++) {
    double t = 0.1 * step;
    if (ops->is_output_step(v, t, step)) {
      written[step] = 1;
      EXPECT_OK(ops->print_output(v, t, step));
    }
  }
  EXPECT(!written[1] && written[2] && !written[3] && written[4] && !written[5]);
  char folder[1024];
  snprintf(folder, sizeof folder, "%s/vtk_output", run);
  EXPECT(file_exists(folder, "FluidModelPart_2.vtu") && file_exists(folder, "FluidModelPart_4.vtu"));
  EXPECT(!file_exists(folder, "FluidModelPart_1.vtu") && !file_exists(folder, "FluidModelPart_3.vtu"));
  char pvd[1200];
  snprintf(pvd, sizeof pvd, "%s/FluidModelPart.pvd", folder);
  double times[8];
  int n = pvd_times(pvd, times, 8);
  /* The .pvd holds the times exactly as given (%.17g). */
  EXPECT(n == 2 && times[0] == 0.1 * 2 && times[1] == 0.1 * 4);
  ops->destroy(&v);
  EXPECT(v == NULL);
  ef_model_part_destroy(&mp);
}

static void test_time_control(const char *run) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  ASSERT(mp, "the test mesh");
  const ef_process_ops *ops = ef_registry_lookup_process("vtk_output_process");
  void *v = NULL;
  /* Legacy names (output_frequency, folder_name), a prefix, a sub model part, binary. */
  EXPECT_OK(make_vtk(mp, run,
                     "{\"Parameters\": {\"model_part_name\": \"FluidModelPart.XMin\", \"output_control_type\": \"time\","
                     " \"output_frequency\": 0.25, \"folder_name\": \"out_t\", \"custom_name_prefix\": \"run1_\","
                     " \"nodal_solution_step_data_variables\": [\"PRESSURE\"]}}",
                     &v));
  if (!v || !ops) {
    failures++;
    ef_model_part_destroy(&mp);
    return;
  }
  /* dt = 0.1: outputs when t first reaches 0.25, 0.5, 0.75 (t = 0.3, 0.5, 0.8);
   * 0.1 * 5 is 0.5000000000000001, which Kratos' 12-digit rounding makes 0.5. */
  double t = 0.0;
  int written[9] = {0};
  for (int step = 1; step <= 8; step++) {
    t += 0.1;
    if (ops->is_output_step(v, t, step)) {
      written[step] = 1;
      EXPECT_OK(ops->print_output(v, t, step));
    }
  }
  EXPECT(!written[1] && !written[2] && written[3] && !written[4] && written[5] && !written[6] && !written[7] &&
         written[8]);
  char folder[1024];
  snprintf(folder, sizeof folder, "%s/out_t", run);
  /* Only the part, named after it (Kratos' file naming), not the whole model part. */
  EXPECT(file_exists(folder, "run1_XMin_3.vtu") && !file_exists(folder, "run1_XMin_XMin_3.vtu"));
  ef_sub_model_part *xmin = NULL;
  EXPECT_OK(ef_model_part_get_sub_model_part(mp, "XMin", &xmin));
  EXPECT(xmin && xmin->n_nodes < mp->n_nodes && vtu_points(folder, "run1_XMin_3.vtu") == xmin->n_nodes);
  char pvd[1200];
  snprintf(pvd, sizeof pvd, "%s/run1_XMin.pvd", folder);
  double times[8];
  EXPECT(pvd_times(pvd, times, 8) == 3);
  ops->destroy(&v);

  /* Both a legacy name and its replacement: an error naming both. */
  EXPECT_FAIL(make_vtk(mp, run,
                       "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"output_frequency\": 1,"
                       " \"output_interval\": 1}}",
                       &v),
              EF_ERR_PARAMETER, "output_frequency");
  EXPECT_FAIL(make_vtk(mp, run, "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"output_interval\": 1,"
                                " \"output_type\": 1}}",
                       &v),
              EF_ERR_PARAMETER, "valid keys");
  EXPECT_FAIL(make_vtk(mp, run, "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"file_format\": \"hdf5\"}}",
                       &v),
              EF_ERR_PARAMETER, "hdf5");
  EXPECT(v == NULL);

  /* Interval 0.01 with dt = 0.01 over 20 steps: every step is an output step, the last one
   * (t = 0.2 after twenty additions, the end time of such a run) included.  Both sides are
   * rounded to 12 digits: the scheduled times must not drift by summing 0.01 twenty times. */
  EXPECT_OK(make_vtk(mp, run,
                     "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"output_control_type\": \"time\","
                     " \"output_interval\": 0.01, \"output_path\": \"out_drift\"}}",
                     &v));
  if (v && ops) {
    int missed = 0;
    t = 0.0;
    for (int step = 1; step <= 20; step++) {
      t += 0.01;
      if (ops->is_output_step(v, t, step))
        EXPECT_OK(ops->print_output(v, t, step));
      else
        missed++;
    }
    EXPECT(missed == 0);
    ops->destroy(&v);
  }
  ef_model_part_destroy(&mp);
}

/* output_precision: ascii points at that many significant digits (1/3 of the box at 3 and 17);
 * outside 1..17 an error naming the key and the block. */
static void test_output_precision(const char *run) {
  ef_model_part mp = ef_test_box(2, 3, 0);
  ASSERT(mp, "the test mesh");
  const ef_process_ops *ops = ef_registry_lookup_process("vtk_output_process");
  ASSERT(ops, "vtk_output_process is registered");
  static const char block[] = "{\"Parameters\": {\"model_part_name\": \"FluidModelPart\", \"file_format\": \"ascii\","
                              " \"output_precision\": %d, \"output_path\": \"precision_%d\"}}";
  char json[512];
  static const int refused[] = {0, 18, -3};
  for (int i = 0; i < 3; i++) {
    void *v = NULL;
    snprintf(json, sizeof json, block, refused[i], i);
    ef_error_clear();
    int err = make_vtk(mp, run, json, &v);
    EXPECT(err == EF_ERR_PARAMETER && strstr(ef_error_message(), "output_precision") &&
               strstr(ef_error_message(), "1..17") && strstr(ef_error_message(), "vtk.json"),
           "output_precision %d: %s", refused[i], ef_error_message());
    if (v) ops->destroy(&v);
  }
  ef_error_clear();
  static const int digits[] = {3, 17};
  for (int i = 0; i < 2; i++) {
    void *v = NULL;
    snprintf(json, sizeof json, block, digits[i], digits[i]);
    EXPECT_OK(make_vtk(mp, run, json, &v));
    if (!v) continue;
    EXPECT_OK(ops->print_output(v, 0.1, 1));
    if (ops->execute_finalize) EXPECT_OK(ops->execute_finalize(v));
    ops->destroy(&v);
    char path[1200], line[64];
    snprintf(path, sizeof path, "%s/precision_%d/FluidModelPart_1.vtu", run, digits[i]);
    FILE *f = fopen(path, "rb");
    EXPECT(f, "%s is missing", path);
    if (!f) continue;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *points = strstr(text, "<Points>");
    snprintf(line, sizeof line, "\n%.*g 0 0\n", digits[i], 1.0 / 3.0); /* the node at (1/3, 0) */
    EXPECT(points && strstr(points, line), "%s: no line '%.*g 0 0' in the points", path, digits[i], 1.0 / 3.0);
    if (digits[i] == 17) EXPECT(strtod(line, NULL) == 1.0 / 3.0, "17 digits read back exactly");
  }
  ef_model_part_destroy(&mp);
}

int main(void) {
  char run[] = "/tmp/ef_test_process_vtk_XXXXXX";
  if (!mkdtemp(run)) {
    perror("mkdtemp");
    return 1;
  }
  EXPECT_OK(ef_register_core_processes());
  test_step_control(run);
  test_time_control(run);
  test_output_precision(run);
  if (failures) {
    fprintf(stderr, "%d failure(s); files left in %s\n", failures, run);
    return 1;
  }
  /* Remove what we wrote (only our own files: the folder is ours). */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", run);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", run);
  return 0;
}

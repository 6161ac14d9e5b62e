/* fuzz_parameters.c -- libFuzzer harness for the parameters loader: any file either loads into a
 * document whose every member the getters, validation against defaults, cloning and
 * serialisation handle, or fails with a message naming the place.  The bytes go through a
 * file (one per process, removed at exit) so that ef_parameters_load_file is what runs. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"
#include "fuzz_common.h"

#include <unistd.h>

static char ef_fuzz_path[256];

static void ef_fuzz_remove_file(void) { unlink(ef_fuzz_path); }

/* Write the input to this process's file; 0 on success. */
static int ef_fuzz_write(const uint8_t *data, size_t size) {
  if (!ef_fuzz_path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(ef_fuzz_path, sizeof ef_fuzz_path, "%s/ef_fuzz_parameters_%ld.json", tmp && tmp[0] ? tmp : "/tmp",
             (long)getpid());
    atexit(ef_fuzz_remove_file);
  }
  FILE *f = fopen(ef_fuzz_path, "wb");
  if (!f) return -1;
  size_t put = size ? fwrite(data, 1, size, f) : 0;
  return (fclose(f) != 0 || put != size) ? -1 : 0;
}

/* Defaults shaped like a case's problem_data and solver_settings, to drive validation. */
static const char *ef_fuzz_defaults =
    "{\"problem_data\": {\"problem_name\": \"\", \"start_time\": 0.0, \"end_time\": 1.0, \"echo_level\": 0,"
    " \"parallel_type\": \"OpenMP\"},"
    " \"solver_settings\": {\"solver_type\": \"\", \"model_import_settings\": {\"input_type\": \"mdpa\","
    " \"input_filename\": \"\"}, \"time_stepping\": {\"automatic_time_step\": true, \"CFL_number\": 1.0},"
    " \"gravity\": [0.0, 0.0, 0.0], \"formulation\": {}},"
    " \"processes\": {}, \"output_processes\": null}";

/* Every typed getter on every member, recursively (depth-bounded). */
static void ef_fuzz_walk(ef_parameters p, int depth) {
  if (depth > 8) return;
  (void)ef_parameters_path(p);
  (void)ef_parameters_origin(p);
  (void)ef_json_type_name(ef_parameters_type(p));
  double d;
  const char *s;
  (void)ef_parameters_as_double(p, &d);
  (void)ef_parameters_as_string(p, &s);
  int n = ef_parameters_size(p);
  for (int i = 0; i < n && i < 64; ++i) {
    ef_parameters child = NULL;
    if (!ef_parameters_at(p, i, &child)) ef_fuzz_walk(child, depth + 1);
  }
  ef_parameters past = NULL;
  (void)ef_parameters_at(p, n, &past); /* one past the end: an error, not a read */
  for (int i = 0; i < 64; ++i) {
    const char *key = ef_parameters_key_at(p, i);
    if (!key) break;
    long l;
    int b;
    double v[3];
    EF_FUZZ_ASSERT(ef_parameters_has(p, key));
    (void)ef_parameters_get_double(p, key, &d);
    (void)ef_parameters_get_int(p, key, &l);
    (void)ef_parameters_get_bool(p, key, &b);
    (void)ef_parameters_get_string(p, key, &s);
    (void)ef_parameters_get_vector(p, key, 3, v);
    ef_parameters child = NULL;
    if (!ef_parameters_get(p, key, &child)) ef_fuzz_walk(child, depth + 1);
  }
  ef_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  if (ef_fuzz_write(data, size)) return 0;
  ef_parameters p = NULL;
  int err = ef_parameters_load_file(ef_fuzz_path, &p);
  if (err) {
    ef_fuzz_check_message(err);
  } else {
    ef_fuzz_walk(p, 0);
    ef_parameters missing = NULL;
    (void)ef_parameters_get(p, "no_such_key", &missing);
    ef_parameters copy = NULL;
    if (!ef_parameters_clone(p, &copy)) {
      char *a = ef_parameters_to_string(p, 0), *b = ef_parameters_to_string(copy, 1);
      free(a);
      free(b);
      if (ef_parameters_validate_defaults(copy, ef_fuzz_defaults)) ef_fuzz_check_message(1);
      (void)ef_parameters_set_double(copy, "end_time", 2.0);
      (void)ef_parameters_set_string(copy, "problem_name", "fuzz");
      (void)ef_parameters_set_bool(copy, "flag", 1);
      (void)ef_parameters_set_json(copy, "settings", "{\"a\": [1, 2]}");
      (void)ef_parameters_remove(copy, "flag");
      (void)ef_parameters_remove(copy, "absent");
    }
    ef_parameters_destroy(&copy);
  }
  ef_parameters_destroy(&p);
  ef_error_clear();
  return 0;
}

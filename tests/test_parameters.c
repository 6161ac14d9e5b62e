/* Parameters: defaults, unknown keys, wrong types, syntax errors with line numbers. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"

/* The error message must contain every needle. */
static void expect_error(int err, const char *what, const char *const *needles) {
  EXPECT(err != 0, "%s: expected an error", what);
  for (; *needles; needles++)
    EXPECT(strstr(ef_error_message(), *needles), "%s: message lacks '%s': %s", what, *needles, ef_error_message());
}

static const char defaults[] =
    "{\"name\": \"x\", \"cfl\": 1.0, \"flag\": false, \"anything\": null, \"free\": {},"
    " \"nested\": {\"a\": 1, \"b\": \"s\"}, \"list\": [1, 2, 3]}";

int main(void) {
  ef_parameters p = NULL;
  ef_parameters nested;
  double v;
  const char *s;

  /* Missing keys take defaults, nested ones too; given values stay. */
  EXPECT(!ef_parameters_parse("{\"cfl\": 0.5, \"nested\": {\"b\": \"t\"}, \"anything\": [1]}", "case1", &p), "%s",
         ef_error_message());
  EXPECT(!ef_parameters_validate_defaults(p, defaults), "%s", ef_error_message());
  EXPECT(!ef_parameters_get_double(p, "cfl", &v) && v == 0.5, "cfl %g", v);
  EXPECT(!ef_parameters_get_string(p, "name", &s) && !strcmp(s, "x"), "name");
  EXPECT(!ef_parameters_get(p, "nested", &nested), "nested");
  EXPECT(!ef_parameters_get_double(nested, "a", &v) && v == 1.0, "nested default a");
  EXPECT(!strcmp(ef_parameters_path(nested), "nested"), "path %s", ef_parameters_path(nested));
  ef_parameters_destroy(&p);
  EXPECT(p == NULL, "destroy sets NULL");
  ef_parameters_destroy(&p); /* NULL-safe */

  /* Unknown key: names the path and lists the valid keys. */
  ef_parameters_parse("{\"nested\": {\"c\": 2}}", "case2.json", &p);
  expect_error(ef_parameters_validate_defaults(p, defaults), "unknown nested key",
               (const char *[]){"case2.json", "nested.c", "unknown key", "a, b", NULL});
  ef_parameters_destroy(&p);

  ef_parameters_parse("{\"CFL\": 2}", "case3.json", &p);
  expect_error(ef_parameters_validate_defaults(p, defaults), "unknown key",
               (const char *[]){"'CFL'", "name, cfl, flag", NULL});
  ef_parameters_destroy(&p);

  /* Wrong types name the path and both types. */
  ef_parameters_parse("{\"cfl\": \"fast\"}", "case4.json", &p);
  expect_error(ef_parameters_validate_defaults(p, defaults), "wrong type",
               (const char *[]){"'cfl'", "a string", "expected a number", NULL});
  ef_parameters_destroy(&p);
  ef_parameters_parse("{\"flag\": 1}", "case5.json", &p);
  expect_error(ef_parameters_validate_defaults(p, defaults), "bool given a number",
               (const char *[]){"'flag'", "expected a boolean", NULL});
  ef_parameters_destroy(&p);

  /* An empty default object or null default accepts anything. */
  ef_parameters_parse("{\"free\": {\"whatever\": [1, {\"x\": 2}]}, \"anything\": \"text\"}", "case6", &p);
  EXPECT(!ef_parameters_validate_defaults(p, defaults), "%s", ef_error_message());
  ef_parameters_destroy(&p);

  /* Tolerated keys are collected for one warning. */
  ef_parameters_parse("{\"time_order\": 2, \"dynamic_tau\": 0.1}", "case7", &p);
  char found[256];
  const char *tolerated[] = {"time_order", "dynamic_tau", NULL};
  EXPECT(!ef_parameters_validate_defaults_tolerant(p, defaults, tolerated, found, sizeof found), "%s",
         ef_error_message());
  EXPECT(!strcmp(found, "time_order, dynamic_tau"), "found '%s'", found);
  ef_parameters_destroy(&p);

  /* Typed getters: integers, vectors, missing keys. */
  ef_parameters_parse("{\"n\": 2.5, \"g\": [0, 0, -9.81], \"h\": [1, \"x\", 3]}", "case8.json", &p);
  long n;
  double g[3];
  expect_error(ef_parameters_get_int(p, "n", &n), "non-integer",
               (const char *[]){"case8.json", "'n'", "expected an integer", NULL});
  EXPECT(!ef_parameters_get_vector(p, "g", 3, g) && g[2] == -9.81, "vector");
  expect_error(ef_parameters_get_vector(p, "h", 3, g), "vector with a string",
               (const char *[]){"h[1]", "expected a number", NULL});
  expect_error(ef_parameters_get_vector(p, "g", 2, g), "vector size", (const char *[]){"3 entries", NULL});
  expect_error(ef_parameters_get_double(p, "missing", &v), "missing key",
               (const char *[]){"missing key 'missing'", "n, g, h", NULL});
  ef_parameters_destroy(&p);

  /* Syntax errors give line and column. */
  expect_error(ef_parameters_parse("{\n  \"a\": 1,\n  \"b\": ,\n}", "broken.json", &p), "syntax",
               (const char *[]){"broken.json:3:", "invalid JSON", NULL});
  EXPECT(p == NULL, "no handle on failure");
  expect_error(ef_parameters_parse("{\"a\": 1", "truncated.json", &p), "truncated",
               (const char *[]){"truncated.json:1:", NULL});
  expect_error(ef_parameters_parse("{\"a\": 1} trailing", "trailing.json", &p), "trailing garbage",
               (const char *[]){"trailing.json:1:", NULL});
  expect_error(ef_parameters_load_file(EF_TEST_DATA "/parameters/does_not_exist.json", &p), "missing file",
               (const char *[]){"does_not_exist.json", "cannot open", NULL});

  /* Atomic writes: the file appears whole; a bad folder is an error naming the path. */
  EXPECT(!ef_write_text_file_atomic("test_parameters_out.json", "{\"ok\": true}\n"), "%s", ef_error_message());
  EXPECT(!ef_parameters_load_file("test_parameters_out.json", &p), "%s", ef_error_message());
  ef_parameters_destroy(&p);
  remove("test_parameters_out.json");
  expect_error(ef_write_text_file_atomic("/nonexistent_folder_ef/x.json", "{}"), "bad folder",
               (const char *[]){"/nonexistent_folder_ef/x.json", NULL});

  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

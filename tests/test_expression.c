/* test_expression.c -- expressions of x, y, z, t (Python spellings included) and Kratos intervals. */
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

/* Exact IEEE results for these small integers/products; 1e-15 absolute for the
 * transcendental ones (sin(pi/2) is within one ulp of 1). */
#define TOL_TRIG 1e-15

static ef_expression expr(const char *text) {
  ef_expression e = NULL;
  int rc = ef_expression_create(text, "test", &e);
  if (rc) {
    fprintf(stderr, "expression '%s' failed: %s\n", text, ef_error_message());
    failures++;
  }
  return e;
}

static void test_values(void) {
  ef_expression e = expr("3.5");
  if (e) {
    EXPECT(ef_expression_eval(e, 1, 2, 3, 4) == 3.5);
    EXPECT(ef_expression_is_constant(e));
    EXPECT(!ef_expression_depends_on_time(e));
  }
  ef_expression_destroy(&e);
  EXPECT(e == NULL);
  ef_expression_destroy(&e); /* NULL-safe */
  ef_expression_destroy(NULL);

  e = expr("x*y+t");
  if (e) {
    EXPECT(ef_expression_eval(e, 2, 3, 0, 1) == 7.0);
    EXPECT(!ef_expression_is_constant(e));
    EXPECT(ef_expression_depends_on_time(e));
  }
  ef_expression_destroy(&e);

  /* Python's power: "**", right-associative, binding tighter than unary minus. */
  e = expr("2*t**2");
  if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 3) == 18.0);
  ef_expression_destroy(&e);
  e = expr("-2**2");
  if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 0) == -4.0);
  ef_expression_destroy(&e);
  e = expr("2**3**2");
  if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 0) == 512.0);
  ef_expression_destroy(&e);

  e = expr("math.sin(pi*x)");
  if (e) {
    EXPECT_NEAR(ef_expression_eval(e, 0.5, 0, 0, 0), 1.0, TOL_TRIG);
    EXPECT(!ef_expression_depends_on_time(e));
    EXPECT(!ef_expression_is_constant(e));
  }
  ef_expression_destroy(&e);
  e = expr("math.cos(math.pi)");
  if (e) {
    EXPECT_NEAR(ef_expression_eval(e, 0, 0, 0, 0), -1.0, TOL_TRIG);
    EXPECT(ef_expression_is_constant(e));
  }
  ef_expression_destroy(&e);

  /* The exponent of a number is not a name; X/Y/Z are the coordinates too. */
  e = expr("1e-3*x + 2.5E+1*z");
  if (e) EXPECT_NEAR(ef_expression_eval(e, 1000, 0, 2, 0), 51.0, 1e-12);
  ef_expression_destroy(&e);
  /* Python's functions and spellings that libmatheval lacks. */
  e = expr("2**-1 + pow(2, 3) + log10(100) + math.log(8, 2) + fabs(-3) + math.e**0");
  if (e) EXPECT_NEAR(ef_expression_eval(e, 0, 0, 0, 0), 0.5 + 8 + 2 + 3 + 3 + 1, 1e-14);
  ef_expression_destroy(&e);
  e = expr("1e30*t + 1.5e-300*x");
  if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 2) == 2e30);
  ef_expression_destroy(&e);
  e = expr("X + 10*Y + 100*Z");
  if (e) EXPECT(ef_expression_eval(e, 1, 2, 3, 0) == 321.0);
  ef_expression_destroy(&e);
}

static void test_errors(void) {
  ef_expression e = NULL;
  EXPECT_FAIL(ef_expression_create("sin(", "here", &e), EF_ERR_PARAMETER, "sin(");
  EXPECT(e == NULL);
  EXPECT_FAIL(ef_expression_create("x + foo*bar", "here", &e), EF_ERR_PARAMETER, "'foo'");
  EXPECT(strstr(ef_error_message(), "'bar'") != NULL);
  EXPECT_FAIL(ef_expression_create("  ", "here", &e), EF_ERR_PARAMETER, "empty");
  EXPECT_FAIL(ef_expression_create("foo(x)", "here", &e), EF_ERR_PARAMETER, "unknown function 'foo'");
  EXPECT_FAIL(ef_expression_create("sin(x, y)", "here", &e), EF_ERR_PARAMETER, "1 argument");
  EXPECT_FAIL(ef_expression_create("2 +", "here", &e), EF_ERR_PARAMETER, "incomplete");
  EXPECT_FAIL(ef_expression_create("x y", "here", &e), EF_ERR_PARAMETER, "unexpected text");
  EXPECT_FAIL(ef_expression_create("x % 2", "here", &e), EF_ERR_PARAMETER, "'% 2'");
  EXPECT_FAIL(ef_expression_create("1/0", "here", &e), EF_ERR_PARAMETER, "finite");

  /* From parameters: the path and the text are named. */
  ef_parameters root = NULL, p = NULL;
  EXPECT_OK(ef_parameters_parse("{\"Parameters\": {\"a\": 2.5, \"b\": \"x+\", \"c\": true, \"d\": \"3*y + w\","
                                " \"e\": \"t/2\"}}",
                                "case.json", &root));
  EXPECT_OK(ef_parameters_get(root, "Parameters", &p));
  if (p) {
    EXPECT_OK(ef_expression_from_parameters(p, "a", &e));
    if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 0) == 2.5 && ef_expression_is_constant(e));
    ef_expression_destroy(&e);
    EXPECT_FAIL(ef_expression_from_parameters(p, "b", &e), EF_ERR_PARAMETER, "Parameters.b");
    EXPECT(strstr(ef_error_message(), "'x+'") && strstr(ef_error_message(), "case.json"));
    EXPECT_FAIL(ef_expression_from_parameters(p, "c", &e), EF_ERR_PARAMETER, "Parameters.c");
    EXPECT(strstr(ef_error_message(), "a boolean"));
    EXPECT_FAIL(ef_expression_from_parameters(p, "d", &e), EF_ERR_PARAMETER, "'w'");
    EXPECT(strstr(ef_error_message(), "Parameters.d"));
    EXPECT_FAIL(ef_expression_from_parameters(p, "missing", &e), EF_ERR_PARAMETER, "missing");
    ef_parameters v = NULL;
    EXPECT_OK(ef_parameters_get(p, "e", &v));
    if (v) {
      EXPECT_OK(ef_expression_from_parameters(v, NULL, &e));
      if (e) EXPECT(ef_expression_eval(e, 0, 0, 0, 3) == 1.5 && ef_expression_depends_on_time(e));
      ef_expression_destroy(&e);
    }
  }
  ef_parameters_destroy(&root);
}

static void test_intervals(void) {
  ef_parameters root = NULL;
  EXPECT_OK(ef_parameters_parse("{\"a\": [0.0, \"End\"], \"b\": [0.5, 2], \"c\": [\"End\", 1], \"d\": [1, \"end\"],"
                                " \"e\": [2, 1], \"f\": 5, \"g\": [0], \"h\": [0, null], \"i\": [0, 1]}",
                                "iv.json", &root));
  if (!root) return;
  ef_interval iv;
  EXPECT_OK(ef_interval_from_parameters(root, "a", &iv));
  EXPECT(iv.start == 0.0 && iv.end == 1e30);
  EXPECT(ef_interval_contains(iv, 0.0) && ef_interval_contains(iv, 1e20));
  EXPECT(!ef_interval_contains(iv, -1.0));
  EXPECT_OK(ef_interval_from_parameters(root, "b", &iv));
  EXPECT(ef_interval_contains(iv, 1.0) && ef_interval_contains(iv, 0.5) && ef_interval_contains(iv, 2.0));
  EXPECT(!ef_interval_contains(iv, 3.0) && !ef_interval_contains(iv, 0.4));
  EXPECT_OK(ef_interval_from_parameters(root, "i", &iv));
  /* Time summed from steps: 1 + 1e-14 is still t = 1; 1 + 1e-9 is past it
   * (the slack is 1e-12 relative). */
  EXPECT(ef_interval_contains(iv, 1.0 + 1e-14));
  EXPECT(!ef_interval_contains(iv, 1.0 + 1e-9));
  EXPECT_FAIL(ef_interval_from_parameters(root, "c", &iv), EF_ERR_PARAMETER, "c[0]");
  EXPECT_FAIL(ef_interval_from_parameters(root, "d", &iv), EF_ERR_PARAMETER, "\"end\"");
  EXPECT(strstr(ef_error_message(), "d[1]"));
  EXPECT_FAIL(ef_interval_from_parameters(root, "e", &iv), EF_ERR_PARAMETER, "ends before it starts");
  EXPECT_FAIL(ef_interval_from_parameters(root, "f", &iv), EF_ERR_PARAMETER, "'f'");
  EXPECT(strstr(ef_error_message(), "a number"));
  EXPECT_FAIL(ef_interval_from_parameters(root, "g", &iv), EF_ERR_PARAMETER, "wrong length");
  EXPECT_FAIL(ef_interval_from_parameters(root, "h", &iv), EF_ERR_PARAMETER, "h[1]");
  ef_parameters_destroy(&root);
}

int main(void) {
  test_values();
  test_errors();
  test_intervals();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

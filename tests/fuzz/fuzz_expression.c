/* fuzz_expression.c -- libFuzzer harness for the formula parser (expression.c and libmatheval
 * behind it).  The first byte picks the entry: even, the bytes are formula text; odd, the bytes
 * are a JSON object whose "value" goes through ef_expression_from_parameters and whose
 * "interval" through ef_interval_from_parameters.  Accepted formulas are evaluated. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"
#include "fuzz_common.h"

static void ef_fuzz_use(ef_expression e) {
  static const double points[][4] = {{0, 0, 0, 0}, {0.5, 0.5, 0.5, 1}, {-1, 2, 3, 1e-3}, {1e3, -1e3, 0, 10}};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; ++i)
    (void)ef_expression_eval(e, points[i][0], points[i][1], points[i][2], points[i][3]);
  int constant = ef_expression_is_constant(e);
  int timed = ef_expression_depends_on_time(e);
  EF_FUZZ_ASSERT(!(constant && timed));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  if (!(data[0] & 1)) {
    ef_expression e = NULL;
    int err = ef_expression_create(text, "fuzz", &e);
    if (!err) ef_fuzz_use(e);
    else ef_fuzz_check_message(err);
    ef_expression_destroy(&e);
  } else if (strlen(text) == size - 1) {
    ef_parameters p = NULL;
    if (!ef_parameters_parse(text, "fuzz.json", &p)) {
      ef_expression e = NULL;
      if (!ef_expression_from_parameters(p, "value", &e)) ef_fuzz_use(e);
      ef_expression_destroy(&e);
      ef_interval interval;
      if (!ef_interval_from_parameters(p, "interval", &interval)) {
        (void)ef_interval_contains(interval, 0.0);
        (void)ef_interval_contains(interval, 1.0);
      }
    }
    ef_parameters_destroy(&p);
  }
  free(text);
  ef_error_clear();
  return 0;
}

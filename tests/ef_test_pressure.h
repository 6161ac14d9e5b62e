/* ef_test_pressure.h -- the real pressure systems of the linear-solver tests: a few steps of a
 * case on a strategy, then its last pressure system, and the comparison of two solutions of
 * a system that may be singular (pure Neumann: solutions differ by a constant).
 *
 * Header-only (static functions): include it in one test source, after ef_test.h. */
#ifndef EF_TEST_PRESSURE_H
#define EF_TEST_PRESSURE_H

#include <math.h>
#include <stdint.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_util.h"
#include "ef_test.h"

/* Changes a case's parameters before it runs; returns 0 on success. */
typedef int (*ef_test_edit_case)(ef_parameters parameters, void *arg);

/* Run `steps` quiet steps of case_file with the strategy into the folder out (created);
 * applications as ef_analysis_options.applications (NULL: those loaded); edit (may be NULL)
 * changes the parameters first; the last pressure system into s when s is not NULL. */
static __attribute__((unused)) int ef_test_run_case(const char *case_file, const char *strategy,
                                                    const char *applications, const char *out, int steps,
                                                    ef_test_edit_case edit, void *arg, ef_pressure_system *s) {
  ef_analysis_options o;
  ef_analysis_options_default(&o);
  o.applications = applications;
  o.solver_type = strategy;
  o.output_folder = out;
  o.max_steps = steps;
  o.quiet = 1;
  ef_analysis a = NULL;
  ASSERT_OK(ef_make_folders(out));
  ASSERT_OK(ef_analysis_create(case_file, &o, &a));
  if (edit) ASSERT(!edit(ef_analysis_parameters(a), arg), "%s: cannot edit the parameters", case_file);
  ASSERT_OK(ef_analysis_run(a));
  if (s) ASSERT_OK(ef_analysis_copy_pressure_system(a, s));
  ef_analysis_destroy(&a);
  return 0;
}

/* ||x - y|| / ||y|| (||x - y|| when y = 0), after removing each vector's mean when remove_mean
 * (a singular system fixes its solution up to a constant). */
static __attribute__((unused)) double ef_test_rel_diff(const double *x, const double *y, int64_t n,
                                                       int remove_mean) {
  double mx = 0.0, my = 0.0, d = 0.0, s = 0.0;
  if (remove_mean) {
    for (int64_t i = 0; i < n; ++i) {
      mx += x[i];
      my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
  }
  for (int64_t i = 0; i < n; ++i) {
    d += ((x[i] - mx) - (y[i] - my)) * ((x[i] - mx) - (y[i] - my));
    s += (y[i] - my) * (y[i] - my);
  }
  return s > 0.0 ? sqrt(d / s) : sqrt(d);
}

#endif

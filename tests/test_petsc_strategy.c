/* test_petsc_strategy.c -- the OpenMP strategy with linear_solver_settings.solver_type
 * "petsc" against the same run with the host CG ("cg"): same iterations per step (the
 * same stopping test) and the same pressure; then its copy_pressure_system passes the
 * verify checks.
 *   argv: CASE.json OUTPUT_FOLDER */
#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "test_petsc_common.h"
#include "verify.h"

#define STEPS 3

/* Run STEPS steps with the given linear solver; keep the pressure and iterations. */
static int run(const char *case_file, const char *out, const char *linear_solver, double **pressure, int64_t *n,
               int *its, ef_verify_report *rep) {
  ef_analysis_options o;
  ef_analysis_options_default(&o);
  o.applications = EF_DEFAULT_APPLICATIONS;
  o.solver_type = "openmp_edge_based";
  o.output_folder = out;
  o.max_steps = STEPS;
  o.quiet = 1;
  ef_analysis a = NULL;
  ef_parameters ss, ls;
  ASSERT_OK(ef_analysis_create(case_file, &o, &a));
  ASSERT_OK(ef_parameters_get(ef_analysis_parameters(a), "solver_settings", &ss));
  ASSERT_OK(ef_parameters_get(ss, "linear_solver_settings", &ls));
  ASSERT_OK(ef_parameters_set_string(ls, "solver_type", linear_solver));
  ASSERT_OK(ef_analysis_initialize(a));
  int step = 0;
  while (ef_analysis_keep_advancing(a)) {
    ASSERT_OK(ef_analysis_initialize_solution_step(a));
    ASSERT_OK(ef_analysis_solve_solution_step(a));
    ASSERT_OK(ef_analysis_finalize_solution_step(a));
    its[step++] = ef_analysis_last_iterations(a);
  }
  ASSERT(step == STEPS, "%d steps ran", step);
  ef_model_part mp = ef_analysis_model_part(a);
  ef_variable *p;
  ASSERT_OK(ef_model_part_get_variable(mp, "PRESSURE", &p));
  *n = mp->n_nodes;
  *pressure = malloc((size_t)*n * sizeof **pressure);
  ASSERT(*pressure, "out of memory");
  memcpy(*pressure, p->values, (size_t)*n * sizeof **pressure);
  if (rep) {
    ef_pressure_system s;
    ef_verify_options vo;
    ef_verify_options_default(&vo);
    vo.use_device = 0;
    ASSERT_OK(ef_analysis_copy_pressure_system(a, &s));
    ASSERT(s.values_full && s.initial_guess, "the OpenMP strategy must give H before elimination and the warm start");
    ASSERT_OK(ef_verify_pressure_system(&s, mp, &vo, rep));
    ef_pressure_system_free(&s);
  }
  ASSERT_OK(ef_analysis_finalize(a));
  ef_analysis_destroy(&a);
  return 0;
}

int main(int argc, char **argv) {
  ASSERT(argc == 3, "usage: test_petsc_strategy CASE.json OUTPUT");
  double *p_cg = NULL, *p_petsc = NULL;
  int64_t n1 = 0, n2 = 0;
  int its_cg[STEPS], its_petsc[STEPS];
  ef_verify_report *rep = calloc(1, sizeof *rep);
  ASSERT(rep, "out of memory");
  if (run(argv[1], argv[2], "cg", &p_cg, &n1, its_cg, NULL)) return 1;
  if (run(argv[1], argv[2], "petsc", &p_petsc, &n2, its_petsc, rep)) return 1;
  ASSERT(n1 == n2, "node counts %lld vs %lld", (long long)n1, (long long)n2);
  int same = 1;
  for (int k = 0; k < STEPS; ++k) {
    /* One stopping test, two implementations: rounding moves the stop by one at most. */
    ASSERT(abs(its_cg[k] - its_petsc[k]) <= 1, "step %d: cg %d, petsc %d iterations", k + 1, its_cg[k], its_petsc[k]);
    same &= its_cg[k] == its_petsc[k];
  }
  double d = 0.0, s = 0.0;
  for (int64_t i = 0; i < n1; ++i) {
    d += (p_cg[i] - p_petsc[i]) * (p_cg[i] - p_petsc[i]);
    s += p_cg[i] * p_cg[i];
  }
  /* Both stop at a scaled residual of 1e-8: the pressures may differ by cond * 1e-8 if the
   * iterations differ; with equal counts the iterates agree to rounding (1e-9 is slack). */
  const double bound = same ? 1e-9 : 1e-5;
  ASSERT(sqrt(d / s) <= bound, "pressure differs by %.3e (bound %.0e)", sqrt(d / s), bound);
  for (int i = 0; i < rep->n_checks; ++i)
    ASSERT(rep->checks[i].passed, "verify check %s failed: %.3e vs %.3e (%s)", rep->checks[i].name,
           rep->checks[i].measured, rep->checks[i].bound, rep->checks[i].note);
  free(p_cg);
  free(p_petsc);
  free(rep);
  return 0;
}

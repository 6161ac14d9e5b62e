/* test_petsc_verify_cli.c -- `edgeflow verify` on a small case, run in-process through the
 * registry as the CLI does, then its JSON report read back: every check must have run
 * and passed.
 *   argv: CASE.json OUTPUT_FOLDER STRATEGY device|host STEPS
 * "device" needs an OpenCL device (77 = skip when there is none). */
#include <fcntl.h>
#include <unistd.h>

#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "test_petsc_common.h"
#ifdef EF_HAVE_OPENCL
#include "opencl_context.h"
#endif

static const char *const required[] = {"csr",       "graph",         "diagonal",        "diagonal_full",
                                       "symmetry",  "symmetry_full", "row_sums",        "elimination",
                                       "spmv",      "residual",      "residual_scaled", "petsc_cg"};

int main(int argc, char **argv) {
  ASSERT(argc == 6, "usage: test_petsc_verify_cli CASE.json OUTPUT STRATEGY device|host STEPS");
  const char *strategy = argv[3];
  const int device = !strcmp(argv[4], "device");
  if (device || !strcmp(strategy, "opencl_edge_based")) {
    int count = 0;
#ifdef EF_HAVE_OPENCL
    if (ef_cl_count_devices(&count)) count = 0;
#endif
    if (count == 0) {
      printf("no OpenCL device: skipped\n");
      return EF_TEST_SKIP;
    }
  }
  ASSERT_OK(ef_registry_load_application("fluid"));
  const ef_command_ops *verify = ef_registry_lookup_command("verify");
  ASSERT(verify, "command verify is not registered");

  /* Bad usage is an error with a message, not a crash or an exit. */
  char *bad1[] = {"verify"};
  ASSERT_FAIL(verify->run(1, bad1), EF_ERR_PARAMETER, "parameters file");
  char *bad2[] = {"verify", argv[1], "--steps", "zero"};
  ASSERT_FAIL(verify->run(4, bad2), EF_ERR_PARAMETER, "--steps");

  char *args[16] = {"verify", argv[1], "--steps", argv[5], "--solver-type", argv[3], "--output", argv[2], "--quiet"};
  int n = 9;
  if (!device) args[n++] = "--host-spmv";

  char path[4096];
  snprintf(path, sizeof path, "%s/verify_report.json", argv[2]);
  ef_parameters rep = NULL, checks = NULL;
  int passed = 0;
  if (!device) {
    /* Demanding a residual 1000 times below the solver's tolerance must fail the residual
     * checks: the command returns an error naming them and the report says so. */
    char *strict[16];
    memcpy(strict, args, sizeof strict);
    strict[n] = "--residual-factor";
    strict[n + 1] = "0.001";
    /* The failed checks are printed to stderr (failures are never silent): not here. */
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    int e = verify->run(n + 2, strict);
    fflush(stderr);
    if (saved >= 0) dup2(saved, 2);
    if (saved >= 0) close(saved);
    if (devnull >= 0) close(devnull);
    ASSERT(e == EF_ERR_SOLVER && strstr(ef_error_message(), "residual_scaled"), "strict run returned %s: %s",
           ef_error_name(e), ef_error_message());
    ef_error_clear();
    ASSERT_OK(ef_parameters_load_file(path, &rep));
    ASSERT_OK(ef_parameters_get_bool(rep, "passed", &passed));
    ASSERT(!passed, "the report of the strict run says passed");
    ef_parameters_destroy(&rep);
  }
  ASSERT_OK(verify->run(n, args));
  ASSERT_OK(ef_parameters_load_file(path, &rep));
  const char *name, *spmv;
  ASSERT_OK(ef_parameters_get_bool(rep, "passed", &passed));
  ASSERT_OK(ef_parameters_get_string(rep, "strategy", &name));
  ASSERT_OK(ef_parameters_get_string(rep, "spmv_device", &spmv));
  ASSERT(passed, "the report says a check failed");
  ASSERT(!strcmp(name, strategy), "report of strategy %s", name);
  ASSERT(device ? strcmp(spmv, "host") != 0 : !strcmp(spmv, "host"), "SpMV checked on %s", spmv);
  ASSERT_OK(ef_parameters_get(rep, "checks", &checks));
  for (size_t q = 0; q < sizeof required / sizeof required[0]; ++q) {
    int found = 0;
    for (int i = 0; i < ef_parameters_size(checks); ++i) {
      ef_parameters c;
      const char *cn, *result;
      ASSERT_OK(ef_parameters_at(checks, i, &c));
      ASSERT_OK(ef_parameters_get_string(c, "name", &cn));
      ASSERT_OK(ef_parameters_get_string(c, "result", &result));
      if (strcmp(cn, required[q])) continue;
      found = 1;
      ASSERT(!strcmp(result, "pass"), "check %s: %s", cn, result);
    }
    ASSERT(found, "check %s did not run", required[q]);
  }
  long its_solver = 0, its_petsc = 0;
  ASSERT_OK(ef_parameters_get_int(rep, "solver_iterations", &its_solver));
  ASSERT_OK(ef_parameters_get_int(rep, "petsc_cg_jacobi_iterations", &its_petsc));
  ASSERT(its_solver > 0 && its_petsc > 0, "iterations: solver %ld, PETSc %ld", its_solver, its_petsc);
  ef_parameters_destroy(&rep);
  return 0;
}

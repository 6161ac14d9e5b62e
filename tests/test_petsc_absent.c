/* test_petsc_absent.c -- in a build without PETSc, asking for linear solver "petsc" or
 * the verify command is an error that says the build has no PETSc. */
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "test_petsc_common.h"

int main(void) {
  ASSERT_OK(ef_registry_load_application("fluid"));
  const ef_linear_solver_ops *ops = NULL;
  ASSERT_OK(ef_registry_find_linear_solver("petsc", EF_MEMORY_HOST, &ops));
  ef_parameters p = NULL;
  ASSERT_OK(ef_parameters_parse("{\"solver_type\": \"petsc\"}", "<test>", &p));
  int64_t rp[2] = {0, 1};
  int32_t col[1] = {0};
  double val[1] = {1.0};
  ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {1, 0, NULL}, .nnz = 1, .row_ptr = rp, .col = col, .values = val};
  ef_linear_solver *solver = (ef_linear_solver *)&p;
  ASSERT_FAIL(ef_linear_solver_create(p, EF_MEMORY_HOST, &A, &solver), EF_ERR_UNSUPPORTED, "no PETSc");
  ASSERT(solver == NULL, "a failed create must leave no object");
  ef_parameters_destroy(&p);
  const ef_command_ops *verify = ef_registry_lookup_command("verify");
  ASSERT(verify, "verify must exist to say why it cannot run");
  char *args[] = {"verify", "case.json"};
  ASSERT_FAIL(verify->run(2, args), EF_ERR_UNSUPPORTED, "no PETSc");
  return 0;
}

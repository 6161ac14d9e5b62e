/* petsc_absent.c -- a build without PETSc: linear solver "petsc" exists only to say so. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_linear_solver.h"
#include "petsc_solver.h"

static int ef_no_petsc_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                              ef_preconditioner *pc, void **data) {
  (void)settings;
  (void)common;
  (void)A;
  (void)pc;
  *data = NULL;
  return EF_ERROR(EF_ERR_UNSUPPORTED,
                  "linear solver \"petsc\": this build has no PETSc (install petsc-dev and configure with "
                  "-DEF_WITH_PETSC=ON, or use \"cg\")");
}

static int ef_no_petsc_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *result) {
  (void)data;
  (void)b;
  (void)x;
  (void)result;
  return EF_ERROR(EF_ERR_UNSUPPORTED, "linear solver \"petsc\": this build has no PETSc");
}

/* Nothing was created. */
static void ef_no_petsc_destroy(void **data) {
  if (data) *data = NULL;
}

static const ef_linear_solver_ops ef_no_petsc_ops = {
    .name = "petsc",
    .description = "PETSc KSP (not in this build)",
    .memory = EF_MEMORY_HOST,
    .defaults = "{\"ksp_type\": \"cg\", \"pc_type\": \"jacobi\", \"petsc_options\": \"\", \"norm_type\": \"auto\", \"atol\": 1e-50}",
    .create = ef_no_petsc_create,
    .solve = ef_no_petsc_solve,
    .destroy = ef_no_petsc_destroy,
    .distributed = 1, /* so that on several ranks too its create says the build has no PETSc */
};

int ef_register_petsc_solver(void) { return ef_registry_add_linear_solver(&ef_no_petsc_ops); }

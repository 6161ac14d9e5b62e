/* opencl_solvers.c -- the one list that registers the device solvers and preconditioners. */
#include "opencl_solvers.h"

int ef_register_opencl_solvers(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_cl_jacobi_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_cg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_bicgstab_ops));
  return EF_SUCCESS;
}

/* fluid_application.c -- the fluid application: registers its strategies,
 * linear solvers, processes and commands into the core's registry when loaded. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"

#include "amg_register.h"
#include "fluid_application.h"
#include "host_cg.h"
#include "petsc_solver.h"
#ifdef EF_HAVE_OPENCL
#include "opencl_solvers.h"
#endif

int ef_application_register(void) {
  EF_CALL(ef_register_openmp_strategy());
  EF_CALL(ef_register_host_solvers());
  EF_CALL(ef_register_amg());
#ifdef EF_HAVE_OPENCL
  EF_CALL(ef_register_opencl_amg()); /* right after the host ones: the registry order of before */
#endif
  EF_CALL(ef_register_fluid_bc_processes());
  EF_CALL(ef_register_force_processes());
#ifdef EF_HAVE_OPENCL
  EF_CALL(ef_register_opencl_solvers());
  EF_CALL(ef_register_opencl_strategy());
  EF_CALL(ef_register_opencl_commands());
#endif
  EF_CALL(ef_register_petsc_solver()); /* without PETSc: one that says the build has none */
#ifdef EF_HAVE_PETSC
  EF_CALL(ef_register_petsc_bench());
#endif
  EF_CALL(ef_register_verify_command());
  return EF_SUCCESS;
}

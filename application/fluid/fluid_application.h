/* fluid_application.h -- registration entry points of the fluid application's parts. */
#ifndef EF_FLUID_APPLICATION_H
#define EF_FLUID_APPLICATION_H

int ef_application_register(void);

int ef_register_openmp_strategy(void);
int ef_register_host_linear_solvers(void);
#ifdef EF_HAVE_OPENCL
int ef_register_opencl_strategy(void);
int ef_register_opencl_commands(void);
#endif
/* Linear solver "petsc" and command "verify" (petsc_solver.c); in a build without
 * PETSc, stubs of both that fail saying so (verify.c). */
int ef_register_petsc(void);

#endif

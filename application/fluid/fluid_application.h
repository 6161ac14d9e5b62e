/* fluid_application.h -- registration entry points of the fluid application's parts. */
#ifndef EF_FLUID_APPLICATION_H
#define EF_FLUID_APPLICATION_H

int ef_application_register(void);

int ef_register_openmp_strategy(void);
#ifdef EF_HAVE_OPENCL
int ef_register_opencl_strategy(void);
int ef_register_opencl_commands(void);
#endif
/* Command "verify" (verify.c; without PETSc one that fails saying so). */
int ef_register_verify_command(void);

#endif

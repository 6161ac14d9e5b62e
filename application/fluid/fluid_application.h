/* fluid_application.h -- registration entry points of the fluid application's parts. */
#ifndef EF_FLUID_APPLICATION_H
#define EF_FLUID_APPLICATION_H

#include "edgeflow/ef_strategy.h"

int ef_application_register(void);

/* What both fluid strategies publish in their ops (fluid_model.c). */
extern const char ef_fluid_settings_defaults[];
extern const char *const ef_fluid_kratos_keys[];
int ef_fluid_add_variables(ef_model_part mp);
int ef_fluid_prepare(const ef_strategy_setup *setup, ef_strategy_config *config);

/* Processes: inlet, outlet, no-slip and slip (process_fluid_bc.c); forces (process_forces.c). */
int ef_register_fluid_bc_processes(void);
int ef_register_force_processes(void);

int ef_register_openmp_strategy(void);
#ifdef EF_HAVE_OPENCL
int ef_register_opencl_strategy(void);
int ef_register_opencl_commands(void);
#endif
/* Command "verify" (verify.c; without PETSc one that fails saying so). */
int ef_register_verify_command(void);

#endif

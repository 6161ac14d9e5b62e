/* amg_register.h -- registration of the preconditioner "amg", the flexible CG "fcg" and "amgcl"
 * (host: host/host_amg_register.c; device in OpenCL builds: opencl/opencl_amg_register.c;
 * what both share: amg_register.c); see docs/parameters.md. */
#ifndef EF_AMG_REGISTER_H
#define EF_AMG_REGISTER_H

#include "edgeflow/ef_linear_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const ef_preconditioner_ops ef_host_amg_ops; /* "amg", host */
extern const ef_linear_solver_ops ef_host_fcg_ops;  /* "fcg", host */
#ifdef EF_HAVE_OPENCL
extern const ef_preconditioner_ops ef_cl_amg_ops;   /* "amg", device */
extern const ef_linear_solver_ops ef_cl_fcg_ops;    /* "fcg", device */
/* The device (flexible) preconditioned CG with any device preconditioner, as the data of a
 * linear solver ("fcg", and "cg" with a preconditioner other than "jacobi"). */
int ef_cl_pcg_solver_create(const ef_linear_solver_common *common, const ef_matrix *A, ef_preconditioner *pc,
                            int flexible, void **out);
int ef_cl_pcg_solver_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res);
void ef_cl_pcg_solver_destroy(void **data);
/* Several ranks: "exchange_seconds" (the solver's halo exchanges and reductions) into report. */
int ef_cl_pcg_solver_view(void *data, ef_parameters report);
/* Restart state: the aggregate maps when the preconditioner is "amg". */
int ef_cl_pcg_solver_save_state(void *data, ef_restart_writer *w);
int ef_cl_pcg_solver_load_state(void *data, ef_restart_reader *r);
#endif
extern const ef_linear_solver_ops ef_host_amgcl_ops; /* "amgcl" (Kratos' keys), host */
#ifdef EF_HAVE_OPENCL
extern const ef_linear_solver_ops ef_cl_amgcl_ops;   /* "amgcl", device */
#endif

/* Add the host tables above to the registry (ef_registry_add_preconditioner / _linear_solver). */
int ef_register_amg(void);
#ifdef EF_HAVE_OPENCL
/* The same for the device tables. */
int ef_register_opencl_amg(void);
#endif

#ifdef __cplusplus
}
#endif
#endif

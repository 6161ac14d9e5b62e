/* amg_register.h -- registration of the preconditioner "amg" and the flexible CG "fcg" (host,
 * and device in OpenCL builds); see amg_register.c and docs/parameters.md. */
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
#endif

/* Add the tables above to the registry (ef_registry_add_preconditioner / _linear_solver). */
int ef_register_amg(void);

#ifdef __cplusplus
}
#endif
#endif

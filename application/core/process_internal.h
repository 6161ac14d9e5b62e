/* process_internal.h -- what the core's process files share beyond the public
 * ef_process_tools.h (not installed). */
#ifndef EF_PROCESS_INTERNAL_H
#define EF_PROCESS_INTERNAL_H

#include "edgeflow/ef_process_tools.h"

/* 1 for the variables the strategy solves for (fixity means something). */
int ef_is_solution_variable(const char *name);

/* Ops tables defined by the process files. */
extern const ef_process_ops ef_assign_scalar_variable_process_ops;
extern const ef_process_ops ef_assign_vector_variable_process_ops;
extern const ef_process_ops ef_assign_vector_by_direction_process_ops;
extern const ef_process_ops ef_vtk_output_process_ops;
extern const ef_process_ops ef_probes_output_process_ops;

#endif

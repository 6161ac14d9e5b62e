/* ef_registry.h -- components registered by name (libCEED/PETSc style).
 *
 * The core registers its processes; an application (a plugin,
 * libedgeflow_<name>.so) registers strategies, linear solvers, preconditioners, processes
 * and commands when it is loaded with ef_registry_load_application().  Asking for an unknown name is
 * an error that lists the registered ones.
 */
#ifndef EF_REGISTRY_H
#define EF_REGISTRY_H

#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_process.h"
#include "edgeflow/ef_strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

int ef_registry_add_strategy(const ef_strategy_ops *ops);
int ef_registry_find_strategy(const char *name, const ef_strategy_ops **ops);
/* Linear solvers and preconditioners: ef_linear_solver.h. */
int ef_registry_add_process(const ef_process_ops *ops);
/* NULL (and no error recorded) when absent. */
const ef_process_ops *ef_registry_lookup_process(const char *name);
/* Sub-commands of the `edgeflow` program an application provides ("devices", "verify"). */
typedef int (*ef_command_fn)(int argc, char **argv);
typedef struct {
  const char *name;
  const char *help; /* one line */
  ef_command_fn run;
} ef_command_ops;
int ef_registry_add_command(const ef_command_ops *ops);
/* NULL when absent. */
const ef_command_ops *ef_registry_lookup_command(const char *name);

/* Comma-separated registered names of a kind ("strategy", "linear_solver", "preconditioner",
 * "process", "command"); solvers and preconditioners as "name (host|device)". */
const char *ef_registry_list(const char *kind, char *buffer, size_t size);

/* Load application `name` (libedgeflow_<name>.so) from $EDGEFLOW_PLUGIN_DIR, the
 * build's library folder, or the folder of libedgeflow_core, and call its
 * ef_application_register().  Loading twice is a no-op. */
int ef_registry_load_application(const char *name);

/* dlopen libedgeflow_<name>.so from the same folders (RTLD_NOW | RTLD_GLOBAL) without registering
 * anything: for libraries the core calls by symbol (libedgeflow_mpi, ef_comm.h's ef_comm_world). */
int ef_registry_open_library(const char *name, void **handle);

/* Entry point every application library exports. */
typedef int (*ef_application_register_fn)(void);

#ifdef __cplusplus
}
#endif
#endif

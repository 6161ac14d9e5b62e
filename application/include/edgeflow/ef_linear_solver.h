/* ef_linear_solver.h -- linear solvers (Krylov methods) and preconditioners as tables of
 * operations, registered by name, on the host or on a device.
 *
 * linear_solver_settings selects them as Kratos does:
 *   {"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "max_iteration": 5000, ...}
 * A solver and a preconditioner of the same name may exist once per memory space (host and
 * device): a strategy asks for the ones of its own space.  The keys every solver shares
 * (EF_LINEAR_SOLVER_COMMON_DEFAULTS) are read once by ef_linear_solver_create; each solver and
 * preconditioner publishes the defaults of its own keys, and a key nobody owns is an error
 * naming the block and the key.
 *
 * Matrices and vectors carry their row layout: owned rows first, then ghost rows (received
 * only), and a communicator that is NULL on one process.  On several ranks (docs/mpi.md) a
 * host matrix holds this rank's owned rows, its columns index owned and ghost rows, and
 * global_row gives every local row its number in the global system; only solvers whose table
 * sets distributed accept such a matrix (ef_linear_solver_create refuses it for the others).
 *
 * The core stores and finds these tables and reads the shared keys; it never looks inside a
 * device handle (void * here: a cl_mem and the plugin's device context for OpenCL). */
#ifndef EF_LINEAR_SOLVER_H
#define EF_LINEAR_SOLVER_H

#include <stddef.h>
#include <stdint.h>

#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_restart.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one default relative tolerance and iteration limit of every linear solver (stated in
 * docs/parameters.md): the shared keys below and the settings structs of the solvers that are
 * also called directly (the fractional step's, the device CG's and PCG's) start from these. */
#define EF_DEFAULT_TOLERANCE 1e-8
#define EF_DEFAULT_MAX_ITERATION 5000

#define EF_LINEAR_SOLVER_STR_(x) #x
#define EF_LINEAR_SOLVER_STR(x) EF_LINEAR_SOLVER_STR_(x)

/* The keys every solver shares, with their defaults. */
#define EF_LINEAR_SOLVER_COMMON_DEFAULTS                                                               \
  "{\"solver_type\": \"cg\", \"preconditioner_type\": \"jacobi\", \"tolerance\": "                       \
  EF_LINEAR_SOLVER_STR(EF_DEFAULT_TOLERANCE) ", \"max_iteration\": " EF_LINEAR_SOLVER_STR(EF_DEFAULT_MAX_ITERATION) \
  ", \"verbosity\": 0, \"export_pressure_system\": \"\"}"

typedef enum { EF_MEMORY_HOST = 0, EF_MEMORY_DEVICE = 1 } ef_memory;

/* A communicator (MPI later); NULL: one process. */
typedef struct ef_comm_s *ef_comm;

/* Rows of a distributed matrix or vector on this process. */
typedef struct {
  int64_t n_owned; /* rows this process owns, numbered first */
  int64_t n_ghost; /* ghost rows after them: received, never updated (0 on one process) */
  ef_comm comm;    /* NULL on one process */
} ef_layout;

/* A square sparse matrix, CSR with the diagonal inside each row and sorted columns, rows in
 * the layout's order (columns index owned and ghost rows).  Host matrices fill the host_*
 * members; device matrices fill device (the backend's matrix handle, e.g. ef_cl_csr *) and
 * device_context (the backend's context, e.g. ef_cl_context *). */
typedef struct {
  ef_memory memory;
  ef_layout layout;
  int64_t nnz;
  int constant_null_space; /* 1: A 1 = 0 (no Dirichlet row); solvers work in 1-perp */
  /* host */
  const int64_t *row_ptr;   /* n + 1 */
  const int32_t *row_ptr32; /* the same as int32, or NULL when nnz >= 2^31 */
  const int32_t *col;
  const double *values;
  const int64_t *diag;      /* position of each row's diagonal, or NULL */
  /* Several ranks: the global row of every local row (n_owned + n_ghost entries); each rank's
   * owned rows are one contiguous block of the global numbering, the blocks in rank order, and
   * a ghost has its owner's number.  NULL on one process. */
  const int64_t *global_row;
  /* device */
  void *device;
  void *device_context;
} ef_matrix;

/* A vector of layout.n_owned + layout.n_ghost doubles on the host or on the device. */
typedef struct {
  ef_memory memory;
  ef_layout layout;
  double *host;  /* host vectors */
  void *device;  /* device vectors: the backend's buffer (a cl_mem for OpenCL) */
} ef_vector;

/* What one solve reports. */
typedef struct {
  int iterations;
  int converged;        /* the solver's stopping test was met within max_iteration */
  double residual;      /* the solver's own measure when it stopped (see its description) */
  double true_residual; /* ||b - A x||_2 / ||b||_2 of the system given, recomputed after the solve */
  double seconds;       /* wall time of the solve */
} ef_solve_result;

/* Settings every solver shares, read once from linear_solver_settings. */
typedef struct {
  const char *solver_type, *preconditioner_type;
  double tolerance;
  int max_iteration;
  int verbosity;
} ef_linear_solver_common;

struct ef_preconditioner_s;
/* A preconditioner instance (ef_preconditioner_create). */
typedef struct ef_preconditioner_s ef_preconditioner;

/* A preconditioner M ~ A: z = M^-1 r. */
typedef struct {
  const char *name; /* preconditioner_type */
  const char *description;
  ef_memory memory;
  /* JSON object of the keys it owns in linear_solver_settings, with defaults ("{}": none). */
  const char *defaults;
  /* settings: the whole linear_solver_settings block, already validated. */
  int (*create)(ef_parameters settings, const ef_matrix *A, void **data);
  /* A's values changed (same pattern): refresh what depends on them. */
  int (*setup)(void *data, const ef_matrix *A);
  /* z = M^-1 r (r and z distinct). */
  int (*apply)(void *data, const ef_vector *r, ef_vector *z);
  /* Settings and figures (levels, memory, timings) into an empty JSON object.  Optional. */
  int (*view)(void *data, ef_parameters report);
  void (*destroy)(void **data);
} ef_preconditioner_ops;

/* A Krylov method (or a direct or external solver) for A x = b. */
typedef struct {
  const char *name; /* solver_type */
  const char *description;
  ef_memory memory;
  const char *defaults; /* JSON of its own keys ("{}": none) */
  /* Create for A (pattern and size fixed from now on); pc may be NULL when the solver
   * preconditions by itself (then uses_preconditioner is 0). */
  int uses_preconditioner;
  /* With uses_preconditioner: the preconditioner_type the solver applies by itself (its fused
   * path; no instance is created and create gets pc NULL), or NULL. */
  const char *builtin_preconditioner;
  int (*create)(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                ef_preconditioner *pc, void **data);
  /* A's values changed (same pattern). */
  int (*setup)(void *data, const ef_matrix *A);
  /* Solve A x = b from the x given.  Fill result (iterations, converged, residual; the
   * true residual too where the solver has it, else leave it -1: for host systems
   * ef_linear_solver_solve then computes it).  Breakdown is an error; not converging within
   * max_iteration is reported through result->converged (host solvers may also fail then). */
  int (*solve)(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *result);
  int (*view)(void *data, ef_parameters report); /* optional */
  void (*destroy)(void **data);
  /* Optional: state chosen at run time that changes the rounding of later solves (a tuned
   * kernel configuration, a preconditioner's aggregates), for restart files. */
  int (*save_state)(void *data, ef_restart_writer *w);
  int (*load_state)(void *data, ef_restart_reader *r);
  /* 1: solves matrices spread over several ranks (layout.comm of more than one rank, global_row);
   * the vectors' owned entries are read and written, the ghosts left as they are.  0: one process only. */
  int distributed;
} ef_linear_solver_ops;

int ef_registry_add_linear_solver(const ef_linear_solver_ops *ops);
int ef_registry_add_preconditioner(const ef_preconditioner_ops *ops);
/* Lookups by name and memory space; an unknown name is an error listing the registered ones. */
int ef_registry_find_linear_solver(const char *name, ef_memory memory, const ef_linear_solver_ops **ops);
int ef_registry_find_preconditioner(const char *name, ef_memory memory, const ef_preconditioner_ops **ops);
/* Comma-separated names registered for memory. */
const char *ef_linear_solver_list(ef_memory memory, char *buffer, size_t size);
const char *ef_preconditioner_list(ef_memory memory, char *buffer, size_t size);

/* ---------------------------------------------------------------------------
 * Instances: what strategies use. */

typedef struct ef_linear_solver_s ef_linear_solver;

/* Validate linear_solver_settings (shared keys + the chosen solver's + the chosen
 * preconditioner's; anything else is an error naming the key), then create the
 * preconditioner (when the solver uses one) and the solver for A. */
int ef_linear_solver_create(ef_parameters settings, ef_memory memory, const ef_matrix *A, ef_linear_solver **out);
/* Only the validation of create (defaults filled in): for errors at load time, before any
 * matrix exists. */
int ef_linear_solver_validate(ef_parameters settings, ef_memory memory);
int ef_linear_solver_setup(ef_linear_solver *s, const ef_matrix *A);
int ef_linear_solver_solve(ef_linear_solver *s, const ef_vector *b, ef_vector *x, ef_solve_result *result);
ef_preconditioner *ef_linear_solver_preconditioner(const ef_linear_solver *s);
/* {"solver_type": ..., "preconditioner_type": ..., "solver": {...}, "preconditioner": {...}} */
int ef_linear_solver_view(ef_linear_solver *s, ef_parameters report);
const ef_linear_solver_common *ef_linear_solver_settings(const ef_linear_solver *s);
/* The solver's private data (for backends that need their own extras, e.g. a tuning report). */
void *ef_linear_solver_data(const ef_linear_solver *s);
const ef_linear_solver_ops *ef_linear_solver_get_ops(const ef_linear_solver *s);
void ef_linear_solver_destroy(ef_linear_solver **s);
/* The solver's restart state into / out of the current section (nothing when it has none). */
int ef_linear_solver_save_state(ef_linear_solver *s, ef_restart_writer *w);
int ef_linear_solver_load_state(ef_linear_solver *s, ef_restart_reader *r);

/* Preconditioner instances (solvers call these; ef_linear_solver_create makes them). */
int ef_preconditioner_create(ef_parameters settings, const ef_preconditioner_ops *ops, const ef_matrix *A,
                             ef_preconditioner **out);
int ef_preconditioner_setup(ef_preconditioner *pc, const ef_matrix *A);
int ef_preconditioner_apply(ef_preconditioner *pc, const ef_vector *r, ef_vector *z);
const ef_preconditioner_ops *ef_preconditioner_get_ops(const ef_preconditioner *pc);
void *ef_preconditioner_data(const ef_preconditioner *pc);
void ef_preconditioner_destroy(ef_preconditioner **pc);

#ifdef __cplusplus
}
#endif
#endif

/* opencl_strategy.c -- strategy "opencl_edge_based": the edge-based fractional step with
 * the solution resident on an OpenCL device (custom_utilities/opencl_fs.h).  Same settings,
 * boundary handling and outputs as "openmp_edge_based"; results agree with it to rounding. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "edge_data.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"
#include "matrix_io.h"
#include "opencl_context.h"
#include "opencl_fs.h"
#include "opencl_fs_mpi.h"
#include "opencl_solvers.h"
#include "strategy_common.h"

/* solver_settings.device: platform substring (name or vendor), index among the matching
 * devices (-1: the first usable one), type default|gpu|cpu|any (default: first GPU with fp64,
 * else first CPU), verbose 0|1|2 (device, memory estimate and tuning lines; 2: every build),
 * work_group_bits 0 (automatic: 128 items) or 1..10 for the edge kernels, mpi_overlap (several ranks: the
 * pressure CG's halo exchange overlapped with the interior rows' product; false: exchange, then product),
 * mpi_fixed_cg_iterations (several ranks: 0, or every pressure solve runs exactly that many iterations),
 * stage_cg_groups (one process, implicit viscosity: 0, or the work-groups of the stage CG's vector kernels).
 * EDGEFLOW_OPENCL_DEVICE overrides the choice (opencl_context.h). */
#define EF_CL_DEVICE_DEFAULTS                                                                    \
  "{\"platform\": \"\", \"device_index\": -1, \"type\": \"default\", \"verbose\": 1," \
  " \"work_group_bits\": 0, \"mpi_overlap\": true, \"mpi_fixed_cg_iterations\": 0, \"stage_cg_groups\": 0}"

/* Variables a host change of which makes the strategy upload state or boundary arrays. */
static const char *const ef_cl_bc_variables[] = {"IS_SLIP", "NORMAL", "SLIP_TANGENT", "BODY_FORCE"};

typedef struct {
  ef_strategy_config config;
  ef_model_part mp;
  ef_edge_data edges;
  ef_fs_settings settings;
  ef_fs_dt_settings dt_settings;
  ef_bc_arrays bc;
  ef_parameters solver_settings;      /* linear_solver_settings, validated in create */
  const char *export_pressure_system; /* "" or a file for the last pressure system */
  ef_linear_solver *solver;           /* the pressure solver, from the registry (device memory) */
  ef_cl_settings device;
  int work_group_bits;
  int mpi_overlap;          /* device.mpi_overlap (opencl_fs_mpi.h) */
  long mpi_fixed_iterations; /* device.mpi_fixed_cg_iterations */
  long stage_cg_groups;      /* device.stage_cg_groups (ef_cl_fs_settings) */
  char platform[256];
  ef_cl_context *ctx;
  ef_cl_fs *fs;
  ef_cl_fs_mpi *fs_mpi; /* MPI: on a rank's piece (config.partition), the step runs here (opencl_fs_mpi.h) */
  /* MPI with the device AMG (solver above, opencl_amg_mpi.h): H's owned rows as the solver's matrix and the
   * global row of every local row. */
  ef_cl_csr mpi_H;
  ef_matrix mpi_A;
  int64_t *mpi_global_row;
  int mpi_solver_set_up; /* the registry solver's first set-up is done (timed apart) */
  double *scratch; /* n: pressure conversions */
  ef_variable *velocity_var, *pressure_var, *reaction_var;
  ef_divergence_bound divergence;
  long steps, iterations;
  /* Implicit viscosity: the stage solves' read-back interval and run totals (as the OpenMP strategy's). */
  int viscous_check_every, viscous_max_stage_iterations;
  long viscous_iterations;
  long projection_iterations; /* implicit_viscosity.projection "converged": PCG iterations of all steps */
  double viscous_max_residual, t_viscous;
  int ev_viscous;
  double pending_download; /* GPU->CPU seconds since the last step's report */
  double pending_upload;   /* CPU->GPU seconds of compute_time_step, reported with the step */
  /* Run totals of the Table-5 phases. */
  double t_upload, t_step1, t_step2, t_step3, t_download, t_assembly, t_solve;
  long n_downloads;
  int ev_build, ev_ahead, ev_context, ev_buffers, ev_solver, ev_upload, ev_step1, ev_step2, ev_assembly, ev_solve, ev_step3, ev_download, ev_snapshot;
  /* Asynchronous output snapshots (the model part's snapshot hooks).  snap_busy[slot] is guarded by
   * snap_lock: set by begin (main thread), cleared by wait (the output writer thread), which is
   * the only thread to touch the slot's snap_dest and its ef_cl_fs buffers in between. */
  pthread_mutex_t snap_lock;
  pthread_cond_t snap_free;
  int snap_busy[EF_CL_FS_SNAPSHOTS];
  double *snap_dest[EF_CL_FS_SNAPSHOTS][3]; /* the caller's velocity, pressure, reaction (NULL: not asked) */
} ef_opencl_strategy;

/* Wait until no snapshot is in flight (its waiter is the output writer, which outlives us). */
static void ef_opencl_snapshots_settle(ef_opencl_strategy *s) {
  pthread_mutex_lock(&s->snap_lock);
  for (int i = 0; i < EF_CL_FS_SNAPSHOTS; i++)
    while (s->snap_busy[i]) pthread_cond_wait(&s->snap_free, &s->snap_lock);
  pthread_mutex_unlock(&s->snap_lock);
}

/* Bring device values home, drop the hooks, release executor, context and host arrays. */
static void ef_opencl_destroy(void **p) {
  if (!p || !*p) return;
  ef_opencl_strategy *s = *p;
  ef_opencl_snapshots_settle(s);
  if (s->mp && s->mp->device.context == s) {
    /* Bring the last values home while the device is still there; nothing to report if it fails. */
    if (s->mp->device_newer && ef_model_part_sync_to_host(s->mp)) ef_error_clear();
    s->mp->device.context = NULL;
    s->mp->device.sync_to_host = NULL;
    s->mp->device.snapshot_begin = NULL;
    s->mp->device.snapshot_wait = NULL;
    s->mp->device_newer = 0;
  }
  ef_cl_fs_mpi_destroy(&s->fs_mpi); /* MPI */
  ef_cl_fs_destroy(&s->fs);
  ef_linear_solver_destroy(&s->solver);
  free(s->mpi_global_row);
  ef_cl_context_destroy(&s->ctx);
  ef_edge_data_free(&s->edges);
  ef_bc_arrays_free(&s->bc);
  free(s->scratch);
  pthread_cond_destroy(&s->snap_free);
  pthread_mutex_destroy(&s->snap_lock);
  free(s);
  *p = NULL;
}

/* solver_settings.device into the context layer's settings. */
static int ef_opencl_read_device(ef_opencl_strategy *s, ef_parameters settings) {
  ef_parameters dev;
  const char *platform, *type;
  long index, verbose, wg_bits;
  EF_CALL(ef_parameters_get(settings, "device", &dev));
  EF_CALL(ef_parameters_validate_defaults(dev, EF_CL_DEVICE_DEFAULTS));
  EF_CALL(ef_parameters_get_string(dev, "platform", &platform));
  EF_CALL(ef_parameters_get_int(dev, "device_index", &index));
  EF_CALL(ef_parameters_get_string(dev, "type", &type));
  EF_CALL(ef_parameters_get_int(dev, "verbose", &verbose));
  EF_CALL(ef_parameters_get_int(dev, "work_group_bits", &wg_bits));
  EF_CALL(ef_parameters_get_bool(dev, "mpi_overlap", &s->mpi_overlap));
  EF_CALL(ef_parameters_get_int(dev, "mpi_fixed_cg_iterations", &s->mpi_fixed_iterations));
  EF_CHECK(s->mpi_fixed_iterations >= 0 && s->mpi_fixed_iterations <= 1000000, EF_ERR_PARAMETER,
           "%s.mpi_fixed_cg_iterations must be 0 (the tolerance decides) or 1..1000000", ef_parameters_path(dev));
  EF_CHECK(wg_bits >= 0 && wg_bits <= 10, EF_ERR_PARAMETER, "%s.work_group_bits must be 0 (automatic) or 1..10",
           ef_parameters_path(dev));
  EF_CALL(ef_parameters_get_int(dev, "stage_cg_groups", &s->stage_cg_groups));
  EF_CHECK(s->stage_cg_groups >= 0 && s->stage_cg_groups <= 1000000000L, EF_ERR_PARAMETER,
           "%s.stage_cg_groups must be 0 (automatic) or 1..1000000000, got %ld", ef_parameters_path(dev),
           s->stage_cg_groups);
  s->work_group_bits = (int)wg_bits;
  ef_cl_settings_default(&s->device);
  EF_CHECK(index >= -1 && index < 1024, EF_ERR_PARAMETER, "%s.device_index must be -1 (first usable) or 0..1023",
           ef_parameters_path(dev));
  EF_CHECK(verbose >= 0 && verbose <= 2, EF_ERR_PARAMETER, "%s.verbose must be 0, 1 or 2", ef_parameters_path(dev));
  if (!strcmp(type, "default"))
    s->device.type = EF_CL_DEVICE_DEFAULT;
  else if (!strcmp(type, "gpu"))
    s->device.type = EF_CL_DEVICE_GPU;
  else if (!strcmp(type, "cpu"))
    s->device.type = EF_CL_DEVICE_CPU;
  else if (!strcmp(type, "any"))
    s->device.type = EF_CL_DEVICE_ANY;
  else
    return EF_ERROR(EF_ERR_PARAMETER, "%s.type is '%s', expected \"default\", \"gpu\", \"cpu\" or \"any\"",
                    ef_parameters_path(dev), type);
  snprintf(s->platform, sizeof s->platform, "%s", platform);
  s->device.platform = s->platform[0] ? s->platform : NULL;
  s->device.device_index = (int)index;
  s->device.verbose = (int)verbose;
  return EF_SUCCESS;
}

/* MPI: the pressure goes to the registry's device AMG (F)CG ("fcg" or "cg" with "amg", "amgcl"), not to the
 * distributed step's Jacobi CG. */
static int ef_opencl_mpi_amg(const ef_opencl_strategy *s) {
  const char *solver, *pc;
  if (ef_parameters_get_string(s->solver_settings, "solver_type", &solver) ||
      ef_parameters_get_string(s->solver_settings, "preconditioner_type", &pc)) {
    ef_error_clear();
    return 0;
  }
  return !strcmp(solver, "amgcl") || ((!strcmp(solver, "fcg") || !strcmp(solver, "cg")) && !strcmp(pc, "amg"));
}

/* MPI: what runs across ranks (the rest is refused with its message, docs/mpi.md). */
static int ef_opencl_check_mpi(const ef_opencl_strategy *s) {
  const char *solver, *pc;
  EF_CALL(ef_parameters_get_string(s->solver_settings, "solver_type", &solver));
  EF_CALL(ef_parameters_get_string(s->solver_settings, "preconditioner_type", &pc));
  EF_CHECK((!strcmp(solver, "cg") && !strcmp(pc, "jacobi")) || ef_opencl_mpi_amg(s), EF_ERR_UNSUPPORTED,
           "opencl_edge_based on several ranks: linear_solver_settings asks for solver_type '%s' with "
           "preconditioner_type '%s'; on this strategy \"cg\" with \"jacobi\", \"fcg\" or \"cg\" with \"amg\" and "
           "\"amgcl\" run across ranks; \"petsc\" runs across ranks on openmp_edge_based (docs/mpi.md)",
           solver, pc);
  EF_CHECK(!s->export_pressure_system || !s->export_pressure_system[0], EF_ERR_UNSUPPORTED,
           "opencl_edge_based on several ranks: export_pressure_system is not supported (docs/mpi.md)");
  EF_CHECK(!s->settings.viscous_implicit || (s->settings.viscous_correction == 0 && s->settings.viscous_pressure == 0 &&
                                              s->settings.viscous_projection == 0),
           EF_ERR_UNSUPPORTED, EF_CL_FS_MPI_IMPLICIT_REFUSAL);
  EF_CHECK(s->settings.pressure_guess == 0, EF_ERR_UNSUPPORTED,
           "opencl_edge_based on several ranks: pressure_initial_guess \"linear\" and \"quadratic\" run on one rank "
           "only; use \"previous\" or \"auto\" (docs/mpi.md)");
  return EF_SUCCESS;
}

/* MPI: with device_index -1, the rank's device by its local rank (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or
 * SLURM_LOCALID) modulo the devices; a device_index in the case is kept. */
static void ef_opencl_device_by_local_rank(ef_opencl_strategy *s) {
  if (s->device.device_index >= 0) return;
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
  const char *v = NULL;
  for (int i = 0; i < 3 && !v; ++i) v = getenv(names[i]);
  int count = 0;
  if (!v || ef_cl_count_devices(&count) || count < 1) {
    ef_error_clear();
    return;
  }
  s->device.device_index = (int)(strtol(v, NULL, 10) % count);
}

/* The most host memory initialize spends on edge records computed while the device context is made (the 3D
 * cavity's level 2 has 349 MB of them). */
#define EF_RECORDS_AHEAD_BYTES ((size_t)512 << 20)

/* The device context begin_setup starts on a thread while the analysis reads the mesh (creating it
 * costs 0.25-0.9 s on an H100: the platforms' and the driver's initialisation), taken over by the next
 * initialize whose device settings are the same; any other initialize discards it.  One at a time.
 * While it runs, the calling thread's OpenMP loops (the mesh's refinement, check and renumbering, the
 * edge data) use one thread fewer than the cores: with all of them, the loops' barriers waited for
 * threads the driver's thread had displaced, and those phases took 5-10x longer than alone (H200
 * host, 16 cores: refinement 0.10-0.19 s against 0.018-0.023 s with 15 threads, the renumbering
 * 0.08-0.14 against 0.017-0.025 s, Initialize 0.53-0.56 against 0.45-0.48 s). */
static struct {
  pthread_mutex_t lock;
  int pending;     /* a thread was started and not joined */
  int omp_threads; /* the calling thread's OpenMP thread count before it started (0: unchanged) */
  atomic_int done; /* the thread has made (or failed to make) its context */
  pthread_t thread;
  ef_cl_settings device;
  char platform[256];
  ef_cl_context *ctx; /* the thread's result; NULL when it failed */
} ef_early = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *ef_early_main(void *arg) {
  (void)arg;
  if (ef_cl_context_create(&ef_early.device, &ef_early.ctx)) {
    ef_early.ctx = NULL;
    ef_error_clear(); /* initialize creates it again and reports why */
  }
  atomic_store(&ef_early.done, 1);
  return NULL;
}

/* Whether initialize has no more to wait for: no thread, or its context made (ef_edge_data_records_ahead's
 * stop test: the records computed while the driver initialises cost nothing). */
static int ef_early_ready(void *unused) {
  (void)unused;
  pthread_mutex_lock(&ef_early.lock);
  const int ready = !ef_early.pending || atomic_load(&ef_early.done);
  pthread_mutex_unlock(&ef_early.lock);
  return ready;
}

/* Join the thread; its context if it was made for `want` (NULL: discard it). */
static ef_cl_context *ef_early_take(const ef_cl_settings *want) {
  pthread_mutex_lock(&ef_early.lock);
  ef_cl_context *ctx = NULL;
  if (ef_early.pending) {
    pthread_join(ef_early.thread, NULL);
    ef_early.pending = 0;
#ifdef _OPENMP
    if (ef_early.omp_threads > 0) omp_set_num_threads(ef_early.omp_threads);
#endif
    ef_early.omp_threads = 0;
    ctx = ef_early.ctx;
    ef_early.ctx = NULL;
    const char *a = want ? want->platform : NULL, *b = ef_early.device.platform;
    if (ctx && (!want || want->device_index != ef_early.device.device_index || want->type != ef_early.device.type ||
                strcmp(a ? a : "", b ? b : "")))
      ef_cl_context_destroy(&ctx);
  }
  pthread_mutex_unlock(&ef_early.lock);
  return ctx;
}

/* At exit: no thread is left inside the OpenCL platform when the process ends. */
static void ef_early_settle(void) {
  pthread_mutex_lock(&ef_early.lock);
  if (ef_early.pending) pthread_join(ef_early.thread, NULL);
  ef_early.pending = 0;
  pthread_mutex_unlock(&ef_early.lock);
}

static void ef_early_register_settle(void) { atexit(ef_early_settle); }

static void ef_opencl_begin_setup(ef_parameters settings) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  ef_opencl_strategy *tmp = calloc(1, sizeof *tmp);
  if (!tmp) return;
  if (ef_opencl_read_device(tmp, settings)) { /* initialize reports it */
    ef_error_clear();
    free(tmp);
    return;
  }
  ef_cl_context *stale = ef_early_take(NULL);
  ef_cl_context_destroy(&stale);
  pthread_once(&once, ef_early_register_settle);
  pthread_mutex_lock(&ef_early.lock);
  ef_early.device = tmp->device;
  snprintf(ef_early.platform, sizeof ef_early.platform, "%s", tmp->platform);
  ef_early.device.platform = ef_early.platform[0] ? ef_early.platform : NULL;
  ef_early.device.verbose = 0; /* initialize announces it */
  ef_early.ctx = NULL;
  atomic_store(&ef_early.done, 0);
  ef_early.pending = pthread_create(&ef_early.thread, NULL, ef_early_main, NULL) == 0;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  if (ef_early.pending && threads > 1 && threads >= omp_get_num_procs()) { /* a core for the driver */
    ef_early.omp_threads = threads;
    omp_set_num_threads(threads - 1);
  }
#endif
  pthread_mutex_unlock(&ef_early.lock);
  free(tmp);
}

/* Settings (as the OpenMP strategy's, plus the device block); nothing touches the device yet. */
static int ef_opencl_create(const ef_strategy_config *config, void **out) {
  *out = NULL;
  ef_opencl_strategy *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "out of memory");
  pthread_mutex_init(&s->snap_lock, NULL);
  pthread_cond_init(&s->snap_free, NULL);
  int err = EF_SUCCESS;
  s->config = *config;
  s->mp = config->model_part;
  EF_CALL_GOTO(ef_strategy_read_settings(config, &s->settings, &s->dt_settings), fail);
  EF_CALL_GOTO(ef_divergence_bound_read(config, &s->divergence), fail);
  EF_CHECK_GOTO(!s->settings.viscous_implicit || !s->settings.viscous_pressure, EF_ERR_UNSUPPORTED, fail,
                "opencl_edge_based: implicit_viscosity.pressure \"extrapolated\" runs on the openmp_edge_based "
                "strategy only");
  EF_CHECK_GOTO(!s->settings.viscous_implicit || s->settings.nu > 0.0, EF_ERR_PARAMETER, fail,
                "opencl_edge_based: viscous_time_integration \"implicit\" needs a positive viscosity, got %g",
                s->settings.nu);
  /* implicit_viscosity.check_every: the device stage solves' convergence read-back interval. */
  s->viscous_check_every = 8;
  {
    ef_parameters iv;
    EF_CALL_GOTO(ef_parameters_get(config->settings, "implicit_viscosity", &iv), fail);
    if (ef_parameters_has(iv, "check_every")) {
      long every = 0;
      EF_CALL_GOTO(ef_parameters_get_int(iv, "check_every", &every), fail);
      EF_CHECK_GOTO(every >= 1 && every <= 1000, EF_ERR_PARAMETER, fail,
                    "solver_settings.implicit_viscosity.check_every must be 1..1000, got %ld", every);
      s->viscous_check_every = (int)every;
    }
  }
  /* Any registered device solver; its keys are checked now, its settings read when created. */
  EF_CALL_GOTO(ef_parameters_get(config->settings, "linear_solver_settings", &s->solver_settings), fail);
  EF_CALL_GOTO(ef_linear_solver_validate(s->solver_settings, EF_MEMORY_DEVICE), fail);
  EF_CALL_GOTO(ef_parameters_get_string(s->solver_settings, "export_pressure_system", &s->export_pressure_system),
               fail);
  EF_CALL_GOTO(ef_opencl_read_device(s, config->settings), fail);
  if (config->partition) EF_CALL_GOTO(ef_opencl_check_mpi(s), fail); /* MPI */
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "VELOCITY", &s->velocity_var), fail);
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "PRESSURE", &s->pressure_var), fail);
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "REACTION", &s->reaction_var), fail);
  s->ev_build = ef_log_event("setup", "edge data build");
  s->ev_context = ef_log_event("setup", "device context");
  s->ev_ahead = ef_log_event("setup", "edge records computed while the device context is made");
  s->ev_buffers = ef_log_event("setup", "device executor (programs, buffers, upload)");
  s->ev_solver = ef_log_event("setup", "pressure solver (tuner, preconditioner)");
  s->ev_upload = ef_log_event("step", "0 CPU->GPU");
  s->ev_step1 = ef_log_event("step", s->settings.viscous_implicit ? "1 momentum (tau, projections, IMEX stages)"
                                                                  : "1 momentum (tau, projections, RK4)");
  if (s->settings.viscous_implicit) s->ev_viscous = ef_log_event("step", "1 viscous stage CG (wall)");
  s->ev_step2 = ef_log_event("step", "2 pressure (assembly + CG)");
  s->ev_assembly = ef_log_event("step", "2a pressure assembly");
  s->ev_solve = ef_log_event("step", "2b pressure CG");
  s->ev_step3 = ef_log_event("step", "3 correction");
  s->ev_download = ef_log_event("step", "4 GPU->CPU");
  s->ev_snapshot = ef_log_event("step", "4 GPU->CPU snapshot (enqueue; output)");
  *out = s;
  return EF_SUCCESS;
fail:
  ef_opencl_destroy((void **)&s);
  return err;
}

/* The device hook: velocity, physical pressure and REACTION (the force on the fluid,
 * -rho times the executor's reaction, as the OpenMP strategy) back to the model part. */
static int ef_opencl_sync_to_host(void *context, ef_model_part mp) {
  ef_opencl_strategy *s = context;
  const double t0 = ef_wtime();
  double *u = s->velocity_var->values, *p = s->pressure_var->values, *r = s->reaction_var->values;
  EF_CALL(ef_cl_fs_read(s->fs, u, p, r));
  const double rho = s->config.density;
  for (int64_t i = 0; i < mp->n_nodes; i++) p[i] *= rho;
  for (int64_t i = 0; i < 3 * mp->n_nodes; i++) r[i] *= -rho;
  const double dt = ef_wtime() - t0;
  ef_log_event_add(s->ev_download, dt);
  ef_log_event_add_bytes(s->ev_download, 56.0 * (double)mp->n_nodes);
  s->pending_download += dt;
  s->t_download += dt;
  s->n_downloads++;
  return EF_SUCCESS;
}

/* The snapshot hook (ef_model_part.h), main thread: take a free slot (waiting for the writer to
 * free one when both are in flight), copy velocity, pressure and reaction into it on the device and
 * start its read on the copy queue.  The ticket is the slot. */
static int ef_opencl_snapshot_begin(void *context, ef_model_part mp, int n, const char *const *names,
                                    double *const *dest, int *covered, long *ticket) {
  ef_opencl_strategy *s = context;
  (void)mp;
  const double t0 = ef_wtime();
  const ef_variable *vars[3] = {s->velocity_var, s->pressure_var, s->reaction_var};
  double *want[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      if (!strcmp(names[i], vars[k]->name)) {
        want[k] = dest[i];
        covered[i] = 1;
      }
  pthread_mutex_lock(&s->snap_lock);
  int slot = -1;
  for (;;) {
    for (int i = 0; i < EF_CL_FS_SNAPSHOTS && slot < 0; i++)
      if (!s->snap_busy[i]) slot = i;
    if (slot >= 0) break;
    pthread_cond_wait(&s->snap_free, &s->snap_lock);
  }
  s->snap_busy[slot] = 1;
  pthread_mutex_unlock(&s->snap_lock);
  memcpy(s->snap_dest[slot], want, sizeof want);
  int err = ef_cl_fs_snapshot_begin(s->fs, slot);
  if (err) {
    pthread_mutex_lock(&s->snap_lock);
    s->snap_busy[slot] = 0;
    pthread_cond_broadcast(&s->snap_free);
    pthread_mutex_unlock(&s->snap_lock);
    return err;
  }
  *ticket = slot;
  ef_log_event_add(s->ev_snapshot, ef_wtime() - t0);
  ef_log_event_add_bytes(s->ev_snapshot, 56.0 * (double)s->mp->n_nodes);
  return EF_SUCCESS;
}

/* The snapshot hook, output writer thread: wait for the slot's read, then the caller's arrays in
 * the model part's units (rho p and -rho times the reaction, as ef_opencl_sync_to_host). */
static int ef_opencl_snapshot_wait(void *context, long ticket) {
  ef_opencl_strategy *s = context;
  const int slot = (int)ticket;
  EF_CHECK(slot >= 0 && slot < EF_CL_FS_SNAPSHOTS, EF_ERR_INTERNAL, "snapshot ticket %ld is not a slot", ticket);
  const double *h;
  int err = ef_cl_fs_snapshot_wait(s->fs, slot, &h);
  if (!err) {
    const int64_t n = s->mp->n_nodes;
    const double rho = s->config.density;
    double **d = s->snap_dest[slot];
    if (d[0]) memcpy(d[0], h, 3 * (size_t)n * sizeof *h);
    if (d[1])
      for (int64_t i = 0; i < n; i++) d[1][i] = rho * h[3 * n + i];
    if (d[2])
      for (int64_t i = 0; i < 3 * n; i++) d[2][i] = -rho * h[4 * n + i];
  }
  pthread_mutex_lock(&s->snap_lock);
  s->snap_busy[slot] = 0;
  pthread_cond_broadcast(&s->snap_free);
  pthread_mutex_unlock(&s->snap_lock);
  return err;
}

/* Upload what the host changed since the last call (values and fixity of VELOCITY and
 * PRESSURE, slip data, body force); returns the seconds it took in *seconds. */
static int ef_opencl_upload_modified(ef_opencl_strategy *s, int all, double *seconds) {
  ef_model_part mp = s->mp;
  *seconds = 0.0;
  const int mv = ef_model_part_take_modified(mp, "VELOCITY");
  const int mpr = ef_model_part_take_modified(mp, "PRESSURE");
  int mbc = 0;
  for (size_t i = 0; i < sizeof ef_cl_bc_variables / sizeof ef_cl_bc_variables[0]; i++)
    mbc |= ef_model_part_take_modified(mp, ef_cl_bc_variables[i]);
  if (!all && !mv && !mpr && !mbc) return EF_SUCCESS;
  const double t0 = ef_wtime();
  EF_CALL(ef_bc_arrays_gather(&s->bc, mp));
  s->settings.velocity_fixed = s->bc.velocity_fixed;
  s->settings.pressure_fixed = s->bc.pressure_fixed;
  s->settings.slip_type = s->bc.slip_type;
  s->settings.slip_normal = s->bc.slip_normal;
  s->settings.slip_tangent = s->bc.slip_tangent;
  s->settings.body_force = s->bc.body_force;
  EF_CALL(ef_cl_fs_set_bc(s->fs, &s->settings));
  if (all || mv) EF_CALL(ef_cl_fs_set_state(s->fs, s->velocity_var->values, NULL));
  if (all || mpr) {
    const double inv_rho = 1.0 / s->config.density;
    for (int64_t i = 0; i < mp->n_nodes; i++) s->scratch[i] = s->pressure_var->values[i] * inv_rho;
    EF_CALL(ef_cl_fs_set_state(s->fs, NULL, s->scratch));
  }
  *seconds = ef_wtime() - t0;
  return EF_SUCCESS;
}

/* The pressure solver from the registry for the executor's device matrix (assembled from the
 * initial state: a solver may tune on it).  *spmv: its view's "spmv" block (the device CG's
 * tuned SpMV) as JSON for the run summary (malloc'ed), or NULL. */
static int ef_opencl_create_solver(ef_opencl_strategy *s, double dt, char **spmv_out) {
  *spmv_out = NULL;
  EF_CALL(ef_cl_fs_assemble_pressure(s->fs, dt));
  const ef_matrix A = ef_cl_matrix_wrap(ef_cl_fs_pressure_matrix(s->fs), s->ctx, s->bc.n_fixed_pressure == 0);
  EF_CALL(ef_linear_solver_create(s->solver_settings, EF_MEMORY_DEVICE, &A, &s->solver));
  ef_parameters view = NULL, solver;
  EF_CALL(ef_parameters_parse("{}", "<pressure solver view>", &view));
  double bytes = 0.0;
  char *spmv = NULL;
  int err = ef_linear_solver_view(s->solver, view);
  if (!err && ef_parameters_has(view, "solver") && !(err = ef_parameters_get(view, "solver", &solver))) {
    if (ef_parameters_has(solver, "bytes_per_iteration"))
      err = ef_parameters_get_double(solver, "bytes_per_iteration", &bytes);
    ef_parameters block;
    if (!err && ef_parameters_has(solver, "spmv") && !(err = ef_parameters_get(solver, "spmv", &block))) {
      spmv = ef_parameters_to_string(block, 0);
      if (!spmv) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    }
  }
  ef_parameters_destroy(&view);
  if (err) {
    free(spmv);
    return err;
  }
  ef_cl_fs_set_solver(s->fs, s->solver, bytes);
  *spmv_out = spmv;
  return EF_SUCCESS;
}

/* MPI: the pressure solve of the distributed step by the registry solver (ef_cl_fs_mpi_pressure_fn): its
 * device AMG refreshed from H's new values, then the (F)CG on the owned rows. */
static int ef_opencl_mpi_pressure(void *ctx, cl_mem b, cl_mem x, int null_space, int *iterations, double *residual,
                                  double *setup_seconds) {
  ef_opencl_strategy *s = ctx;
  EF_CHECK(null_space == s->mpi_A.constant_null_space, EF_ERR_PARAMETER,
           "opencl_edge_based on several ranks: the pressure's null space changed since the AMG solver was made (a "
           "fixed pressure %s)", null_space ? "went away" : "appeared");
  /* The first set-up builds the hierarchy (on the host, then uploaded): timed apart, as on one process. */
  const double t0 = ef_wtime();
  EF_CALL(ef_linear_solver_setup(s->solver, &s->mpi_A));
  *setup_seconds = ef_wtime() - t0;
  if (!s->mpi_solver_set_up) {
    ef_log_event_add(ef_log_event("setup", "pressure solver set-up (first step)"), *setup_seconds);
    s->mpi_solver_set_up = 1;
  }
  ef_vector bv = {EF_MEMORY_DEVICE, s->mpi_A.layout, NULL, (void *)b};
  ef_vector xv = {EF_MEMORY_DEVICE, s->mpi_A.layout, NULL, (void *)x};
  ef_solve_result r;
  EF_CALL(ef_linear_solver_solve(s->solver, &bv, &xv, &r));
  *iterations = r.iterations;
  *residual = r.residual;
  return EF_SUCCESS;
}

/* MPI: the registry solver of linear_solver_settings on H's owned rows (owned and ghost columns, global rows:
 * each rank's owned rows one block in rank order, a ghost its owner's number), handed to the distributed step. */
static int ef_opencl_mpi_solver(ef_opencl_strategy *s) {
  const ef_partition *p = s->config.partition;
  ef_comm comm = s->config.comm;
  const int rank = ef_comm_rank(comm), size = ef_comm_size(comm);
  const int64_t n = p->n_nodes, no = p->n_owned;
  int64_t hn = 0;
  const int64_t *rp = NULL;
  const int32_t *col = NULL;
  ef_cl_fs_matrix_structure(s->fs, &hn, NULL, &rp, &col);
  EF_CHECK(hn == n && rp && col, EF_ERR_INTERNAL, "opencl_edge_based on several ranks: no host copy of H's pattern");
  double *count = calloc((size_t)size, sizeof *count), *g = malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
  s->mpi_global_row = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->mpi_global_row);
  ef_halo halo = NULL;
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(count && g && s->mpi_global_row, EF_ERR_MEMORY, done, "out of memory");
  count[rank] = (double)no;
  double fixed = s->bc.n_fixed_pressure > 0 ? 1.0 : 0.0; /* any rank: no null space */
  EF_CALL_GOTO(ef_comm_allreduce(comm, count, size, EF_COMM_SUM), done);
  EF_CALL_GOTO(ef_comm_allreduce(comm, &fixed, 1, EF_COMM_MAX), done);
  int64_t first = 0;
  for (int r = 0; r < rank; ++r) first += (int64_t)count[r];
  for (int64_t i = 0; i < no; ++i) g[i] = (double)(first + i);
  EF_CALL_GOTO(ef_halo_create(comm, p, 1, &halo), done);
  EF_CALL_GOTO(ef_halo_exchange(halo, g, 1), done);
  for (int64_t i = 0; i < n; ++i) s->mpi_global_row[i] = (int64_t)g[i];
  s->mpi_H = *ef_cl_fs_pressure_matrix(s->fs);
  s->mpi_H.n = no;
  s->mpi_H.nnz = rp[no];
  s->mpi_A = (ef_matrix){.memory = EF_MEMORY_DEVICE, .layout = {no, n - no, comm}, .nnz = rp[no],
                         .constant_null_space = fixed == 0.0, .row_ptr = rp, .col = col,
                         .global_row = s->mpi_global_row, .device = (void *)&s->mpi_H,
                         .device_context = (void *)s->ctx};
  EF_CALL_GOTO(ef_linear_solver_create(s->solver_settings, EF_MEMORY_DEVICE, &s->mpi_A, &s->solver), done);
  ef_cl_fs_mpi_set_pressure_solver(s->fs_mpi, ef_opencl_mpi_pressure, s);
done:
  ef_halo_destroy(&halo);
  free(count);
  free(g);
  return err;
}

/* MPI: the device AMG solver's halo exchanges and reductions (its view's "exchange_seconds", the (F)CG's and the
 * preconditioner's) added to *seconds. */
static int ef_opencl_mpi_solver_exchange_seconds(ef_opencl_strategy *s, double *seconds) {
  ef_parameters view = NULL, part;
  EF_CALL(ef_parameters_parse("{}", "<pressure solver view>", &view));
  int err = ef_linear_solver_view(s->solver, view);
  const char *parts[] = {"solver", "preconditioner"};
  for (int i = 0; i < 2 && !err; ++i) {
    double t = 0.0;
    if (ef_parameters_has(view, parts[i]) && !(err = ef_parameters_get(view, parts[i], &part)) &&
        ef_parameters_has(part, "exchange_seconds") && !(err = ef_parameters_get_double(part, "exchange_seconds", &t)))
      *seconds += t;
  }
  ef_parameters_destroy(&view);
  return err;
}

/* Edge data, device, executor, one upload of everything, the pressure solver (a tuned device CG
 * by default) and the model part's hooks. */
static int ef_opencl_initialize(void *data) {
  ef_opencl_strategy *s = data;
  ef_model_part mp = s->mp;
  /* All but the records: ef_cl_fs_create computes those straight into its staging buffers (edge_data.h). */
  ef_log_event_begin(s->ev_build);
  EF_CALL(ef_edge_data_build_structure(mp->dim, mp->n_nodes, mp->coords, mp->n_elements, mp->nodes_per_element,
                                       mp->elements, &s->edges));
  ef_log_event_end(s->ev_build);
  if (!s->config.partition && !ef_early_ready(NULL)) { /* records while the device context is still being made */
    ef_log_event_begin(s->ev_ahead);
    EF_CALL(ef_edge_data_records_ahead(&s->edges, EF_RECORDS_AHEAD_BYTES, ef_early_ready, NULL));
    ef_log_event_end(s->ev_ahead);
  }
  EF_CALL(ef_bc_arrays_create(mp->n_nodes, &s->bc));
  EF_MALLOC(s->scratch, mp->n_nodes);
  if (s->config.time_dependent_bcs) {
    s->settings.eval_fixed = s->config.fixed_values;
    s->settings.eval_fixed_ctx = s->config.fixed_values_context;
  }
  if (s->config.partition) { /* MPI: the rank's device; a failure falls back to the first usable one */
    const int asked = s->device.device_index;
    ef_opencl_device_by_local_rank(s);
    if (s->device.device_index != asked && ef_cl_context_create(&s->device, &s->ctx)) {
      ef_error_clear();
      s->device.device_index = asked;
    }
  }
  ef_log_event_begin(s->ev_context);
  if (!s->ctx) { /* begin_setup's, when it was made for these settings */
    s->ctx = ef_early_take(&s->device);
    if (s->ctx) ef_cl_context_announce(s->ctx, s->device.verbose, s->device.log);
  }
  if (!s->ctx) EF_CALL(ef_cl_context_create(&s->device, &s->ctx));
  ef_log_event_end(s->ev_context);

  ef_cl_fs_settings os;
  ef_cl_fs_settings_default(&os);
  os.stage_cg_groups = s->stage_cg_groups;
  os.fs = s->settings;
  os.fs.velocity_bound = ef_divergence_bound_update(&s->divergence, mp, 1);
  if (s->config.partition) EF_CALL(ef_comm_allreduce(s->config.comm, &os.fs.velocity_bound, 1, EF_COMM_MAX));
  os.work_group_bits = s->work_group_bits;
  os.viscous_check_every = s->viscous_check_every;
  ef_log_event_begin(s->ev_buffers);
  EF_CALL(ef_cl_fs_create(s->ctx, &s->edges, &os, &s->fs));
  ef_edge_data_release_source(&s->edges); /* the records are on the device: the adjacency is not needed */
  double seconds;
  EF_CALL(ef_opencl_upload_modified(s, 1, &seconds));
  ef_log_event_end(s->ev_buffers);
  ef_log_event_begin(s->ev_solver);
  char *spmv = NULL;
  if (s->config.partition) { /* MPI: the distributed step and its device Jacobi CG, or the device AMG's (F)CG */
    double tolerance;
    long max_iteration;
    EF_CALL(ef_parameters_get_double(s->solver_settings, "tolerance", &tolerance));
    EF_CALL(ef_parameters_get_int(s->solver_settings, "max_iteration", &max_iteration));
    EF_CALL(ef_cl_fs_mpi_create(s->fs, s->config.comm, s->config.partition, tolerance, (int)max_iteration,
                                s->mpi_overlap, &s->fs_mpi));
    ef_cl_fs_mpi_set_fixed_iterations(s->fs_mpi, (int)s->mpi_fixed_iterations);
    if (ef_opencl_mpi_amg(s)) EF_CALL(ef_opencl_mpi_solver(s));
  } else {
    /* The solver (the CG's SpMV tuner) needs a real matrix: one from the initial state. */
    double dt;
    int reduced;
    EF_CALL(ef_cl_fs_compute_dt(s->fs, &s->dt_settings, &dt, NULL, &reduced));
    EF_CALL(ef_opencl_create_solver(s, dt, &spmv));
  }
  ef_log_event_end(s->ev_solver);
  mp->device.context = s;
  mp->device.sync_to_host = ef_opencl_sync_to_host;
  mp->device.snapshot_begin = ef_opencl_snapshot_begin;
  mp->device.snapshot_wait = ef_opencl_snapshot_wait;
  mp->device_newer = 0;

  const ef_cl_context *c = s->ctx;
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"%s\", \"platform\": \"%s\", \"driver\": \"%s\", \"compute_units\": %u,"
           " \"global_memory_bytes\": %.0f, \"memory_estimate_bytes\": %.0f, \"edge_blocks\": %d,"
           " \"directed_edges\": %lld, \"dimension\": %d, \"bytes_per_step_without_cg\": %.0f}",
           c->device_name, c->platform_name, c->driver_version, c->compute_units, (double)c->global_mem_bytes,
           (double)ef_cl_fs_memory_bytes(&s->edges), ef_cl_fs_blocks(s->fs), (long long)s->edges.n_edges,
           mp->dim, ef_cl_fs_bytes_per_step(s->fs, 0));
  int err = ef_parameters_set_json(s->config.summary, "device", json);
  if (!err && spmv) err = ef_parameters_set_json(s->config.summary, "spmv", spmv);
  free(spmv);
  EF_CALL(err);
  if (s->config.echo_level > 0)
    printf("opencl_edge_based: '%s', %lld directed edges in %d block(s), %.1f MB of edge data (%.1f MB on the host)\n",
           c->device_name, (long long)s->edges.n_edges, ef_cl_fs_blocks(s->fs),
           (ef_edge_data_bytes(&s->edges) + ef_edge_data_record_bytes(&s->edges)) / 1e6,
           ef_edge_data_bytes(&s->edges) / 1e6);
  return EF_SUCCESS;
}

/* The stable step of the device velocity (ef_fs_compute_dt's rules, warning once when cut). */
static int ef_opencl_compute_time_step(void *data, double *dt) {
  ef_opencl_strategy *s = data;
  double stable, seconds;
  int reduced = 0;
  /* Velocities the host set since the last step count, as on the host strategy. */
  EF_CALL(ef_opencl_upload_modified(s, 0, &seconds));
  s->pending_upload += seconds;
  if (s->fs_mpi) /* MPI */
    EF_CALL(ef_cl_fs_mpi_compute_dt(s->fs_mpi, &s->dt_settings, dt, &stable, &reduced));
  else
    EF_CALL(ef_cl_fs_compute_dt(s->fs, &s->dt_settings, dt, &stable, &reduced));
  s->dt_settings.dt_previous = *dt; /* the implicit option's growth limit (the automatic step, unclipped) */
  (void)stable;
  (void)reduced; /* the analysis warns once, with what it does about it */
  return EF_SUCCESS;
}

/* Host changes up, one device step, the Table-5 phases into info and the logs. */
/* The user's fixed time_step (0: automatic), which the analysis keeps as the unit of step counts. */
static int ef_opencl_fixed_time_step(void *data, double *dt) {
  const ef_opencl_strategy *s = data;
  *dt = s->dt_settings.fixed ? s->dt_settings.dt_fixed : 0.0;
  return EF_SUCCESS;
}

static int ef_opencl_solve_step(void *data, double t, double dt, ef_step_info *info) {
  ef_opencl_strategy *s = data;
  ef_model_part mp = s->mp;
  double upload;
  EF_CALL(ef_opencl_upload_modified(s, 0, &upload));
  double bound = ef_divergence_bound_update(&s->divergence, mp, 0);
  if (s->fs_mpi) EF_CALL(ef_comm_allreduce(s->config.comm, &bound, 1, EF_COMM_MAX)); /* MPI */
  ef_cl_fs_set_velocity_bound(s->fs, bound);
  ef_cl_fs_stats st;
  memset(&st, 0, sizeof st);
  int err = s->fs_mpi ? ef_cl_fs_mpi_step(s->fs_mpi, t, dt, &st) : ef_cl_fs_step(s->fs, t, dt, &st);
  if (err) return ef_divergence_bound_explain(ef_strategy_explain_node_error(err, mp), &s->divergence);
  mp->device_newer = 1;

  const double to_device = s->pending_upload + upload + st.seconds_upload;
  s->pending_upload = 0.0;
  ef_log_event_add(s->ev_upload, to_device);
  ef_log_event_add(s->ev_step1, st.seconds_step1);
  ef_log_event_add(s->ev_step2, st.seconds_step2);
  ef_log_event_add(s->ev_assembly, st.seconds_assembly);
  ef_log_event_add(s->ev_solve, st.seconds_solve);
  ef_log_event_add(s->ev_step3, st.seconds_step3);
  s->t_upload += to_device;
  s->t_step1 += st.seconds_step1;
  s->t_step2 += st.seconds_step2;
  s->t_step3 += st.seconds_step3;
  s->t_assembly += st.seconds_assembly;
  s->t_solve += st.seconds_solve;
  if (s->settings.viscous_implicit) {
    ef_log_event_add(s->ev_viscous, st.seconds_viscous);
    s->t_viscous += st.seconds_viscous;
    s->viscous_iterations += st.viscous_iterations;
    if (st.viscous_max_stage_iterations > s->viscous_max_stage_iterations)
      s->viscous_max_stage_iterations = st.viscous_max_stage_iterations;
    if (st.viscous_residual > s->viscous_max_residual) s->viscous_max_residual = st.viscous_residual;
    s->projection_iterations += st.projection_iterations;
  }
  info->pressure_iterations = st.cg_iterations;
  info->pressure_residual = st.cg_residual;
  info->seconds_momentum = st.seconds_step1;
  info->seconds_pressure = st.seconds_step2;
  info->seconds_correction = st.seconds_step3;
  info->seconds_transfer = to_device + s->pending_download;
  s->pending_download = 0.0;
  s->steps++;
  s->iterations += st.cg_iterations;
  return EF_SUCCESS;
}

/* The last pressure system to the host (ef_cl_fs_copy_pressure_system). */
static int ef_opencl_copy_pressure_system(void *data, ef_pressure_system *out) {
  ef_opencl_strategy *s = data;
  return ef_cl_fs_copy_pressure_system(s->fs, out);
}

/* MPI: every rank's host, device name and device_index setting into strategy.mpi.devices (rank order).  ef_comm
 * reduces doubles only, so the strings travel as byte codes, each rank's in its own block of one summed array
 * (P x 321 doubles, once at the end of the run). */
static int ef_opencl_summary_devices(ef_opencl_strategy *s) {
  enum { HOST = 64, NAME = 256, BLOCK = HOST + NAME + 1 };
  ef_comm comm = s->config.comm;
  const int size = ef_comm_size(comm), rank = ef_comm_rank(comm);
  double *codes = calloc((size_t)size * BLOCK, sizeof *codes);
  EF_CHECK(codes, EF_ERR_MEMORY, "out of memory");
  char host[HOST + 1] = "";
  if (gethostname(host, HOST)) host[0] = '\0';
  host[HOST] = '\0';
  double *mine = codes + (size_t)rank * BLOCK;
  for (int i = 0; i < HOST && host[i]; ++i) mine[i] = (unsigned char)host[i];
  const char *name = s->ctx ? s->ctx->device_name : "";
  for (int i = 0; i < NAME - 1 && name[i]; ++i) mine[HOST + i] = (unsigned char)name[i];
  mine[HOST + NAME] = s->device.device_index;
  int err = ef_comm_allreduce(comm, codes, size * BLOCK, EF_COMM_SUM);
  char *list = err ? NULL : malloc(4 * (size_t)size + 2);
  if (!err && !list) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  ef_parameters mpi = NULL, devices = NULL;
  if (!err) { /* [{}, {}, ...], then each object's members (set_string escapes the names) */
    size_t used = 0;
    list[used++] = '[';
    for (int r = 0; r < size; ++r) used += (size_t)sprintf(list + used, r ? ",{}" : "{}");
    list[used++] = ']';
    list[used] = '\0';
    err = ef_parameters_get(s->config.summary, "mpi", &mpi);
  }
  if (!err) err = ef_parameters_set_json(mpi, "devices", list);
  if (!err) err = ef_parameters_get(mpi, "devices", &devices);
  for (int r = 0; !err && r < size; ++r) {
    const double *b = codes + (size_t)r * BLOCK;
    char h[HOST + 1], n[NAME];
    int i;
    for (i = 0; i < HOST && b[i] > 0.0; ++i) h[i] = (char)(unsigned char)b[i];
    h[i] = '\0';
    for (i = 0; i < NAME - 1 && b[HOST + i] > 0.0; ++i) n[i] = (char)(unsigned char)b[HOST + i];
    n[i] = '\0';
    ef_parameters entry;
    err = ef_parameters_at(devices, r, &entry);
    if (!err) err = ef_parameters_set_string(entry, "host", h);
    if (!err) err = ef_parameters_set_string(entry, "name", n);
    if (!err) err = ef_parameters_set_double(entry, "device_index", b[HOST + NAME]);
  }
  free(list);
  free(codes);
  return err;
}

/* Export the last pressure system if asked; solver and phase totals into the run summary. */
static int ef_opencl_finalize(void *data) {
  ef_opencl_strategy *s = data;
  if (s->fs_mpi) { /* MPI: the exchange seconds (the device AMG solver's too), and the overlap's rows summed */
    double seconds = ef_cl_fs_mpi_exchange_seconds(s->fs_mpi);
    if (s->solver) EF_CALL(ef_opencl_mpi_solver_exchange_seconds(s, &seconds));
    EF_CALL(ef_fluid_summary_mpi(&s->config, seconds));
    EF_CALL(ef_opencl_summary_devices(s));
    int64_t rows[2];
    const int on = ef_cl_fs_mpi_overlap(s->fs_mpi, &rows[0], &rows[1]);
    double sum[2] = {(double)rows[0], (double)rows[1]};
    EF_CALL(ef_comm_allreduce(s->config.comm, sum, 2, EF_COMM_SUM));
    char json[160];
    snprintf(json, sizeof json, "{\"on\": %s, \"interior_rows\": %.0f, \"boundary_rows\": %.0f}", on ? "true" : "false",
             sum[0], sum[1]);
    EF_CALL(ef_parameters_set_json(s->config.summary, "mpi_overlap", json));
  }
  if (s->export_pressure_system && s->export_pressure_system[0] && s->fs && s->steps > 0) {
    ef_pressure_system ps;
    EF_CALL(ef_cl_fs_copy_pressure_system(s->fs, &ps));
    ef_csr_matrix A = {ps.n, ps.nnz, ps.row_ptr, ps.col, ps.values};
    int err = ef_linear_system_write(s->export_pressure_system, &A, ps.rhs, ps.solution);
    ef_pressure_system_free(&ps);
    EF_CALL(err);
  }
  const double steps = s->steps > 0 ? (double)s->steps : 1.0;
  const double its = s->iterations > 0 ? (double)s->iterations : 1.0;
  char json[1024];
  snprintf(json, sizeof json,
           "{\"steps\": %ld, \"cg_iterations\": %ld, \"cg_seconds\": %.6f, \"cg_us_per_iteration\": %.6g,"
           " \"iterations_per_step\": %.6g}",
           s->steps, s->iterations, s->t_solve, s->iterations ? 1e6 * s->t_solve / its : 0.0,
           (double)s->iterations / steps);
  EF_CALL(ef_parameters_set_json(s->config.summary, "pressure_solver", json));
  snprintf(json, sizeof json,
           "{\"steps\": %ld, \"total_seconds\": {\"cpu_to_gpu\": %.6f, \"step1\": %.6f, \"step2\": %.6f,"
           " \"step2_assembly\": %.6f, \"step2_cg\": %.6f, \"step3\": %.6f, \"gpu_to_cpu\": %.6f},"
           " \"seconds_per_step\": {\"cpu_to_gpu\": %.9g, \"step1\": %.9g, \"step2\": %.9g,"
           " \"step2_assembly\": %.9g, \"step2_cg\": %.9g, \"step3\": %.9g, \"gpu_to_cpu\": %.9g},"
           " \"downloads\": %ld, \"bytes_per_step\": %.0f}",
           s->steps, s->t_upload, s->t_step1, s->t_step2, s->t_assembly, s->t_solve, s->t_step3, s->t_download,
           s->t_upload / steps, s->t_step1 / steps, s->t_step2 / steps, s->t_assembly / steps, s->t_solve / steps,
           s->t_step3 / steps, s->t_download / steps, s->n_downloads,
           s->fs ? ef_cl_fs_bytes_per_step(s->fs, (int)lround((double)s->iterations / steps)) : 0.0);
  EF_CALL(ef_parameters_set_json(s->config.summary, "phases", json));
  if (s->settings.viscous_implicit) {
    char projection[64] = ""; /* the projection "converged": its PCG iterations */
    if (s->settings.viscous_projection)
      snprintf(projection, sizeof projection, ", \"projection_iterations\": %ld", s->projection_iterations);
    snprintf(json, sizeof json,
             "{\"scheme\": \"IMEX ARS(3,4,3)\", \"stage_solves\": %ld, \"cg_iterations\": %ld, "
             "\"max_stage_iterations\": %d, \"max_scaled_residual\": %.3e, \"tolerance\": %.3e, "
             "\"cg_seconds\": %.6f, \"check_every\": %d%s}",
             3 * s->steps, s->viscous_iterations, s->viscous_max_stage_iterations, s->viscous_max_residual,
             s->settings.viscous_rtol, s->t_viscous, s->viscous_check_every, projection);
    EF_CALL(ef_parameters_set_json(s->config.summary, "viscous_solver", json));
  }
  return EF_SUCCESS;
}

/* Restarts: the device's kinematic pressure (the model part holds rho p), the counters, the
 * device solver's SpMV configuration in its section.  On a rank's piece (MPI) the same records over the
 * piece, ghosts included (current after every step: the step ends with their halos); the distributed step
 * keeps nothing else between steps (its CG starts from p_n, which stage 3 copies, with beta = 0), and with its
 * Jacobi CG it has no registry solver, so no linear_solver section (with the device AMG the solver's section: the
 * owned rows' aggregate maps). */
static int ef_opencl_save_state(void *data, ef_restart_writer *w) {
  ef_opencl_strategy *s = data;
  EF_CALL(ef_cl_fs_read(s->fs, NULL, s->scratch, NULL));
  EF_CALL(ef_fluid_save_state(w, s->mp->n_nodes, s->scratch, 0.0, s->steps, s->iterations));
  EF_CALL(ef_restart_write_double(w, "velocity_scale", s->divergence.scale));
  EF_CALL(ef_restart_write_double(w, "dt_previous", s->dt_settings.dt_previous));
  if (s->settings.pressure_guess) { /* the guess's history, read back (the pressure it continues: scratch) */
    const int64_t n = s->mp->n_nodes;
    double *hist = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *hist);
    EF_CHECK(hist, EF_ERR_MEMORY, "opencl_edge_based: out of memory saving the pressure guess's history");
    ef_fs_pressure_history h;
    int err = ef_cl_fs_get_pressure_history(s->fs, hist, hist + n, &h);
    h.last = s->scratch;
    if (!err) err = ef_fluid_save_pressure_history(w, n, &h);
    free(hist);
    EF_CALL(err);
  }
  if (!s->solver) return EF_SUCCESS; /* MPI with the distributed Jacobi CG (opencl_fs_mpi.c) */
  EF_CALL(ef_restart_writer_section(w, "linear_solver"));
  return ef_linear_solver_save_state(s->solver, w);
}

/* Everything up (the analysis marked the nodal variables modified), then the exact pressure. */
static int ef_opencl_load_state(void *data, ef_restart_reader *r, int same_kind) {
  ef_opencl_strategy *s = data;
  double last_dt, seconds;
  EF_CALL(ef_opencl_upload_modified(s, 1, &seconds)); /* uses scratch for rho p / rho */
  EF_CALL(ef_fluid_load_state(r, s->mp->n_nodes, s->scratch, &last_dt, &s->steps, &s->iterations));
  EF_CALL(ef_cl_fs_set_state(s->fs, NULL, s->scratch));
  s->mp->device_newer = 0;
  if (ef_restart_count(r, "velocity_scale") == 1) EF_CALL(ef_restart_read_double(r, "velocity_scale", &s->divergence.scale));
  if (ef_restart_count(r, "dt_previous") == 1) EF_CALL(ef_restart_read_double(r, "dt_previous", &s->dt_settings.dt_previous));
  if (s->settings.pressure_guess) { /* the guess's history, where it continues the pressure just uploaded */
    const int64_t n = s->mp->n_nodes;
    double *hist = malloc(3 * (size_t)(n > 0 ? n : 1) * sizeof *hist);
    EF_CHECK(hist, EF_ERR_MEMORY, "opencl_edge_based: out of memory reading the pressure guess's history");
    ef_fs_pressure_history h;
    int err = ef_fluid_load_pressure_history(r, n, hist, hist + n, hist + 2 * n, &h);
    if (!err && h.levels > 0 && memcmp(h.last, s->scratch, (size_t)n * sizeof *s->scratch) == 0)
      err = ef_cl_fs_set_pressure_history(s->fs, &h);
    free(hist);
    EF_CALL(err);
  }
  if (same_kind && s->solver && ef_restart_reader_section(r, "linear_solver"))
    EF_CALL(ef_linear_solver_load_state(s->solver, r));
  return EF_SUCCESS;
}

/* The device and its driver: a restart elsewhere rounds differently. */
static const char *ef_opencl_where(void *data) {
  ef_opencl_strategy *s = data;
  static char where[768];
  snprintf(where, sizeof where, "%s, %s", s->ctx ? s->ctx->device_name : "", s->ctx ? s->ctx->driver_version : "");
  return where;
}

static const ef_strategy_ops ef_opencl_ops = {
    .name = "opencl_edge_based",
    .description = "edge-based fractional step on an OpenCL device (solution resident on the device)",
    .settings_defaults = ef_fluid_settings_defaults,
    .ignored_settings = ef_fluid_kratos_keys,
    .steady_state_variable = "VELOCITY",
    .begin_setup = ef_opencl_begin_setup,
    .renumbering = "morton", /* as fast a step as "rcm" on GPUs, in half the set-up time (docs/parameters.md) */
    .add_variables = ef_fluid_add_variables,
    .prepare = ef_fluid_prepare,
    .create = ef_opencl_create,
    .initialize = ef_opencl_initialize,
    .compute_time_step = ef_opencl_compute_time_step,
    .fixed_time_step = ef_opencl_fixed_time_step,
    .solve_step = ef_opencl_solve_step,
    .copy_pressure_system = ef_opencl_copy_pressure_system,
    .finalize = ef_opencl_finalize,
    .destroy = ef_opencl_destroy,
    .save_state = ef_opencl_save_state,
    .load_state = ef_opencl_load_state,
    .where = ef_opencl_where,
    .distributed = 1, /* MPI: explicit RK4 with cg + jacobi on a rank's piece (opencl_fs_mpi.h) */
};

/* Register "opencl_edge_based". */
int ef_register_opencl_strategy(void) { return ef_registry_add_strategy(&ef_opencl_ops); }

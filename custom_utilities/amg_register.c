/* amg_register.c -- the preconditioner "amg" (host and device) and the flexible CG "fcg" that
 * suits its K-cycle (host and device) as ef_linear_solver.h's tables; ef_register_amg adds
 * them to the registry.  The hierarchy is built at the first setup (the values may not be
 * assembled at create) and refreshed from the new values at every later setup.
 * Settings: the amg_* keys of docs/parameters.md ("AMG preconditioner"). */
#include "amg_register.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "edgeflow/ef_error.h"
#include "host_pcg.h"
#ifdef EF_HAVE_OPENCL
#include "opencl_amg.h"
#include "opencl_pcg.h"
#include "opencl_solvers.h"
#endif

#define EF_AMG_DEFAULTS                                                                                     \
  "{\"amg_max_levels\": 10, \"amg_coarse_enough\": 128, \"amg_aggregation_passes\": 3,"                     \
  " \"amg_strength\": 0.25, \"amg_coarse_strength\": 0.0, \"amg_smoother\": \"l1_jacobi\", \"amg_omega\": 1.3333333333333333,"            \
  " \"amg_sweeps\": 1, \"amg_cycle\": \"auto\", \"amg_small_rows\": 1024, \"amg_kcycle_levels\": 2, \"amg_over_correction\": 1.0}"

/* ef_amg_settings from linear_solver_settings (keys already validated against the defaults). */
static int amg_read_settings(ef_parameters p, ef_amg_settings *s) {
  ef_amg_settings_default(s);
  long v;
  const char *str;
  /* Integer keys and where they go (NULL: coarse_enough, an int64). */
  static const char *keys[] = {"amg_max_levels", "amg_coarse_enough", "amg_aggregation_passes", "amg_sweeps",
                               "amg_kcycle_levels", "amg_small_rows"};
  int *targets[] = {&s->max_levels, NULL, &s->passes, &s->sweeps, &s->kcycle_levels, NULL};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
    if (!ef_parameters_has(p, keys[k])) continue;
    EF_CALL(ef_parameters_get_int(p, keys[k], &v));
    if (targets[k]) *targets[k] = (int)v;
    else if (k == 1) s->coarse_enough = v;
    else s->small_rows = v;
  }
  if (ef_parameters_has(p, "amg_strength")) EF_CALL(ef_parameters_get_double(p, "amg_strength", &s->strength));
  if (ef_parameters_has(p, "amg_coarse_strength"))
    EF_CALL(ef_parameters_get_double(p, "amg_coarse_strength", &s->coarse_strength));
  if (ef_parameters_has(p, "amg_omega")) EF_CALL(ef_parameters_get_double(p, "amg_omega", &s->omega));
  if (ef_parameters_has(p, "amg_over_correction"))
    EF_CALL(ef_parameters_get_double(p, "amg_over_correction", &s->alpha));
  if (ef_parameters_has(p, "amg_smoother")) {
    EF_CALL(ef_parameters_get_string(p, "amg_smoother", &str));
    EF_CHECK(!strcmp(str, "l1_jacobi"), EF_ERR_PARAMETER, "%s.amg_smoother is '%s'; the one smoother is \"l1_jacobi\"",
             ef_parameters_path(p), str);
  }
  /* "auto": the K-cycle under the flexible CG ("fcg"), the symmetric V-cycle under any other
   * solver (plain CG needs a fixed SPD preconditioner). */
  const char *solver = "cg";
  if (ef_parameters_has(p, "solver_type")) EF_CALL(ef_parameters_get_string(p, "solver_type", &solver));
  const int flexible = !strcmp(solver, "fcg");
  s->cycle = flexible ? EF_AMG_CYCLE_K : EF_AMG_CYCLE_V;
  if (ef_parameters_has(p, "amg_cycle")) {
    EF_CALL(ef_parameters_get_string(p, "amg_cycle", &str));
    EF_CHECK(!strcmp(str, "V") || !strcmp(str, "K") || !strcmp(str, "auto"), EF_ERR_PARAMETER,
             "%s.amg_cycle is '%s'; use \"auto\", \"V\" (symmetric, plain CG) or \"K\" (flexible CG, solver_type "
             "\"fcg\")",
             ef_parameters_path(p), str);
    if (strcmp(str, "auto")) s->cycle = str[0] == 'V' ? EF_AMG_CYCLE_V : EF_AMG_CYCLE_K;
    EF_CHECK(flexible || s->cycle == EF_AMG_CYCLE_V, EF_ERR_PARAMETER,
             "%s.amg_cycle is \"K\" with solver_type '%s': the K-cycle varies from apply to apply and needs "
             "solver_type \"fcg\"",
             ef_parameters_path(p), solver);
  }
  return EF_SUCCESS;
}

/* The figures every view reports. */
static int amg_view_common(const ef_amg *h, ef_parameters report) {
  double hier = 0.0, fine = 0.0, work = 0.0, opc = 0.0;
  ef_amg_memory(h, &hier, &fine, &work, &opc);
  EF_CALL(ef_parameters_set_double(report, "levels", h->n_levels));
  EF_CALL(ef_parameters_set_double(report, "coarsest_rows", (double)h->nc));
  EF_CALL(ef_parameters_set_double(report, "operator_complexity", opc));
  EF_CALL(ef_parameters_set_double(report, "hierarchy_memory_ratio", hier / fine));
  EF_CALL(ef_parameters_set_double(report, "host_setup_seconds", h->setup_seconds));
  return EF_SUCCESS;
}

/* Aggregate maps read from a restart file: the next set-up builds the hierarchy from them
 * (the hierarchy of the run that saved it), so a restarted run rounds as the uninterrupted one. */
typedef struct {
  int n_maps; /* -1: none */
  int32_t *maps[32];
} amg_saved;

static void amg_saved_free(amg_saved *m) {
  for (int l = 0; l < 32; ++l) free(m->maps[l]), m->maps[l] = NULL;
  m->n_maps = -1;
}

/* Records "amg.levels" and "amg.agg<l>" (level l's map as int32 bytes) of hierarchy h. */
static int amg_save_maps(const ef_amg *h, ef_restart_writer *w) {
  if (!h) return EF_SUCCESS; /* never set up: nothing chosen yet */
  EF_CALL(ef_restart_write_int64(w, "amg.levels", h->n_levels - 1));
  for (int l = 0; l + 1 < h->n_levels; ++l) {
    char key[32];
    snprintf(key, sizeof key, "amg.agg%d", l);
    EF_CALL(ef_restart_write_bytes(w, key, h->lev[l].agg, h->lev[l].n * 4));
  }
  return EF_SUCCESS;
}

/* The maps of amg_save_maps into m (sizes checked when the hierarchy is built: level l's map
 * has the rows of level l, which the earlier maps fix). */
static int amg_load_maps(ef_restart_reader *r, amg_saved *m) {
  amg_saved_free(m);
  if (ef_restart_count(r, "amg.levels") < 0) return EF_SUCCESS;
  int64_t levels = 0;
  EF_CALL(ef_restart_read_int64(r, "amg.levels", &levels));
  EF_CHECK(levels >= 0 && levels < 32, EF_ERR_PARSE, "restart file '%s': %lld AMG levels", ef_restart_reader_path(r),
           (long long)levels);
  for (int l = 0; l < levels; ++l) {
    char key[32];
    snprintf(key, sizeof key, "amg.agg%d", l);
    const int64_t bytes = ef_restart_count(r, key);
    EF_CHECK(bytes > 0 && bytes % 4 == 0, EF_ERR_PARSE, "restart file '%s': AMG map %d missing or damaged",
             ef_restart_reader_path(r), l);
    m->maps[l] = malloc((size_t)bytes);
    EF_CHECK(m->maps[l], EF_ERR_MEMORY, "out of memory");
    EF_CALL(ef_restart_read_bytes(r, key, m->maps[l], bytes));
  }
  m->n_maps = (int)levels;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Host "amg". */

typedef struct {
  ef_amg_settings s;
  amg_saved saved;
  ef_amg *h;
} amg_host_pc;

static int amg_host_create(ef_parameters settings, const ef_matrix *A, void **out) {
  (void)A;
  *out = NULL;
  amg_host_pc *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory");
  p->saved.n_maps = -1;
  int err = amg_read_settings(settings, &p->s);
  if (err) {
    free(p);
    return err;
  }
  *out = p;
  return EF_SUCCESS;
}

static int amg_host_setup(void *data, const ef_matrix *A) {
  amg_host_pc *p = data;
  EF_CHECK(A && A->memory == EF_MEMORY_HOST && A->row_ptr && A->col && A->values, EF_ERR_PARAMETER,
           "amg (host): needs a host matrix");
  if (p->h) return ef_amg_refresh_host(p->h, A->values);
  ef_amg_matrix M = {A->layout.n_owned, A->nnz, A->row_ptr, A->col, A->values, A->constant_null_space};
  if (p->saved.n_maps >= 0) {
    int err = ef_amg_create_from_maps(&p->s, &M, p->saved.n_maps, p->saved.maps, &p->h);
    amg_saved_free(&p->saved);
    return err;
  }
  return ef_amg_create(&p->s, &M, &p->h);
}

static int amg_host_apply(void *data, const ef_vector *r, ef_vector *z) {
  amg_host_pc *p = data;
  EF_CHECK(p->h, EF_ERR_PARAMETER, "amg (host): apply before setup");
  return ef_amg_apply_host(p->h, r->host, z->host);
}

static int amg_host_view(void *data, ef_parameters report) {
  amg_host_pc *p = data;
  if (!p->h) return EF_SUCCESS;
  EF_CALL(amg_view_common(p->h, report));
  return ef_parameters_set_double(report, "refresh_seconds", p->h->refresh_seconds);
}

static void amg_host_destroy(void **data) {
  if (!data || !*data) return;
  amg_host_pc *p = *data;
  ef_amg_destroy(&p->h);
  amg_saved_free(&p->saved);
  free(p);
  *data = NULL;
}

const ef_preconditioner_ops ef_host_amg_ops = {
    .name = "amg",
    .description = "aggregation multigrid: pairwise aggregation on negative couplings, l1-Jacobi, V- or K-cycle "
                   "(OpenMP)",
    .memory = EF_MEMORY_HOST,
    .defaults = EF_AMG_DEFAULTS,
    .create = amg_host_create,
    .setup = amg_host_setup,
    .apply = amg_host_apply,
    .view = amg_host_view,
    .destroy = amg_host_destroy,
};

#ifdef EF_HAVE_OPENCL
typedef struct {
  ef_amg_settings s;
  amg_saved saved;
  ef_cl_amg *amg;
  const ef_cl_csr *A;
} amg_dev_pc;
#endif

/* Restart state of a solver's preconditioner when it is "amg" (host or device): its aggregate
 * maps (other preconditioners have none).  On load the hierarchy built so far is dropped; the
 * next set-up builds it from the maps. */
static int amg_pc_save_state(ef_preconditioner *pc, ef_restart_writer *w) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_host_amg_ops) return amg_save_maps(((amg_host_pc *)ef_preconditioner_data(pc))->h, w);
#ifdef EF_HAVE_OPENCL
  if (ops == &ef_cl_amg_ops) {
    const amg_dev_pc *p = ef_preconditioner_data(pc);
    return amg_save_maps(p->amg ? ef_cl_amg_host(p->amg) : NULL, w);
  }
#endif
  return EF_SUCCESS;
}

static int amg_pc_load_state(ef_preconditioner *pc, ef_restart_reader *r) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_host_amg_ops) {
    amg_host_pc *p = ef_preconditioner_data(pc);
    EF_CALL(amg_load_maps(r, &p->saved));
    if (p->saved.n_maps >= 0) ef_amg_destroy(&p->h);
  }
#ifdef EF_HAVE_OPENCL
  if (ops == &ef_cl_amg_ops) {
    amg_dev_pc *p = ef_preconditioner_data(pc);
    EF_CALL(amg_load_maps(r, &p->saved));
    if (p->saved.n_maps >= 0) ef_cl_amg_destroy(&p->amg);
  }
#endif
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Host "fcg": flexible CG with any host preconditioner. */

typedef struct {
  ef_linear_solver_common common;
  ef_preconditioner *pc;
  ef_csr A;
} fcg_host;

static int fcg_host_precond(void *ctx, const double *r, double *z) {
  fcg_host *f = ctx;
  ef_vector rv = {EF_MEMORY_HOST, {f->A.n, 0, NULL}, (double *)r, NULL};
  ef_vector zv = {EF_MEMORY_HOST, {f->A.n, 0, NULL}, z, NULL};
  return ef_preconditioner_apply(f->pc, &rv, &zv);
}

static int fcg_host_setup(void *data, const ef_matrix *A) {
  fcg_host *f = data;
  ef_csr c = {A->layout.n_owned, A->nnz, A->row_ptr, A->row_ptr32, A->col, A->values, A->diag,
              A->constant_null_space};
  f->A = c;
  return EF_SUCCESS;
}

static int fcg_host_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                           ef_preconditioner *pc, void **out) {
  (void)settings;
  *out = NULL;
  EF_CHECK(pc, EF_ERR_PARAMETER, "fcg (host): needs a preconditioner");
  fcg_host *f = calloc(1, sizeof *f);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory");
  f->common = *common;
  f->pc = pc;
  fcg_host_setup(f, A);
  *out = f;
  return EF_SUCCESS;
}

static int fcg_host_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  fcg_host *f = data;
  ef_host_pcg_settings s = {f->common.tolerance, f->common.max_iteration, 1};
  ef_host_pcg_result r;
  EF_CALL(ef_host_pcg_solve(&f->A, fcg_host_precond, f, &s, b->host, x->host, &r));
  res->iterations = r.iterations;
  res->converged = r.converged;
  res->residual = r.relres;
  EF_CHECK(r.converged, EF_ERR_SOLVER, "fcg (host): no convergence in %d iterations (relative residual %.3e > %.3e)",
           r.iterations, r.relres, f->common.tolerance);
  return EF_SUCCESS;
}

static int fcg_host_save_state(void *data, ef_restart_writer *w) { return amg_pc_save_state(((fcg_host *)data)->pc, w); }
static int fcg_host_load_state(void *data, ef_restart_reader *r) { return amg_pc_load_state(((fcg_host *)data)->pc, r); }

static void fcg_host_destroy(void **data) {
  if (!data) return;
  free(*data);
  *data = NULL;
}

const ef_linear_solver_ops ef_host_fcg_ops = {
    .name = "fcg",
    .description = "flexible conjugate gradient (Polak-Ribiere beta) with any preconditioner; stops on "
                   "||b - A x|| / ||b|| (OpenMP, deterministic)",
    .memory = EF_MEMORY_HOST,
    .defaults = "{}",
    .uses_preconditioner = 1,
    .create = fcg_host_create,
    .setup = fcg_host_setup,
    .solve = fcg_host_solve,
    .destroy = fcg_host_destroy,
    .save_state = fcg_host_save_state,
    .load_state = fcg_host_load_state,
};

#ifdef EF_HAVE_OPENCL
/* ---------------------------------------------------------------------------
 * Device "amg". */


static int amg_dev_create(ef_parameters settings, const ef_matrix *A, void **out) {
  *out = NULL;
  EF_CHECK(ef_cl_matrix_csr(A) && ef_cl_matrix_context(A), EF_ERR_PARAMETER,
           "amg (device): needs a device matrix and its OpenCL context");
  amg_dev_pc *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory");
  p->saved.n_maps = -1;
  int err = amg_read_settings(settings, &p->s);
  if (err) {
    free(p);
    return err;
  }
  *out = p;
  return EF_SUCCESS;
}

/* First call: download the matrix once and build; later: refresh on the device. */
static int amg_dev_setup(void *data, const ef_matrix *A) {
  amg_dev_pc *p = data;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  EF_CHECK(H, EF_ERR_PARAMETER, "amg (device): needs a device matrix");
  if (p->amg) {
    EF_CHECK(H->values == p->A->values && H->n == p->A->n, EF_ERR_PARAMETER,
             "amg (device): not the device matrix it was built for");
    return ef_cl_amg_refresh(p->amg);
  }
  p->A = H; /* the caller's handle; its buffers stay alive and keep their pattern */
  const ef_amg_matrix *host = NULL;
  ef_amg_matrix M;
  if (A->row_ptr && A->col && A->values) {
    M = (ef_amg_matrix){A->layout.n_owned, A->nnz, A->row_ptr, A->col, A->values, A->constant_null_space};
    host = &M;
  }
  const int n_maps = p->saved.n_maps;
  int err = ef_cl_amg_create_from_maps(ef_cl_matrix_context(A), H, host, A->constant_null_space, &p->s,
                                       n_maps >= 0 ? n_maps : 0, n_maps >= 0 ? p->saved.maps : NULL, &p->amg);
  amg_saved_free(&p->saved);
  return err;
}

static int amg_dev_apply(void *data, const ef_vector *r, ef_vector *z) {
  amg_dev_pc *p = data;
  EF_CHECK(p->amg, EF_ERR_PARAMETER, "amg (device): apply before setup");
  return ef_cl_amg_apply(p->amg, ef_cl_vector_mem(r), ef_cl_vector_mem(z));
}

static int amg_dev_view(void *data, ef_parameters report) {
  amg_dev_pc *p = data;
  if (!p->amg) return EF_SUCCESS;
  EF_CALL(amg_view_common(ef_cl_amg_host(p->amg), report));
  ef_cl_amg_timing t;
  EF_CALL(ef_cl_amg_timing_get(p->amg, &t));
  EF_CALL(ef_parameters_set_double(report, "setup_seconds", t.setup_seconds));
  EF_CALL(ef_parameters_set_double(report, "applies", t.applies));
  return ef_parameters_set_double(report, "launches", t.launches);
}

static void amg_dev_destroy(void **data) {
  if (!data || !*data) return;
  amg_dev_pc *p = *data;
  ef_cl_amg_destroy(&p->amg);
  amg_saved_free(&p->saved);
  free(p);
  *data = NULL;
}

const ef_preconditioner_ops ef_cl_amg_ops = {
    .name = "amg",
    .description = "aggregation multigrid on the device: hierarchy built once on the host, refreshed and applied "
                   "on the device (l1-Jacobi, V- or K-cycle, dense coarsest inverse)",
    .memory = EF_MEMORY_DEVICE,
    .defaults = EF_AMG_DEFAULTS,
    .create = amg_dev_create,
    .setup = amg_dev_setup,
    .apply = amg_dev_apply,
    .view = amg_dev_view,
    .destroy = amg_dev_destroy,
};

/* ---------------------------------------------------------------------------
 * Device "fcg" (and "cg" with a preconditioner other than "jacobi": opencl_cg.c). */

typedef struct {
  ef_preconditioner *pc;
  ef_cl_pcg *pcg;
  int64_t n;
  int flexible;
} fcg_dev;

static int fcg_dev_precond(void *ctx, cl_mem r, cl_mem z) {
  fcg_dev *f = ctx;
  ef_vector rv = ef_cl_vector_wrap(r, f->n), zv = ef_cl_vector_wrap(z, f->n);
  return ef_preconditioner_apply(f->pc, &rv, &zv);
}

int ef_cl_pcg_solver_create(const ef_linear_solver_common *common, const ef_matrix *A, ef_preconditioner *pc,
                            int flexible, void **out) {
  *out = NULL;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  ef_cl_context *ctx = ef_cl_matrix_context(A);
  EF_CHECK(H && ctx && pc, EF_ERR_PARAMETER, "device (f)cg: needs a device matrix, its context and a preconditioner");
  fcg_dev *f = calloc(1, sizeof *f);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory");
  f->pc = pc;
  f->n = H->n;
  f->flexible = flexible;
  ef_cl_pcg_settings s;
  ef_cl_pcg_settings_default(&s);
  s.rtol = common->tolerance;
  s.max_iterations = common->max_iteration;
  s.flexible = flexible;
  s.null_space = A->constant_null_space;
  int err = ef_cl_pcg_create(ctx, H, &s, fcg_dev_precond, f, &f->pcg);
  if (err) {
    free(f);
    return err;
  }
  *out = f;
  return EF_SUCCESS;
}

static int fcg_dev_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                          ef_preconditioner *pc, void **out) {
  (void)settings;
  return ef_cl_pcg_solver_create(common, A, pc, 1, out);
}

/* The device AMG behind pc when it solves whole systems in one work-group (every level small),
 * else NULL. */
static ef_cl_amg *fcg_dev_whole_amg(ef_preconditioner *pc) {
  if (ef_preconditioner_get_ops(pc) != &ef_cl_amg_ops) return NULL;
  const amg_dev_pc *p = ef_preconditioner_data(pc);
  return ef_cl_amg_solves_whole(p->amg) ? p->amg : NULL;
}

int ef_cl_pcg_solver_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  fcg_dev *f = data;
  ef_cl_pcg_result r;
  ef_cl_amg *whole = fcg_dev_whole_amg(f->pc);
  if (whole) { /* the same iteration in one launch: no launch or host round trip per iteration */
    ef_cl_pcg_settings s;
    ef_cl_amg_solve_result w;
    EF_CALL(ef_cl_pcg_get_settings(f->pcg, &s));
    EF_CALL(ef_cl_amg_solve(whole, ef_cl_vector_mem(b), ef_cl_vector_mem(x), s.rtol, s.max_iterations, s.flexible,
                            s.null_space, &w));
    EF_CHECK(!w.breakdown, EF_ERR_SOLVER,
             "device PCG broke down at iteration %d: p.Ap <= 0 or not finite (matrix or preconditioner not SPD)",
             w.iterations);
    r = (ef_cl_pcg_result){w.iterations, w.converged, w.breakdown, w.relres, w.true_relres, 0.0};
  } else {
    EF_CALL(ef_cl_pcg_solve(f->pcg, ef_cl_vector_mem(b), ef_cl_vector_mem(x), &r));
  }
  res->iterations = r.iterations;
  res->converged = r.converged;
  res->residual = r.relres;
  res->true_residual = r.true_relres;
  EF_CHECK(r.converged, EF_ERR_SOLVER, "%s (device): no convergence in %d iterations (relative residual %.3e)",
           f->flexible ? "fcg" : "cg", r.iterations, r.relres);
  return EF_SUCCESS;
}

int ef_cl_pcg_solver_save_state(void *data, ef_restart_writer *w) {
  return amg_pc_save_state(((fcg_dev *)data)->pc, w);
}
int ef_cl_pcg_solver_load_state(void *data, ef_restart_reader *r) {
  return amg_pc_load_state(((fcg_dev *)data)->pc, r);
}

void ef_cl_pcg_solver_destroy(void **data) {
  if (!data || !*data) return;
  fcg_dev *f = *data;
  ef_cl_pcg_destroy(&f->pcg);
  free(f);
  *data = NULL;
}

const ef_linear_solver_ops ef_cl_fcg_ops = {
    .name = "fcg",
    .description = "flexible conjugate gradient on the device with any device preconditioner; stops on "
                   "||b - A x|| / ||b||, scalars kept on the device",
    .memory = EF_MEMORY_DEVICE,
    .defaults = "{}",
    .uses_preconditioner = 1,
    .create = fcg_dev_create,
    .solve = ef_cl_pcg_solver_solve,
    .destroy = ef_cl_pcg_solver_destroy,
    .save_state = ef_cl_pcg_solver_save_state,
    .load_state = ef_cl_pcg_solver_load_state,
};
#endif

/* ---------------------------------------------------------------------------
 * "amgcl" (host and device): Kratos' AMGCL block (linear_solver_settings of the
 * FluidDynamicsApplication's cases) mapped onto the AMG-preconditioned CG / FCG above.
 * Honoured: tolerance, max_iteration, verbosity (shared keys), krylov_type "cg" (V-cycle under
 * CG; any other Krylov method becomes the flexible CG with the K-cycle: the pressure matrix is
 * SPD), max_levels (> 0), coarse_enough (at most 512: the coarsest level is inverted densely on
 * one work-group every step), pre_sweeps = post_sweeps, smoother_type "damped_jacobi" (our
 * l1-Jacobi), coarsening_type "aggregation" (our pairwise aggregation).  Everything else is
 * named once in a warning at creation. */
#define EF_AMGCL_DEFAULTS                                                                                  \
  "{\"smoother_type\": \"ilu0\", \"krylov_type\": \"gmres\", \"coarsening_type\": \"aggregation\","             \
  " \"max_levels\": -1, \"coarse_enough\": 1000, \"pre_sweeps\": 1, \"post_sweeps\": 1,"                        \
  " \"provide_coordinates\": false, \"gmres_krylov_space_dimension\": 100, \"scaling\": false,"               \
  " \"block_size\": 1, \"use_block_matrices_if_possible\": true, \"use_gpgpu\": false}"

#define AMGCL_MAX_COARSE 512

typedef struct {
  ef_parameters inner_settings; /* kept: the inner solver's common strings point into it */
  ef_linear_solver *inner;
} amgcl_solver;

/* Append ", text" (or "text") to the warning buffer. */
static void amgcl_note(char *buf, size_t size, const char *text) {
  size_t len = strlen(buf);
  snprintf(buf + len, size - len, "%s%s", len ? "; " : "", text);
}

static int amgcl_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                        ef_preconditioner *pc, void **out) {
  (void)pc;
  (void)common;
  *out = NULL;
  const char *path = ef_parameters_path(settings), *krylov, *smoother, *coarsening;
  long max_levels, coarse_enough, pre, post, block, krylov_dim;
  int coords, scaling, use_block, gpgpu;
  EF_CALL(ef_parameters_get_string(settings, "krylov_type", &krylov));
  EF_CALL(ef_parameters_get_string(settings, "smoother_type", &smoother));
  EF_CALL(ef_parameters_get_string(settings, "coarsening_type", &coarsening));
  EF_CALL(ef_parameters_get_int(settings, "max_levels", &max_levels));
  EF_CALL(ef_parameters_get_int(settings, "coarse_enough", &coarse_enough));
  EF_CALL(ef_parameters_get_int(settings, "pre_sweeps", &pre));
  EF_CALL(ef_parameters_get_int(settings, "post_sweeps", &post));
  EF_CALL(ef_parameters_get_int(settings, "block_size", &block));
  EF_CALL(ef_parameters_get_int(settings, "gmres_krylov_space_dimension", &krylov_dim));
  EF_CALL(ef_parameters_get_bool(settings, "provide_coordinates", &coords));
  EF_CALL(ef_parameters_get_bool(settings, "scaling", &scaling));
  EF_CALL(ef_parameters_get_bool(settings, "use_block_matrices_if_possible", &use_block));
  EF_CALL(ef_parameters_get_bool(settings, "use_gpgpu", &gpgpu));
  EF_CHECK(pre >= 0 && post >= 0 && pre + post >= 1 && coarse_enough >= 1, EF_ERR_PARAMETER,
           "%s: amgcl needs pre_sweeps, post_sweeps >= 0 (not both 0) and coarse_enough >= 1", path);
  char warn[1024] = "", item[256];
  const int cg = !strcmp(krylov, "cg");
  if (!cg && strcmp(krylov, "fcg")) {
    snprintf(item, sizeof item, "krylov_type '%s' -> flexible CG (the pressure matrix is SPD)", krylov);
    amgcl_note(warn, sizeof warn, item);
  }
  if (strcmp(smoother, "damped_jacobi")) {
    snprintf(item, sizeof item, "smoother_type '%s' -> l1-Jacobi", smoother);
    amgcl_note(warn, sizeof warn, item);
  }
  if (strcmp(coarsening, "aggregation")) {
    snprintf(item, sizeof item, "coarsening_type '%s' -> pairwise aggregation", coarsening);
    amgcl_note(warn, sizeof warn, item);
  }
  if (coarse_enough > AMGCL_MAX_COARSE) {
    snprintf(item, sizeof item, "coarse_enough %ld -> %d (dense coarsest inverse every step)", coarse_enough,
             AMGCL_MAX_COARSE);
    amgcl_note(warn, sizeof warn, item);
    coarse_enough = AMGCL_MAX_COARSE;
  }
  const long sweeps = pre > post ? pre : post;
  if (pre != post) {
    snprintf(item, sizeof item, "pre_sweeps %ld, post_sweeps %ld -> %ld each (symmetric cycle)", pre, post, sweeps);
    amgcl_note(warn, sizeof warn, item);
  }
  if (coords) amgcl_note(warn, sizeof warn, "provide_coordinates");
  if (scaling) amgcl_note(warn, sizeof warn, "scaling");
  if (block != 1) amgcl_note(warn, sizeof warn, "block_size");
  if (!use_block) amgcl_note(warn, sizeof warn, "use_block_matrices_if_possible");
  if (gpgpu) amgcl_note(warn, sizeof warn, "use_gpgpu (the strategy decides the device)");
  if (!cg && strcmp(krylov, "fcg") && krylov_dim != 100) amgcl_note(warn, sizeof warn, "gmres_krylov_space_dimension");
  if (warn[0])
    fprintf(stderr, "edgeflow: warning: %s: solver_type \"amgcl\" runs AMG-preconditioned %s; not honoured: %s\n",
            path[0] ? path : "linear_solver_settings", cg ? "CG (V-cycle)" : "flexible CG (K-cycle)", warn);
  amgcl_solver *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  int err = ef_parameters_clone(settings, &o->inner_settings);
  if (!err) err = ef_parameters_set_string(o->inner_settings, "solver_type", cg ? "cg" : "fcg");
  if (!err) err = ef_parameters_set_string(o->inner_settings, "preconditioner_type", "amg");
  if (!err && max_levels > 0)
    err = ef_parameters_set_double(o->inner_settings, "amg_max_levels", (double)(max_levels > 32 ? 32 : max_levels));
  if (!err) err = ef_parameters_set_double(o->inner_settings, "amg_coarse_enough", (double)coarse_enough);
  if (!err) err = ef_parameters_set_double(o->inner_settings, "amg_sweeps", (double)sweeps);
  if (!err) err = ef_linear_solver_create(o->inner_settings, A->memory, A, &o->inner);
  if (err) {
    ef_parameters_destroy(&o->inner_settings);
    free(o);
    return err;
  }
  *out = o;
  return EF_SUCCESS;
}

static int amgcl_setup(void *data, const ef_matrix *A) { return ef_linear_solver_setup(((amgcl_solver *)data)->inner, A); }

static int amgcl_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  EF_CALL(ef_linear_solver_solve(((amgcl_solver *)data)->inner, b, x, res));
  return EF_SUCCESS;
}

static int amgcl_view(void *data, ef_parameters report) {
  return ef_linear_solver_view(((amgcl_solver *)data)->inner, report);
}

/* The inner solver's records (its own "solver_type" tag is the outer one's, written by the core). */
static int amgcl_save_state(void *data, ef_restart_writer *w) {
  ef_linear_solver *in = ((amgcl_solver *)data)->inner;
  const ef_linear_solver_ops *ops = ef_linear_solver_get_ops(in);
  return ops->save_state ? ops->save_state(ef_linear_solver_data(in), w) : EF_SUCCESS;
}

static int amgcl_load_state(void *data, ef_restart_reader *r) {
  ef_linear_solver *in = ((amgcl_solver *)data)->inner;
  const ef_linear_solver_ops *ops = ef_linear_solver_get_ops(in);
  return ops->load_state ? ops->load_state(ef_linear_solver_data(in), r) : EF_SUCCESS;
}

static void amgcl_destroy(void **data) {
  if (!data || !*data) return;
  amgcl_solver *o = *data;
  ef_linear_solver_destroy(&o->inner);
  ef_parameters_destroy(&o->inner_settings);
  free(o);
  *data = NULL;
}

const ef_linear_solver_ops ef_host_amgcl_ops = {
    .name = "amgcl",
    .description = "Kratos' AMGCL settings block run as the AMG-preconditioned CG (krylov_type \"cg\") or flexible CG "
                   "(any other) on the host; unsupported keys named in one warning",
    .memory = EF_MEMORY_HOST,
    .defaults = EF_AMGCL_DEFAULTS,
    .uses_preconditioner = 0,
    .create = amgcl_create,
    .setup = amgcl_setup,
    .solve = amgcl_solve,
    .view = amgcl_view,
    .destroy = amgcl_destroy,
    .save_state = amgcl_save_state,
    .load_state = amgcl_load_state,
};

#ifdef EF_HAVE_OPENCL
const ef_linear_solver_ops ef_cl_amgcl_ops = {
    .name = "amgcl",
    .description = "Kratos' AMGCL settings block run as the device AMG-preconditioned CG (krylov_type \"cg\") or "
                   "flexible CG (any other); unsupported keys named in one warning",
    .memory = EF_MEMORY_DEVICE,
    .defaults = EF_AMGCL_DEFAULTS,
    .uses_preconditioner = 0,
    .create = amgcl_create,
    .setup = amgcl_setup,
    .solve = amgcl_solve,
    .view = amgcl_view,
    .destroy = amgcl_destroy,
    .save_state = amgcl_save_state,
    .load_state = amgcl_load_state,
};
#endif

int ef_register_amg(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_host_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_fcg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_amgcl_ops));
#ifdef EF_HAVE_OPENCL
  EF_CALL(ef_registry_add_preconditioner(&ef_cl_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_fcg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_amgcl_ops));
#endif
  return EF_SUCCESS;
}

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
  "{\"amg_max_levels\": 10, \"amg_coarse_enough\": 256, \"amg_aggregation_passes\": 3,"                     \
  " \"amg_strength\": 0.25, \"amg_coarse_strength\": 0.0, \"amg_smoother\": \"l1_jacobi\", \"amg_omega\": 1.3333333333333333,"            \
  " \"amg_sweeps\": 1, \"amg_cycle\": \"K\", \"amg_kcycle_levels\": 2, \"amg_over_correction\": 1.0}"

/* ef_amg_settings from linear_solver_settings (keys already validated against the defaults). */
static int amg_read_settings(ef_parameters p, ef_amg_settings *s) {
  ef_amg_settings_default(s);
  long v;
  const char *str;
  /* Integer keys and where they go (NULL: coarse_enough, an int64). */
  static const char *keys[] = {"amg_max_levels", "amg_coarse_enough", "amg_aggregation_passes", "amg_sweeps",
                               "amg_kcycle_levels"};
  int *targets[] = {&s->max_levels, NULL, &s->passes, &s->sweeps, &s->kcycle_levels};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
    if (!ef_parameters_has(p, keys[k])) continue;
    EF_CALL(ef_parameters_get_int(p, keys[k], &v));
    if (targets[k]) *targets[k] = (int)v;
    else s->coarse_enough = v;
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
  if (ef_parameters_has(p, "amg_cycle")) {
    EF_CALL(ef_parameters_get_string(p, "amg_cycle", &str));
    EF_CHECK(!strcmp(str, "V") || !strcmp(str, "K"), EF_ERR_PARAMETER,
             "%s.amg_cycle is '%s'; use \"V\" (symmetric, plain CG) or \"K\" (flexible CG, solver_type \"fcg\")",
             ef_parameters_path(p), str);
    s->cycle = str[0] == 'V' ? EF_AMG_CYCLE_V : EF_AMG_CYCLE_K;
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

/* ---------------------------------------------------------------------------
 * Host "amg". */

typedef struct {
  ef_amg_settings s;
  ef_amg *h;
} amg_host_pc;

static int amg_host_create(ef_parameters settings, const ef_matrix *A, void **out) {
  (void)A;
  *out = NULL;
  amg_host_pc *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory");
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
};

#ifdef EF_HAVE_OPENCL
/* ---------------------------------------------------------------------------
 * Device "amg". */

typedef struct {
  ef_amg_settings s;
  ef_cl_amg *amg;
  const ef_cl_csr *A;
} amg_dev_pc;

static int amg_dev_create(ef_parameters settings, const ef_matrix *A, void **out) {
  *out = NULL;
  EF_CHECK(ef_cl_matrix_csr(A) && ef_cl_matrix_context(A), EF_ERR_PARAMETER,
           "amg (device): needs a device matrix and its OpenCL context");
  amg_dev_pc *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory");
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
  return ef_cl_amg_create(ef_cl_matrix_context(A), H, host, A->constant_null_space, &p->s, &p->amg);
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
 * Device "fcg". */

typedef struct {
  ef_preconditioner *pc;
  ef_cl_pcg *pcg;
  int64_t n;
} fcg_dev;

static int fcg_dev_precond(void *ctx, cl_mem r, cl_mem z) {
  fcg_dev *f = ctx;
  ef_vector rv = ef_cl_vector_wrap(r, f->n), zv = ef_cl_vector_wrap(z, f->n);
  return ef_preconditioner_apply(f->pc, &rv, &zv);
}

static int fcg_dev_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                          ef_preconditioner *pc, void **out) {
  (void)settings;
  *out = NULL;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  ef_cl_context *ctx = ef_cl_matrix_context(A);
  EF_CHECK(H && ctx && pc, EF_ERR_PARAMETER, "fcg (device): needs a device matrix, its context and a preconditioner");
  fcg_dev *f = calloc(1, sizeof *f);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory");
  f->pc = pc;
  f->n = H->n;
  ef_cl_pcg_settings s;
  ef_cl_pcg_settings_default(&s);
  s.rtol = common->tolerance;
  s.max_iterations = common->max_iteration;
  s.flexible = 1;
  s.null_space = A->constant_null_space;
  int err = ef_cl_pcg_create(ctx, H, &s, fcg_dev_precond, f, &f->pcg);
  if (err) {
    free(f);
    return err;
  }
  *out = f;
  return EF_SUCCESS;
}

static int fcg_dev_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  fcg_dev *f = data;
  ef_cl_pcg_result r;
  EF_CALL(ef_cl_pcg_solve(f->pcg, ef_cl_vector_mem(b), ef_cl_vector_mem(x), &r));
  res->iterations = r.iterations;
  res->converged = r.converged;
  res->residual = r.relres;
  res->true_residual = r.true_relres;
  EF_CHECK(r.converged, EF_ERR_SOLVER, "fcg (device): no convergence in %d iterations (relative residual %.3e)",
           r.iterations, r.relres);
  return EF_SUCCESS;
}

static void fcg_dev_destroy(void **data) {
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
    .solve = fcg_dev_solve,
    .destroy = fcg_dev_destroy,
};
#endif

int ef_register_amg(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_host_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_fcg_ops));
#ifdef EF_HAVE_OPENCL
  EF_CALL(ef_registry_add_preconditioner(&ef_cl_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_fcg_ops));
#endif
  return EF_SUCCESS;
}

/* host_amg_register.c -- the host preconditioner "amg" and the host flexible CG "fcg" that
 * suits its K-cycle, as ef_linear_solver.h's tables, and the host "amgcl"; ef_register_amg adds
 * them to the registry (the device ones: opencl/opencl_amg_register.c).  The hierarchy is
 * built at the first setup (the values may not be assembled at create) and refreshed from the
 * new values at every later setup.  Settings: the amg_* keys of docs/parameters.md. */
#include "amg_register.h"

#include <stdlib.h>

#include "amg.h"
#include "amg_register_common.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "host_pcg.h"

/* ---------------------------------------------------------------------------
 * Host "amg". */

typedef struct {
  ef_amg_settings s;
  ef_amg_saved saved;
  ef_amg *h;
} amg_host_pc;

static int amg_host_create(ef_parameters settings, const ef_matrix *A, void **out) {
  (void)A;
  *out = NULL;
  amg_host_pc *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory");
  p->saved.n_maps = -1;
  int err = ef_amg_read_settings(settings, &p->s);
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
  if (ef_comm_size(A->layout.comm) > 1) { /* several ranks: aggregates inside the owned rows (amg.h) */
    const ef_amg_ranks ranks = {A->layout.n_ghost, A->global_row, A->layout.comm};
    const int loaded = p->saved.n_maps >= 0;
    int err = ef_amg_create_ranks(&p->s, &M, &ranks, loaded ? p->saved.n_maps : 0, loaded ? p->saved.maps : NULL,
                                  &p->h);
    ef_amg_saved_free(&p->saved);
    return err;
  }
  if (p->saved.n_maps >= 0) {
    int err = ef_amg_create_from_maps(&p->s, &M, p->saved.n_maps, p->saved.maps, &p->h);
    ef_amg_saved_free(&p->saved);
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
  EF_CALL(ef_amg_view_common(p->h, report));
  return ef_parameters_set_double(report, "refresh_seconds", p->h->refresh_seconds);
}

static void amg_host_destroy(void **data) {
  if (!data || !*data) return;
  amg_host_pc *p = *data;
  ef_amg_destroy(&p->h);
  ef_amg_saved_free(&p->saved);
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

/* Restart state of a host solver's preconditioner when it is "amg": its aggregate maps (other
 * preconditioners have none).  On load the hierarchy built so far is dropped; the next set-up
 * builds it from the maps. */
static int amg_pc_save_state(ef_preconditioner *pc, ef_restart_writer *w) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_host_amg_ops) return ef_amg_save_maps(((amg_host_pc *)ef_preconditioner_data(pc))->h, w);
  return EF_SUCCESS;
}

static int amg_pc_load_state(ef_preconditioner *pc, ef_restart_reader *r) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_host_amg_ops) {
    amg_host_pc *p = ef_preconditioner_data(pc);
    EF_CALL(ef_amg_load_maps(r, &p->saved));
    if (p->saved.n_maps >= 0) ef_amg_destroy(&p->h);
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Host "fcg": flexible CG with any host preconditioner. */

typedef struct {
  ef_linear_solver_common common;
  ef_preconditioner *pc;
  ef_csr A;
  ef_host_dist *dist; /* several ranks: the matrix's rows (host_dist.h); NULL on one process */
} fcg_host;

#define FCG_DIST_TAG 690 /* message tag of the outer solver's halo exchanges */

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
  const int err = ef_host_dist_from_matrix(A, FCG_DIST_TAG, &f->dist);
  if (err) {
    free(f);
    return err;
  }
  *out = f;
  return EF_SUCCESS;
}

static int fcg_host_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  fcg_host *f = data;
  ef_host_pcg_settings s = {f->common.tolerance, f->common.max_iteration, 1, f->dist};
  return ef_host_pcg_solve_registry(&f->A, fcg_host_precond, f, &s, b->host, x->host, "fcg (host)", res);
}

static int fcg_host_save_state(void *data, ef_restart_writer *w) { return amg_pc_save_state(((fcg_host *)data)->pc, w); }
static int fcg_host_load_state(void *data, ef_restart_reader *r) { return amg_pc_load_state(((fcg_host *)data)->pc, r); }

static void fcg_host_destroy(void **data) {
  if (!data || !*data) return;
  ef_host_dist_destroy(&((fcg_host *)*data)->dist);
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
    .distributed = 1, /* several ranks: halo exchanges and reductions (host_pcg.h); "jacobi" and "amg" follow */
};

const ef_linear_solver_ops ef_host_amgcl_ops =
    EF_AMGCL_OPS(EF_MEMORY_HOST,
                 "Kratos' AMGCL settings block run as the AMG-preconditioned CG (krylov_type \"cg\") or flexible CG "
                 "(any other) on the host; unsupported keys named in one warning");

int ef_register_amg(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_host_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_fcg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_amgcl_ops));
  return EF_SUCCESS;
}

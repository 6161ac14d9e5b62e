/* opencl_amg_register.c -- the device preconditioner "amg", the device flexible CG "fcg" (and
 * the device PCG behind "cg" with a preconditioner other than "jacobi": opencl_cg.c) and the
 * device "amgcl", as ef_linear_solver.h's tables; ef_register_opencl_amg adds them to the
 * registry (the host ones: host/host_amg_register.c).  The hierarchy is built on the host at
 * the first setup and refreshed on the device at every later setup. */
#include "amg_register.h"

#include <stdlib.h>

#include "amg.h"
#include "amg_register_common.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_comm.h"
#include "opencl_amg.h"
#include "opencl_amg_mpi.h"
#include "opencl_pcg.h"
#include "opencl_solvers.h"

typedef struct {
  ef_amg_settings s;
  ef_amg_saved saved;
  ef_cl_amg *amg;
  ef_cl_amg_mpi *amg_mpi; /* several ranks (opencl_amg_mpi.h): the hierarchy across ranks instead */
  const ef_cl_csr *A;
} amg_dev_pc;


/* Restart state of a device solver's preconditioner when it is "amg": its aggregate maps
 * (other preconditioners have none).  On load the hierarchy built so far is dropped; the next
 * set-up builds it from the maps. */
static int amg_pc_save_state(ef_preconditioner *pc, ef_restart_writer *w) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_cl_amg_ops) {
    const amg_dev_pc *p = ef_preconditioner_data(pc);
    return ef_amg_save_maps(p->amg ? ef_cl_amg_host(p->amg) : p->amg_mpi ? ef_cl_amg_mpi_host(p->amg_mpi) : NULL, w);
  }
  return EF_SUCCESS;
}

static int amg_pc_load_state(ef_preconditioner *pc, ef_restart_reader *r) {
  const ef_preconditioner_ops *ops = ef_preconditioner_get_ops(pc);
  if (ops == &ef_cl_amg_ops) {
    amg_dev_pc *p = ef_preconditioner_data(pc);
    EF_CALL(ef_amg_load_maps(r, &p->saved));
    if (p->saved.n_maps >= 0) ef_cl_amg_destroy(&p->amg), ef_cl_amg_mpi_destroy(&p->amg_mpi);
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Device "amg". */


static int amg_dev_create(ef_parameters settings, const ef_matrix *A, void **out) {
  *out = NULL;
  EF_CHECK(ef_cl_matrix_csr(A) && ef_cl_matrix_context(A), EF_ERR_PARAMETER,
           "amg (device): needs a device matrix and its OpenCL context");
  amg_dev_pc *p = calloc(1, sizeof *p);
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

/* First call: download the matrix once and build; later: refresh on the device. */
static int amg_dev_setup(void *data, const ef_matrix *A) {
  amg_dev_pc *p = data;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  EF_CHECK(H, EF_ERR_PARAMETER, "amg (device): needs a device matrix");
  if (p->amg || p->amg_mpi) {
    EF_CHECK(H->values == p->A->values && H->n == p->A->n, EF_ERR_PARAMETER,
             "amg (device): not the device matrix it was built for");
    return p->amg ? ef_cl_amg_refresh(p->amg) : ef_cl_amg_mpi_refresh(p->amg_mpi);
  }
  p->A = H; /* the caller's handle; its buffers stay alive and keep their pattern */
  if (ef_comm_size(A->layout.comm) > 1) { /* several ranks: the host pattern of the owned rows is the caller's */
    EF_CHECK(A->row_ptr && A->col && A->global_row, EF_ERR_PARAMETER,
             "amg (device) across ranks: needs the owned rows' pattern on the host and the global rows");
    const ef_amg_matrix M = {A->layout.n_owned, A->nnz, A->row_ptr, A->col, A->values, A->constant_null_space};
    const ef_amg_ranks ranks = {A->layout.n_ghost, A->global_row, A->layout.comm};
    const int n_maps = p->saved.n_maps;
    int err = ef_cl_amg_mpi_create(ef_cl_matrix_context(A), H, &M, &ranks, &p->s, n_maps >= 0 ? n_maps : 0,
                                   n_maps >= 0 ? p->saved.maps : NULL, &p->amg_mpi);
    ef_amg_saved_free(&p->saved);
    return err;
  }
  const ef_amg_matrix *host = NULL;
  ef_amg_matrix M;
  if (A->row_ptr && A->col && A->values) {
    M = (ef_amg_matrix){A->layout.n_owned, A->nnz, A->row_ptr, A->col, A->values, A->constant_null_space};
    host = &M;
  }
  const int n_maps = p->saved.n_maps;
  int err = ef_cl_amg_create_from_maps(ef_cl_matrix_context(A), H, host, A->constant_null_space, &p->s,
                                       n_maps >= 0 ? n_maps : 0, n_maps >= 0 ? p->saved.maps : NULL, &p->amg);
  ef_amg_saved_free(&p->saved);
  return err;
}

static int amg_dev_apply(void *data, const ef_vector *r, ef_vector *z) {
  amg_dev_pc *p = data;
  EF_CHECK(p->amg || p->amg_mpi, EF_ERR_PARAMETER, "amg (device): apply before setup");
  if (p->amg_mpi) return ef_cl_amg_mpi_apply(p->amg_mpi, ef_cl_vector_mem(r), ef_cl_vector_mem(z));
  return ef_cl_amg_apply(p->amg, ef_cl_vector_mem(r), ef_cl_vector_mem(z));
}

static int amg_dev_view(void *data, ef_parameters report) {
  amg_dev_pc *p = data;
  if (p->amg_mpi) { /* several ranks: the cycle's halo exchanges and reductions so far too */
    EF_CALL(ef_amg_view_common(ef_cl_amg_mpi_host(p->amg_mpi), report));
    return ef_parameters_set_double(report, "exchange_seconds", ef_cl_amg_mpi_exchange_seconds(p->amg_mpi));
  }
  if (!p->amg) return EF_SUCCESS;
  EF_CALL(ef_amg_view_common(ef_cl_amg_host(p->amg), report));
  double hier = 0.0, fine = 0.0; /* the device's hierarchy holds the refresh offsets besides the host's */
  ef_amg_memory(ef_cl_amg_host(p->amg), NULL, &fine, NULL, NULL);
  ef_cl_amg_memory(p->amg, &hier, NULL);
  EF_CALL(ef_parameters_set_double(report, "hierarchy_memory_ratio", hier / fine));
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
  ef_cl_amg_mpi_destroy(&p->amg_mpi);
  ef_amg_saved_free(&p->saved);
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
  ef_cl_pcg_mpi *mpi; /* several ranks (opencl_amg_mpi.h) instead of pcg */
  ef_host_dist *dist; /* its rows over the ranks */
  int64_t n;
  ef_layout layout;
  int flexible;
} fcg_dev;

static int fcg_dev_precond(void *ctx, cl_mem r, cl_mem z) {
  fcg_dev *f = ctx;
  ef_vector rv = ef_cl_vector_wrap(r, f->n), zv = ef_cl_vector_wrap(z, f->n);
  rv.layout = zv.layout = f->layout;
  return ef_preconditioner_apply(f->pc, &rv, &zv);
}

/* Several ranks: the (F)CG of opencl_amg_mpi.h, with the device "amg" only (the one preconditioner that runs
 * across ranks on the device). */
static int fcg_dev_create_ranks(const ef_linear_solver_common *common, const ef_matrix *A, ef_preconditioner *pc,
                                fcg_dev *f) {
  EF_CHECK(ef_preconditioner_get_ops(pc) == &ef_cl_amg_ops, EF_ERR_UNSUPPORTED,
           "device %s across ranks: preconditioner_type '%s' does not run across ranks on the device (\"amg\" does)",
           f->flexible ? "fcg" : "cg", common->preconditioner_type);
  EF_CALL(ef_host_dist_from_matrix(A, 7400, &f->dist));
  ef_cl_pcg_settings s;
  ef_cl_pcg_settings_default(&s);
  s.rtol = common->tolerance;
  s.max_iterations = common->max_iteration;
  s.flexible = f->flexible;
  s.null_space = A->constant_null_space;
  return ef_cl_pcg_mpi_create(ef_cl_matrix_context(A), ef_cl_matrix_csr(A), f->dist, A->layout.n_ghost,
                              ef_host_dist_global_rows(f->dist), &s, fcg_dev_precond, f, &f->mpi);
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
  f->n = A->layout.n_owned + A->layout.n_ghost;
  f->layout = A->layout;
  f->flexible = flexible;
  if (ef_comm_size(A->layout.comm) > 1) {
    int err = fcg_dev_create_ranks(common, A, pc, f);
    if (err) {
      ef_cl_pcg_mpi_destroy(&f->mpi);
      ef_host_dist_destroy(&f->dist);
      free(f);
      return err;
    }
    *out = f;
    return EF_SUCCESS;
  }
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
  ef_cl_amg *whole = f->mpi ? NULL : fcg_dev_whole_amg(f->pc);
  if (f->mpi) {
    EF_CALL(ef_cl_pcg_mpi_solve(f->mpi, ef_cl_vector_mem(b), ef_cl_vector_mem(x), &r));
  } else if (whole) { /* the same iteration in one launch: no launch or host round trip per iteration */
    ef_cl_pcg_settings s;
    EF_CALL(ef_cl_pcg_get_settings(f->pcg, &s));
    EF_CALL(ef_cl_amg_solve(whole, &s, ef_cl_vector_mem(b), ef_cl_vector_mem(x), &r));
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

/* Several ranks: the (F)CG's own halo exchanges and reductions so far (one process: nothing). */
int ef_cl_pcg_solver_view(void *data, ef_parameters report) {
  const fcg_dev *f = data;
  if (!f->mpi) return EF_SUCCESS;
  return ef_parameters_set_double(report, "exchange_seconds", ef_cl_pcg_mpi_exchange_seconds(f->mpi));
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
  ef_cl_pcg_mpi_destroy(&f->mpi);
  ef_host_dist_destroy(&f->dist);
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
    .view = ef_cl_pcg_solver_view,
    .destroy = ef_cl_pcg_solver_destroy,
    .save_state = ef_cl_pcg_solver_save_state,
    .load_state = ef_cl_pcg_solver_load_state,
    .distributed = 1, /* several ranks with the device "amg" (opencl_amg_mpi.h) */
};

const ef_linear_solver_ops ef_cl_amgcl_ops =
    EF_AMGCL_OPS(EF_MEMORY_DEVICE,
                 "Kratos' AMGCL settings block run as the device AMG-preconditioned CG (krylov_type \"cg\") or "
                 "flexible CG (any other); unsupported keys named in one warning");

int ef_register_opencl_amg(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_cl_amg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_fcg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_cl_amgcl_ops));
  return EF_SUCCESS;
}

/* amg_register.c -- what the host (host/host_amg_register.c) and the device
 * (opencl/opencl_amg_register.c) registrations of the AMG solvers share: the amg_* settings,
 * the report, the aggregate maps of a restart file, and "amgcl".  Backend-neutral: no OpenCL
 * here.  Settings: the amg_* keys of docs/parameters.md ("AMG preconditioner"). */
#include "amg_register_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"

/* ef_amg_settings from linear_solver_settings (keys already validated against the defaults). */
int ef_amg_read_settings(ef_parameters p, ef_amg_settings *s) {
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
  if (ef_parameters_has(p, "amg_gather_rows")) {
    EF_CALL(ef_parameters_get_int(p, "amg_gather_rows", &v));
    EF_CHECK(v >= 0, EF_ERR_PARAMETER, "%s.amg_gather_rows is %ld; it counts rows (0: gather only the coarsest level)",
             ef_parameters_path(p), v);
    s->gather_rows = v;
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
int ef_amg_view_common(const ef_amg *h, ef_parameters report) {
  double hier = 0.0, fine = 0.0, work = 0.0, opc = 0.0;
  ef_amg_memory(h, &hier, &fine, &work, &opc);
  EF_CALL(ef_parameters_set_double(report, "levels", h->n_levels));
  EF_CALL(ef_parameters_set_double(report, "coarsest_rows", (double)h->nc));
  EF_CALL(ef_parameters_set_double(report, "operator_complexity", opc));
  EF_CALL(ef_parameters_set_double(report, "hierarchy_memory_ratio", hier / fine));
  EF_CALL(ef_parameters_set_double(report, "host_setup_seconds", h->setup_seconds));
  return EF_SUCCESS;
}

void ef_amg_saved_free(ef_amg_saved *m) {
  for (int l = 0; l < 32; ++l) free(m->maps[l]), m->maps[l] = NULL;
  m->n_maps = -1;
}

/* Records "amg.levels" and "amg.agg<l>" (level l's map as int32 bytes) of hierarchy h. */
int ef_amg_save_maps(const ef_amg *h, ef_restart_writer *w) {
  if (!h) return EF_SUCCESS; /* never set up: nothing chosen yet */
  EF_CALL(ef_restart_write_int64(w, "amg.levels", h->n_levels - 1));
  for (int l = 0; l + 1 < h->n_levels; ++l) {
    char key[32];
    snprintf(key, sizeof key, "amg.agg%d", l);
    EF_CALL(ef_restart_write_bytes(w, key, h->lev[l].agg, h->lev[l].n * 4));
  }
  return EF_SUCCESS;
}

/* The maps of ef_amg_save_maps into m (sizes checked when the hierarchy is built: level l's map
 * has the rows of level l, which the earlier maps fix). */
int ef_amg_load_maps(ef_restart_reader *r, ef_amg_saved *m) {
  ef_amg_saved_free(m);
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
 * "amgcl" (host and device): Kratos' AMGCL block (linear_solver_settings of the
 * FluidDynamicsApplication's cases) mapped onto the AMG-preconditioned CG / FCG of the
 * backends.
 * Honoured: tolerance, max_iteration, verbosity (shared keys), krylov_type "cg" (V-cycle under
 * CG; any other Krylov method becomes the flexible CG with the K-cycle: the pressure matrix is
 * SPD), max_levels (> 0), coarse_enough (at most 512: the coarsest level is inverted densely on
 * one work-group every step), pre_sweeps = post_sweeps, smoother_type "damped_jacobi" (our
 * l1-Jacobi), coarsening_type "aggregation" (our pairwise aggregation).  Everything else is
 * named once in a warning at creation. */
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

int ef_amgcl_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
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

int ef_amgcl_setup(void *data, const ef_matrix *A) { return ef_linear_solver_setup(((amgcl_solver *)data)->inner, A); }

int ef_amgcl_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  EF_CALL(ef_linear_solver_solve(((amgcl_solver *)data)->inner, b, x, res));
  return EF_SUCCESS;
}

int ef_amgcl_view(void *data, ef_parameters report) {
  return ef_linear_solver_view(((amgcl_solver *)data)->inner, report);
}

/* The inner solver's records (its own "solver_type" tag is the outer one's, written by the core). */
int ef_amgcl_save_state(void *data, ef_restart_writer *w) {
  ef_linear_solver *in = ((amgcl_solver *)data)->inner;
  const ef_linear_solver_ops *ops = ef_linear_solver_get_ops(in);
  return ops->save_state ? ops->save_state(ef_linear_solver_data(in), w) : EF_SUCCESS;
}

int ef_amgcl_load_state(void *data, ef_restart_reader *r) {
  ef_linear_solver *in = ((amgcl_solver *)data)->inner;
  const ef_linear_solver_ops *ops = ef_linear_solver_get_ops(in);
  return ops->load_state ? ops->load_state(ef_linear_solver_data(in), r) : EF_SUCCESS;
}

void ef_amgcl_destroy(void **data) {
  if (!data || !*data) return;
  amgcl_solver *o = *data;
  ef_linear_solver_destroy(&o->inner);
  ef_parameters_destroy(&o->inner_settings);
  free(o);
  *data = NULL;
}

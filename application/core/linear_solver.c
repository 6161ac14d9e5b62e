/* linear_solver.c -- the registry of linear solvers and preconditioners (by name and memory
 * space) and their instances: settings validated once, preconditioner then solver created. */
#include "edgeflow/ef_linear_solver.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#define EF_LS_MAX 32

static const ef_linear_solver_ops *ef_solvers[EF_LS_MAX];
static const ef_preconditioner_ops *ef_pcs[EF_LS_MAX];
static int ef_n_solvers, ef_n_pcs;
static pthread_mutex_t ef_ls_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *ef_memory_name(ef_memory m) { return m == EF_MEMORY_DEVICE ? "device" : "host"; }

/* Add ops to a table unless the same (name, memory) is there; two implementations of one
 * (name, memory) are an error. */
static int ef_ls_table_add(const void **table, int *count, const char *kind, const char *name, ef_memory memory,
                           const void *ops, const char *(*name_of)(const void *), ef_memory (*memory_of)(const void *)) {
  EF_CHECK(name && name[0], EF_ERR_INTERNAL, "a %s needs a name", kind);
  int err = EF_SUCCESS;
  pthread_mutex_lock(&ef_ls_lock);
  int i = 0;
  for (; i < *count; i++)
    if (!strcmp(name_of(table[i]), name) && memory_of(table[i]) == memory) break;
  if (i < *count) {
    if (table[i] != ops)
      err = EF_ERROR(EF_ERR_INTERNAL, "%s '%s' (%s) is registered twice with different implementations", kind, name,
                     ef_memory_name(memory));
  } else if (*count == EF_LS_MAX) {
    err = EF_ERROR(EF_ERR_INTERNAL, "too many %s registrations (max %d)", kind, EF_LS_MAX);
  } else {
    table[(*count)++] = ops;
  }
  pthread_mutex_unlock(&ef_ls_lock);
  return err;
}

static const char *ef_solver_name(const void *o) { return ((const ef_linear_solver_ops *)o)->name; }
static ef_memory ef_solver_memory(const void *o) { return ((const ef_linear_solver_ops *)o)->memory; }
static const char *ef_pc_name(const void *o) { return ((const ef_preconditioner_ops *)o)->name; }
static ef_memory ef_pc_memory(const void *o) { return ((const ef_preconditioner_ops *)o)->memory; }

int ef_registry_add_linear_solver(const ef_linear_solver_ops *ops) {
  EF_CHECK(ops && ops->create && ops->solve && ops->destroy, EF_ERR_INTERNAL,
           "linear solver '%s': create, solve and destroy are required", ops && ops->name ? ops->name : "?");
  return ef_ls_table_add((const void **)ef_solvers, &ef_n_solvers, "linear solver", ops->name, ops->memory, ops,
                         ef_solver_name, ef_solver_memory);
}

int ef_registry_add_preconditioner(const ef_preconditioner_ops *ops) {
  EF_CHECK(ops && ops->create && ops->apply && ops->destroy, EF_ERR_INTERNAL,
           "preconditioner '%s': create, apply and destroy are required", ops && ops->name ? ops->name : "?");
  return ef_ls_table_add((const void **)ef_pcs, &ef_n_pcs, "preconditioner", ops->name, ops->memory, ops, ef_pc_name,
                         ef_pc_memory);
}

/* "a, b (host), c (device)": the names registered for memory. */
static void ef_ls_list(const void *const *table, int count, ef_memory memory, const char *(*name_of)(const void *),
                       ef_memory (*memory_of)(const void *), char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < count; i++) {
    if (memory_of(table[i]) != memory) continue;
    int k = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name_of(table[i]));
    if (k < 0 || (size_t)k >= size - used) break;
    used += (size_t)k;
  }
}

const char *ef_linear_solver_list(ef_memory memory, char *buffer, size_t size) {
  pthread_mutex_lock(&ef_ls_lock);
  ef_ls_list((const void *const *)ef_solvers, ef_n_solvers, memory, ef_solver_name, ef_solver_memory, buffer, size);
  pthread_mutex_unlock(&ef_ls_lock);
  return buffer;
}

const char *ef_preconditioner_list(ef_memory memory, char *buffer, size_t size) {
  pthread_mutex_lock(&ef_ls_lock);
  ef_ls_list((const void *const *)ef_pcs, ef_n_pcs, memory, ef_pc_name, ef_pc_memory, buffer, size);
  pthread_mutex_unlock(&ef_ls_lock);
  return buffer;
}

static const void *ef_ls_lookup(const void *const *table, int count, const char *name, ef_memory memory,
                                const char *(*name_of)(const void *), ef_memory (*memory_of)(const void *)) {
  const void *found = NULL;
  pthread_mutex_lock(&ef_ls_lock);
  for (int i = 0; i < count && name && !found; i++)
    if (!strcmp(name_of(table[i]), name) && memory_of(table[i]) == memory) found = table[i];
  pthread_mutex_unlock(&ef_ls_lock);
  return found;
}

int ef_registry_find_linear_solver(const char *name, ef_memory memory, const ef_linear_solver_ops **ops) {
  *ops = ef_ls_lookup((const void *const *)ef_solvers, ef_n_solvers, name, memory, ef_solver_name, ef_solver_memory);
  if (!*ops) {
    char list[1024];
    ef_linear_solver_list(memory, list, sizeof list);
    return EF_ERROR(EF_ERR_NOT_FOUND, "unknown %s linear solver '%s'; registered %s linear solvers: %s",
                    ef_memory_name(memory), name ? name : "(null)", ef_memory_name(memory), list[0] ? list : "none");
  }
  return EF_SUCCESS;
}

int ef_registry_find_preconditioner(const char *name, ef_memory memory, const ef_preconditioner_ops **ops) {
  *ops = ef_ls_lookup((const void *const *)ef_pcs, ef_n_pcs, name, memory, ef_pc_name, ef_pc_memory);
  if (!*ops) {
    char list[1024];
    ef_preconditioner_list(memory, list, sizeof list);
    return EF_ERROR(EF_ERR_NOT_FOUND, "unknown %s preconditioner '%s'; registered %s preconditioners: %s",
                    ef_memory_name(memory), name ? name : "(null)", ef_memory_name(memory), list[0] ? list : "none");
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Settings: the shared keys, the keys of the chosen solver and preconditioner, and then the
 * keys of every other registered solver and preconditioner (host and device), accepted and
 * ignored, so that a case file runs with either strategy and a change of solver_type needs
 * no other edit; a key no implementation owns is an error naming it. */

/* Add the keys of the JSON object `text` missing from `merged`. */
static int ef_merge_defaults(ef_parameters merged, const char *text, const char *origin) {
  if (!text || !text[0]) return EF_SUCCESS;
  ef_parameters d = NULL;
  EF_CALL(ef_parameters_parse(text, origin, &d));
  int err = EF_SUCCESS;
  const char *key;
  for (int i = 0; !err && (key = ef_parameters_key_at(d, i)); i++) {
    if (ef_parameters_has(merged, key)) continue;
    ef_parameters v;
    err = ef_parameters_get(d, key, &v);
    char *json = err ? NULL : ef_parameters_to_string(v, 0);
    if (!err && !json) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    if (!err) err = ef_parameters_set_json(merged, key, json);
    free(json);
  }
  ef_parameters_destroy(&d);
  return err;
}

/* The defaults text of linear_solver_settings for the chosen ops (malloc'ed). */
static int ef_settings_defaults(const ef_linear_solver_ops *chosen, const ef_preconditioner_ops *chosen_pc,
                                char **text) {
  *text = NULL;
  ef_parameters merged = NULL;
  EF_CALL(ef_parameters_parse(EF_LINEAR_SOLVER_COMMON_DEFAULTS, "<linear solver defaults>", &merged));
  int err = ef_merge_defaults(merged, chosen->defaults, chosen->name);
  if (!err && chosen_pc) err = ef_merge_defaults(merged, chosen_pc->defaults, chosen_pc->name);
  pthread_mutex_lock(&ef_ls_lock);
  for (int i = 0; i < ef_n_solvers && !err; i++) err = ef_merge_defaults(merged, ef_solvers[i]->defaults, ef_solvers[i]->name);
  for (int i = 0; i < ef_n_pcs && !err; i++) err = ef_merge_defaults(merged, ef_pcs[i]->defaults, ef_pcs[i]->name);
  pthread_mutex_unlock(&ef_ls_lock);
  if (!err) {
    *text = ef_parameters_to_string(merged, 0);
    if (!*text) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  ef_parameters_destroy(&merged);
  return err;
}

/* ---------------------------------------------------------------------------
 * Instances. */

struct ef_preconditioner_s {
  const ef_preconditioner_ops *ops;
  void *data;
};

struct ef_linear_solver_s {
  const ef_linear_solver_ops *ops;
  void *data;
  ef_preconditioner *pc;
  ef_linear_solver_common common;
  ef_matrix A;  /* the matrix of the last create/setup (its arrays are the caller's) */
  double *work; /* host solvers: n, for the true residual */
  int64_t n;
};

int ef_preconditioner_create(ef_parameters settings, const ef_preconditioner_ops *ops, const ef_matrix *A,
                             ef_preconditioner **out) {
  *out = NULL;
  ef_preconditioner *pc = calloc(1, sizeof *pc);
  EF_CHECK(pc, EF_ERR_MEMORY, "out of memory");
  pc->ops = ops;
  int err = ops->create(settings, A, &pc->data);
  if (err) {
    free(pc);
    return ef_error_push(err, __FILE__, __LINE__, "creating preconditioner '%s' (%s)", ops->name,
                         ef_memory_name(ops->memory));
  }
  *out = pc;
  return EF_SUCCESS;
}

int ef_preconditioner_setup(ef_preconditioner *pc, const ef_matrix *A) {
  return pc->ops->setup ? pc->ops->setup(pc->data, A) : EF_SUCCESS;
}

int ef_preconditioner_apply(ef_preconditioner *pc, const ef_vector *r, ef_vector *z) {
  return pc->ops->apply(pc->data, r, z);
}

const ef_preconditioner_ops *ef_preconditioner_get_ops(const ef_preconditioner *pc) { return pc ? pc->ops : NULL; }
void *ef_preconditioner_data(const ef_preconditioner *pc) { return pc ? pc->data : NULL; }

void ef_preconditioner_destroy(ef_preconditioner **pc) {
  if (!pc || !*pc) return;
  if ((*pc)->ops && (*pc)->data) (*pc)->ops->destroy(&(*pc)->data);
  free(*pc);
  *pc = NULL;
}

/* The registered solver (and preconditioner) a settings block names; keys validated. */
static int ef_linear_solver_resolve(ef_parameters settings, ef_memory memory, const ef_linear_solver_ops **ops,
                                    const ef_preconditioner_ops **pc_ops) {
  const char *path = ef_parameters_path(settings);
  /* The chosen names first (their defaults decide which other keys exist). */
  const char *name = "cg", *pc_name = "jacobi";
  const int pc_given = ef_parameters_has(settings, "preconditioner_type");
  if (ef_parameters_has(settings, "solver_type")) EF_CALL(ef_parameters_get_string(settings, "solver_type", &name));
  if (pc_given) EF_CALL(ef_parameters_get_string(settings, "preconditioner_type", &pc_name));
  EF_CALL(ef_registry_find_linear_solver(name, memory, ops));
  *pc_ops = NULL;
  if ((*ops)->uses_preconditioner) {
    if (ef_registry_find_preconditioner(pc_name, memory, pc_ops)) {
      char why[512];
      snprintf(why, sizeof why, "%s", ef_error_message());
      ef_error_clear();
      return EF_ERROR(EF_ERR_PARAMETER, "%s.preconditioner_type: %s", path, why);
    }
    if ((*ops)->builtin_preconditioner && !strcmp(pc_name, (*ops)->builtin_preconditioner)) *pc_ops = NULL;
  } else {
    EF_CHECK(!pc_given || !strcmp(pc_name, "jacobi"), EF_ERR_PARAMETER,
             "%s.preconditioner_type is '%s', but linear solver '%s' chooses its own preconditioner (see its keys in "
             "docs/parameters.md)",
             path, pc_name, name);
  }
  char *defaults = NULL;
  EF_CALL(ef_settings_defaults(*ops, *pc_ops, &defaults));
  int err = ef_parameters_validate_defaults(settings, defaults);
  free(defaults);
  return err;
}

int ef_linear_solver_validate(ef_parameters settings, ef_memory memory) {
  const ef_linear_solver_ops *ops;
  const ef_preconditioner_ops *pc_ops;
  return ef_linear_solver_resolve(settings, memory, &ops, &pc_ops);
}

int ef_linear_solver_create(ef_parameters settings, ef_memory memory, const ef_matrix *A, ef_linear_solver **out) {
  *out = NULL;
  EF_CHECK(A && A->memory == memory, EF_ERR_PARAMETER, "linear solver: the matrix is not in %s memory",
           ef_memory_name(memory));
  const char *path = ef_parameters_path(settings);
  const ef_linear_solver_ops *ops;
  const ef_preconditioner_ops *pc_ops;
  EF_CALL(ef_linear_solver_resolve(settings, memory, &ops, &pc_ops));
  EF_CHECK(ef_comm_size(A->layout.comm) <= 1 || (ops->distributed && A->global_row), EF_ERR_UNSUPPORTED,
           "%s: linear solver '%s' does not run across ranks (a matrix of %d ranks%s)", path, ops->name,
           ef_comm_size(A->layout.comm), ops->distributed ? " without global rows" : "");
  int err = EF_SUCCESS;
  ef_linear_solver *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "out of memory");
  s->ops = ops;
  s->A = *A;
  s->n = A->layout.n_owned + A->layout.n_ghost;
  ef_linear_solver_common *c = &s->common;
  long max_it = 0, verbosity = 0;
  EF_CALL_GOTO(ef_parameters_get_string(settings, "solver_type", &c->solver_type), fail);
  EF_CALL_GOTO(ef_parameters_get_string(settings, "preconditioner_type", &c->preconditioner_type), fail);
  EF_CALL_GOTO(ef_parameters_get_double(settings, "tolerance", &c->tolerance), fail);
  EF_CALL_GOTO(ef_parameters_get_int(settings, "max_iteration", &max_it), fail);
  EF_CALL_GOTO(ef_parameters_get_int(settings, "verbosity", &verbosity), fail);
  EF_CHECK_GOTO(c->tolerance > 0.0 && c->tolerance < 1.0, EF_ERR_PARAMETER, fail,
                "%s.tolerance must be in (0, 1), got %g", path, c->tolerance);
  EF_CHECK_GOTO(max_it > 0 && max_it <= 1000000000L, EF_ERR_PARAMETER, fail,
                "%s.max_iteration must be a positive integer, got %ld", path, max_it);
  c->max_iteration = (int)max_it;
  c->verbosity = (int)verbosity;
  if (memory == EF_MEMORY_HOST) {
    s->work = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *s->work);
    EF_CHECK_GOTO(s->work, EF_ERR_MEMORY, fail, "out of memory for a linear solver of %lld rows", (long long)s->n);
  }
  if (pc_ops) EF_CALL_GOTO(ef_preconditioner_create(settings, pc_ops, A, &s->pc), fail);
  err = ops->create(settings, c, A, s->pc, &s->data);
  if (err) {
    err = ef_error_push(err, __FILE__, __LINE__, "creating linear solver '%s' (%s)", ops->name,
                        ef_memory_name(memory));
    goto fail;
  }
  *out = s;
  return EF_SUCCESS;
fail:
  ef_linear_solver_destroy(&s);
  return err;
}

int ef_linear_solver_setup(ef_linear_solver *s, const ef_matrix *A) {
  s->A = *A;
  if (s->pc) EF_CALL(ef_preconditioner_setup(s->pc, A));
  return s->ops->setup ? s->ops->setup(s->data, A) : EF_SUCCESS;
}

/* ||b - A x|| / ||b|| of a host system (b's mean removed first when A has the constant null
 * space, as the solvers do). */
static double ef_host_true_residual(const ef_matrix *A, const double *b, const double *x, double *r) {
  const int64_t n = A->layout.n_owned;
  double mean = 0.0, rr = 0.0, bb = 0.0;
  if (A->constant_null_space) {
    for (int64_t i = 0; i < n; ++i) mean += b[i];
    mean /= (double)n;
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += A->values[k] * x[A->col[k]];
    r[i] = (b[i] - mean) - s;
    rr += r[i] * r[i];
    bb += (b[i] - mean) * (b[i] - mean);
  }
  return bb > 0.0 ? sqrt(rr / bb) : sqrt(rr);
}

int ef_linear_solver_solve(ef_linear_solver *s, const ef_vector *b, ef_vector *x, ef_solve_result *result) {
  ef_solve_result local;
  if (!result) result = &local;
  memset(result, 0, sizeof *result);
  result->true_residual = -1.0;
  const double t0 = ef_wtime();
  int err = s->ops->solve(s->data, b, x, result);
  result->seconds = ef_wtime() - t0;
  /* Host solvers that do not measure it: one SpMV here, the same measure for all of them (one
   * process only: a distributed solver measures it itself). */
  if (!err && result->true_residual < 0.0 && s->A.memory == EF_MEMORY_HOST && s->work &&
      ef_comm_size(s->A.layout.comm) <= 1)
    result->true_residual = ef_host_true_residual(&s->A, b->host, x->host, s->work);
  return err;
}

int ef_linear_solver_view(ef_linear_solver *s, ef_parameters report) {
  EF_CALL(ef_parameters_set_string(report, "solver_type", s->common.solver_type));
  EF_CALL(ef_parameters_set_string(report, "memory", ef_memory_name(s->ops->memory)));
  if (s->pc) EF_CALL(ef_parameters_set_string(report, "preconditioner_type", s->common.preconditioner_type));
  EF_CALL(ef_parameters_set_double(report, "tolerance", s->common.tolerance));
  EF_CALL(ef_parameters_set_double(report, "max_iteration", s->common.max_iteration));
  if (s->ops->view) {
    ef_parameters sub;
    EF_CALL(ef_parameters_set_json(report, "solver", "{}"));
    EF_CALL(ef_parameters_get(report, "solver", &sub));
    EF_CALL(s->ops->view(s->data, sub));
  }
  if (s->pc && s->pc->ops->view) {
    ef_parameters sub;
    EF_CALL(ef_parameters_set_json(report, "preconditioner", "{}"));
    EF_CALL(ef_parameters_get(report, "preconditioner", &sub));
    EF_CALL(s->pc->ops->view(s->pc->data, sub));
  }
  return EF_SUCCESS;
}

const ef_linear_solver_common *ef_linear_solver_settings(const ef_linear_solver *s) { return &s->common; }
void *ef_linear_solver_data(const ef_linear_solver *s) { return s ? s->data : NULL; }
const ef_linear_solver_ops *ef_linear_solver_get_ops(const ef_linear_solver *s) { return s ? s->ops : NULL; }
ef_preconditioner *ef_linear_solver_preconditioner(const ef_linear_solver *s) { return s ? s->pc : NULL; }

void ef_linear_solver_destroy(ef_linear_solver **s) {
  if (!s || !*s) return;
  if ((*s)->ops && (*s)->data) (*s)->ops->destroy(&(*s)->data);
  ef_preconditioner_destroy(&(*s)->pc);
  free((*s)->work);
  free(*s);
  *s = NULL;
}

/* The solver's own restart records, tagged with its name so another solver skips them. */
int ef_linear_solver_save_state(ef_linear_solver *s, ef_restart_writer *w) {
  EF_CHECK(s && w, EF_ERR_PARAMETER, "ef_linear_solver_save_state: NULL argument");
  EF_CALL(ef_restart_write_string(w, "solver_type", s->ops->name));
  return s->ops->save_state ? s->ops->save_state(s->data, w) : EF_SUCCESS;
}

/* Restore what save_state wrote when the file's solver is this one (else nothing to restore). */
int ef_linear_solver_load_state(ef_linear_solver *s, ef_restart_reader *r) {
  EF_CHECK(s && r, EF_ERR_PARAMETER, "ef_linear_solver_load_state: NULL argument");
  char name[128];
  if (ef_restart_count(r, "solver_type") < 0) return EF_SUCCESS;
  EF_CALL(ef_restart_read_string(r, "solver_type", name, sizeof name));
  if (strcmp(name, s->ops->name) || !s->ops->load_state) return EF_SUCCESS;
  return s->ops->load_state(s->data, r);
}

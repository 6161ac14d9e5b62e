/* process_common.c -- what processes share: parameter helpers, the
 * boundary-condition group that combines value-assigning processes, and the
 * registration of every core process.
 *
 * Why a group: Kratos processes each fix and free their own dofs, so a process
 * leaving its interval frees a node another process still wants fixed.  Here
 * every value-assigning process of a model part joins one group (in list
 * order) and the group decides each node and component from all members at
 * once: the value comes from the LAST active member that assigns it, the dof
 * is fixed when ANY active member constrains it (or it was fixed before any
 * process touched it, e.g. by the mesh file).  The group only rewrites host
 * data and marks variables modified when something actually changes, so a
 * strategy that keeps the solution on a device sees no traffic in steady state.
 *
 * Not thread-safe: processes are created and run by one thread (the analysis).
 */
#include "process_internal.h"
#include "edgeflow/ef_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Parameter helpers. */

/* Validate p against defaults; keys in poly may hold any of their allowed types. */
int ef_process_validate(ef_parameters p, const char *defaults, const ef_poly_key *poly, int n_poly) {
  EF_CHECK(ef_parameters_type(p) == EF_JSON_OBJECT, EF_ERR_PARAMETER, "%s: '%s' is %s, expected an object",
           ef_parameters_origin(p), ef_parameters_path(p)[0] ? ef_parameters_path(p) : "Parameters",
           ef_json_type_name(ef_parameters_type(p)));
  if (n_poly == 0) return ef_parameters_validate_defaults(p, defaults);
  /* Kratos' trick: a present polymorphic key is checked here, and its default
   * becomes null (any type) so the generic validation accepts it. */
  ef_parameters d = NULL;
  EF_CALL(ef_parameters_parse(defaults, "<process defaults>", &d));
  int err = EF_SUCCESS;
  for (int i = 0; i < n_poly && !err; i++) {
    if (!ef_parameters_has(p, poly[i].key)) continue;
    ef_parameters v;
    EF_CALL_GOTO(ef_parameters_get(p, poly[i].key, &v), done);
    ef_json_type type = ef_parameters_type(v);
    EF_CHECK_GOTO(poly[i].types & EF_TYPE_BIT(type), EF_ERR_PARAMETER, done, "%s: '%s' is %s, expected %s",
                  ef_parameters_origin(v), ef_parameters_path(v), ef_json_type_name(type), poly[i].what);
    EF_CALL_GOTO(ef_parameters_set_json(d, poly[i].key, "null"), done);
  }
  char *text = ef_parameters_to_string(d, 0);
  EF_CHECK_GOTO(text, EF_ERR_MEMORY, done, "out of memory");
  err = ef_parameters_validate_defaults(p, text);
  free(text);
done:
  ef_parameters_destroy(&d);
  return err;
}

/* The sub model part named by p[key] (NULL for the root model part itself). */
int ef_process_resolve_part(ef_model_part mp, ef_parameters p, const char *key, ef_sub_model_part **smp,
                            const char **name) {
  *smp = NULL;
  const char *text;
  EF_CALL(ef_parameters_get_string(p, key, &text));
  if (name) *name = text;
  EF_CHECK(text[0], EF_ERR_PARAMETER, "%s: '%s%s%s' is empty: name the (sub) model part, e.g. \"%s.Inlet\"",
           ef_parameters_origin(p), ef_parameters_path(p), ef_parameters_path(p)[0] ? "." : "", key, mp->name);
  if (!strcmp(text, mp->name)) return EF_SUCCESS;
  *smp = ef_model_part_find_sub_model_part(mp, text);
  if (*smp) return EF_SUCCESS;
  if (ef_model_part_is_root_alias(mp, text)) return EF_SUCCESS;
  int err = ef_model_part_get_sub_model_part(mp, text, smp);
  return ef_error_push(err, __FILE__, __LINE__, "%s: '%s%s%s'", ef_parameters_origin(p), ef_parameters_path(p),
                       ef_parameters_path(p)[0] ? "." : "", key);
}

/* local_axes exists in Kratos' defaults; only the empty (global) axes are supported. */
int ef_process_check_local_axes(ef_parameters p) {
  ef_parameters axes;
  EF_CALL(ef_parameters_get(p, "local_axes", &axes));
  EF_CHECK(ef_parameters_type(axes) == EF_JSON_OBJECT && ef_parameters_size(axes) == 0, EF_ERR_UNSUPPORTED,
           "%s: '%s' must be {} (local axes are not supported; give the values in global axes)",
           ef_parameters_origin(axes), ef_parameters_path(axes));
  return EF_SUCCESS;
}

int ef_is_solution_variable(const char *name) { return !strcmp(name, "VELOCITY") || !strcmp(name, "PRESSURE"); }

/* ---------------------------------------------------------------------------
 * The group of a model part. */

/* Dofs the group fixed itself, as node id * 4 + component (ids survive renumbering). */
typedef struct {
  char name[EF_VARIABLE_NAME_MAX];
  int initialized; /* updated at least once since the last member joined */
  int64_t n, cap;
  int64_t *keys;
} ef_group_variable;

struct ef_bc_group_s {
  ef_model_part mp;
  int n_members, cap_members;
  ef_bc_member **members;
  int n_vars;
  ef_group_variable *vars;
  int valid;   /* `time` below was applied with the current members */
  double time;
  ef_bc_group *next;
};

static ef_bc_group *ef_groups;

static int ef_group_get(ef_model_part mp, ef_bc_group **out) {
  for (ef_bc_group *g = ef_groups; g; g = g->next)
    if (g->mp == mp) {
      *out = g;
      return EF_SUCCESS;
    }
  ef_bc_group *g = calloc(1, sizeof *g);
  EF_CHECK(g, EF_ERR_MEMORY, "out of memory creating the boundary condition group");
  g->mp = mp;
  g->next = ef_groups;
  ef_groups = g;
  *out = g;
  return EF_SUCCESS;
}

/* Free the group once nobody is in it. */
static void ef_group_release(ef_bc_group *g) {
  if (g->n_members) return;
  for (ef_bc_group **p = &ef_groups; *p; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      break;
    }
  for (int i = 0; i < g->n_vars; i++) free(g->vars[i].keys);
  free(g->vars);
  free(g->members);
  free(g);
}

static int ef_group_variable_index(ef_bc_group *g, const char *name, int *index) {
  for (int i = 0; i < g->n_vars; i++)
    if (!strcmp(g->vars[i].name, name)) {
      *index = i;
      return EF_SUCCESS;
    }
  ef_group_variable *grown = realloc(g->vars, (size_t)(g->n_vars + 1) * sizeof *grown);
  EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
  g->vars = grown;
  memset(&g->vars[g->n_vars], 0, sizeof g->vars[g->n_vars]);
  snprintf(g->vars[g->n_vars].name, sizeof g->vars[g->n_vars].name, "%s", name);
  *index = g->n_vars++;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Members. */

int ef_bc_member_new(ef_model_part mp, const char *label, ef_bc_member **m) {
  *m = NULL;
  EF_CHECK(mp, EF_ERR_PARAMETER, "a boundary condition process needs a model part");
  ef_bc_member *x = calloc(1, sizeof *x);
  EF_CHECK(x, EF_ERR_MEMORY, "out of memory creating %s", label);
  x->mp = mp;
  snprintf(x->label, sizeof x->label, "%s", label);
  for (int c = 0; c < 3; c++) x->scale[c] = 1.0;
  x->interval.start = -HUGE_VAL;
  x->interval.end = HUGE_VAL;
  *m = x;
  return EF_SUCCESS;
}

/* Resolve the variable; "VELOCITY_X" names one component of VELOCITY for scalar processes. */
int ef_bc_member_set_variable(ef_bc_member *m, const char *name, int want_vector, int *component) {
  if (component) *component = -1;
  ef_variable *v = ef_model_part_find_variable(m->mp, name);
  if (!v && !want_vector) {
    size_t n = strlen(name);
    if (n > 2 && name[n - 2] == '_' && (name[n - 1] == 'X' || name[n - 1] == 'Y' || name[n - 1] == 'Z') &&
        n - 2 < EF_VARIABLE_NAME_MAX) {
      char base[EF_VARIABLE_NAME_MAX];
      memcpy(base, name, n - 2);
      base[n - 2] = '\0';
      ef_variable *bv = ef_model_part_find_variable(m->mp, base);
      if (bv && bv->n_components == 3) {
        snprintf(m->variable, sizeof m->variable, "%s", base);
        m->n_components = 3;
        if (component) *component = name[n - 1] - 'X';
        return EF_SUCCESS;
      }
    }
  }
  if (!v) {
    int err = ef_model_part_get_variable(m->mp, name, &v);
    return ef_error_push(err, __FILE__, __LINE__, "%s", m->label);
  }
  EF_CHECK(strlen(name) < sizeof m->variable, EF_ERR_PARAMETER, "%s: variable name '%s' is too long", m->label,
           name);
  if (want_vector)
    EF_CHECK(v->n_components == 3, EF_ERR_PARAMETER, "%s: '%s' is a scalar variable; use assign_scalar_variable_process",
             m->label, name);
  else
    EF_CHECK(v->n_components == 1, EF_ERR_PARAMETER,
             "%s: '%s' is a vector variable; use assign_vector_variable_process or a component such as %s_X",
             m->label, name, name);
  snprintf(m->variable, sizeof m->variable, "%s", name);
  m->n_components = v->n_components;
  return EF_SUCCESS;
}

int ef_bc_member_attach(ef_bc_member *m) {
  EF_CHECK(!m->group, EF_ERR_INTERNAL, "%s joined its group twice", m->label);
  /* Fixity only means something for the unknowns of the flow. */
  if (!ef_is_solution_variable(m->variable))
    for (int c = 0; c < 3; c++) m->constrained[c] = 0;
  ef_bc_group *g = NULL;
  EF_CALL(ef_group_get(m->mp, &g));
  int vi, err = ef_group_variable_index(g, m->variable, &vi);
  if (err) {
    ef_group_release(g);
    return err;
  }
  if (g->n_members == g->cap_members) {
    int cap = g->cap_members ? 2 * g->cap_members : 8;
    ef_bc_member **grown = realloc(g->members, (size_t)cap * sizeof *grown);
    if (!grown) {
      ef_group_release(g);
      return EF_ERROR(EF_ERR_MEMORY, "out of memory");
    }
    g->members = grown;
    g->cap_members = cap;
  }
  g->members[g->n_members++] = m;
  m->group = g;
  m->active = 0;
  g->valid = 0;
  for (int i = 0; i < g->n_vars; i++) g->vars[i].initialized = 0;
  return EF_SUCCESS;
}

void ef_bc_member_destroy(ef_bc_member **m) {
  if (!m || !*m) return;
  ef_bc_member *x = *m;
  ef_bc_group *g = x->group;
  if (g) {
    int j = 0;
    for (int i = 0; i < g->n_members; i++)
      if (g->members[i] != x) g->members[j++] = g->members[i];
    g->n_members = j;
    /* The next update recomputes everything, so the leaver's dofs are given back. */
    g->valid = 0;
    for (int i = 0; i < g->n_vars; i++) g->vars[i].initialized = 0;
    ef_group_release(g);
  }
  for (int i = 0; i < x->n_owned; i++) ef_expression_destroy(&x->owned[i]);
  free(x);
  *m = NULL;
}

static double ef_member_value(const ef_bc_member *m, int c, const double *x, double t) {
  return m->scale[c] * ef_expression_eval(m->expr[c], x[0], x[1], x[2], t);
}

/* Values must be re-applied every step: they depend on t, or (unconstrained
 * unknowns) Kratos re-assigns them at the start of each step. */
static int ef_member_refreshes(const ef_bc_member *m) {
  for (int c = 0; c < 3; c++) {
    if (!m->assign[c]) continue;
    if (ef_expression_depends_on_time(m->expr[c])) return 1;
    if (ef_is_solution_variable(m->variable) && !m->constrained[c]) return 1;
  }
  return 0;
}

/* Every component it assigns is a fixed unknown: the strategy takes its values
 * through evaluate_fixed_values, the host copy need not be refreshed. */
static int ef_member_fixed_only(const ef_bc_member *m) {
  if (!ef_is_solution_variable(m->variable)) return 0;
  for (int c = 0; c < 3; c++)
    if (m->assign[c] && !m->constrained[c]) return 0;
  return 1;
}

static int ef_keys_push(ef_group_variable *gv, int64_t key) {
  if (gv->n == gv->cap) {
    int64_t cap = gv->cap ? 2 * gv->cap : 64;
    int64_t *grown = realloc(gv->keys, (size_t)cap * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
    gv->keys = grown;
    gv->cap = cap;
  }
  gv->keys[gv->n++] = key;
  return EF_SUCCESS;
}

/* Recompute values and fixity of one variable from the active members at time t. */
static int ef_group_apply_variable(ef_bc_group *g, ef_group_variable *gv, double t) {
  ef_model_part mp = g->mp;
  ef_variable *var;
  EF_CALL(ef_model_part_get_variable(mp, gv->name, &var));
  const int nc = var->n_components;
  const int64_t n = mp->n_nodes * nc;
  uint8_t *claimed = NULL, *want = NULL, *was = NULL;
  int err = EF_SUCCESS;
  claimed = calloc((size_t)(n ? n : 1), 1);
  want = calloc((size_t)(n ? n : 1), 1);
  was = calloc((size_t)(n ? n : 1), 1);
  EF_CHECK_GOTO(claimed && want && was, EF_ERR_MEMORY, done, "out of memory applying %s", gv->name);
  for (int64_t k = 0; k < gv->n; k++) {
    ef_index node = ef_model_part_node_index(mp, gv->keys[k] / 4);
    int c = (int)(gv->keys[k] % 4);
    if (node >= 0 && c < nc) was[(int64_t)node * nc + c] = 1;
  }
  int changed = 0;
  /* Later wins: walk the members backwards and let the first one to reach a dof claim it. */
  for (int i = g->n_members - 1; i >= 0; i--) {
    const ef_bc_member *m = g->members[i];
    if (!m->active || strcmp(m->variable, gv->name)) continue;
    const int64_t nn = ef_part_n_nodes(mp, m->smp);
    for (int64_t k = 0; k < nn; k++) {
      ef_index node = ef_part_node(m->smp, k);
      const double *x = mp->coords + 3 * (int64_t)node;
      for (int c = 0; c < nc; c++) {
        if (!m->assign[c]) continue;
        int64_t d = (int64_t)node * nc + c;
        if (m->constrained[c]) want[d] = 1;
        if (claimed[d]) continue;
        claimed[d] = 1;
        double v = ef_member_value(m, c, x, t);
        EF_CHECK_GOTO(isfinite(v), EF_ERR_PARAMETER, done,
                      "%s: the value of %s (expression '%s') at node %lld (%g, %g, %g), t = %g, is %g", m->label,
                      gv->name, ef_expression_text(m->expr[c]), (long long)mp->node_ids[node], x[0], x[1], x[2], t, v);
        if (var->values[d] != v) {
          var->values[d] = v;
          changed = 1;
        }
      }
    }
  }
  gv->n = 0;
  for (int64_t d = 0; d < n; d++) {
    if (!want[d] && !was[d]) continue;
    int base = var->fixed[d] && !was[d]; /* fixed before the group touched it */
    uint8_t fixed = (uint8_t)(base || want[d]);
    if (var->fixed[d] != fixed) {
      var->fixed[d] = fixed;
      changed = 1;
    }
    if (want[d] && !base) EF_CALL_GOTO(ef_keys_push(gv, mp->node_ids[d / nc] * 4 + d % nc), done);
  }
  if (changed) EF_CALL_GOTO(ef_model_part_mark_modified(mp, gv->name), done);
done:
  free(claimed);
  free(want);
  free(was);
  return err;
}

/* Bring the group to time t: members switch on/off by their intervals, values
 * that depend on t are refreshed, and nothing is touched when nothing changes. */
static int ef_group_update(ef_bc_group *g, double t) {
  if (g->valid && g->time == t) return EF_SUCCESS;
  ef_model_part mp = g->mp;
  for (int v = 0; v < g->n_vars; v++) {
    ef_group_variable *gv = &g->vars[v];
    int switched = !gv->initialized, refresh = 0, all_fixed_only = 1;
    for (int i = 0; i < g->n_members; i++) {
      ef_bc_member *m = g->members[i];
      if (strcmp(m->variable, gv->name)) continue;
      int active = ef_interval_contains(m->interval, t);
      if (active != m->active) switched = 1;
      if (active && ef_member_refreshes(m)) {
        refresh = 1;
        if (!ef_member_fixed_only(m)) all_fixed_only = 0;
      }
    }
    if (!switched && !refresh) continue;
    /* Time-dependent fixed values reach a device strategy through
     * evaluate_fixed_values: no need to download the solution for them. */
    if (!switched && all_fixed_only && mp->device_newer) continue;
    EF_CALL(ef_model_part_sync_to_host(mp));
    for (int i = 0; i < g->n_members; i++)
      if (!strcmp(g->members[i]->variable, gv->name))
        g->members[i]->active = ef_interval_contains(g->members[i]->interval, t);
    EF_CALL(ef_group_apply_variable(g, gv, t));
    gv->initialized = 1;
  }
  g->valid = 1;
  g->time = t;
  return EF_SUCCESS;
}

int ef_bc_execute_initialize_solution_step(void *data, double time) {
  ef_bc_member *m = data;
  EF_CHECK(m->group, EF_ERR_INTERNAL, "%s is not attached to its group", m->label);
  int err = ef_group_update(m->group, time);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "boundary conditions at t = %g", time);
  return EF_SUCCESS;
}

/* Prescribed values at t into the fixed entries this member assigns; the
 * analysis calls the members in list order, so the later one wins. */
int ef_bc_evaluate_fixed_values(void *data, double t, double *velocity, double *pressure) {
  ef_bc_member *m = data;
  if (!m->active) return EF_SUCCESS;
  double *out;
  int stride;
  if (!strcmp(m->variable, "VELOCITY")) {
    out = velocity;
    stride = 3;
  } else if (!strcmp(m->variable, "PRESSURE")) {
    out = pressure;
    stride = 1;
  } else {
    return EF_SUCCESS;
  }
  if (!out) return EF_SUCCESS;
  ef_model_part mp = m->mp;
  ef_variable *var;
  EF_CALL(ef_model_part_get_variable(mp, m->variable, &var));
  const int nc = var->n_components;
  const int64_t nn = ef_part_n_nodes(mp, m->smp);
  for (int64_t k = 0; k < nn; k++) {
    ef_index node = ef_part_node(m->smp, k);
    const double *x = mp->coords + 3 * (int64_t)node;
    for (int c = 0; c < nc; c++)
      if (m->assign[c] && var->fixed[(int64_t)node * nc + c]) {
        double v = ef_member_value(m, c, x, t);
        /* a singular formula (1/(y-0.5) on y = 0.5) named here, not as a non-finite right-hand side later */
        EF_CHECK(isfinite(v), EF_ERR_PARAMETER,
                 "%s: the value of %s component %d (expression '%s') at node %lld (%g, %g, %g), t = %g, is %g",
                 m->label, m->variable, c, ef_expression_text(m->expr[c]), (long long)mp->node_ids[node], x[0], x[1],
                 x[2], t, v);
        out[(int64_t)node * stride + c] = v;
      }
  }
  return EF_SUCCESS;
}

/* 1 when the prescribed values of the unknowns change with t. */
int ef_bc_is_time_dependent(void *data) {
  ef_bc_member *m = data;
  if (!ef_is_solution_variable(m->variable)) return 0;
  for (int c = 0; c < 3; c++)
    if (m->assign[c] && ef_expression_depends_on_time(m->expr[c])) return 1;
  return 0;
}

void ef_bc_destroy(void **data) {
  if (!data || !*data) return;
  ef_bc_member *m = *data;
  ef_bc_member_destroy(&m);
  *data = NULL;
}

/* ---------------------------------------------------------------------------
 * Registration. */

/* Register every process the core implements under its Kratos python_module name. */
int ef_register_core_processes(void) {
  const ef_process_ops *all[] = {&ef_assign_scalar_variable_process_ops, &ef_assign_vector_variable_process_ops,
                                 &ef_assign_vector_by_direction_process_ops, &ef_vtk_output_process_ops,
                                 &ef_probes_output_process_ops, &ef_stop_when_steady_process_ops};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) EF_CALL(ef_registry_add_process(all[i]));
  return EF_SUCCESS;
}

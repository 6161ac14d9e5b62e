/* process_fluid_bc.c -- the FluidDynamicsApplication boundary conditions:
 * apply_inlet_process, apply_outlet_process, apply_noslip_process and
 * apply_slip_process.
 *
 * Inlet, outlet and no-slip are value-assigning members of the model part's
 * boundary-condition group (ef_process_tools.h); slip only marks nodes and
 * their geometry (IS_SLIP, NORMAL, SLIP_TANGENT) for the strategy, classified
 * over all slip processes of a model part together.
 */
#include "edgeflow/ef_process_tools.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EF_NUMBER_OR_STRING (EF_TYPE_BIT(EF_JSON_NUMBER) | EF_TYPE_BIT(EF_JSON_STRING))

/* ---------------------------------------------------------------------------
 * apply_inlet_process: a fixed VELOCITY = modulus * direction. */

static const char ef_inlet_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"variable_name\": \"VELOCITY\", \"modulus\": 0.0,"
    " \"constrained\": true, \"direction\": [1.0, 0.0, 0.0], \"interval\": [0.0, \"End\"]}";

static int ef_inlet_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  static const ef_poly_key poly[] = {
      {"modulus", EF_NUMBER_OR_STRING, "a number or an expression string"},
      {"direction", EF_TYPE_BIT(EF_JSON_STRING) | EF_TYPE_BIT(EF_JSON_ARRAY),
       "\"automatic_inwards_normal\" or [x, y, z]"}};
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "apply_inlet_process", ef_inlet_defaults, poly, 2, &m));
  int err;
  const char *name;
  EF_CALL_GOTO(ef_parameters_get_string(p, "variable_name", &name), fail);
  EF_CHECK_GOTO(!strcmp(name, "VELOCITY"), EF_ERR_PARAMETER, fail, "%s: variable_name is '%s'; an inlet sets VELOCITY",
                m->label, name);
  EF_CALL_GOTO(ef_bc_member_set_variable(m, name, 1, NULL), fail);
  EF_CALL_GOTO(ef_bc_setup_by_direction(m, p), fail);
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

static const ef_process_ops ef_apply_inlet_process_ops = {
    .name = "apply_inlet_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_inlet_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

/* ---------------------------------------------------------------------------
 * apply_outlet_process: a fixed PRESSURE (physical). */

static const char ef_outlet_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"variable_name\": \"PRESSURE\", \"constrained\": true,"
    " \"value\": 0.0, \"interval\": [0.0, \"End\"], \"hydrostatic_outlet\": false, \"h_top\": 0.0,"
    " \"outlet_inflow_contribution\": false, \"outlet_inflow_contribution_characteristic_velocity_value\": 0.0,"
    " \"outlet_inflow_contribution_characteristic_velocity_calculation\": \"outlet_average\"}";

static int ef_outlet_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  static const ef_poly_key poly[] = {{"value", EF_NUMBER_OR_STRING, "a number or an expression string"}};
  /* Kratos requires the value explicitly for outlets. */
  EF_CHECK(ef_parameters_type(p) != EF_JSON_OBJECT || ef_parameters_has(p, "value"), EF_ERR_PARAMETER,
           "%s: '%s' has no \"value\": an outlet needs its pressure", ef_parameters_origin(p), ef_parameters_path(p));
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "apply_outlet_process", ef_outlet_defaults, poly, 1, &m));
  int err, constrained, hydrostatic, inflow;
  const char *name, *velocity_kind;
  ef_expression e = NULL;
  EF_CALL_GOTO(ef_parameters_get_string(p, "variable_name", &name), fail);
  EF_CHECK_GOTO(!strcmp(name, "PRESSURE"), EF_ERR_PARAMETER, fail, "%s: variable_name is '%s'; an outlet sets PRESSURE",
                m->label, name);
  EF_CALL_GOTO(ef_bc_member_set_variable(m, name, 0, NULL), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "hydrostatic_outlet", &hydrostatic), fail);
  EF_CHECK_GOTO(!hydrostatic, EF_ERR_UNSUPPORTED, fail,
                "%s: \"hydrostatic_outlet\": true is not supported; give the pressure profile as an expression in "
                "\"value\" instead (e.g. \"1000*9.81*(h - z)\" with your numbers)",
                m->label);
  EF_CALL_GOTO(ef_parameters_get_string(p, "outlet_inflow_contribution_characteristic_velocity_calculation",
                                        &velocity_kind),
               fail);
  EF_CHECK_GOTO(!strcmp(velocity_kind, "outlet_average") || !strcmp(velocity_kind, "outlet_max") ||
                    !strcmp(velocity_kind, "user_defined"),
                EF_ERR_PARAMETER, fail,
                "%s: outlet_inflow_contribution_characteristic_velocity_calculation is '%s'; expected "
                "\"outlet_average\", \"outlet_max\" or \"user_defined\"",
                m->label, velocity_kind);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "outlet_inflow_contribution", &inflow), fail);
  if (inflow)
    fprintf(stderr,
            "edgeflow: warning: %s: \"outlet_inflow_contribution\": true is ignored (the edge-based scheme adds "
            "no backflow term at outlets)\n",
            m->label);
  EF_CALL_GOTO(ef_interval_from_parameters(p, "interval", &m->interval), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "constrained", &constrained), fail);
  EF_CALL_GOTO(ef_expression_from_parameters(p, "value", &e), fail);
  ef_bc_member_take_expression(m, 0, e);
  m->assign[0] = 1;
  m->constrained[0] = constrained;
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

static const ef_process_ops ef_apply_outlet_process_ops = {
    .name = "apply_outlet_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_outlet_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

/* ---------------------------------------------------------------------------
 * apply_noslip_process: VELOCITY = 0, fixed, always. */

static const char ef_noslip_defaults[] = "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\"}";

static int ef_noslip_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "apply_noslip_process", ef_noslip_defaults, NULL, 0, &m));
  int err;
  ef_expression zero = NULL;
  EF_CALL_GOTO(ef_bc_member_set_variable(m, "VELOCITY", 1, NULL), fail);
  EF_CALL_GOTO(ef_expression_create("0", m->label, &zero), fail);
  for (int c = 0; c < 3; c++) {
    ef_bc_member_take_expression(m, c, zero);
    m->assign[c] = 1;
    m->constrained[c] = 1;
  }
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

static const ef_process_ops ef_apply_noslip_process_ops = {
    .name = "apply_noslip_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_noslip_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

/* ---------------------------------------------------------------------------
 * Slip: one group per model part, so an edge between two slip parts is seen as an edge.
 * Not thread-safe: processes are created and run by one thread (the analysis). */

typedef struct ef_slip_group_s ef_slip_group;

typedef struct {
  ef_model_part mp;
  char label[EF_PROCESS_LABEL_MAX];
  ef_sub_model_part *smp; /* NULL: every condition of the model part */
  double edge_angle_degrees;
  ef_comm comm; /* MPI: a part without faces is one without faces on every rank */
  ef_slip_group *group;
} ef_slip_member;

struct ef_slip_group_s {
  ef_model_part mp;
  int n, cap;
  ef_slip_member **members;
  int done; /* classified with the current members */
  ef_slip_group *next;
};

static ef_slip_group *ef_slip_groups;

/* Join the group of s->mp (created on first use). */
static int ef_slip_member_attach(ef_slip_member *s) {
  ef_slip_group *g = ef_slip_groups;
  while (g && g->mp != s->mp) g = g->next;
  if (!g) {
    g = calloc(1, sizeof *g);
    EF_CHECK(g, EF_ERR_MEMORY, "out of memory creating the slip group");
    g->mp = s->mp;
    g->next = ef_slip_groups;
    ef_slip_groups = g;
  }
  if (g->n == g->cap) {
    int cap = g->cap ? 2 * g->cap : 4;
    ef_slip_member **grown = realloc(g->members, (size_t)cap * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
    g->members = grown;
    g->cap = cap;
  }
  g->members[g->n++] = s;
  g->done = 0;
  s->group = g;
  return EF_SUCCESS;
}

/* Leave the group; the last member frees it. */
static void ef_slip_member_detach(ef_slip_member *s) {
  ef_slip_group *g = s->group;
  if (!g) return;
  int j = 0;
  for (int i = 0; i < g->n; i++)
    if (g->members[i] != s) g->members[j++] = g->members[i];
  g->n = j;
  s->group = NULL;
  if (g->n) return;
  for (ef_slip_group **p = &ef_slip_groups; *p; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      break;
    }
  free(g->members);
  free(g);
}

/* Clusters of face normals at one node: area-weighted sums. */
typedef struct {
  int n;
  double sum[8][3];
} ef_normal_groups;

static void ef_unit(const double *v, double *u) {
  double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int d = 0; d < 3; d++) u[d] = len > 0.0 ? v[d] / len : 0.0;
}

/* Add face normal f (area-weighted) to the group whose mean direction is within
 * the angle (cos_limit) and closest; else start a new group. */
static void ef_groups_add(ef_normal_groups *gr, const double *f, double cos_limit) {
  double uf[3];
  ef_unit(f, uf);
  int best = -1;
  double best_dot = -2.0;
  for (int i = 0; i < gr->n; i++) {
    double ug[3];
    ef_unit(gr->sum[i], ug);
    double dot = ug[0] * uf[0] + ug[1] * uf[1] + ug[2] * uf[2];
    if (dot >= cos_limit && dot > best_dot) {
      best = i;
      best_dot = dot;
    }
  }
  if (best < 0) {
    if (gr->n == 8) best = 7; /* more than 8 directions: a corner either way */
    else {
      best = gr->n++;
      memset(gr->sum[best], 0, sizeof gr->sum[best]);
    }
  }
  for (int d = 0; d < 3; d++) gr->sum[best][d] += f[d];
}

/* Faces of all slip members together, so an edge between two slip parts is seen as an edge. */
static int ef_slip_group_classify(ef_slip_member *s) {
  ef_slip_group *g = s->group;
  EF_CHECK(g, EF_ERR_INTERNAL, "%s is not attached to its group", s->label);
  if (g->done) return EF_SUCCESS;
  ef_model_part mp = g->mp;
  ef_variable *is_slip, *normal, *tangent;
  EF_CALL(ef_model_part_add_variable(mp, "IS_SLIP", 1));
  EF_CALL(ef_model_part_add_variable(mp, "NORMAL", 3));
  EF_CALL(ef_model_part_add_variable(mp, "SLIP_TANGENT", 3));
  EF_CALL(ef_model_part_sync_to_host(mp));
  is_slip = ef_model_part_find_variable(mp, "IS_SLIP");
  normal = ef_model_part_find_variable(mp, "NORMAL");
  tangent = ef_model_part_find_variable(mp, "SLIP_TANGENT");
  EF_CHECK(is_slip && normal && tangent && is_slip->n_components == 1 && normal->n_components == 3 &&
               tangent->n_components == 3,
           EF_ERR_PARAMETER, "model part '%s': IS_SLIP must be a scalar, NORMAL and SLIP_TANGENT vectors", mp->name);

  int err = EF_SUCCESS;
  uint8_t *taken = NULL;
  ef_index *cond = NULL;
  double *face = NULL, *angle = NULL;
  int64_t *start = NULL, *adj = NULL;
  int64_t n = 0;
  EF_CALLOC(taken, mp->n_conditions ? mp->n_conditions : 1);
  cond = malloc((size_t)(mp->n_conditions ? mp->n_conditions : 1) * sizeof *cond);
  angle = malloc((size_t)(mp->n_nodes ? mp->n_nodes : 1) * sizeof *angle);
  EF_CHECK_GOTO(cond && angle, EF_ERR_MEMORY, done, "out of memory classifying slip nodes");
  for (int64_t i = 0; i < mp->n_nodes; i++) angle[i] = -1.0;
  for (int j = 0; j < g->n; j++) {
    ef_slip_member *m = g->members[j];
    int64_t nc = m->smp ? m->smp->n_conditions : mp->n_conditions;
    double nc_all = (double)nc; /* MPI: a rank's piece may hold none of the part's faces */
    EF_CALL_GOTO(ef_comm_allreduce(m->comm, &nc_all, 1, EF_COMM_SUM), done);
    EF_CHECK_GOTO(nc_all > 0, EF_ERR_PARAMETER, done,
                  "%s: the part has no conditions (boundary %s), so there are no normals to slip along", m->label,
                  mp->dim == 2 ? "lines" : "faces");
    for (int64_t k = 0; k < nc; k++) {
      ef_index c = m->smp ? m->smp->conditions[k] : (ef_index)k;
      /* Later wins for the angle of a node shared by two slip parts. */
      for (int q = 0; q < mp->nodes_per_condition; q++)
        angle[mp->conditions[(int64_t)c * mp->nodes_per_condition + q]] = m->edge_angle_degrees;
      if (taken[c]) continue;
      taken[c] = 1;
      cond[n++] = c;
    }
  }
  face = malloc((size_t)n * 3 * sizeof *face);
  EF_CHECK_GOTO(face, EF_ERR_MEMORY, done, "out of memory classifying slip nodes");
  EF_CALL_GOTO(ef_condition_face_normals(mp, n, cond, face), done);

  /* Node -> faces (CSR). */
  const int nf = mp->nodes_per_condition;
  start = calloc((size_t)mp->n_nodes + 1, sizeof *start);
  adj = malloc((size_t)(n > 0 ? n * nf : 1) * sizeof *adj);
  EF_CHECK_GOTO(start && adj, EF_ERR_MEMORY, done, "out of memory classifying slip nodes");
  for (int64_t k = 0; k < n; k++)
    for (int q = 0; q < nf; q++) start[mp->conditions[(int64_t)cond[k] * nf + q] + 1]++;
  for (int64_t i = 0; i < mp->n_nodes; i++) start[i + 1] += start[i];
  for (int64_t k = 0; k < n; k++)
    for (int q = 0; q < nf; q++) {
      ef_index node = mp->conditions[(int64_t)cond[k] * nf + q];
      adj[start[node]++] = k;
    }
  for (int64_t i = mp->n_nodes; i > 0; i--) start[i] = start[i - 1];
  start[0] = 0;

  for (int64_t i = 0; i < mp->n_nodes; i++) {
    if (start[i + 1] == start[i]) continue;
    ef_normal_groups gr;
    gr.n = 0;
    double cos_limit = cos(angle[i] * (3.14159265358979323846 / 180.0)), total[3] = {0.0, 0.0, 0.0};
    for (int64_t a = start[i]; a < start[i + 1]; a++) {
      const double *f = face + 3 * adj[a];
      ef_groups_add(&gr, f, cos_limit);
      for (int d = 0; d < 3; d++) total[d] += f[d];
    }
    double un[3], ut[3] = {0.0, 0.0, 0.0};
    ef_unit(total, un);
    int kind;
    if (gr.n == 1) {
      kind = 1;
    } else if (mp->dim == 3 && gr.n == 2) {
      double n1[3], n2[3], cr[3];
      ef_unit(gr.sum[0], n1);
      ef_unit(gr.sum[1], n2);
      cr[0] = n1[1] * n2[2] - n1[2] * n2[1];
      cr[1] = n1[2] * n2[0] - n1[0] * n2[2];
      cr[2] = n1[0] * n2[1] - n1[1] * n2[0];
      ef_unit(cr, ut);
      kind = 2;
    } else {
      kind = 3;
    }
    is_slip->values[i] = kind;
    for (int d = 0; d < 3; d++) {
      normal->values[3 * i + d] = un[d];
      tangent->values[3 * i + d] = ut[d];
    }
  }
  EF_CALL_GOTO(ef_model_part_mark_modified(mp, "IS_SLIP"), done);
  EF_CALL_GOTO(ef_model_part_mark_modified(mp, "NORMAL"), done);
  EF_CALL_GOTO(ef_model_part_mark_modified(mp, "SLIP_TANGENT"), done);
  g->done = 1;
done:
  free(taken);
  free(cond);
  free(face);
  free(angle);
  free(start);
  free(adj);
  return err;
}

/* ---------------------------------------------------------------------------
 * apply_slip_process: IS_SLIP (1 face, 2 edge, 3 corner), NORMAL, SLIP_TANGENT. */

static const char ef_slip_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"avoid_recomputing_normals\": false,"
    " \"uniform_navier_slip_length\": 0.0, \"edge_angle_degrees\": 30.0}";

static int ef_slip_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "apply_slip_process: no model part in the process context");
  EF_CALL(ef_process_validate(p, ef_slip_defaults, NULL, 0));
  ef_slip_member *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "out of memory");
  s->mp = ctx->model_part;
  s->comm = ctx->comm;
  ef_process_label(s->label, sizeof s->label, "apply_slip_process", p);
  int err;
  double slip_length;
  EF_CALL_GOTO(ef_process_resolve_part(s->mp, p, "model_part_name", &s->smp, NULL), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "uniform_navier_slip_length", &slip_length), fail);
  EF_CHECK_GOTO(slip_length == 0.0, EF_ERR_UNSUPPORTED, fail,
                "%s: uniform_navier_slip_length = %g: only perfect slip (0) is supported", s->label, slip_length);
  EF_CALL_GOTO(ef_parameters_get_double(p, "edge_angle_degrees", &s->edge_angle_degrees), fail);
  EF_CHECK_GOTO(s->edge_angle_degrees > 0.0 && s->edge_angle_degrees < 90.0, EF_ERR_PARAMETER, fail,
                "%s: edge_angle_degrees = %g must lie in (0, 90)", s->label, s->edge_angle_degrees);
  EF_CALL_GOTO(ef_slip_member_attach(s), fail);
  *data = s;
  return EF_SUCCESS;
fail:
  free(s);
  return err;
}

static int ef_slip_execute_initialize(void *data) {
  ef_slip_member *s = data;
  int err = ef_slip_group_classify(s);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s: classifying slip nodes", s->label);
  return EF_SUCCESS;
}

static void ef_slip_destroy(void **data) {
  if (!data || !*data) return;
  ef_slip_member *s = *data;
  ef_slip_member_detach(s);
  free(s);
  *data = NULL;
}

static const ef_process_ops ef_apply_slip_process_ops = {
    .name = "apply_slip_process",
    .distributed = 1, /* owned nodes see all their faces on the piece; ghosts take their owners' values */
    .create = ef_slip_create,
    .execute_initialize = ef_slip_execute_initialize,
    .destroy = ef_slip_destroy,
};

int ef_register_fluid_bc_processes(void) {
  EF_CALL(ef_registry_add_process(&ef_apply_inlet_process_ops));
  EF_CALL(ef_registry_add_process(&ef_apply_outlet_process_ops));
  EF_CALL(ef_registry_add_process(&ef_apply_noslip_process_ops));
  return ef_registry_add_process(&ef_apply_slip_process_ops);
}

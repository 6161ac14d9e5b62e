/* process_assign.c -- Kratos' core assignment processes:
 * assign_scalar_variable_process, assign_vector_variable_process and
 * assign_vector_by_direction_process.
 *
 * Each becomes a member of the model part's boundary-condition group
 * (process_common.c), which applies values and fixity at every
 * execute_initialize_solution_step inside the interval and frees the dofs
 * again outside it.
 */
#include "process_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ef_scalar_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"variable_name\": \"\", \"interval\": [0.0, 1e30],"
    " \"constrained\": true, \"value\": 0.0, \"local_axes\": {}}";

static const char ef_vector_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"variable_name\": \"\", \"interval\": [0.0, 1e30],"
    " \"constrained\": [true, true, true], \"value\": [0.0, 0.0, 0.0], \"local_axes\": {}}";

static const char ef_by_direction_defaults[] =
    "{" EF_KRATOS_BLOCK_KEYS ", \"model_part_name\": \"\", \"variable_name\": \"\", \"interval\": [0.0, 1e30],"
    " \"modulus\": 1.0, \"constrained\": true, \"direction\": [1.0, 0.0, 0.0], \"local_axes\": {}}";

#define EF_NUMBER_OR_STRING (EF_TYPE_BIT(EF_JSON_NUMBER) | EF_TYPE_BIT(EF_JSON_STRING))

/* "<module> on <model_part_name>" for messages. */
void ef_process_label(char *label, size_t size, const char *module, ef_parameters p) {
  const char *name = "?";
  if (ef_parameters_has(p, "model_part_name") && ef_parameters_get_string(p, "model_part_name", &name)) {
    ef_error_clear();
    name = "?";
  }
  snprintf(label, size, "%s on '%s' (%s: %s)", module, name, ef_parameters_origin(p), ef_parameters_path(p));
}

/* The expression keeps component c's value; the member owns it. */
int ef_bc_member_take_expression(ef_bc_member *m, int c, ef_expression e) {
  m->expr[c] = e;
  int owned = 0;
  for (int i = 0; i < m->n_owned; i++) owned |= m->owned[i] == e;
  if (!owned) m->owned[m->n_owned++] = e;
  return EF_SUCCESS;
}

/* Create step shared by the three processes: validation, part, label. */
int ef_bc_member_begin(const ef_process_context *ctx, ef_parameters p, const char *module, const char *defaults,
                           const ef_poly_key *poly, int n_poly, ef_bc_member **m) {
  *m = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "%s: no model part in the process context", module);
  EF_CALL(ef_process_validate(p, defaults, poly, n_poly));
  char label[EF_PROCESS_LABEL_MAX];
  ef_process_label(label, sizeof label, module, p);
  EF_CALL(ef_bc_member_new(ctx->model_part, label, m));
  (*m)->comm = ctx->comm;
  int err;
  if (ef_parameters_has(p, "local_axes")) EF_CALL_GOTO(ef_process_check_local_axes(p), fail);
  EF_CALL_GOTO(ef_process_resolve_part(ctx->model_part, p, "model_part_name", &(*m)->smp, NULL), fail);
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(m);
  return err;
}

/* ---------------------------------------------------------------------------
 * assign_scalar_variable_process */

static int ef_assign_scalar_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  static const ef_poly_key poly[] = {{"value", EF_NUMBER_OR_STRING, "a number or an expression string"}};
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "assign_scalar_variable_process", ef_scalar_defaults, poly, 1, &m));
  int err, component, constrained;
  const char *name;
  ef_expression e = NULL;
  EF_CALL_GOTO(ef_parameters_get_string(p, "variable_name", &name), fail);
  EF_CALL_GOTO(ef_bc_member_set_variable(m, name, 0, &component), fail);
  EF_CALL_GOTO(ef_interval_from_parameters(p, "interval", &m->interval), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "constrained", &constrained), fail);
  EF_CALL_GOTO(ef_expression_from_parameters(p, "value", &e), fail);
  int c = component < 0 ? 0 : component;
  ef_bc_member_take_expression(m, c, e);
  m->assign[c] = 1;
  m->constrained[c] = constrained;
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

const ef_process_ops ef_assign_scalar_variable_process_ops = {
    .name = "assign_scalar_variable_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_assign_scalar_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

/* ---------------------------------------------------------------------------
 * assign_vector_variable_process */

static int ef_assign_vector_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  static const ef_poly_key poly[] = {
      {"constrained", EF_TYPE_BIT(EF_JSON_BOOL) | EF_TYPE_BIT(EF_JSON_ARRAY), "true/false or [b, b, b]"}};
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "assign_vector_variable_process", ef_vector_defaults, poly, 1, &m));
  int err;
  const char *name;
  EF_CALL_GOTO(ef_parameters_get_string(p, "variable_name", &name), fail);
  EF_CALL_GOTO(ef_bc_member_set_variable(m, name, 1, NULL), fail);
  EF_CALL_GOTO(ef_interval_from_parameters(p, "interval", &m->interval), fail);

  int constrained[3] = {1, 1, 1};
  ef_parameters cv, vv;
  EF_CALL_GOTO(ef_parameters_get(p, "constrained", &cv), fail);
  if (ef_parameters_type(cv) == EF_JSON_BOOL) {
    EF_CALL_GOTO(ef_parameters_get_bool(p, "constrained", &constrained[0]), fail);
    constrained[1] = constrained[2] = constrained[0];
  } else {
    EF_CHECK_GOTO(ef_parameters_size(cv) == 3, EF_ERR_PARAMETER, fail, "%s: '%s' has %d entries, expected 3 booleans",
                  ef_parameters_origin(cv), ef_parameters_path(cv), ef_parameters_size(cv));
    for (int c = 0; c < 3; c++) {
      ef_parameters b;
      EF_CALL_GOTO(ef_parameters_at(cv, c, &b), fail);
      EF_CHECK_GOTO(ef_parameters_type(b) == EF_JSON_BOOL, EF_ERR_PARAMETER, fail, "%s: '%s' is %s, expected a boolean",
                    ef_parameters_origin(b), ef_parameters_path(b), ef_json_type_name(ef_parameters_type(b)));
      char *text = ef_parameters_to_string(b, 0);
      EF_CHECK_GOTO(text, EF_ERR_MEMORY, fail, "out of memory");
      constrained[c] = !strcmp(text, "true");
      free(text);
    }
  }
  EF_CALL_GOTO(ef_parameters_get(p, "value", &vv), fail);
  EF_CHECK_GOTO(ef_parameters_size(vv) == 3, EF_ERR_PARAMETER, fail,
                "%s: '%s' has %d entries, expected 3 (a number, an expression string or null each)",
                ef_parameters_origin(vv), ef_parameters_path(vv), ef_parameters_size(vv));
  for (int c = 0; c < 3; c++) {
    ef_parameters v;
    EF_CALL_GOTO(ef_parameters_at(vv, c, &v), fail);
    if (ef_parameters_type(v) == EF_JSON_NULL) continue; /* component left alone */
    ef_expression e;
    EF_CALL_GOTO(ef_expression_from_parameters(v, NULL, &e), fail);
    ef_bc_member_take_expression(m, c, e);
    m->assign[c] = 1;
    m->constrained[c] = constrained[c];
  }
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

const ef_process_ops ef_assign_vector_variable_process_ops = {
    .name = "assign_vector_variable_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_assign_vector_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

/* ---------------------------------------------------------------------------
 * assign_vector_by_direction_process (and the inlet, which is one with checks) */

/* The same on a rank's piece (ef_partition.h): a condition is on every rank that owns one of its nodes,
 * so each rank sums those whose first node it owns and the sums are reduced over the ranks. */
static int ef_part_mean_normal_distributed(ef_bc_member *m, int64_t n, double *dir) {
  ef_model_part mp = m->mp;
  const ef_index *cond = m->smp ? m->smp->conditions : NULL;
  const int npc = mp->nodes_per_condition;
  double total[5] = {0.0, 0.0, 0.0, 0.0, 0.0}; /* sum A_f n_f, area, count */
  int err = EF_SUCCESS;
  double *face = malloc((size_t)(n + 1) * 3 * sizeof *face);
  ef_index *mine = malloc((size_t)(n + 1) * sizeof *mine);
  int64_t n_mine = 0;
  EF_CHECK_GOTO(face && mine, EF_ERR_MEMORY, done, "out of memory");
  for (int64_t k = 0; k < n; k++) {
    const ef_index c = cond ? cond[k] : (ef_index)k;
    if (mp->conditions[(int64_t)c * npc] < mp->n_owned_nodes) mine[n_mine++] = c;
  }
  if (n_mine) EF_CALL_GOTO(ef_condition_face_normals(mp, n_mine, mine, face), done);
  for (int64_t k = 0; k < n_mine; k++) {
    for (int d = 0; d < 3; d++) total[d] += face[3 * k + d];
    total[3] += sqrt(face[3 * k] * face[3 * k] + face[3 * k + 1] * face[3 * k + 1] + face[3 * k + 2] * face[3 * k + 2]);
  }
  total[4] = (double)n_mine;
done:
  free(face);
  free(mine);
  /* Every rank reduces, also one that failed (a flag in the count), so none waits for another. */
  if (err) total[4] = -1e300;
  int cerr = ef_comm_allreduce(m->comm, total, 5, EF_COMM_SUM);
  if (err) return err;
  if (cerr) return cerr;
  EF_CHECK(total[4] >= 0.0, EF_ERR_INTERNAL, "%s: the mean normal failed on another rank", m->label);
  EF_CHECK(total[4] > 0.0, EF_ERR_PARAMETER,
           "%s: \"automatic_inwards_normal\" needs the part's conditions (boundary %s), and it has none", m->label,
           mp->dim == 2 ? "lines" : "faces");
  double len = sqrt(total[0] * total[0] + total[1] * total[1] + total[2] * total[2]);
  EF_CHECK(len > 1e-6 * total[3] && total[3] > 0.0, EF_ERR_PARAMETER,
           "%s: the part's face normals cancel out (|mean normal| = %g of the area %g), so it has no "
           "automatic direction; give \"direction\": [x, y, z]",
           m->label, len, total[3]);
  for (int d = 0; d < 3; d++) dir[d] = total[d] / len;
  return EF_SUCCESS;
}

/* Unit mean outward normal of the part: sum of A_f n_f over its conditions, normalised. */
static int ef_part_mean_normal(ef_bc_member *m, double *dir) {
  ef_model_part mp = m->mp;
  int64_t n = m->smp ? m->smp->n_conditions : mp->n_conditions;
  if (ef_comm_size(m->comm) > 1) return ef_part_mean_normal_distributed(m, n, dir);
  EF_CHECK(n > 0, EF_ERR_PARAMETER,
           "%s: \"automatic_inwards_normal\" needs the part's conditions (boundary %s), and it has none", m->label,
           mp->dim == 2 ? "lines" : "faces");
  ef_index *all = NULL;
  const ef_index *cond = m->smp ? m->smp->conditions : NULL;
  if (!cond) {
    EF_MALLOC(all, n);
    for (int64_t k = 0; k < n; k++) all[k] = (ef_index)k;
    cond = all;
  }
  double *face = malloc((size_t)n * 3 * sizeof *face);
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(face, EF_ERR_MEMORY, done, "out of memory");
  EF_CALL_GOTO(ef_condition_face_normals(mp, n, cond, face), done);
  double sum[3] = {0.0, 0.0, 0.0}, area = 0.0;
  for (int64_t k = 0; k < n; k++) {
    for (int d = 0; d < 3; d++) sum[d] += face[3 * k + d];
    area += sqrt(face[3 * k] * face[3 * k] + face[3 * k + 1] * face[3 * k + 1] + face[3 * k + 2] * face[3 * k + 2]);
  }
  double len = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
  /* A closed or strongly curved part has no mean direction worth using. */
  EF_CHECK_GOTO(len > 1e-6 * area && area > 0.0, EF_ERR_PARAMETER, done,
                "%s: the part's face normals cancel out (|mean normal| = %g of the area %g), so it has no "
                "automatic direction; give \"direction\": [x, y, z]",
                m->label, len, area);
  for (int d = 0; d < 3; d++) dir[d] = sum[d] / len;
done:
  free(all);
  free(face);
  return err;
}

int ef_bc_setup_by_direction(ef_bc_member *m, ef_parameters p) {
  int constrained;
  EF_CALL(ef_interval_from_parameters(p, "interval", &m->interval));
  EF_CALL(ef_parameters_get_bool(p, "constrained", &constrained));
  double dir[3];
  ef_parameters dv;
  EF_CALL(ef_parameters_get(p, "direction", &dv));
  if (ef_parameters_type(dv) == EF_JSON_STRING) {
    const char *text;
    EF_CALL(ef_parameters_as_string(dv, &text));
    int inwards = !strcmp(text, "automatic_inwards_normal");
    EF_CHECK(inwards || !strcmp(text, "automatic_outwards_normal"), EF_ERR_PARAMETER,
             "%s: '%s' is \"%s\"; expected \"automatic_inwards_normal\", \"automatic_outwards_normal\" or [x, y, z]",
             ef_parameters_origin(dv), ef_parameters_path(dv), text);
    EF_CALL(ef_part_mean_normal(m, dir));
    if (inwards)
      for (int d = 0; d < 3; d++) dir[d] = -dir[d];
  } else {
    EF_CALL(ef_parameters_get_vector(p, "direction", 3, dir));
    double len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    EF_CHECK(len > 0.0 && isfinite(len), EF_ERR_PARAMETER, "%s: '%s' = [%g, %g, %g] has no direction",
             ef_parameters_origin(dv), ef_parameters_path(dv), dir[0], dir[1], dir[2]);
    for (int d = 0; d < 3; d++) dir[d] /= len;
  }
  ef_expression e;
  EF_CALL(ef_expression_from_parameters(p, "modulus", &e));
  for (int c = 0; c < 3; c++) {
    ef_bc_member_take_expression(m, c, e);
    m->scale[c] = dir[c];
    m->assign[c] = 1;
    m->constrained[c] = constrained;
  }
  return EF_SUCCESS;
}

static int ef_assign_by_direction_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  static const ef_poly_key poly[] = {
      {"modulus", EF_NUMBER_OR_STRING, "a number or an expression string"},
      {"direction", EF_TYPE_BIT(EF_JSON_STRING) | EF_TYPE_BIT(EF_JSON_ARRAY),
       "\"automatic_inwards_normal\" or [x, y, z]"}};
  ef_bc_member *m;
  EF_CALL(ef_bc_member_begin(ctx, p, "assign_vector_by_direction_process", ef_by_direction_defaults, poly, 2, &m));
  int err;
  const char *name;
  EF_CALL_GOTO(ef_parameters_get_string(p, "variable_name", &name), fail);
  EF_CALL_GOTO(ef_bc_member_set_variable(m, name, 1, NULL), fail);
  EF_CALL_GOTO(ef_bc_setup_by_direction(m, p), fail);
  EF_CALL_GOTO(ef_bc_member_attach(m), fail);
  *data = m;
  return EF_SUCCESS;
fail:
  ef_bc_member_destroy(&m);
  return err;
}

const ef_process_ops ef_assign_vector_by_direction_process_ops = {
    .name = "assign_vector_by_direction_process",
    .distributed = 1, /* values on the nodes of its sub model parts, owned and ghost alike */
    .create = ef_assign_by_direction_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

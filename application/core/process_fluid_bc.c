/* process_fluid_bc.c -- the FluidDynamicsApplication boundary conditions:
 * apply_inlet_process, apply_outlet_process, apply_noslip_process and
 * apply_slip_process.
 *
 * Inlet, outlet and no-slip are value-assigning members of the model part's
 * boundary-condition group (process_common.c); slip only marks nodes and
 * their geometry (IS_SLIP, NORMAL, SLIP_TANGENT) for the strategy.
 */
#include "process_internal.h"

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

const ef_process_ops ef_apply_inlet_process_ops = {
    .name = "apply_inlet_process",
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

const ef_process_ops ef_apply_outlet_process_ops = {
    .name = "apply_outlet_process",
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

const ef_process_ops ef_apply_noslip_process_ops = {
    .name = "apply_noslip_process",
    .create = ef_noslip_create,
    .execute_initialize_solution_step = ef_bc_execute_initialize_solution_step,
    .evaluate_fixed_values = ef_bc_evaluate_fixed_values,
    .is_time_dependent = ef_bc_is_time_dependent,
    .destroy = ef_bc_destroy,
};

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

const ef_process_ops ef_apply_slip_process_ops = {
    .name = "apply_slip_process",
    .create = ef_slip_create,
    .execute_initialize = ef_slip_execute_initialize,
    .destroy = ef_slip_destroy,
};

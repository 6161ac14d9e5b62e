/* fluid_model.c -- what the fluid strategies ask of the analysis before they are created
 * (Kratos' solver GetDefaultParameters, AddVariables, PrepareModelPart): their
 * solver_settings defaults, their nodal variables, and the fluid's density and viscosity
 * with where they come from. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "fluid_application.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* solver_settings of the fluid strategies beyond the core's; sub-blocks are validated by their owners. */
const char ef_fluid_settings_defaults[] =
    "{\"material_import_settings\": {\"materials_filename\": \"\"},"
    " \"density\": null, \"viscosity\": null, \"dynamic_viscosity\": null,"
    " \"body_force\": [0.0, 0.0, 0.0],"
    " \"time_stepping\": {\"automatic_time_step\": true, \"CFL_number\": null, \"time_step\": 0.0,"
    "     \"minimum_delta_time\": 1e-12, \"maximum_delta_time\": 1e30},"
    " \"stabilization\": {\"tau_c1\": 1.0, \"tau_c2\": 4.0, \"tau_c3\": 2.0, \"use_oss\": true},"
    " \"divergence_velocity_bound\": 1e6, \"divergence_velocity_factor\": 100.0,"
    " \"viscous_time_integration\": \"explicit\", \"pressure_initial_guess\": \"auto\","
    " \"implicit_viscosity\": {\"tolerance\": 1e-10, \"max_iteration\": 10000, \"maximum_viscous_number\": 100.0,"
    "     \"maximum_time_step_growth\": 1.2, \"correction\": \"lumped\", \"pressure\": \"frozen\", \"check_every\": 8,"
    "     \"projection\": \"single\", \"tau_time_step\": \"explicit_limit\"},"
    " \"linear_solver_settings\": {}, \"device\": {}}";

/* Keys only Kratos' own fluid solvers use: accepted with one warning. */
const char *const ef_fluid_kratos_keys[] = {
    "maximum_velocity_iterations", "maximum_pressure_iterations", "velocity_tolerance", "pressure_tolerance",
    "compute_reactions", "reform_dofs_at_each_step", "time_order", "dynamic_tau", "volume_model_part_name",
    "skin_parts", "no_skin_parts", "velocity_linear_solver_settings", "pressure_linear_solver_settings",
    "formulation", "predictor_corrector", "time_scheme", "alpha", "move_mesh_flag", "maximum_iterations",
    "relative_velocity_tolerance", "absolute_velocity_tolerance", "relative_pressure_tolerance",
    "absolute_pressure_tolerance", "assign_neighbour_elements_to_conditions", "consider_periodic_conditions",
    "oss_switch", "use_slip_conditions", "analysis_type", "reorder", "material_import_settings_legacy",
    "fractional_step_switch", "compute_pressure_force", NULL};

/* The nodal variables of the fractional step, and Kratos' name for the whole fluid domain. */
int ef_fluid_add_variables(ef_model_part mp) {
  static const struct {
    const char *name;
    int n_components;
  } variables[] = {{"VELOCITY", 3}, {"PRESSURE", 1}, {"BODY_FORCE", 3}, {"REACTION", 3},
                   {"NORMAL", 3},   {"IS_SLIP", 1},  {"SLIP_TANGENT", 3}};
  for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++)
    EF_CALL(ef_model_part_add_variable(mp, variables[i].name, variables[i].n_components));
  /* Kratos' fluid solvers build "fluid_computational_model_part" from the whole fluid domain. */
  return ef_model_part_add_root_alias(mp, "fluid_computational_model_part");
}

/* A property that was given must be positive: say which, where and what it was. */
static int ef_fluid_positive(double value, const char *name, const char *where) {
  EF_CHECK(value > 0 && isfinite(value), EF_ERR_PARAMETER, "%s: %s must be > 0, got %g", where, name, value);
  return EF_SUCCESS;
}

/* density and kinematic viscosity: solver_settings, else the materials file, else mdpa Properties. */
static int ef_fluid_properties(const ef_strategy_setup *setup, ef_strategy_config *config, const char **source) {
  ef_parameters v;
  double rho = -1.0, nu = -1.0, mu = -1.0;
  EF_CALL(ef_parameters_get(setup->settings, "density", &v));
  char where[4200];
  snprintf(where, sizeof where, "%s: solver_settings", setup->parameters_path);
  if (ef_parameters_type(v) != EF_JSON_NULL) {
    EF_CALL(ef_parameters_as_double(v, &rho));
    EF_CALL(ef_fluid_positive(rho, "density", where));
  }
  EF_CALL(ef_parameters_get(setup->settings, "viscosity", &v));
  if (ef_parameters_type(v) != EF_JSON_NULL) {
    EF_CALL(ef_parameters_as_double(v, &nu));
    EF_CALL(ef_fluid_positive(nu, "viscosity (kinematic)", where));
  }
  EF_CALL(ef_parameters_get(setup->settings, "dynamic_viscosity", &v));
  if (ef_parameters_type(v) != EF_JSON_NULL) {
    EF_CALL(ef_parameters_as_double(v, &mu));
    EF_CALL(ef_fluid_positive(mu, "dynamic_viscosity", where));
  }
  EF_CHECK(!(nu >= 0 && mu >= 0), EF_ERR_PARAMETER,
           "%s: solver_settings gives both viscosity (kinematic) and dynamic_viscosity; give one",
           setup->parameters_path);
  if (rho > 0 && (nu > 0 || mu > 0)) {
    *source = "solver_settings";
    config->density = rho;
    config->kinematic_viscosity = nu > 0 ? nu : mu / rho;
    return EF_SUCCESS;
  }

  ef_parameters mat;
  const char *materials;
  EF_CALL(ef_parameters_get(setup->settings, "material_import_settings", &mat));
  EF_CALL(ef_parameters_get_string(mat, "materials_filename", &materials));
  if (materials[0]) {
    char path[4096];
    ef_resolve_path(setup->case_folder, materials, path, sizeof path);
    ef_parameters file = NULL, props, item, material, vars;
    int err = EF_SUCCESS;
    EF_CALL_GOTO(ef_parameters_load_file(path, &file), mat_done);
    EF_CALL_GOTO(ef_parameters_get(file, "properties", &props), mat_done);
    EF_CHECK_GOTO(ef_parameters_size(props) > 0, EF_ERR_PARAMETER, mat_done, "%s: 'properties' is empty", path);
    EF_CALL_GOTO(ef_parameters_at(props, 0, &item), mat_done);
    EF_CALL_GOTO(ef_parameters_get(item, "Material", &material), mat_done);
    EF_CALL_GOTO(ef_parameters_get(material, "Variables", &vars), mat_done);
    snprintf(where, sizeof where, "%s: properties[0].Material.Variables", path);
    if (rho <= 0) {
      EF_CALL_GOTO(ef_parameters_get_double(vars, "DENSITY", &rho), mat_done);
      EF_CALL_GOTO(ef_fluid_positive(rho, "DENSITY", where), mat_done);
    }
    if (nu <= 0 && mu <= 0) {
      if (ef_parameters_has(vars, "DYNAMIC_VISCOSITY")) {
        EF_CALL_GOTO(ef_parameters_get_double(vars, "DYNAMIC_VISCOSITY", &mu), mat_done);
        EF_CALL_GOTO(ef_fluid_positive(mu, "DYNAMIC_VISCOSITY", where), mat_done);
      } else {
        EF_CALL_GOTO(ef_parameters_get_double(vars, "VISCOSITY", &nu), mat_done);
        EF_CALL_GOTO(ef_fluid_positive(nu, "VISCOSITY", where), mat_done);
      }
    }
  mat_done:
    ef_parameters_destroy(&file);
    if (err) return err;
    *source = "materials file";
  } else {
    /* The Properties of the first element in the mdpa. */
    ef_model_part mp = setup->model_part;
    int64_t pid = mp->n_elements ? mp->element_properties[0] : 0;
    double value;
    snprintf(where, sizeof where, "%s: Properties %lld", mp->source_file ? mp->source_file : mp->name, (long long)pid);
    if (rho <= 0 && ef_model_part_get_property(mp, pid, "DENSITY", &value)) {
      EF_CALL(ef_fluid_positive(value, "DENSITY", where));
      rho = value;
    }
    if (nu <= 0 && mu <= 0) {
      if (ef_model_part_get_property(mp, pid, "DYNAMIC_VISCOSITY", &value)) {
        EF_CALL(ef_fluid_positive(value, "DYNAMIC_VISCOSITY", where));
        mu = value;
      } else if (ef_model_part_get_property(mp, pid, "VISCOSITY", &value)) {
        EF_CALL(ef_fluid_positive(value, "VISCOSITY", where));
        nu = value;
      }
    }
    *source = "mesh Properties";
  }
  EF_CHECK(rho > 0, EF_ERR_PARAMETER,
           "%s: no density: give solver_settings.density, a materials file with DENSITY, or DENSITY in the "
           "mesh Properties",
           setup->parameters_path);
  EF_CHECK(nu > 0 || mu > 0, EF_ERR_PARAMETER,
           "%s: no viscosity: give solver_settings.viscosity (kinematic) or dynamic_viscosity, a materials "
           "file with DYNAMIC_VISCOSITY, or it in the mesh Properties",
           setup->parameters_path);
  config->density = rho;
  config->kinematic_viscosity = nu > 0 ? nu : mu / rho;
  return EF_SUCCESS;
}

/* The fluid's properties into config, DENSITY for the processes, BODY_FORCE at every node,
 * and the "fluid" object of run_summary.json. */
int ef_fluid_prepare(const ef_strategy_setup *setup, ef_strategy_config *config) {
  ef_model_part mp = setup->model_part;
  const char *source = "";
  EF_CALL(ef_fluid_properties(setup, config, &source));
  EF_CALL(ef_model_part_set_value(mp, "DENSITY", config->density));
  double body_force[3];
  EF_CALL(ef_parameters_get_vector(setup->settings, "body_force", 3, body_force));
  ef_variable *bf;
  EF_CALL(ef_model_part_get_variable(mp, "BODY_FORCE", &bf));
  for (int64_t i = 0; i < mp->n_nodes; i++)
    for (int c = 0; c < 3; c++) bf->values[3 * i + c] = body_force[c];

  if (!setup->quiet)
    printf("fluid: density %g, kinematic viscosity %g (from %s)\n", config->density, config->kinematic_viscosity,
           source);
  ef_parameters fluid;
  EF_CALL(ef_parameters_set_json(setup->summary, "fluid", "{}"));
  EF_CALL(ef_parameters_get(setup->summary, "fluid", &fluid));
  EF_CALL(ef_parameters_set_double(fluid, "density", config->density));
  EF_CALL(ef_parameters_set_double(fluid, "kinematic_viscosity", config->kinematic_viscosity));
  EF_CALL(ef_parameters_set_string(fluid, "source", source));
  return EF_SUCCESS;
}

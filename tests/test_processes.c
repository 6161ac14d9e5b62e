/* test_processes.c -- boundary-condition processes: values and fixity inside
 * and outside their intervals, list order (later wins), inlet directions,
 * slip classification, fixed values for the strategy and parameter errors. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"
#include "edgeflow/ef_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "ef_test_mesh.h"

/* A process from a JSON text of its Parameters; the document is destroyed
 * right away, so a process keeping views of it would be caught by ASan. */
static int tp_process(ef_model_part mp, const char *module, const char *json, const ef_process_ops **ops,
                      void **data) {
  *data = NULL;
  EF_CALL(ef_register_core_processes());
  EF_CALL(ef_registry_load_application("fluid")); /* inlet, outlet, walls, forces */
  *ops = ef_registry_lookup_process(module);
  EF_CHECK(*ops, EF_ERR_NOT_FOUND, "process '%s' is not registered", module);
  ef_parameters root = NULL, p = NULL;
  char text[4096];
  snprintf(text, sizeof text, "{\"Parameters\": %s}", json);
  EF_CALL(ef_parameters_parse(text, "test.json", &root));
  int err = ef_parameters_get(root, "Parameters", &p);
  ef_process_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.model_part = mp;
  if (!err) err = ef_model_part_set_value(mp, "DENSITY", 1000.0);
  if (!err) err = (*ops)->create(&ctx, p, data);
  ef_parameters_destroy(&root);
  return err;
}

/* Values here are products of a few exact binary fractions with small numbers
 * (and one division by a norm for unit directions): 1e-14 absolute suffices. */
#define TOL 1e-14

typedef struct {
  const ef_process_ops *ops;
  void *data;
} proc;

static proc make(ef_model_part mp, const char *module, const char *json) {
  proc p = {NULL, NULL};
  int rc = tp_process(mp, module, json, &p.ops, &p.data);
  if (rc) {
    fprintf(stderr, "creating %s %s failed: %s\n", module, json, ef_error_message());
    failures++;
  }
  return p;
}

static void drop(proc *p) {
  if (p->ops && p->data) p->ops->destroy(&p->data);
  EXPECT(p->data == NULL);
}

/* The analysis' order: every process's execute_initialize_solution_step, in list order. */
static void step(proc *list, int n, double t) {
  for (int i = 0; i < n; i++)
    if (list[i].ops && list[i].ops->execute_initialize_solution_step)
      EXPECT_OK(list[i].ops->execute_initialize_solution_step(list[i].data, t));
}

static ef_variable *var(ef_model_part mp, const char *name) { return ef_model_part_find_variable(mp, name); }

static void test_scalar_interval(void) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc p = make(mp, "assign_scalar_variable_process",
                "{\"mesh_id\": 0, \"model_part_name\": \"FluidModelPart.XMax\", \"variable_name\": \"PRESSURE\","
                " \"value\": \"5 + 10*y\", \"constrained\": true, \"interval\": [1.0, 2.0]}");
  ef_variable *pr = var(mp, "PRESSURE");
  ef_index a = ef_test_box_node(mp, 2, 1, 0.5, 0), inner = ef_test_box_node(mp, 2, 0.5, 0.5, 0);
  step(&p, 1, 0.5); /* before the interval: untouched */
  EXPECT(pr->values[a] == 0.0 && !pr->fixed[a]);
  step(&p, 1, 1.5);
  EXPECT_NEAR(pr->values[a], 10.0, TOL);
  EXPECT(pr->fixed[a] && !pr->fixed[inner] && pr->values[inner] == 0.0);
  step(&p, 1, 2.5); /* after: freed, the last value stays as the start of the solution */
  EXPECT(!pr->fixed[a]);
  EXPECT_NEAR(pr->values[a], 10.0, TOL);
  EXPECT(p.ops->is_time_dependent && !p.ops->is_time_dependent(p.data));
  drop(&p);

  /* A component of a vector by its Kratos name, unconstrained. */
  p = make(mp, "assign_scalar_variable_process",
           "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY_Y\", \"value\": 3, \"constrained\": false}");
  ef_variable *v = var(mp, "VELOCITY");
  ef_index b = ef_test_box_node(mp, 2, 0, 0.5, 0);
  step(&p, 1, 0.0);
  EXPECT(v->values[3 * b + 1] == 3.0 && v->values[3 * b] == 0.0 && !v->fixed[3 * b + 1]);
  drop(&p);
  ef_model_part_destroy(&mp);
}

static void test_vector_components(void) {
  ef_model_part mp = ef_test_box(3, 2, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc p = make(mp, "assign_vector_variable_process",
                "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"value\": [1.0, \"2*y\", null],"
                " \"constrained\": [true, false, true], \"interval\": [0.0, \"End\"], \"local_axes\": {}}");
  ef_variable *v = var(mp, "VELOCITY");
  ef_index a = ef_test_box_node(mp, 2, 0, 0.5, 1);
  v->values[3 * a + 2] = 7.0; /* z is null: must stay */
  step(&p, 1, 0.1);
  EXPECT(v->values[3 * a] == 1.0 && v->fixed[3 * a]);
  EXPECT_NEAR(v->values[3 * a + 1], 1.0, TOL);
  EXPECT(!v->fixed[3 * a + 1]);
  EXPECT(v->values[3 * a + 2] == 7.0 && !v->fixed[3 * a + 2]);
  drop(&p);
  ef_model_part_destroy(&mp);
}

/* noslip on the walls and an inlet on XMin: whichever comes later owns the shared corner nodes. */
static void test_order(void) {
  for (int inlet_last = 0; inlet_last < 2; inlet_last++) {
    ef_model_part mp = ef_test_box(2, 4, 0);
    if (!mp) {
      failures++;
      return;
    }
    const char *noslip = "{\"model_part_name\": \"FluidModelPart.Walls\"}";
    const char *inlet = "{\"model_part_name\": \"FluidModelPart.XMin\", \"modulus\": 2.0,"
                        " \"direction\": \"automatic_inwards_normal\", \"interval\": [0.0, \"End\"]}";
    /* Created in list order, as the analysis does: that order decides. */
    proc list[2];
    list[0] = inlet_last ? make(mp, "apply_noslip_process", noslip) : make(mp, "apply_inlet_process", inlet);
    list[1] = inlet_last ? make(mp, "apply_inlet_process", inlet) : make(mp, "apply_noslip_process", noslip);
    step(list, 2, 0.01);
    ef_variable *v = var(mp, "VELOCITY");
    ef_index corner = ef_test_box_node(mp, 4, 0, 0, 0), side = ef_test_box_node(mp, 4, 0, 0.5, 0);
    ef_index wall = ef_test_box_node(mp, 4, 0.5, 1, 0), inner = ef_test_box_node(mp, 4, 0.5, 0.5, 0);
    EXPECT_NEAR(v->values[3 * side], inlet_last ? 2.0 : 0.0, TOL); /* inwards normal of XMin is +x */
    EXPECT_NEAR(v->values[3 * side + 1], 0.0, TOL);
    EXPECT_NEAR(v->values[3 * corner], inlet_last ? 2.0 : 0.0, TOL);
    EXPECT(v->fixed[3 * corner] && v->fixed[3 * corner + 1] && v->fixed[3 * side]);
    EXPECT(v->values[3 * wall] == 0.0 && v->fixed[3 * wall] && v->fixed[3 * wall + 1]);
    EXPECT(!v->fixed[3 * inner]);
    drop(&list[0]);
    drop(&list[1]);
    ef_model_part_destroy(&mp);
  }
}

/* A later process switching off must give shared nodes back to the earlier one,
 * and nested intervals must end with the dofs free. */
static void test_switch_off(void) {
  ef_model_part mp = ef_test_box(2, 4, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc list[4];
  list[0] = make(mp, "apply_noslip_process", "{\"model_part_name\": \"YMin\"}");
  list[1] = make(mp, "apply_noslip_process", "{\"model_part_name\": \"YMax\"}");
  list[2] = make(mp, "assign_vector_by_direction_process",
                 "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"modulus\": 1.5,"
                 " \"direction\": [2.0, 0.0, 0.0], \"interval\": [0.0, 1.0]}");
  list[3] = make(mp, "assign_vector_by_direction_process",
                 "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"modulus\": 4.0,"
                 " \"direction\": [1.0, 0.0, 0.0], \"interval\": [0.0, 2.0]}");
  ef_variable *v = var(mp, "VELOCITY");
  ef_index corner = ef_test_box_node(mp, 4, 0, 1, 0), side = ef_test_box_node(mp, 4, 0, 0.25, 0);
  step(list, 4, 0.5);
  EXPECT(v->values[3 * corner] == 4.0 && v->fixed[3 * corner]);
  EXPECT(v->values[3 * side] == 4.0 && v->fixed[3 * side]);
  step(list, 4, 1.5); /* list[2] is off; list[3] still owns XMin */
  EXPECT(v->values[3 * corner] == 4.0 && v->fixed[3 * corner]);
  EXPECT(v->values[3 * side] == 4.0 && v->fixed[3 * side]);
  step(list, 4, 2.5); /* both off: the corner is a no-slip wall again, the side is free */
  EXPECT(v->values[3 * corner] == 0.0 && v->fixed[3 * corner] && v->fixed[3 * corner + 1]);
  EXPECT(!v->fixed[3 * side] && !v->fixed[3 * side + 1]);
  EXPECT(v->values[3 * side] == 4.0); /* the last value stays as the start of the solution */
  for (int i = 0; i < 4; i++) drop(&list[i]);
  ef_model_part_destroy(&mp);
}

static void test_inlet_directions(void) {
  ef_model_part mp = ef_test_box(3, 2, 1);
  if (!mp) {
    failures++;
    return;
  }
  proc in = make(mp, "apply_inlet_process",
                 "{\"model_part_name\": \"ZMax\", \"variable_name\": \"VELOCITY\", \"modulus\": 3.0,"
                 " \"direction\": \"automatic_inwards_normal\", \"interval\": [0.0, \"End\"]}");
  proc out = make(mp, "assign_vector_by_direction_process",
                  "{\"model_part_name\": \"XMax\", \"variable_name\": \"VELOCITY\", \"modulus\": \"t\","
                  " \"direction\": \"automatic_outwards_normal\", \"constrained\": false}");
  proc list[2] = {in, out};
  step(list, 2, 0.25);
  ef_variable *v = var(mp, "VELOCITY");
  ef_index top = ef_test_box_node(mp, 2, 0.5, 0.5, 1), right = ef_test_box_node(mp, 2, 1, 0.5, 0.5);
  EXPECT_NEAR(v->values[3 * top], 0.0, TOL);
  EXPECT_NEAR(v->values[3 * top + 1], 0.0, TOL);
  EXPECT_NEAR(v->values[3 * top + 2], -3.0, TOL); /* -n of the top face */
  EXPECT(v->fixed[3 * top + 2]);
  EXPECT_NEAR(v->values[3 * right], 0.25, TOL); /* +n, modulus t */
  EXPECT(!v->fixed[3 * right]);
  step(list, 2, 0.5); /* unconstrained values are re-assigned every step (Kratos) */
  EXPECT_NEAR(v->values[3 * right], 0.5, TOL);
  drop(&in);
  drop(&out);

  /* Gravity on the whole model part: assigned, never fixed. */
  proc g = make(mp, "assign_vector_by_direction_process",
                "{\"model_part_name\": \"FluidModelPart\", \"variable_name\": \"BODY_FORCE\", \"modulus\": 9.81,"
                " \"direction\": [0.0, -1.0, 0.0], \"constrained\": true}");
  step(&g, 1, 0.0);
  ef_variable *bf = var(mp, "BODY_FORCE");
  int all = 1;
  for (int64_t i = 0; i < mp->n_nodes; i++)
    all &= bf->values[3 * i] == 0.0 && bf->values[3 * i + 1] == -9.81 && !bf->fixed[3 * i + 1];
  EXPECT(all);
  EXPECT(g.ops->is_time_dependent && !g.ops->is_time_dependent(g.data));
  drop(&g);
  ef_model_part_destroy(&mp);
}

/* Counts of IS_SLIP kinds (1 face, 2 edge, 3 corner) over the model part. */
static void slip_counts(ef_model_part mp, int *count) {
  ef_variable *s = var(mp, "IS_SLIP");
  for (int k = 0; k < 4; k++) count[k] = 0;
  for (int64_t i = 0; i < mp->n_nodes; i++) {
    int kind = (int)s->values[i];
    if (kind >= 0 && kind <= 3) count[kind]++;
  }
}

static void test_slip(void) {
  /* Cube with n subdivisions, one slip process per side: 6 (n-1)^2 face nodes,
   * 12 (n-1) edge nodes and 8 corners, as if the walls were one part. */
  const int n = 3;
  ef_model_part mp = ef_test_box(3, n, 1);
  if (!mp) {
    failures++;
    return;
  }
  proc list[6];
  for (int s = 0; s < 6; s++) {
    char json[256];
    snprintf(json, sizeof json, "{\"model_part_name\": \"%s\"%s}", ef_test_box_side_names[s],
             s == 5 ? ", \"edge_angle_degrees\": 45.0, \"avoid_recomputing_normals\": true" : "");
    list[s] = make(mp, "apply_slip_process", json);
  }
  for (int s = 0; s < 6; s++)
    if (list[s].ops && list[s].ops->execute_initialize) EXPECT_OK(list[s].ops->execute_initialize(list[s].data));
  int count[4];
  slip_counts(mp, count);
  EXPECT(count[1] == 6 * (n - 1) * (n - 1));
  EXPECT(count[2] == 12 * (n - 1));
  EXPECT(count[3] == 8);
  EXPECT(count[0] == (n - 1) * (n - 1) * (n - 1));
  ef_variable *nv = var(mp, "NORMAL"), *tv = var(mp, "SLIP_TANGENT");
  ef_index face = ef_test_box_node(mp, n, 1.0 / 3, 1.0, 2.0 / 3), edge = ef_test_box_node(mp, n, 1.0, 1.0 / 3, 0.0);
  EXPECT_NEAR(nv->values[3 * face + 1], 1.0, TOL);
  EXPECT_NEAR(tv->values[3 * face + 1], 0.0, 0.0);
  EXPECT_NEAR(fabs(tv->values[3 * edge + 1]), 1.0, TOL); /* the XMax-ZMin edge runs along y */
  EXPECT_NEAR(tv->values[3 * edge], 0.0, TOL);
  EXPECT(ef_model_part_take_modified(mp, "IS_SLIP") && ef_model_part_take_modified(mp, "SLIP_TANGENT"));
  for (int s = 0; s < 6; s++) drop(&list[s]);
  ef_model_part_destroy(&mp);

  /* Square, one slip process on all walls: corners have two directions (kind 3 in 2D). */
  mp = ef_test_box(2, 4, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc p = make(mp, "apply_slip_process", "{\"model_part_name\": \"Walls\"}");
  if (p.ops) EXPECT_OK(p.ops->execute_initialize(p.data));
  slip_counts(mp, count);
  EXPECT(count[1] == 4 * 3 && count[2] == 0 && count[3] == 4);
  drop(&p);
  ef_model_part_destroy(&mp);
}

/* Fixed values at RK stage times for the strategy: only fixed entries are written. */
static void test_fixed_values(void) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc list[2];
  list[0] = make(mp, "apply_inlet_process",
                 "{\"model_part_name\": \"XMin\", \"modulus\": \"2*t\", \"direction\": [1.0, 0.0, 0.0]}");
  list[1] = make(mp, "apply_outlet_process",
                 "{\"model_part_name\": \"XMax\", \"variable_name\": \"PRESSURE\", \"value\": \"100*y\","
                 " \"constrained\": true, \"hydrostatic_outlet\": false, \"h_top\": 0.0,"
                 " \"outlet_inflow_contribution\": false}");
  EXPECT(list[0].ops && list[0].ops->is_time_dependent(list[0].data));
  EXPECT(list[1].ops && !list[1].ops->is_time_dependent(list[1].data));
  step(list, 2, 1.0);
  int64_t nn = mp->n_nodes;
  double *vel = malloc((size_t)nn * 3 * sizeof *vel), *pre = malloc((size_t)nn * sizeof *pre);
  if (!vel || !pre) {
    failures++;
  } else {
    ef_index in = ef_test_box_node(mp, 2, 0, 0.5, 0), outn = ef_test_box_node(mp, 2, 1, 0.5, 0), mid = ef_test_box_node(mp, 2, 0.5, 0.5, 0);
    const double t[2] = {0.25, 0.75};
    for (int k = 0; k < 2; k++) {
      for (int64_t i = 0; i < 3 * nn; i++) vel[i] = -123.0;
      for (int64_t i = 0; i < nn; i++) pre[i] = -123.0;
      for (int j = 0; j < 2; j++) EXPECT_OK(list[j].ops->evaluate_fixed_values(list[j].data, t[k], vel, pre));
      EXPECT_NEAR(vel[3 * in], 2 * t[k], TOL);
      EXPECT(vel[3 * in + 1] == 0.0);
      EXPECT(vel[3 * mid] == -123.0 && vel[3 * outn] == -123.0);
      EXPECT_NEAR(pre[outn], 50.0, TOL);
      EXPECT(pre[in] == -123.0 && pre[mid] == -123.0);
    }
    /* The host copy has the values at the step's time. */
    EXPECT_NEAR(var(mp, "VELOCITY")->values[3 * in], 2.0, TOL);
  }
  free(vel);
  free(pre);
  drop(&list[0]);
  drop(&list[1]);
  ef_model_part_destroy(&mp);
}

static int sync_calls;
static int count_sync(void *context, ef_model_part mp) {
  (void)context;
  (void)mp;
  sync_calls++;
  return EF_SUCCESS;
}

/* With the solution on a device, steady boundary conditions cost no transfers. */
static void test_no_traffic(void) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  if (!mp) {
    failures++;
    return;
  }
  proc list[3];
  list[0] = make(mp, "apply_noslip_process", "{\"model_part_name\": \"YMin\"}");
  list[1] = make(mp, "apply_inlet_process", "{\"model_part_name\": \"XMin\", \"modulus\": \"1 + t\"}");
  list[2] = make(mp, "apply_outlet_process",
                 "{\"model_part_name\": \"XMax\", \"value\": 0.0, \"interval\": [0.0, 1.0]}");
  mp->device.sync_to_host = count_sync;
  step(list, 3, 0.0);
  EXPECT(ef_model_part_take_modified(mp, "VELOCITY") && ef_model_part_take_modified(mp, "PRESSURE"));
  mp->device_newer = 1; /* as after a device step */
  step(list, 3, 0.5);
  EXPECT(sync_calls == 0);
  EXPECT(!ef_model_part_take_modified(mp, "VELOCITY") && !ef_model_part_take_modified(mp, "PRESSURE"));
  step(list, 3, 1.5); /* the outlet switches off: one download, PRESSURE changes */
  EXPECT(sync_calls == 1);
  EXPECT(ef_model_part_take_modified(mp, "PRESSURE") && !ef_model_part_take_modified(mp, "VELOCITY"));
  EXPECT(!var(mp, "PRESSURE")->fixed[ef_test_box_node(mp, 2, 1, 0.5, 0)]);
  for (int i = 0; i < 3; i++) drop(&list[i]);
  ef_model_part_destroy(&mp);
}

static void test_errors(void) {
  ef_model_part mp = ef_test_box(2, 2, 0);
  if (!mp) {
    failures++;
    return;
  }
  const ef_process_ops *ops;
  void *data = NULL;
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\", \"valeu\": 1}", &ops, &data),
              EF_ERR_PARAMETER, "unknown key 'Parameters.valeu'");
  EXPECT(strstr(ef_error_message(), "valid keys") && strstr(ef_error_message(), "constrained") &&
         strstr(ef_error_message(), "interval"));
  EXPECT(data == NULL);
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\", \"constrained\": \"yes\"}",
                         &ops, &data),
              EF_ERR_PARAMETER, "Parameters.constrained");
  EXPECT(strstr(ef_error_message(), "expected a boolean"));
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\", \"value\": [1]}", &ops, &data),
              EF_ERR_PARAMETER, "Parameters.value");
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\", \"value\": \"2*q\"}", &ops,
                         &data),
              EF_ERR_PARAMETER, "'q'");
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\", \"interval\": [0, \"end\"]}",
                         &ops, &data),
              EF_ERR_PARAMETER, "Parameters.interval[1]");
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"Inlet\", \"variable_name\": \"PRESSURE\"}", &ops, &data),
              EF_ERR_NOT_FOUND, "XMin");
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"TEMPERATURE\"}", &ops, &data),
              EF_ERR_NOT_FOUND, "TEMPERATURE");
  EXPECT_FAIL(tp_process(mp, "assign_scalar_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\"}", &ops, &data),
              EF_ERR_PARAMETER, "vector variable");
  EXPECT_FAIL(tp_process(mp, "assign_vector_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"value\": [1, 2]}", &ops,
                         &data),
              EF_ERR_PARAMETER, "expected 3");
  EXPECT_FAIL(tp_process(mp, "assign_vector_variable_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"local_axes\": {\"a\": 1}}",
                         &ops, &data),
              EF_ERR_UNSUPPORTED, "local_axes");
  EXPECT_FAIL(tp_process(mp, "assign_vector_by_direction_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"direction\": \"inwards\"}",
                         &ops, &data),
              EF_ERR_PARAMETER, "automatic_inwards_normal");
  EXPECT_FAIL(tp_process(mp, "assign_vector_by_direction_process",
                         "{\"model_part_name\": \"XMin\", \"variable_name\": \"VELOCITY\", \"direction\": [0, 0, 0]}",
                         &ops, &data),
              EF_ERR_PARAMETER, "no direction");
  EXPECT_FAIL(tp_process(mp, "apply_outlet_process",
                         "{\"model_part_name\": \"XMax\", \"value\": 0.0, \"hydrostatic_outlet\": true}", &ops, &data),
              EF_ERR_UNSUPPORTED, "hydrostatic_outlet");
  EXPECT_FAIL(tp_process(mp, "apply_outlet_process", "{\"model_part_name\": \"XMax\"}", &ops, &data),
              EF_ERR_PARAMETER, "\"value\"");
  EXPECT_FAIL(tp_process(mp, "apply_inlet_process", "{\"model_part_name\": \"XMin\", \"variable_name\": \"PRESSURE\"}",
                         &ops, &data),
              EF_ERR_PARAMETER, "VELOCITY");
  EXPECT_FAIL(tp_process(mp, "apply_noslip_process", "{\"model_part_name\": \"\"}", &ops, &data), EF_ERR_PARAMETER,
              "empty");
  EXPECT_FAIL(tp_process(mp, "apply_slip_process", "{\"model_part_name\": \"Walls\", \"uniform_navier_slip_length\": 0.1}",
                         &ops, &data),
              EF_ERR_UNSUPPORTED, "slip");
  EXPECT_FAIL(tp_process(mp, "apply_slip_process", "{\"model_part_name\": \"Walls\", \"edge_angle_degrees\": 0}", &ops,
                         &data),
              EF_ERR_PARAMETER, "edge_angle_degrees");
  EXPECT(data == NULL);
  EXPECT(ef_registry_lookup_process("mmg_process") == NULL);
  static const char *modules[] = {"assign_scalar_variable_process", "assign_vector_variable_process",
                                  "assign_vector_by_direction_process", "apply_inlet_process", "apply_outlet_process",
                                  "apply_noslip_process", "apply_slip_process", "vtk_output_process"};
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    const ef_process_ops *o = ef_registry_lookup_process(modules[i]);
    EXPECT(o && !strcmp(o->name, modules[i]) && o->create && o->destroy);
  }
  EXPECT_OK(ef_register_core_processes()); /* registering again is harmless */
  ef_model_part_destroy(&mp);
}

int main(void) {
  test_scalar_interval();
  test_vector_components();
  test_order();
  test_switch_off();
  test_inlet_directions();
  test_slip();
  test_fixed_values();
  test_no_traffic();
  test_errors();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

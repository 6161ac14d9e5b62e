/* test_process_kratos_cases.c -- the boundary-condition lists of the two real
 * Kratos cases (shared/kratos_cases) applied to their own meshes: the inlet
 * blows along +x (its inwards normal), the no-slip walls win on the nodes they
 * share with the inlet (they come later in the list), the outlet fixes p = 0. */
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

#include "edgeflow/ef_mesh_io.h"

#include <unistd.h>

/* The inlet plane x = 0 is flat, so its mean normal is the axis up to
 * rounding in the area sums: 1e-12. */
#define TOL 1e-12

static int in_part(const ef_sub_model_part *smp, ef_index node) {
  int64_t lo = 0, hi = smp->n_nodes - 1;
  while (lo <= hi) {
    int64_t mid = (lo + hi) / 2;
    if (smp->nodes[mid] == node) return 1;
    if (smp->nodes[mid] < node) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

static void run_case(const char *folder, const char *mdpa) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ProjectParameters.json", folder);
  ef_parameters project = NULL, list = NULL, solver = NULL;
  EXPECT_OK(ef_parameters_load_file(path, &project));
  if (!project) return;
  const char *name = NULL;
  EXPECT_OK(ef_parameters_get(project, "solver_settings", &solver));
  if (solver) EXPECT_OK(ef_parameters_get_string(solver, "model_part_name", &name));
  long dim = 0;
  if (solver) EXPECT_OK(ef_parameters_get_int(solver, "domain_size", &dim));
  /* As the analysis does: read, then take solver_settings.model_part_name
   * (the 3D case's root and its volume part are both Parts_Parts_Auto1). */
  ef_model_part mp = NULL;
  snprintf(path, sizeof path, "%s/%s", folder, mdpa);
  EXPECT_OK(ef_read_mesh(path, "mdpa", &mp));
  if (mp && name) {
    char *copy = malloc(strlen(name) + 1);
    if (copy) {
      strcpy(copy, name);
      free(mp->name);
      mp->name = copy;
    }
    EXPECT(mp->dim == dim);
  }
  const char *vars[][2] = {{"VELOCITY", "3"}, {"PRESSURE", "1"}, {"BODY_FORCE", "3"}, {"REACTION", "3"},
                           {"NORMAL", "3"},   {"IS_SLIP", "1"},  {"SLIP_TANGENT", "3"}};
  for (int v = 0; v < 7 && mp; v++) EXPECT_OK(ef_model_part_add_variable(mp, vars[v][0], atoi(vars[v][1])));
  ef_parameters processes = NULL;
  EXPECT_OK(ef_parameters_get(project, "processes", &processes));
  if (processes) EXPECT_OK(ef_parameters_get(processes, "boundary_conditions_process_list", &list));
  int n = list ? ef_parameters_size(list) : 0;
  EXPECT(n == 4);
  const ef_process_ops *ops[8] = {NULL};
  void *data[8] = {NULL};
  ef_sub_model_part *inlet = NULL, *outlet = NULL, *wall[2] = {NULL, NULL};
  int n_walls = 0;
  ef_process_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.model_part = mp;
  ctx.project = project;
  for (int i = 0; i < n && i < 8 && mp; i++) {
    ef_parameters block, params;
    const char *module;
    EXPECT_OK(ef_parameters_at(list, i, &block));
    EXPECT_OK(ef_parameters_get_string(block, "python_module", &module));
    EXPECT_OK(ef_parameters_get(block, "Parameters", &params));
    const char *part;
    EXPECT_OK(ef_parameters_get_string(params, "model_part_name", &part));
    ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, part);
    EXPECT(smp != NULL);
    if (!strcmp(module, "apply_noslip_process") && n_walls < 2) wall[n_walls++] = smp;
    if (!strcmp(module, "assign_vector_by_direction_process")) inlet = smp;
    if (!strcmp(module, "assign_scalar_variable_process")) outlet = smp;
    ops[i] = ef_registry_lookup_process(module);
    EXPECT(ops[i] != NULL);
    if (ops[i]) EXPECT_OK(ops[i]->create(&ctx, params, &data[i]));
  }
  for (int i = 0; i < n && i < 8; i++)
    if (data[i]) EXPECT_OK(ops[i]->execute_initialize_solution_step(data[i], 0.01));

  EXPECT(inlet && outlet && wall[0] && wall[1]);
  if (inlet && outlet && wall[0] && wall[1]) {
    ef_variable *v = ef_model_part_find_variable(mp, "VELOCITY"), *p = ef_model_part_find_variable(mp, "PRESSURE");
    int64_t inlet_only = 0, fixed_nodes = 0, walls = 0;
    for (int64_t i = 0; i < mp->n_nodes; i++) {
      int on_wall = in_part(wall[0], (ef_index)i) || in_part(wall[1], (ef_index)i);
      int on_inlet = in_part(inlet, (ef_index)i);
      const double *u = v->values + 3 * i;
      const uint8_t *f = v->fixed + 3 * i;
      if (on_wall) {
        walls++;
        EXPECT(u[0] == 0.0 && u[1] == 0.0 && u[2] == 0.0 && f[0] && f[1] && f[2]);
      } else if (on_inlet) {
        inlet_only++;
        EXPECT_NEAR(u[0], 1.0, TOL);
        EXPECT_NEAR(u[1], 0.0, TOL);
        EXPECT_NEAR(u[2], 0.0, TOL);
        EXPECT(f[0] && f[1] && f[2]);
      } else {
        EXPECT(!f[0] && !f[1] && !f[2]);
      }
      fixed_nodes += f[0] != 0;
      EXPECT(p->fixed[i] == (uint8_t)in_part(outlet, (ef_index)i));
    }
    EXPECT(inlet_only > 0 && walls > 0 && fixed_nodes == inlet_only + walls);
  }
  for (int i = 0; i < n && i < 8; i++)
    if (data[i]) ops[i]->destroy(&data[i]);
  ef_model_part_destroy(&mp);
  ef_parameters_destroy(&project);
}

int main(void) {
  const char *cases[2][2] = {{"channel_sphere2D", "2D_sphere_remeshed_channel_test.mdpa"},
                             {"channel_sphere3D", "3D_sphere_remeshed_channel_test.mdpa"}};
  char folder[2][2048];
  for (int c = 0; c < 2; c++) {
    snprintf(folder[c], sizeof folder[c], "%s/kratos_cases/%s", EF_SHARED_DIR, cases[c][0]);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", folder[c], cases[c][1]);
    if (access(path, R_OK) != 0) {
      fprintf(stderr, "skipped: %s is not there\n", path);
      return 77;
    }
  }
  EXPECT_OK(ef_register_core_processes());
  EXPECT_OK(ef_registry_load_application("fluid")); /* inlet, outlet, walls */
  for (int c = 0; c < 2; c++) run_case(folder[c], cases[c][1]);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

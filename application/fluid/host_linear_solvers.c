/* host_linear_solvers.c -- the host CG registered as linear solver "cg". */
#include <stdlib.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"
#include "host_cg.h"
#include "strategy_common.h"

/* The object "cg" creates: the solver record first (see ef_linear_solver_ops). */
typedef struct {
  ef_linear_solver solver;
  ef_host_cg *cg;
} ef_host_cg_object;

static int ef_host_cg_object_create(ef_parameters settings, int64_t n, void **out) {
  *out = NULL;
  ef_cg_settings s;
  EF_CALL(ef_cg_settings_read(settings, &s));
  EF_CHECK(!s.three_term, EF_ERR_UNSUPPORTED,
           "%s.cg_variant \"three_term\" is a device CG variant; the host CG is the standard one",
           ef_parameters_path(settings));
  ef_host_cg_object *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  int err = ef_host_cg_create(n, &o->cg);
  if (err) {
    free(o);
    return err;
  }
  o->solver = ef_host_cg_solver(o->cg);
  *out = o;
  return EF_SUCCESS;
}

static void ef_host_cg_object_destroy(void **p) {
  if (!p || !*p) return;
  ef_host_cg_object *o = *p;
  ef_host_cg_destroy(&o->cg);
  free(o);
  *p = NULL;
}

static const ef_linear_solver_ops ef_host_cg_ops = {
    .name = "cg",
    .description = "conjugate gradient on the diagonally scaled system (OpenMP, deterministic)",
    .create = ef_host_cg_object_create,
    .destroy = ef_host_cg_object_destroy,
};

int ef_register_host_linear_solvers(void) { return ef_registry_add_linear_solver(&ef_host_cg_ops); }

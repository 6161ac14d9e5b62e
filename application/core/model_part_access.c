/* model_part_access.c -- flat accessors of a model part for language bindings. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"

int ef_model_part_variable_arrays(ef_model_part mp, const char *name, double **values, uint8_t **fixed,
                                  int *n_components) {
  ef_variable *v;
  EF_CALL(ef_model_part_get_variable(mp, name, &v));
  *values = v->values;
  *fixed = v->fixed;
  *n_components = v->n_components;
  return EF_SUCCESS;
}

int64_t ef_model_part_node_count(ef_model_part mp) { return mp ? mp->n_nodes : 0; }

double *ef_model_part_coordinates(ef_model_part mp) { return mp ? mp->coords : NULL; }

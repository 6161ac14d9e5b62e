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

/* Element connectivity (internal node indices, nodes_per_element per element) for bindings. */
ef_index *ef_model_part_element_arrays(ef_model_part mp, int64_t *n_elements, int *nodes_per_element) {
  *n_elements = mp ? mp->n_elements : 0;
  *nodes_per_element = mp ? mp->nodes_per_element : 0;
  return mp ? mp->elements : NULL;
}

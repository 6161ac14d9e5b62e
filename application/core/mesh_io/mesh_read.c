/* mesh_read.c -- pick a reader by type or file extension and create the model part. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "mdpa" or "gmsh" from the extension of path; NULL when it is neither. */
static const char *ef_mesh_type_from_extension(const char *path) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return NULL;
  if (strcasecmp(dot, ".mdpa") == 0) return "mdpa";
  if (strcasecmp(dot, ".msh") == 0) return "gmsh";
  return NULL;
}

/* Create a model part with the default name and fill it from path with the reader input_type names. */
int ef_read_mesh(const char *path, const char *input_type, ef_model_part *mp) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "ef_read_mesh: NULL output handle");
  *mp = NULL;
  EF_CHECK(path && path[0], EF_ERR_PARAMETER, "ef_read_mesh: no mesh file given");
  const char *type = input_type ? input_type : ef_mesh_type_from_extension(path);
  EF_CHECK(type, EF_ERR_PARAMETER,
           "cannot tell the mesh format of '%s' from its extension: expected .mdpa or .msh, or give input_type",
           path);
  int (*reader)(const char *, ef_model_part) = NULL;
  if (strcmp(type, "mdpa") == 0) reader = ef_read_mdpa;
  else if (strcmp(type, "gmsh") == 0 || strcmp(type, "msh") == 0) reader = ef_read_gmsh;
  EF_CHECK(reader, EF_ERR_PARAMETER, "unknown mesh input_type '%s': expected \"mdpa\" or \"gmsh\"", type);

  ef_model_part m = NULL;
  EF_CALL(ef_model_part_create(NULL, 3, &m));
  size_t len = strlen(path) + 1;
  m->source_file = malloc(len);
  if (!m->source_file) {
    ef_model_part_destroy(&m);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  memcpy(m->source_file, path, len);
  int err = reader(path, m);
  if (err) {
    ef_model_part_destroy(&m);
    return err;
  }
  *mp = m;
  return EF_SUCCESS;
}

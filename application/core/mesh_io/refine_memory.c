/* refine_memory.c -- what uniform refinement will need, checked against what the machine has
 * before any of it is allocated (level 8 of a small mesh once ran out of memory after 32 s). */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MemAvailable of /proc/meminfo in bytes (EDGEFLOW_MEMORY_AVAILABLE_MB overrides); < 0 unknown. */
static double ef_memory_available(void) {
  const char *env = getenv("EDGEFLOW_MEMORY_AVAILABLE_MB");
  if (env && env[0]) return atof(env) * 1048576.0;
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return -1.0;
  char line[256];
  double kb = -1.0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
  fclose(f);
  return kb < 0 ? -1.0 : kb * 1024.0;
}

/* Refining L levels multiplies elements by 2^(dim L); nodes grow to about E/2 (triangles) or E/5
 * (tetrahedra).  Peak: the old and the new arrays side by side plus the edge table, about 64 bytes
 * per new tetrahedron (48 per triangle) and 48 per new node: a lower bound of the mesh alone. */
int ef_mesh_refine_memory_check(ef_model_part mp, int levels, const char *where) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "ef_mesh_refine_memory_check: NULL model part");
  if (levels <= 0) return EF_SUCCESS;
  if (!where) where = mp->source_file ? mp->source_file : mp->name;
  const int dim = mp->dim;
  double elements = (double)mp->n_elements * pow(dim == 2 ? 4.0 : 8.0, levels);
  double nodes = fmax((double)mp->n_nodes, elements / (dim == 2 ? 2.0 : 5.0));
  double bytes = elements * (dim == 2 ? 48.0 : 64.0) + nodes * 48.0;
  EF_CHECK(elements < (double)INT32_MAX && nodes < (double)INT32_MAX, EF_ERR_MEMORY,
           "%s: refinement_levels %d would make %.3g %s and about %.3g nodes, beyond the 2^31 a 32-bit index "
           "holds (and about %.3g GB for the mesh alone); use fewer levels",
           where, levels, elements, dim == 2 ? "triangles" : "tetrahedra", nodes, bytes / 1e9);
  double available = ef_memory_available();
  EF_CHECK(available < 0 || bytes < available, EF_ERR_MEMORY,
           "%s: refinement_levels %d would make %.3g %s and need about %.3g GB for the mesh alone (the solver "
           "needs several times more), but %.3g GB are available (MemAvailable); use fewer levels",
           where, levels, elements, dim == 2 ? "triangles" : "tetrahedra", bytes / 1e9, available / 1e9);
  return EF_SUCCESS;
}

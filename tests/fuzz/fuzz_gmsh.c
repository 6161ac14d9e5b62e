/* fuzz_gmsh.c -- libFuzzer harness: any bytes as a Gmsh .msh file (4.1 ASCII or binary, 2.2)
 * must either read into a consistent model part or fail with a message. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "fuzz_common.h"
#include "mesh_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ef_model_part mp = NULL;
  if (ef_model_part_create(NULL, 3, &mp)) return 0;
  int err = ef_read_gmsh_memory("fuzz.msh", data, size, mp);
  if (!err) ef_fuzz_check_model_part(mp);
  else ef_fuzz_check_message(err);
  ef_model_part_destroy(&mp);
  ef_error_clear();
  return 0;
}

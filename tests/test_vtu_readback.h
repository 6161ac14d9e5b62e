/* test_vtu_readback.h -- a deliberately small, independent reader of the .vtu
 * files ef_vtu_write produces, for the C tests (the VTK library check is
 * tests/vtk_roundtrip.py), and the ".expect" sidecar files that test reads.
 *
 * Sidecar format (all little endian): "EFVTKEXP1\n", then records
 *   u32 section length, section ("Points", "Cells", "PointData", "CellData"),
 *   u32 name length, name ("" for the points),
 *   u8 dtype ('d' Float64, 'q' Int64, 'i' Int32, 'B' UInt8), u32 components,
 *   u64 number of values, the values.
 */
#ifndef TEST_VTU_READBACK_H
#define TEST_VTU_READBACK_H

#include <stddef.h>
#include <stdint.h>

#include "edgeflow/ef_vtk_output.h"

typedef struct {
  char section[16];
  char name[128];
  char type[16];
  int n_components;
  uint64_t n_values;
  size_t elem_size;
  void *data; /* host byte order */
} tvr_array;

typedef struct {
  int64_t n_points, n_cells;
  int compressed, ascii;
  int n_arrays;
  tvr_array arrays[64];
} tvr_doc;

/* Parse path; on failure returns non-zero with the reason in why. */
int tvr_read(const char *path, tvr_doc *doc, char *why, size_t why_size);
void tvr_free(tvr_doc *doc);
/* Compare every array of doc with m, bit for bit, and check there is nothing extra. */
int tvr_compare(const tvr_doc *doc, const ef_vtu_mesh *m, char *why, size_t why_size);
/* Read path and compare with m: 0 when equal, else prints the reason to stderr. */
int tvr_check_file(const char *path, const ef_vtu_mesh *m);
/* Write the sidecar <path>.expect describing m for the Python/VTK test. */
int tvr_write_expect(const char *vtu_path, const ef_vtu_mesh *m);
/* Whole file into a NUL-terminated buffer (NULL if unreadable). */
char *tvr_slurp(const char *path, size_t *size);
/* rm -r (missing is fine); mkdir -p is ef_make_folders (edgeflow/ef_util.h). */
int tvr_remove_tree(const char *path);
int tvr_exists(const char *path);

#endif

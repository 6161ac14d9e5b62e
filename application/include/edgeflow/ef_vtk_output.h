/* ef_vtk_output.h -- VTK XML output: .vtu pieces and .pvd time series.
 *
 * Two layers, neither of which needs the VTK library:
 *
 *  - ef_vtu_write(): one VTK XML UnstructuredGrid file (version 1.0,
 *    header_type UInt64, little endian) from raw arrays, as appended raw
 *    binary (optionally zlib-compressed) or as inline ascii.
 *    ef_vtk_pvd_write(): a .pvd collection listing files and times.
 *  - ef_vtk_output: writes a model part (and its sub model parts) every time
 *    it is called, like Kratos' vtk_output_process, and keeps the .pvd
 *    collections up to date so ParaView opens the run as a time series.
 *
 * Every file is written to a hidden temporary name in the target folder
 * (".name.vtu.tmp.<pid>") and renamed into place: a crash of the program or
 * a full disk never leaves a truncated file under the final name (fsync,
 * which extends that to a crash of the machine, is asked for with `sync` or
 * done once by ef_vtk_output_sync).  A long .pvd is appended in place, one
 * entry in one pwrite, so it stays a complete collection at every moment.
 */
#ifndef EF_VTK_OUTPUT_H
#define EF_VTK_OUTPUT_H

#include <stdint.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_restart.h"

#ifdef __cplusplus
extern "C" {
#endif

/* VTK cell type numbers (vtkCellType.h). */
enum { EF_VTK_VERTEX = 1, EF_VTK_LINE = 3, EF_VTK_TRIANGLE = 5, EF_VTK_TETRA = 10 };

/* Element types of the arrays handed to the writer. */
typedef enum {
  EF_VTK_FLOAT64 = 0,
  EF_VTK_INT64 = 1,
  EF_VTK_INT32 = 2,
  EF_VTK_UINT8 = 3
} ef_vtk_scalar_type;

typedef enum {
  EF_VTK_FORMAT_BINARY = 0, /* appended raw binary: the default */
  EF_VTK_FORMAT_ASCII = 1   /* inline text; doubles at `precision` significant digits */
} ef_vtk_format;

/* A named point or cell data array: n_components values per tuple, interleaved. */
typedef struct {
  const char *name;
  ef_vtk_scalar_type type; /* FLOAT64, INT64 or INT32 */
  int n_components;        /* >= 1 */
  const void *values;      /* n_tuples * n_components */
} ef_vtk_data_array;

/* One unstructured-grid piece described by raw arrays (none is copied). */
typedef struct {
  int64_t n_points;
  const double *points; /* 3 * n_points */

  int64_t n_cells;
  ef_vtk_scalar_type connectivity_type; /* EF_VTK_INT32 or EF_VTK_INT64 */
  const void *connectivity;             /* point indices of every cell, back to back */
  const int64_t *offsets; /* end of each cell in connectivity (VTK convention);
                             NULL: every cell has nodes_per_cell points */
  int nodes_per_cell;
  const uint8_t *types; /* VTK cell type of each cell; NULL: all are cell_type */
  int cell_type;

  int n_point_data;
  const ef_vtk_data_array *point_data; /* n_points tuples each */
  int n_cell_data;
  const ef_vtk_data_array *cell_data; /* n_cells tuples each */
} ef_vtu_mesh;

typedef struct {
  ef_vtk_format format;
  int compress;          /* zlib (binary only); EF_ERR_UNSUPPORTED in a build without zlib.
                            The compressed arrays are held in memory until the file is written. */
  int compression_level; /* 1..9; 0: 1 (fastest) */
  int64_t block_size;    /* bytes per compressed block, 32 KiB..1 MiB; 0: 64 KiB */
  int sync;              /* fsync the file and its folder around the rename (survives a machine
                            crash); 0: the atomic rename alone (survives a crash of the program) */
  int precision;         /* ascii: significant digits of Float64 values (points, data arrays),
                            1..17, each value correctly rounded as printf's %.*g; 0: 17, which
                            reads back bit for bit.  Binary is always exact; integers always whole */
} ef_vtu_write_options;

/* Write mesh to path (a .vtu).  opt NULL: uncompressed binary.  Indices and
 * cell sizes are checked first (EF_ERR_PARAMETER); write failures remove the
 * temporary file and return EF_ERR_IO naming the path and the cause. */
int ef_vtu_write(const char *path, const ef_vtu_mesh *mesh, const ef_vtu_write_options *opt);

/* Write a .pvd collection: DataSet i has timestep times[i] and file files[i]
 * (a path relative to the .pvd's folder). */
int ef_vtk_pvd_write(const char *path, int n, const double *times, const char *const *files);

/* "ascii" or "binary" (Kratos' file_format values) to the enum. */
int ef_vtk_format_from_string(const char *text, ef_vtk_format *format);

/* ---------------------------------------------------------------------------
 * Model part output. */

typedef struct {
  const char *output_folder; /* created (with its parents) if missing; NULL: "vtk_output" */
  const char *base_name;     /* file prefix; NULL: the model part's name */
  const char *part;          /* NULL: the main file holds the whole model part; a sub model part
                                (dotted path): the main file holds only that part */
  int n_variables;           /* nodal variables written as point data; each must exist */
  const char *const *variables;
  ef_vtk_format format;
  int compress;              /* zlib compression of binary output */
  int write_ids;             /* NODE_ID point data, ELEMENT_ID / CONDITION_ID cell data (Int64) */
  int write_conditions;      /* conditions as extra cells of the main file */
  int output_sub_model_parts;  /* also write sub model parts to their own files */
  int n_sub_model_parts;       /* which ones (dotted paths); 0: every sub model part */
  const char *const *sub_model_parts;
  int sync;                    /* fsync every file as it is written; 0: only in ef_vtk_output_sync */
  int precision;               /* ascii significant digits, 1..17 (ef_vtu_write_options.precision);
                                  0: 17 (exact).  Kratos' output_precision, default 7 */
  /* MPI (docs/mpi.md): n_ranks > 1 writes every file as rank `rank`'s piece of a partitioned mesh
   * (owned nodes 0..n_owned_nodes-1 first): what the file of one process holds, each element and
   * condition on the rank owning its first node and each node (a part's vertices) on its owner, so
   * each exactly once over the ranks, on the nodes they use (ghosts included, with their current
   * values), and a PARTITION cell array (Int32, the rank), into <tag>_<step>_<rank>.vtu; rank 0 also
   * writes <tag>_<step>.pvtu naming the n_ranks pieces and keeps <tag>.pvd over the .pvtu files
   * (<tag>: <base>, or <base>_<path> for a sub model part's files).  Before the first write every rank
   * calls ef_vtk_output_reduce_parts (collective); the writes need no communication (the writer may
   * run on its own thread).  0 or 1: one process, as before. */
  int n_ranks, rank;
} ef_vtk_output_options;

typedef struct ef_vtk_output_s *ef_vtk_output;

/* Check and copy the options (nothing is written yet). */
int ef_vtk_output_create(const ef_vtk_output_options *opt, ef_vtk_output *out);

/* Write <base>_<step>.vtu (the model part, or the part of opt.part), and <base>_<path>_<step>.vtu for each selected sub
 * model part (its elements, or its conditions when it has no elements, or its
 * nodes as vertices when it has neither; only the nodes those use, renumbered
 * locally), then rewrite <base>.pvd and <base>_<path>.pvd with every step this
 * object has written (a step written again replaces its entry). */
int ef_vtk_output_write(ef_vtk_output out, ef_model_part mp, int step, double time);

/* MPI (n_ranks > 1), collective: sum over the ranks what the root and every sub model part of mp (this
 * rank's piece) hold, each element and condition counted on the rank owning its first node and each
 * node on its owner, so that every piece of a part writes the kind of cells the file of one process
 * has (a sub model part's elements, else its conditions, else its nodes) and the same arrays, also
 * where a rank's piece of the part is empty.  One reduction of 3 doubles per part; the model part's
 * mesh and sub model parts must not change afterwards.  One process: does nothing. */
int ef_vtk_output_reduce_parts(ef_vtk_output out, ef_model_part mp, ef_comm comm);

/* Make every file written so far durable: fsync each .vtu listed, the .pvd files and the folder
 * (the end of a run, or a restart point).  Until then a file is complete on disk as soon as it
 * is renamed into place, but a crash of the machine may lose it. */
int ef_vtk_output_sync(ef_vtk_output out);

/* Free; accepts NULL and sets *out to NULL. */
void ef_vtk_output_destroy(ef_vtk_output *out);

/* Restarts: the series written so far into records of the current section / back, each .pvd
 * rewritten with exactly the saved entries. */
int ef_vtk_output_save_state(ef_vtk_output out, ef_restart_writer *w);
int ef_vtk_output_load_state(ef_vtk_output out, ef_restart_reader *r);

#ifdef __cplusplus
}
#endif
#endif

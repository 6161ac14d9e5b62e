/* test_vtk_output_ranks.c -- the partitioned VTK output (ef_vtk_output_options.n_ranks, docs/mpi.md)
 * with conditions and sub model parts, all ranks in one process: one thread per rank, each with its
 * piece of the mesh (ef_model_part_split of slab partitions: no METIS, so every build runs it, the
 * sanitizer build included) and a communicator whose allreduce combines the threads' values
 * (an in-process implementation of ef_comm_ops over a barrier).
 *
 * On the 2D cavity (tests/data/petsc/cavity2d.msh: fluid elements, lid and walls conditions) and the
 * 3D cavity (test_examples: the same and pressure_reference, one node), each with a nodes-only sub
 * model part added ("probe": every 11th node), P = 2 and 3 ranks, conditions in the main file,
 * every sub model part and ids, and a second output of the lid's own files (`part`): every file of
 * one process (the same options without n_ranks) against its P pieces read back by
 * test_vtu_readback.c: the .pvtu names the P pieces and the .pvd the .pvtu; each piece has the
 * serial file's arrays (same names, types, components) and PARTITION, equal to its rank; the cells
 * of all pieces together, each as (VTK type, NODE_ID of every point, ELEMENT_ID, CONDITION_ID), equal
 * the serial file's as a multiset (each cell exactly once); every node of the serial file is in a
 * piece and every point's VELOCITY and PRESSURE equal the serial values at its NODE_ID bit for bit.
 * And the error: a write on several ranks before ef_vtk_output_reduce_parts.
 * Usage: test_vtk_output_ranks OUTPUT_FOLDER */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_util.h"
#include "edgeflow/ef_vtk_output.h"
#include "test_vtu_readback.h"

enum { MAX_RANKS = 3, ROW = 8 }; /* a cell: type, 4 node ids (padded), ELEMENT_ID, CONDITION_ID, 0 */

/* ---------------------------------------------------------------------------
 * Threads as ranks: allreduce over a barrier (every rank publishes its values, all combine them,
 * a second barrier before anyone returns so no slot is reused while read). */

typedef struct {
  int size;
  pthread_barrier_t barrier;
  double *slot[MAX_RANKS];
  int count[MAX_RANKS];
} team;

typedef struct {
  team *t;
  int rank;
  ef_model_part piece;
  ef_vtk_output_options opt[2];
  int n_outputs;
  int reduce; /* 0: write without ef_vtk_output_reduce_parts (the error case) */
  int err;
  char message[1024];
} rank_job;

static int team_allreduce(void *context, double *values, int n, ef_comm_op op) {
  rank_job *j = context;
  team *t = j->t;
  t->slot[j->rank] = values;
  t->count[j->rank] = n;
  pthread_barrier_wait(&t->barrier);
  int same = 1;
  for (int r = 0; r < t->size; ++r) same &= t->count[r] == n;
  double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
  for (int i = 0; same && out && i < n; ++i) {
    double v = t->slot[0][i];
    for (int r = 1; r < t->size; ++r) {
      const double w = t->slot[r][i];
      v = op == EF_COMM_SUM ? v + w : op == EF_COMM_MIN ? (w < v ? w : v) : (w > v ? w : v);
    }
    out[i] = v;
  }
  pthread_barrier_wait(&t->barrier);
  if (same && out) memcpy(values, out, (size_t)n * sizeof *values);
  free(out);
  if (!same) return EF_ERROR(EF_ERR_COMM, "team: rank %d reduces %d values, another a different count", j->rank, n);
  return out ? EF_SUCCESS : EF_ERROR(EF_ERR_MEMORY, "team: out of memory");
}
static int team_barrier(void *context) {
  rank_job *j = context;
  pthread_barrier_wait(&j->t->barrier);
  return EF_SUCCESS;
}
static void team_abort(void *context, int code) {
  (void)context;
  exit(code);
}
static int team_begin(void *context, int n_peers, const int *peers, double *const *send, const int64_t *send_count,
                      double *const *recv, const int64_t *recv_count, int tag, void **pending) {
  (void)context, (void)n_peers, (void)peers, (void)send, (void)send_count, (void)recv, (void)recv_count, (void)tag;
  *pending = NULL;
  return EF_ERROR(EF_ERR_UNSUPPORTED, "team: no point-to-point messages (the VTK output sends none)");
}
static int team_end(void *context, void *pending) {
  (void)context, (void)pending;
  return EF_ERROR(EF_ERR_UNSUPPORTED, "team: no point-to-point messages");
}
static const ef_comm_ops team_ops = {"team", team_allreduce, team_barrier, team_abort, team_begin, team_end, NULL};

/* One rank: its outputs created, reduced (collective) and written at step 1. */
static void *rank_main(void *arg) {
  rank_job *j = arg;
  ef_comm comm = NULL;
  j->err = ef_comm_create(&team_ops, j, j->rank, j->t->size, &comm);
  for (int k = 0; k < j->n_outputs && !j->err; ++k) {
    ef_vtk_output out = NULL;
    j->err = ef_vtk_output_create(&j->opt[k], &out);
    if (!j->err && j->reduce) j->err = ef_vtk_output_reduce_parts(out, j->piece, comm);
    if (!j->err) j->err = ef_vtk_output_write(out, j->piece, 1, 0.5);
    ef_vtk_output_destroy(&out);
  }
  if (j->err) snprintf(j->message, sizeof j->message, "%s", ef_error_message());
  ef_comm_destroy(&comm);
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Reading the files back. */

static const tvr_array *find(const tvr_doc *d, const char *section, const char *name) {
  for (int i = 0; i < d->n_arrays; ++i)
    if (!strcmp(d->arrays[i].section, section) && (!name || !strcmp(d->arrays[i].name, name))) return &d->arrays[i];
  return NULL;
}

static int64_t int_at(const tvr_array *a, uint64_t i) {
  if (!strcmp(a->type, "Int64")) return ((const int64_t *)a->data)[i];
  if (!strcmp(a->type, "Int32")) return ((const int32_t *)a->data)[i];
  return ((const uint8_t *)a->data)[i];
}

/* Append the cells of d as rows (see ROW) to *rows (*n of them); 0 on success. */
static int append_cells(const tvr_doc *d, const char *what, int64_t **rows, int64_t *n) {
  const tvr_array *conn = find(d, "Cells", "connectivity"), *off = find(d, "Cells", "offsets"),
                  *types = find(d, "Cells", "types"), *ids = find(d, "PointData", "NODE_ID"),
                  *el = find(d, "CellData", "ELEMENT_ID"), *co = find(d, "CellData", "CONDITION_ID");
  if (!conn || !off || !types || !ids) {
    EXPECT(0, "%s: no connectivity, offsets, types or NODE_ID", what);
    return 1;
  }
  int64_t *grown = realloc(*rows, (size_t)(*n + d->n_cells + 1) * ROW * sizeof *grown);
  ASSERT(grown, "out of memory");
  *rows = grown;
  int64_t start = 0;
  for (int64_t c = 0; c < d->n_cells; ++c) {
    int64_t *row = *rows + (*n + c) * ROW, end = int_at(off, (uint64_t)c);
    if (end - start < 1 || end - start > 4) {
      EXPECT(0, "%s: cell %lld has %lld points", what, (long long)c, (long long)(end - start));
      return 1;
    }
    row[0] = int_at(types, (uint64_t)c);
    for (int k = 0; k < 4; ++k)
      row[1 + k] = start + k < end ? int_at(ids, (uint64_t)int_at(conn, (uint64_t)(start + k))) : -2;
    row[5] = el ? int_at(el, (uint64_t)c) : -3;
    row[6] = co ? int_at(co, (uint64_t)c) : -3;
    row[7] = 0;
    start = end;
  }
  *n += d->n_cells;
  return 0;
}

static int row_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int k = 0; k < ROW; ++k)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

/* The point data of piece d against the serial file s at the same NODE_ID (bit for bit);
 * seen[serial index] counts the points found. */
static void compare_points(const tvr_doc *s, const int64_t *index_of_id, int64_t max_id, const tvr_doc *d,
                           const char *what, int *seen) {
  const tvr_array *ids = find(d, "PointData", "NODE_ID");
  for (int k = 0; k < d->n_arrays; ++k) {
    const tvr_array *a = &d->arrays[k];
    if (strcmp(a->section, "PointData") || strcmp(a->type, "Float64")) continue;
    const tvr_array *b = find(s, "PointData", a->name);
    int bad = 0;
    for (int64_t i = 0; b && i < d->n_points && !bad; ++i) {
      const int64_t id = int_at(ids, (uint64_t)i), j = id >= 0 && id <= max_id ? index_of_id[id] : -1;
      bad = j < 0 || memcmp((const double *)a->data + i * a->n_components,
                            (const double *)b->data + j * b->n_components, (size_t)a->n_components * sizeof(double));
      if (j >= 0) seen[j] = 1;
    }
    EXPECT(b && !bad, "%s: %s differs from one process at some NODE_ID", what, a->name);
  }
}

/* One file of one process (folder/tag_1.vtu) against its pieces in pfolder. */
static void compare_file(const char *folder, const char *pfolder, const char *tag, int P, int64_t *n_cells_out) {
  char path[4096], why[512];
  tvr_doc s = {0};
  snprintf(path, sizeof path, "%s/%s_1.vtu", folder, tag);
  if (tvr_read(path, &s, why, sizeof why)) {
    EXPECT(0, "%s", why);
    return;
  }
  /* the .pvd names the .pvtu, the .pvtu the P pieces */
  snprintf(path, sizeof path, "%s/%s.pvd", pfolder, tag);
  char *pvd = tvr_slurp(path, NULL), needle[1024];
  snprintf(needle, sizeof needle, "file=\"%s_1.pvtu\"", tag);
  EXPECT(pvd && strstr(pvd, needle), "%s does not name %s_1.pvtu", path, tag);
  free(pvd);
  snprintf(path, sizeof path, "%s/%s_1.pvtu", pfolder, tag);
  char *pvtu = tvr_slurp(path, NULL);
  int n_sources = 0;
  for (const char *p = pvtu; p && (p = strstr(p, "<Piece Source=")); ++p) ++n_sources;
  EXPECT(pvtu && n_sources == P, "%s: %d pieces named, expected %d", path, n_sources, P);
  for (int r = 0; pvtu && r < P; ++r) {
    snprintf(needle, sizeof needle, "<Piece Source=\"%s_1_%d.vtu\"/>", tag, r);
    EXPECT(strstr(pvtu, needle), "%s does not name %s_1_%d.vtu", path, tag, r);
  }
  free(pvtu);
  int64_t *srows = NULL, *prows = NULL, n_s = 0, n_p = 0;
  append_cells(&s, tag, &srows, &n_s);
  const tvr_array *sid = find(&s, "PointData", "NODE_ID");
  int64_t max_id = 0;
  for (int64_t i = 0; sid && i < s.n_points; ++i)
    if (int_at(sid, (uint64_t)i) > max_id) max_id = int_at(sid, (uint64_t)i);
  int64_t *index_of_id = malloc((size_t)(max_id + 1) * sizeof *index_of_id);
  int *seen = calloc((size_t)s.n_points + 1, sizeof *seen);
  ASSERT(index_of_id && seen, "out of memory");
  for (int64_t i = 0; i <= max_id; ++i) index_of_id[i] = -1;
  for (int64_t i = 0; sid && i < s.n_points; ++i) index_of_id[int_at(sid, (uint64_t)i)] = i;
  for (int r = 0; r < P; ++r) {
    tvr_doc d = {0};
    char what[600];
    snprintf(path, sizeof path, "%s/%s_1_%d.vtu", pfolder, tag, r);
    snprintf(what, sizeof what, "%s_1_%d.vtu", tag, r);
    if (tvr_read(path, &d, why, sizeof why)) {
      EXPECT(0, "%s", why);
      continue;
    }
    /* the serial file's arrays, then PARTITION = r on every cell */
    int n_same = 0;
    for (int k = 0; k < s.n_arrays; ++k) {
      const tvr_array *a = &s.arrays[k], *b = find(&d, a->section, a->name);
      n_same += b && !strcmp(a->type, b->type) && a->n_components == b->n_components;
    }
    const tvr_array *part = find(&d, "CellData", "PARTITION");
    EXPECT(n_same == s.n_arrays && d.n_arrays == s.n_arrays + 1 && part, "%s: %d arrays, %d of the serial %d",
           what, d.n_arrays, n_same, s.n_arrays);
    for (int64_t c = 0; part && c < d.n_cells; ++c)
      if (int_at(part, (uint64_t)c) != r) {
        EXPECT(0, "%s: PARTITION %lld on cell %lld", what, (long long)int_at(part, (uint64_t)c), (long long)c);
        break;
      }
    append_cells(&d, what, &prows, &n_p);
    compare_points(&s, index_of_id, max_id, &d, what, seen);
    tvr_free(&d);
  }
  int all = 1;
  for (int64_t i = 0; i < s.n_points; ++i) all &= seen[i];
  EXPECT(all, "%s: some node of one process is in no piece", tag);
  qsort(srows, (size_t)n_s, ROW * sizeof *srows, row_cmp);
  qsort(prows, (size_t)n_p, ROW * sizeof *prows, row_cmp);
  EXPECT(n_s == n_p && (n_s == 0 || !memcmp(srows, prows, (size_t)n_s * ROW * sizeof *srows)),
         "%s: the pieces hold %lld cells, one process %lld%s", tag, (long long)n_p, (long long)n_s,
         n_s == n_p ? ", not the same (type, NODE_IDs, ELEMENT_ID, CONDITION_ID)" : "");
  *n_cells_out = n_p;
  free(srows);
  free(prows);
  free(index_of_id);
  free(seen);
  tvr_free(&s);
}

/* ---------------------------------------------------------------------------
 * The cases. */

static void slabs(ef_model_part mp, int P, int *part) {
  double lo = 1e300, hi = -1e300;
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    lo = mp->coords[3 * i] < lo ? mp->coords[3 * i] : lo;
    hi = mp->coords[3 * i] > hi ? mp->coords[3 * i] : hi;
  }
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    int q = (int)((mp->coords[3 * i] - lo) / (hi - lo) * P);
    part[i] = q < 0 ? 0 : q >= P ? P - 1 : q;
  }
}

/* Run P ranks (threads) on the pieces of mp with options o[0..n); reduce: call ef_vtk_output_reduce_parts. */
static void run_ranks(ef_model_part mp, int P, const ef_vtk_output_options *o, int n, int reduce, rank_job *jobs) {
  int *part = malloc((size_t)mp->n_nodes * sizeof *part);
  ASSERT(part, "out of memory");
  slabs(mp, P, part);
  team t = {.size = P};
  ASSERT(!pthread_barrier_init(&t.barrier, NULL, (unsigned)P), "pthread_barrier_init");
  pthread_t threads[MAX_RANKS];
  for (int r = 0; r < P; ++r) {
    ef_partition p;
    memset(&jobs[r], 0, sizeof jobs[r]);
    ASSERT_OK(ef_partition_build(mp, part, r, P, &p));
    ASSERT_OK(ef_model_part_split(mp, &p, &jobs[r].piece));
    ef_partition_free(&p);
    jobs[r].t = &t;
    jobs[r].rank = r;
    jobs[r].n_outputs = n;
    jobs[r].reduce = reduce;
    for (int k = 0; k < n; ++k) {
      jobs[r].opt[k] = o[k];
      jobs[r].opt[k].n_ranks = P;
      jobs[r].opt[k].rank = r;
    }
  }
  for (int r = 0; r < P; ++r) ASSERT(!pthread_create(&threads[r], NULL, rank_main, &jobs[r]), "pthread_create");
  for (int r = 0; r < P; ++r) pthread_join(threads[r], NULL);
  for (int r = 0; r < P; ++r) ef_model_part_destroy(&jobs[r].piece);
  pthread_barrier_destroy(&t.barrier);
  free(part);
}

static void run_case(const char *root, const char *mesh, const char *name) {
  ef_model_part mp = NULL;
  EXPECT_OK(ef_read_mesh(mesh, "gmsh", &mp));
  if (!mp) return;
  EXPECT_OK(ef_model_part_add_variable(mp, "VELOCITY", 3));
  EXPECT_OK(ef_model_part_add_variable(mp, "PRESSURE", 1));
  ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY"), *pr = ef_model_part_find_variable(mp, "PRESSURE");
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    for (int c = 0; c < 3; ++c) u->values[3 * i + c] = mp->coords[3 * i + c] / 3.0 + 0.1 * (double)c;
    pr->values[i] = 1.0 / (1.0 + (double)mp->node_ids[i]);
  }
  /* a nodes-only part: vertices, each on its node's owner */
  ef_sub_model_part *probe = NULL;
  EXPECT_OK(ef_model_part_add_sub_model_part(mp, NULL, "probe", &probe));
  ef_index *every11 = malloc((size_t)(mp->n_nodes / 11 + 1) * sizeof *every11);
  ASSERT(every11, "out of memory");
  int64_t n_probe = 0;
  for (ef_index i = 0; i < mp->n_nodes; i += 11) every11[n_probe++] = i;
  if (probe) EXPECT_OK(ef_sub_model_part_add_nodes(probe, every11, n_probe));
  free(every11);
  EXPECT_OK(ef_model_part_finalize_sub_model_parts(mp));
  static const char *const variables[] = {"VELOCITY", "PRESSURE"};
  char serial[2][4096], ranks[2][4096];
  for (int P = 2; P <= MAX_RANKS; ++P) {
    for (int k = 0; k < 2; ++k) {
      snprintf(serial[k], sizeof serial[k], "%s/%s_%s_serial", root, name, k ? "lid" : "all");
      snprintf(ranks[k], sizeof ranks[k], "%s/%s_%s_np%d", root, name, k ? "lid" : "all", P);
    }
    ef_vtk_output_options o[2] = {
        {.output_folder = serial[0], .variables = variables, .n_variables = 2, .write_ids = 1,
         .write_conditions = 1, .output_sub_model_parts = 1},
        {.output_folder = serial[1], .base_name = "lid", .part = "lid", .variables = variables, .n_variables = 2,
         .write_ids = 1}};
    for (int k = 0; k < 2 && P == 2; ++k) { /* one process, once */
      ef_vtk_output out = NULL;
      EXPECT_OK(ef_vtk_output_create(&o[k], &out));
      if (out) EXPECT_OK(ef_vtk_output_write(out, mp, 1, 0.5));
      ef_vtk_output_destroy(&out);
    }
    for (int k = 0; k < 2; ++k) o[k].output_folder = ranks[k];
    rank_job jobs[MAX_RANKS];
    run_ranks(mp, P, o, 2, 1, jobs);
    for (int r = 0; r < P; ++r) EXPECT(!jobs[r].err, "%s P=%d rank %d: %s", name, P, r, jobs[r].message);
    char summary[2048] = "";
    for (int k = 0; k < 2; ++k) {
      DIR *d = opendir(serial[k]);
      EXPECT(d, "cannot list %s", serial[k]);
      int n_files = 0;
      for (struct dirent *de; d && (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, "_1.vtu")) continue;
        char tag[512];
        snprintf(tag, sizeof tag, "%.*s", (int)(l - 6), de->d_name);
        int64_t n_cells = -1;
        compare_file(serial[k], ranks[k], tag, P, &n_cells);
        size_t used = strlen(summary);
        snprintf(summary + used, sizeof summary - used, " %s:%lld", tag, (long long)n_cells);
        ++n_files;
      }
      if (d) closedir(d);
      EXPECT(n_files == (k ? 1 : 1 + mp->n_children), "%s: %d files of one process", serial[k], n_files);
    }
    printf("test_vtk_output_ranks: %s on %d ranks, cells over the pieces:%s\n", name, P, summary);
  }
  /* Several ranks without ef_vtk_output_reduce_parts: an error naming it, on every rank. */
  ef_vtk_output_options plain = {.output_folder = ranks[0], .variables = variables, .n_variables = 2};
  rank_job jobs[MAX_RANKS];
  run_ranks(mp, 2, &plain, 1, 0, jobs);
  for (int r = 0; r < 2; ++r)
    EXPECT(jobs[r].err == EF_ERR_PARAMETER && strstr(jobs[r].message, "ef_vtk_output_reduce_parts must be called"),
           "%s rank %d without the reduction: %s (%s)", name, r, ef_error_name(jobs[r].err), jobs[r].message);
  ef_model_part_destroy(&mp);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUTPUT_FOLDER\n", argv[0]);
    return 2;
  }
  const char *root = argv[1];
  if (tvr_remove_tree(root) || ef_make_folders(root)) {
    fprintf(stderr, "cannot reset %s\n", root);
    return 1;
  }
  run_case(root, EF_TEST_DATA "/petsc/cavity2d.msh", "cavity2d");
  run_case(root, EF_SOURCE_DIR "/test_examples/cavity3d/cavity3d.msh", "cavity3d");
  if (!failures) printf("test_vtk_output_ranks: PASSED\n");
  return failures ? 1 : 0;
}

/* refine.c -- uniform red refinement of triangle and tetrahedron meshes, the
 * element node graph, and element quality statistics.  The rules are stated
 * in ef_mesh_tools.h. */
#include "edgeflow/ef_mesh_tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "core_parallel.h"

static const double ef_pi = 3.14159265358979323846;

/* Local vertex pairs of the edges, in the order that numbers the midpoints. */
static const int ef_tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
static const int ef_tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

/* Children of a triangle over local nodes 0..2 and midpoints 3=m01, 4=m12, 5=m20:
 * three corner triangles and the midpoint triangle, all oriented like the parent. */
static const int ef_tri_children[4][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};

/* Children of a tetrahedron over local nodes 0..3 and midpoints
 * 4=m01 5=m02 6=m03 7=m12 8=m13 9=m23.  Four corner tetrahedra (scaled copies
 * of the parent), then the inner octahedron cut along one of its diagonals
 * m01-m23, m02-m13 or m03-m12 into four tetrahedra.  Every child has the
 * parent's orientation and exactly 1/8 of its volume (checked by the tests). */
static const int ef_tet_corners[4][4] = {{0, 4, 5, 6}, {4, 1, 7, 8}, {5, 7, 2, 9}, {6, 8, 9, 3}};
static const int ef_tet_octahedron[3][4][4] = {
    {{4, 9, 5, 6}, {4, 9, 6, 8}, {4, 9, 8, 7}, {4, 9, 7, 5}}, /* diagonal m01-m23 */
    {{8, 5, 4, 6}, {8, 5, 6, 9}, {8, 5, 9, 7}, {8, 5, 7, 4}}, /* diagonal m02-m13 */
    {{6, 7, 4, 5}, {6, 7, 5, 9}, {6, 7, 9, 8}, {6, 7, 8, 4}}, /* diagonal m03-m12 */
};

/* Sort a short run of node indices ascending (rows of the node graph are short). */
static void ef_sort_indices(ef_index *a, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    ef_index v = a[i];
    int64_t j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
}

/* qsort order of node indices: ascending. */
static int ef_compare_index(const void *pa, const void *pb) {
  ef_index a = *(const ef_index *)pa, b = *(const ef_index *)pb;
  return (a > b) - (a < b);
}

/* Sort ascending: insertion sort for short arrays, qsort for long ones. */
static void ef_sort_index_array(ef_index *a, int64_t n) {
  if (n <= 32)
    ef_sort_indices(a, n);
  else
    qsort(a, (size_t)n, sizeof *a, ef_compare_index);
}

/* Sort the 3 or 4 nodes of an element ascending with a compare-exchange network (no branches). */
static void ef_sort_element_nodes(ef_index *s, int npe) {
  static const int net4[5][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}}, net3[3][2] = {{0, 1}, {1, 2}, {0, 1}};
  const int(*net)[2] = npe == 4 ? net4 : net3;
  for (int k = 0; k < (npe == 4 ? 5 : 3); ++k) {
    const ef_index a = s[net[k][0]], b = s[net[k][1]];
    s[net[k][0]] = a < b ? a : b;
    s[net[k][1]] = a < b ? b : a;
  }
}

/* Verify that every element references a node in [0, n_nodes). */
static int ef_check_element_nodes(ef_model_part mp) {
  const int64_t total = mp->n_elements * mp->nodes_per_element;
  for (int64_t k = 0; k < total; ++k) {
    ef_index v = mp->elements[k];
    if (v < 0 || v >= mp->n_nodes) {
      int64_t e = k / mp->nodes_per_element;
      return EF_ERROR(EF_ERR_MESH, "element %lld (index %lld) references node index %d outside [0, %lld)",
                      mp->element_ids ? (long long)mp->element_ids[e] : (long long)e + 1, (long long)e,
                      (int)v, (long long)mp->n_nodes);
    }
  }
  return EF_SUCCESS;
}

/* Element e's nodes into s, sorted ascending (as ef_sort_element_nodes); 0 when one is outside [0, n_nodes),
 * s then unsorted. */
static int ef_element_sorted_nodes(ef_model_part mp, int64_t e, ef_index s[4]) {
  const int npe = mp->nodes_per_element;
  const ef_index *v = mp->elements + e * npe;
  int in_range = 1;
  for (int i = 0; i < npe; ++i) {
    s[i] = v[i];
    in_range &= v[i] >= 0 && v[i] < mp->n_nodes;
  }
  if (in_range) ef_sort_element_nodes(s, npe);
  return in_range;
}

/* The finished graph to the caller, its columns shrunk from `total` to the `used` entries kept. */
static void ef_graph_hand_out(int64_t *row_ptr, ef_index *cols, int64_t used, int64_t total, int64_t **row_ptr_out,
                              ef_index **cols_out) {
  if (used > 0 && used < total) {
    ef_index *shrunk = realloc(cols, (size_t)used * sizeof *cols);
    if (shrunk) cols = shrunk; /* keeping the larger block is harmless */
  }
  *row_ptr_out = row_ptr;
  *cols_out = cols;
}

#ifdef _OPENMP
/* Drop the repeats of row[0..m) and sort what is left ascending; returns its length.  Repeats are found
 * with a small open-addressing table (the rows of a node graph are short, each entry listed once per
 * element around the edge), so only the distinct entries are sorted; a long row is sorted whole. */
static int64_t ef_row_unique_sorted(ef_index *row, int64_t m) {
  enum { TABLE_MAX = 512 };
  int64_t u = 0;
  if (m > TABLE_MAX / 2) {
    ef_sort_index_array(row, m);
    for (int64_t k = 0; k < m; ++k)
      if (u == 0 || row[k] != row[u - 1]) row[u++] = row[k];
    return u;
  }
  ef_index table[TABLE_MAX];
  int bits = 4;
  while ((INT64_C(1) << bits) < 2 * m) ++bits;
  const uint32_t mask = (UINT32_C(1) << bits) - 1;
  for (uint32_t h = 0; h <= mask; ++h) table[h] = -1;
  for (int64_t k = 0; k < m; ++k) {
    const ef_index v = row[k];
    uint32_t h = ((uint32_t)v * UINT32_C(2654435761)) >> (32 - bits);
    while (table[h] >= 0 && table[h] != v) h = (h + 1) & mask;
    if (table[h] < 0) {
      table[h] = v;
      row[u++] = v;
    }
  }
  ef_sort_indices(row, u);
  return u;
}

/* ef_build_upper_graph on several threads: counts and fills with atomic increments (a row's entries land
 * in any order), then each row sorted and its repeats dropped on its own, then the rows compacted:
 * the rows are sorted sets, so the result is the serial one's. */
static int ef_build_upper_graph_parallel(ef_model_part mp, int64_t **row_ptr_out, ef_index **cols_out) {
  int err = EF_SUCCESS;
  const int64_t n = mp->n_nodes, ne = mp->n_elements;
  const int npe = mp->nodes_per_element;
  int64_t *row_ptr = NULL, *fill = NULL;
  ef_index *cols = NULL;
  EF_CALLOC(row_ptr, n + 1);
  int in_range = 1;
#pragma omp parallel for schedule(static) reduction(&& : in_range)
  for (int64_t e = 0; e < ne; ++e) {
    ef_index s[4];
    if (!ef_element_sorted_nodes(mp, e, s)) {
      in_range = 0;
      continue;
    }
    for (int i = 0; i + 1 < npe; ++i) __atomic_fetch_add(&row_ptr[s[i] + 1], npe - 1 - i, __ATOMIC_RELAXED);
  }
  if (!in_range) {
    free(row_ptr);
    return ef_check_element_nodes(mp); /* the first node index out of range, in element order */
  }
  for (int64_t i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
  const int64_t total = row_ptr[n];
  cols = malloc((size_t)(total ? total : 1) * sizeof *cols);
  fill = malloc((size_t)(n ? n : 1) * sizeof *fill);
  EF_CHECK_GOTO(cols && fill, EF_ERR_MEMORY, fail, "out of memory building the node graph (%lld pairs)",
                (long long)total);
  memcpy(fill, row_ptr, (size_t)n * sizeof *fill);
  int64_t repeat = ne; /* the first element that repeats a node */
#pragma omp parallel for schedule(static) reduction(min : repeat)
  for (int64_t e = 0; e < ne; ++e) {
    /* the sorted nodes: row s[i] takes s[i+1..], one atomic increment a row */
    ef_index s[4];
    ef_element_sorted_nodes(mp, e, s); /* all in range (above) */
    int repeats = 0;
    for (int i = 0; i + 1 < npe; ++i) repeats |= s[i] == s[i + 1];
    if (repeats) {
      if (e < repeat) repeat = e;
      continue;
    }
    for (int i = 0; i + 1 < npe; ++i) {
      const int64_t at = __atomic_fetch_add(&fill[s[i]], npe - 1 - i, __ATOMIC_RELAXED);
      for (int j = i + 1; j < npe; ++j) cols[at + j - i - 1] = s[j];
    }
  }
  if (repeat < ne) {
    const ef_index *v = mp->elements + repeat * npe;
    ef_index a = v[0];
    for (int i = npe - 1; i >= 0; --i)
      for (int j = npe - 1; j > i; --j)
        if (v[i] == v[j]) a = v[i]; /* the first equal pair in (i, j) order */
    err = EF_ERROR(EF_ERR_MESH, "element %lld repeats node index %d",
                   mp->element_ids ? (long long)mp->element_ids[repeat] : (long long)repeat + 1, (int)a);
    goto fail;
  }
  /* Each row sorted, its repeats dropped; fill[i] becomes its number of distinct entries. */
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < n; ++i) {
    fill[i] = ef_row_unique_sorted(cols + row_ptr[i], row_ptr[i + 1] - row_ptr[i]);
  }
  /* Compact the rows towards the front (each moves down, never past an unread one). */
  int64_t out = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = row_ptr[i], u = fill[i];
    row_ptr[i] = out;
    if (out != start) memmove(cols + out, cols + start, (size_t)u * sizeof *cols);
    out += u;
  }
  row_ptr[n] = out;
  free(fill);
  ef_graph_hand_out(row_ptr, cols, out, total, row_ptr_out, cols_out);
  return EF_SUCCESS;
fail:
  free(row_ptr);
  free(cols);
  free(fill);
  return err;
}
#endif

/* Upper node graph {(a,b): a<b share an element} as CSR rows keyed by a, columns sorted and unique. */
static int ef_build_upper_graph(ef_model_part mp, int64_t **row_ptr_out, ef_index **cols_out) {
  int err = EF_SUCCESS;
  const int64_t n = mp->n_nodes;
  const int npe = mp->nodes_per_element;
  const int64_t ne = mp->n_elements;
  int64_t *row_ptr = NULL, *fill = NULL;
  ef_index *cols = NULL;
  *row_ptr_out = NULL;
  *cols_out = NULL;
  EF_CHECK(n >= 0 && ne >= 0, EF_ERR_MESH, "node graph: negative node or element count");
  EF_CHECK(npe == 3 || npe == 4 || ne == 0, EF_ERR_UNSUPPORTED,
           "node graph: elements with %d nodes are not supported (triangles or tetrahedra)", npe);
#ifdef _OPENMP
  if (ef_core_parallel(ne)) return ef_build_upper_graph_parallel(mp, row_ptr_out, cols_out);
#endif

  EF_CALLOC(row_ptr, n + 1);
  /* Count every element edge once per element it appears in (duplicates removed below); a node
   * index out of range is reported by ef_check_element_nodes (the first one, in element order). */
  for (int64_t e = 0; e < ne; ++e) {
    ef_index s[4];
    if (!ef_element_sorted_nodes(mp, e, s)) {
      free(row_ptr);
      return ef_check_element_nodes(mp);
    }
    /* The pairs (s[i], s[j > i]) of the sorted nodes have the smaller node s[i]: row s[i] gets npe-1-i. */
    for (int i = 0; i + 1 < npe; ++i) row_ptr[s[i] + 1] += npe - 1 - i;
  }
  for (int64_t i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
  const int64_t total = row_ptr[n];
  cols = malloc((size_t)(total ? total : 1) * sizeof *cols);
  fill = malloc((size_t)(n ? n : 1) * sizeof *fill);
  EF_CHECK_GOTO(cols && fill, EF_ERR_MEMORY, fail, "out of memory building the node graph (%lld pairs)",
                (long long)total);
  memcpy(fill, row_ptr, (size_t)n * sizeof *fill);
  for (int64_t e = 0; e < ne; ++e) {
    const ef_index *v = mp->elements + e * npe;
    for (int i = 0; i < npe; ++i)
      for (int j = i + 1; j < npe; ++j) {
        ef_index a = v[i], b = v[j];
        if (a > b) {
          ef_index t = a;
          a = b;
          b = t;
        }
        EF_CHECK_GOTO(a != b, EF_ERR_MESH, fail, "element %lld repeats node index %d",
                      mp->element_ids ? (long long)mp->element_ids[e] : (long long)e + 1, (int)a);
        cols[fill[a]++] = b;
      }
  }
  /* Deduplicate each row with a last-seen marker (an edge is listed once per
   * element around it), sort the short unique run, and compact the rows
   * towards the front.  fill[] is reused as the marker.  Most entries repeat
   * one seen before, unpredictably: every entry is written and the output
   * advances only past a new one (out <= k, so nothing unread is overwritten). */
  for (int64_t i = 0; i < n; ++i) fill[i] = -1;
  int64_t out = 0, start = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t end = row_ptr[i + 1];
    row_ptr[i] = out;
    for (int64_t k = start; k < end; ++k) {
      const ef_index b = cols[k];
      const int64_t is_new = fill[b] != i;
      fill[b] = i;
      cols[out] = b;
      out += is_new;
    }
    ef_sort_index_array(cols + row_ptr[i], out - row_ptr[i]);
    start = end;
  }
  free(fill);
  fill = NULL;
  row_ptr[n] = out;
  ef_graph_hand_out(row_ptr, cols, out, total, row_ptr_out, cols_out);
  return EF_SUCCESS;
fail:
  free(row_ptr);
  free(cols);
  free(fill);
  return err;
}

/* Edge number of the pair {a,b} in the upper graph, or -1 when it is not an element edge. */
static int64_t ef_edge_find(const int64_t *row_ptr, const ef_index *cols, ef_index a, ef_index b) {
  if (a > b) {
    ef_index t = a;
    a = b;
    b = t;
  }
  const int64_t end = row_ptr[a + 1];
  int64_t lo = row_ptr[a], hi = end;
  /* lower bound by bisection on long rows, then counting the smaller entries of the short
   * rest without branching on them (rows hold a handful of entries) */
  while (hi - lo > 16) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cols[mid] < b)
      lo = mid + 1;
    else
      hi = mid + 1;
  }
  int64_t k = lo;
  for (int64_t q = lo; q < hi; ++q) k += cols[q] < b;
  return k < end && cols[k] == b ? k : -1;
}

/* Node graph of the elements: upper (j > i) or symmetric adjacency in CSR form. */
int ef_mesh_node_graph(ef_model_part mp, int symmetric, int64_t **row_ptr_out, ef_index **cols_out) {
  EF_CHECK(mp && row_ptr_out && cols_out, EF_ERR_PARAMETER, "ef_mesh_node_graph: NULL argument");
  int64_t *upper_ptr = NULL;
  ef_index *upper = NULL;
  EF_CALL(ef_build_upper_graph(mp, &upper_ptr, &upper));
  if (!symmetric) {
    *row_ptr_out = upper_ptr;
    *cols_out = upper;
    return EF_SUCCESS;
  }
  const int64_t n = mp->n_nodes;
  int64_t *ptr = calloc((size_t)n + 1, sizeof *ptr);
  ef_index *cols = malloc((size_t)(2 * upper_ptr[n] + 1) * sizeof *cols);
  if (!ptr || !cols) {
    const long long n_edges = (long long)upper_ptr[n];
    free(ptr);
    free(cols);
    free(upper_ptr);
    free(upper);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory building the symmetric node graph (%lld edges)", n_edges);
  }
  for (int64_t i = 0; i < n; ++i) {
    ptr[i + 1] += upper_ptr[i + 1] - upper_ptr[i];
    for (int64_t k = upper_ptr[i]; k < upper_ptr[i + 1]; ++k) ptr[upper[k] + 1]++;
  }
  for (int64_t i = 0; i < n; ++i) ptr[i + 1] += ptr[i];
  /* Visiting rows in increasing i appends the lower neighbours of row j in
   * increasing order before row j adds its own (larger) upper neighbours, so
   * every row comes out sorted without a sort. */
  int64_t *fill = malloc((size_t)(n ? n : 1) * sizeof *fill);
  if (!fill) {
    free(ptr);
    free(cols);
    free(upper_ptr);
    free(upper);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory building the symmetric node graph");
  }
  memcpy(fill, ptr, (size_t)n * sizeof *fill);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = upper_ptr[i]; k < upper_ptr[i + 1]; ++k) {
      cols[fill[i]++] = upper[k];
      cols[fill[upper[k]]++] = (ef_index)i;
    }
  free(fill);
  free(upper_ptr);
  free(upper);
  *row_ptr_out = ptr;
  *cols_out = cols;
  return EF_SUCCESS;
}

/* |E| = number of distinct vertex pairs sharing an element. */
int ef_mesh_count_edges(ef_model_part mp, int64_t *n_edges) {
  EF_CHECK(mp && n_edges, EF_ERR_PARAMETER, "ef_mesh_count_edges: NULL argument");
  int64_t *row_ptr = NULL;
  ef_index *cols = NULL;
  EF_CALL(ef_build_upper_graph(mp, &row_ptr, &cols));
  *n_edges = row_ptr[mp->n_nodes];
  free(row_ptr);
  free(cols);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * One refinement level. */

/* The sub model parts of the tree in depth-first order, with their new lists. */
typedef struct {
  ef_sub_model_part *smp;
  int64_t n_nodes, n_elements, n_conditions;
  ef_index *nodes, *elements, *conditions;
} ef_refined_smp;

/* Number of sub model parts in a tree, all depths. */
static int ef_count_smps(ef_sub_model_part **children, int n_children) {
  int count = 0;
  for (int i = 0; i < n_children; ++i)
    count += 1 + ef_count_smps(children[i]->children, children[i]->n_children);
  return count;
}

/* List the sub model parts of a tree depth-first into out[*pos...]. */
static void ef_collect_smps(ef_sub_model_part **children, int n_children, ef_refined_smp *out, int *pos) {
  for (int i = 0; i < n_children; ++i) {
    out[(*pos)++].smp = children[i];
    ef_collect_smps(children[i]->children, children[i]->n_children, out, pos);
  }
}

/* Everything one level produces, kept apart until it is all allocated so that
 * a failure leaves the model part untouched. */
typedef struct {
  int64_t n_nodes, n_elements, n_conditions;
  double *coords;
  int64_t *node_ids;
  ef_index *elements;
  int64_t *element_ids, *element_properties;
  ef_index *conditions;
  int64_t *condition_ids, *condition_properties;
  double **values;
  uint8_t **fixed;
  int n_smps;
  ef_refined_smp *smps;
} ef_refined_mesh;

/* Free whatever a failed level had allocated. */
static void ef_refined_mesh_free(ef_refined_mesh *r, int n_variables) {
  free(r->coords);
  free(r->node_ids);
  free(r->elements);
  free(r->element_ids);
  free(r->element_properties);
  free(r->conditions);
  free(r->condition_ids);
  free(r->condition_properties);
  if (r->values)
    for (int v = 0; v < n_variables; ++v) free(r->values[v]);
  if (r->fixed)
    for (int v = 0; v < n_variables; ++v) free(r->fixed[v]);
  free(r->values);
  free(r->fixed);
  if (r->smps)
    for (int s = 0; s < r->n_smps; ++s) {
      free(r->smps[s].nodes);
      free(r->smps[s].elements);
      free(r->smps[s].conditions);
    }
  free(r->smps);
  memset(r, 0, sizeof *r);
}

/* Local edges of a condition: lines have one, triangles three. */
static int ef_condition_edges(int npc, const int (**edges)[2]) {
  static const int line_edge[1][2] = {{0, 1}};
  if (npc == 2) {
    *edges = line_edge;
    return 1;
  }
  *edges = ef_tri_edges;
  return 3;
}

/* New node lists of one sub model part: its nodes plus the midpoints of the
 * edges of its conditions and elements (never of other edges between its nodes). */
static int ef_refine_smp_nodes(ef_model_part mp, const int64_t *row_ptr, const ef_index *cols,
                               int64_t n_edges, const ef_index *children, const int *midpoint_slot,
                               int32_t *stamp, int32_t stamp_value, ef_refined_smp *r) {
  const ef_sub_model_part *smp = r->smp;
  const int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  const int(*cedges)[2] = NULL;
  const int ncedges = smp->n_conditions ? ef_condition_edges(npc, &cedges) : 0;
  const int needges = npe == 4 ? 6 : 3;
  const int64_t per_parent = (int64_t)npe * (npe == 4 ? 8 : 4); /* child node indices of one element */

  /* Upper bound on the midpoints: every listed entity contributes all its edges. */
  int64_t bound = smp->n_conditions * ncedges + smp->n_elements * needges;
  if (bound > n_edges) bound = n_edges;
  EF_MALLOC(r->nodes, smp->n_nodes + bound + 1); /* +1: never NULL */
  if (smp->n_nodes) memcpy(r->nodes, smp->nodes, (size_t)smp->n_nodes * sizeof *r->nodes);
  ef_index *added = r->nodes + smp->n_nodes;
  int64_t n_added = 0;
  if (ef_core_parallel(smp->n_conditions + smp->n_elements)) {
    /* On several threads: each edge stamped once (an atomic exchange tells the first), then the stamped
     * edges read back in edge order: the sorted list the serial code makes. */
    EF_CORE_FOR(1, "omp parallel for schedule(static) reduction(+ : n_added)",
                for (int64_t k = 0; k < smp->n_conditions; ++k) {
                  const ef_index *v = mp->conditions + (int64_t)smp->conditions[k] * npc;
                  for (int j = 0; j < ncedges; ++j) {
                    int64_t edge = ef_edge_find(row_ptr, cols, v[cedges[j][0]], v[cedges[j][1]]);
                    if (edge >= 0 && __atomic_exchange_n(&stamp[edge], stamp_value, __ATOMIC_RELAXED) != stamp_value)
                      n_added++;
                  }
                });
    EF_CORE_FOR(1, "omp parallel for schedule(static) reduction(+ : n_added)",
                for (int64_t k = 0; k < smp->n_elements; ++k) {
                  const ef_index *c = children + (int64_t)smp->elements[k] * per_parent;
                  for (int j = 0; j < needges; ++j) {
                    const int64_t edge = (int64_t)c[midpoint_slot[j]] - mp->n_nodes;
                    if (__atomic_exchange_n(&stamp[edge], stamp_value, __ATOMIC_RELAXED) != stamp_value) n_added++;
                  }
                });
    int64_t pos = 0;
    for (int64_t edge = 0; edge < n_edges && pos < n_added; ++edge)
      if (stamp[edge] == stamp_value) added[pos++] = (ef_index)(mp->n_nodes + edge);
    r->n_nodes = smp->n_nodes + n_added;
    return EF_SUCCESS;
  }
  for (int64_t k = 0; k < smp->n_conditions; ++k) {
    const ef_index *v = mp->conditions + (int64_t)smp->conditions[k] * npc;
    for (int j = 0; j < ncedges; ++j) {
      int64_t edge = ef_edge_find(row_ptr, cols, v[cedges[j][0]], v[cedges[j][1]]);
      /* condition edges were all checked against the element edges already */
      if (edge >= 0 && stamp[edge] != stamp_value) {
        stamp[edge] = stamp_value;
        added[n_added++] = (ef_index)(mp->n_nodes + edge);
      }
    }
  }
  /* The midpoints of an element's edges are read back from its children, not searched again. */
  for (int64_t k = 0; k < smp->n_elements; ++k) {
    const ef_index *c = children + (int64_t)smp->elements[k] * per_parent;
    for (int j = 0; j < needges; ++j) {
      const int64_t edge = (int64_t)c[midpoint_slot[j]] - mp->n_nodes;
      if (stamp[edge] != stamp_value) {
        stamp[edge] = stamp_value;
        added[n_added++] = (ef_index)(mp->n_nodes + edge);
      }
    }
  }
  /* Midpoint indices all exceed the old node indices, so sorting the added
   * run keeps the whole list sorted.  A large run is read back from the stamp
   * array in edge order instead of sorted (linear rather than n log n). */
  if (n_added > 0 && (double)n_added * log2((double)n_added + 1.0) > (double)n_edges) {
    int64_t pos = 0;
    for (int64_t edge = 0; edge < n_edges; ++edge)
      if (stamp[edge] == stamp_value) added[pos++] = (ef_index)(mp->n_nodes + edge);
  } else {
    ef_sort_index_array(added, n_added);
  }
  r->n_nodes = smp->n_nodes + n_added;
  return EF_SUCCESS;
}

/* Children lists of one sub model part: element e -> e*c+0..c-1, sorted when e is. */
static int ef_refine_smp_entities(int64_t n, const ef_index *list, int children, int64_t limit,
                                  int64_t *n_out, ef_index **out) {
  *n_out = n * children;
  EF_MALLOC(*out, *n_out);
  for (int64_t k = 0; k < n; ++k)
    EF_CHECK(list[k] >= 0 && list[k] < limit, EF_ERR_MESH,
             "sub model part references entity index %d outside [0, %lld)", (int)list[k],
             (long long)limit);
  ef_index *o = *out;
  EF_CORE_FOR(ef_core_parallel(n), "omp parallel for schedule(static)", for (int64_t k = 0; k < n; ++k) {
    for (int c = 0; c < children; ++c) o[k * children + c] = (ef_index)((int64_t)list[k] * children + c);
  });
  return EF_SUCCESS;
}

/* Pick the octahedron diagonal of minimal length: |m01-m23| = |x0+x1-x2-x3|/2 and its two permutations. */
static int ef_shortest_diagonal(const double *coords, const ef_index *v) {
  const double *x0 = coords + 3 * (int64_t)v[0], *x1 = coords + 3 * (int64_t)v[1];
  const double *x2 = coords + 3 * (int64_t)v[2], *x3 = coords + 3 * (int64_t)v[3];
  double d[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < 3; ++c) {
    double a = x0[c] + x1[c] - x2[c] - x3[c];
    double b = x0[c] + x2[c] - x1[c] - x3[c];
    double e = x0[c] + x3[c] - x1[c] - x2[c];
    d[0] += a * a;
    d[1] += b * b;
    d[2] += e * e;
  }
  /* ties go to the lower number so that the result is reproducible */
  int best = 0;
  if (d[1] < d[best]) best = 1;
  if (d[2] < d[best]) best = 2;
  return best;
}

/* Position of the midpoint of local edge j among an element's child node indices (its first
 * appearance in a corner child), so that it can be read back from the children. */
static void ef_midpoint_slots(int npe, int slot[6]) {
  for (int j = 0; j < 6; ++j) {
    slot[j] = -1;
    for (int p = 0; p < 4 * npe && slot[j] < 0; ++p) {
      const int local = npe == 4 ? ef_tet_corners[p / 4][p % 4] : ef_tri_children[p / 3][p % 3];
      if (local == npe + j) slot[j] = p;
    }
  }
}

/* Children of condition k into out (its 2 or 4 children's nodes) and their properties; nonzero when a node
 * index is out of range or an edge is not an element edge (with a message only when `report`). */
static int ef_refine_condition(ef_model_part mp, int64_t k, const int64_t *row_ptr, const ef_index *cols,
                               int cond_children, ef_index *conditions, int64_t *properties, int report) {
  const int npc = mp->nodes_per_condition;
  const int64_t n = mp->n_nodes;
  const ef_index *v = mp->conditions + k * npc;
  const int(*edges)[2] = NULL;
  const int n_local_edges = ef_condition_edges(npc, &edges);
  ef_index local[6];
  for (int i = 0; i < npc; ++i) {
    if (v[i] < 0 || v[i] >= n)
      return report ? EF_ERROR(EF_ERR_MESH, "condition %lld references node index %d outside [0, %lld)",
                               mp->condition_ids ? (long long)mp->condition_ids[k] : (long long)k + 1, (int)v[i],
                               (long long)n)
                    : EF_ERR_MESH;
    local[i] = v[i];
  }
  for (int j = 0; j < n_local_edges; ++j) {
    const ef_index a = v[edges[j][0]], b = v[edges[j][1]];
    int64_t edge = ef_edge_find(row_ptr, cols, a, b);
    if (edge < 0)
      return report ? EF_ERROR(EF_ERR_MESH,
                               "condition %lld: its edge between nodes %lld and %lld is not an edge of any element, "
                               "so its refinement cannot match the element faces",
                               mp->condition_ids ? (long long)mp->condition_ids[k] : (long long)k + 1,
                               mp->node_ids ? (long long)mp->node_ids[a] : (long long)a + 1,
                               mp->node_ids ? (long long)mp->node_ids[b] : (long long)b + 1)
                    : EF_ERR_MESH;
    local[npc + j] = (ef_index)(n + edge);
  }
  ef_index *out = conditions + k * cond_children * npc;
  if (npc == 3) {
    for (int c = 0; c < 4; ++c)
      for (int i = 0; i < 3; ++i) out[3 * c + i] = local[ef_tri_children[c][i]];
  } else {
    out[0] = local[0];
    out[1] = local[2];
    out[2] = local[2];
    out[3] = local[1];
  }
  const int64_t prop = mp->condition_properties ? mp->condition_properties[k] : 0;
  for (int c = 0; c < cond_children; ++c) properties[k * cond_children + c] = prop;
  return EF_SUCCESS;
}

/* Refine the model part once; on failure it is left as it was. */
static int ef_refine_once(ef_model_part mp) {
  int err = EF_SUCCESS;
  const int64_t n = mp->n_nodes;
  const int npe = mp->nodes_per_element;
  const int npc = mp->n_conditions ? mp->nodes_per_condition : 0;
  const int elem_children = npe == 4 ? 8 : 4;
  const int cond_children = npc == 3 ? 4 : 2;
  int64_t *row_ptr = NULL;
  ef_index *cols = NULL;
  int32_t *stamp = NULL;
  ef_refined_mesh r;
  memset(&r, 0, sizeof r);

  EF_CHECK(npe == 3 || npe == 4 || mp->n_elements == 0, EF_ERR_UNSUPPORTED,
           "refinement: elements with %d nodes are not supported (triangles or tetrahedra)", npe);
  EF_CHECK(npc == 0 || npc == 2 || npc == 3, EF_ERR_UNSUPPORTED,
           "refinement: conditions with %d nodes are not supported (lines or triangles)", npc);
  EF_CALL(ef_build_upper_graph(mp, &row_ptr, &cols));
  const int64_t n_edges = row_ptr[n];
  EF_CHECK_GOTO(n + n_edges <= INT32_MAX && mp->n_elements * elem_children <= INT32_MAX &&
                    mp->n_conditions * cond_children <= INT32_MAX,
                EF_ERR_UNSUPPORTED, fail,
                "refinement: %lld nodes / %lld elements would overflow the 32-bit index type",
                (long long)(n + n_edges), (long long)(mp->n_elements * elem_children));

  /* Nodes: old ones keep index and id; the node of edge j is index n + j. */
  r.n_nodes = n + n_edges;
  r.coords = malloc((size_t)(3 * r.n_nodes) * sizeof *r.coords);
  r.node_ids = malloc((size_t)r.n_nodes * sizeof *r.node_ids);
  EF_CHECK_GOTO(r.coords && r.node_ids, EF_ERR_MEMORY, fail, "out of memory for %lld refined nodes",
                (long long)r.n_nodes);
  /* The loops below write disjoint entries (or reduce with max), the same for any thread count. */
  const int par_nodes = ef_core_parallel(n), par_elements = ef_core_parallel(mp->n_elements);
  int64_t max_id = 0;
  EF_CORE_FOR(
      par_nodes, "omp parallel for schedule(static) reduction(max : max_id)", for (int64_t i = 0; i < n; ++i) {
        r.node_ids[i] = mp->node_ids ? mp->node_ids[i] : i + 1;
        if (r.node_ids[i] > max_id) max_id = r.node_ids[i];
        for (int c = 0; c < 3; ++c) r.coords[3 * i + c] = mp->coords[3 * i + c];
      });
  EF_CORE_FOR(par_nodes, "omp parallel for schedule(static)", for (int64_t a = 0; a < n; ++a) {
    for (int64_t k = row_ptr[a]; k < row_ptr[a + 1]; ++k) {
      const int64_t b = cols[k];
      for (int c = 0; c < 3; ++c) r.coords[3 * (n + k) + c] = 0.5 * (mp->coords[3 * a + c] + mp->coords[3 * b + c]);
      r.node_ids[n + k] = max_id + 1 + k;
    }
  });

  /* Elements. */
  r.n_elements = mp->n_elements * elem_children;
  r.elements = malloc((size_t)(r.n_elements * npe + 1) * sizeof *r.elements);
  r.element_ids = malloc((size_t)(r.n_elements + 1) * sizeof *r.element_ids);
  r.element_properties = malloc((size_t)(r.n_elements + 1) * sizeof *r.element_properties);
  EF_CHECK_GOTO(r.elements && r.element_ids && r.element_properties, EF_ERR_MEMORY, fail,
                "out of memory for %lld refined elements", (long long)r.n_elements);
  int64_t missing = mp->n_elements; /* the first element with an edge not in the graph (none can be) */
  EF_CORE_FOR(
      par_elements, "omp parallel for schedule(static) reduction(min : missing)",
      for (int64_t e = 0; e < mp->n_elements; ++e) {
        const ef_index *v = mp->elements + e * npe;
        ef_index local[10]; /* parent nodes, then midpoints in edge-table order */
        const int n_local_edges = npe == 4 ? 6 : 3;
        const int(*edges)[2] = npe == 4 ? ef_tet_edges : ef_tri_edges;
        for (int i = 0; i < npe; ++i) local[i] = v[i];
        for (int j = 0; j < n_local_edges; ++j) {
          int64_t edge = ef_edge_find(row_ptr, cols, v[edges[j][0]], v[edges[j][1]]);
          if (edge < 0) {
            if (e < missing) missing = e;
            edge = 0;
          }
          local[npe + j] = (ef_index)(n + edge);
        }
        ef_index *out = r.elements + e * elem_children * npe;
        if (npe == 4) {
          const int diagonal = ef_shortest_diagonal(mp->coords, v);
          for (int c = 0; c < 4; ++c)
            for (int i = 0; i < 4; ++i) {
              out[4 * c + i] = local[ef_tet_corners[c][i]];
              out[16 + 4 * c + i] = local[ef_tet_octahedron[diagonal][c][i]];
            }
        } else {
          for (int c = 0; c < 4; ++c)
            for (int i = 0; i < 3; ++i) out[3 * c + i] = local[ef_tri_children[c][i]];
        }
        const int64_t prop = mp->element_properties ? mp->element_properties[e] : 0;
        for (int c = 0; c < elem_children; ++c) {
          r.element_properties[e * elem_children + c] = prop;
          r.element_ids[e * elem_children + c] = e * elem_children + c + 1;
        }
      });
  EF_CHECK_GOTO(missing == mp->n_elements, EF_ERR_INTERNAL, fail, "element %lld: edge missing from the node graph",
                (long long)missing);

  /* Conditions: each of their edges must be an element edge for the faces to match. */
  r.n_conditions = mp->n_conditions * cond_children;
  if (mp->n_conditions) {
    r.conditions = malloc((size_t)(r.n_conditions * npc) * sizeof *r.conditions);
    r.condition_ids = malloc((size_t)r.n_conditions * sizeof *r.condition_ids);
    r.condition_properties = malloc((size_t)r.n_conditions * sizeof *r.condition_properties);
    EF_CHECK_GOTO(r.conditions && r.condition_ids && r.condition_properties, EF_ERR_MEMORY, fail,
                  "out of memory for %lld refined conditions", (long long)r.n_conditions);
  }
  /* In parallel without messages, recording the first condition that fails; its message comes from the
   * checks run again on it alone (below), as the serial loop would have stopped there. */
  int64_t bad_condition = mp->n_conditions;
  EF_CORE_FOR(ef_core_parallel(mp->n_conditions), "omp parallel for schedule(static) reduction(min : bad_condition)",
              for (int64_t k = 0; k < mp->n_conditions; ++k) {
                if (ef_refine_condition(mp, k, row_ptr, cols, cond_children, r.conditions, r.condition_properties, 0) &&
                    k < bad_condition)
                  bad_condition = k;
              });
  if (bad_condition < mp->n_conditions) {
    err = ef_refine_condition(mp, bad_condition, row_ptr, cols, cond_children, r.conditions,
                              r.condition_properties, 1);
    goto fail;
  }
  EF_CORE_FOR(ef_core_parallel(r.n_conditions), "omp parallel for schedule(static)",
              for (int64_t k = 0; k < r.n_conditions; ++k) r.condition_ids[k] = k + 1;);

  /* Nodal variables: mean of the end values, free (not fixed). */
  if (mp->n_variables > 0) {
    r.values = calloc((size_t)mp->n_variables, sizeof *r.values);
    r.fixed = calloc((size_t)mp->n_variables, sizeof *r.fixed);
    EF_CHECK_GOTO(r.values && r.fixed, EF_ERR_MEMORY, fail, "out of memory for refined variables");
  }
  for (int iv = 0; iv < mp->n_variables; ++iv) {
    const ef_variable *var = &mp->variables[iv];
    const int nc = var->n_components;
    r.values[iv] = malloc((size_t)(r.n_nodes * nc) * sizeof **r.values);
    r.fixed[iv] = calloc((size_t)(r.n_nodes * nc), sizeof **r.fixed);
    EF_CHECK_GOTO(r.values[iv] && r.fixed[iv], EF_ERR_MEMORY, fail,
                  "out of memory refining variable %s", var->name);
    if (var->values) memcpy(r.values[iv], var->values, (size_t)(n * nc) * sizeof **r.values);
    if (var->fixed) memcpy(r.fixed[iv], var->fixed, (size_t)(n * nc) * sizeof **r.fixed);
    double *out = r.values[iv];
    const double *in = var->values;
    EF_CORE_FOR(par_nodes, "omp parallel for schedule(static)", for (int64_t a = 0; a < n; ++a) {
      for (int64_t k = row_ptr[a]; k < row_ptr[a + 1]; ++k)
        for (int c = 0; c < nc; ++c)
          out[(n + k) * nc + c] = in ? 0.5 * (in[a * nc + c] + in[(int64_t)cols[k] * nc + c]) : 0.0;
    });
  }

  /* Sub model parts. */
  int midpoint_slot[6];
  ef_midpoint_slots(npe, midpoint_slot);
  r.n_smps = ef_count_smps(mp->children, mp->n_children);
  if (r.n_smps > 0) {
    r.smps = calloc((size_t)r.n_smps, sizeof *r.smps);
    stamp = calloc((size_t)(n_edges ? n_edges : 1), sizeof *stamp);
    EF_CHECK_GOTO(r.smps && stamp, EF_ERR_MEMORY, fail, "out of memory refining sub model parts");
    int pos = 0;
    ef_collect_smps(mp->children, mp->n_children, r.smps, &pos);
  }
  for (int s = 0; s < r.n_smps; ++s) {
    ef_refined_smp *rs = &r.smps[s];
    EF_CALL_GOTO(ef_refine_smp_entities(rs->smp->n_elements, rs->smp->elements, elem_children,
                                        mp->n_elements, &rs->n_elements, &rs->elements),
                 fail);
    EF_CALL_GOTO(ef_refine_smp_entities(rs->smp->n_conditions, rs->smp->conditions, cond_children,
                                        mp->n_conditions, &rs->n_conditions, &rs->conditions),
                 fail);
    EF_CALL_GOTO(ef_refine_smp_nodes(mp, row_ptr, cols, n_edges, r.elements, midpoint_slot, stamp, s + 1, rs),
                 fail);
  }

  /* Commit: nothing below can fail. */
  free(mp->coords);
  mp->coords = r.coords;
  free(mp->node_ids);
  mp->node_ids = r.node_ids;
  mp->n_nodes = mp->n_owned_nodes = r.n_nodes;
  free(mp->elements);
  mp->elements = r.elements;
  free(mp->element_ids);
  mp->element_ids = r.element_ids;
  free(mp->element_properties);
  mp->element_properties = r.element_properties;
  mp->n_elements = r.n_elements;
  free(mp->conditions);
  mp->conditions = r.conditions;
  free(mp->condition_ids);
  mp->condition_ids = r.condition_ids;
  free(mp->condition_properties);
  mp->condition_properties = r.condition_properties;
  mp->n_conditions = r.n_conditions;
  for (int iv = 0; iv < mp->n_variables; ++iv) {
    free(mp->variables[iv].values);
    free(mp->variables[iv].fixed);
    mp->variables[iv].values = r.values[iv];
    mp->variables[iv].fixed = r.fixed[iv];
    mp->variables[iv].host_modified = 1;
  }
  for (int s = 0; s < r.n_smps; ++s) {
    ef_sub_model_part *smp = r.smps[s].smp;
    free(smp->nodes);
    free(smp->elements);
    free(smp->conditions);
    smp->nodes = r.smps[s].nodes;
    smp->n_nodes = r.smps[s].n_nodes;
    smp->elements = r.smps[s].elements;
    smp->n_elements = r.smps[s].n_elements;
    smp->conditions = r.smps[s].conditions;
    smp->n_conditions = r.smps[s].n_conditions;
  }
  free(r.values);
  free(r.fixed);
  free(r.smps);
  free(stamp);
  free(row_ptr);
  free(cols);
  return EF_SUCCESS;

fail:
  ef_refined_mesh_free(&r, mp->n_variables);
  free(stamp);
  free(row_ptr);
  free(cols);
  return err;
}

/* Uniform refinement, `levels` times: each simplex into 2^dim similar-volume children. */
int ef_mesh_refine_uniform(ef_model_part mp, int levels) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "ef_mesh_refine_uniform: NULL model part");
  EF_CHECK(levels >= 0, EF_ERR_PARAMETER, "ef_mesh_refine_uniform: levels must be >= 0 (got %d)", levels);
  EF_CHECK(mp->n_owned_nodes == mp->n_nodes, EF_ERR_UNSUPPORTED,
           "refinement of a mesh split into owned (%lld) and halo nodes (%lld in all) is not supported; "
           "refine before splitting",
           (long long)mp->n_owned_nodes, (long long)mp->n_nodes);
  EF_CHECK(!mp->device.sync_to_host, EF_ERR_UNSUPPORTED,
           "refinement after a strategy took the mesh to a device is not supported; refine first");
  for (int level = 0; level < levels; ++level) {
    int err = ef_refine_once(mp);
    if (err)
      return ef_error_push(err, __FILE__, __LINE__, "while refining level %d of %d of model part %s",
                           level + 1, levels, mp->name ? mp->name : "(unnamed)");
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Quality. */

/* Small 3-vector algebra: difference, cross and dot products, length. */
static void ef_sub3(const double *a, const double *b, double *out) {
  out[0] = a[0] - b[0];
  out[1] = a[1] - b[1];
  out[2] = a[2] - b[2];
}
static void ef_cross3(const double *a, const double *b, double *out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}
static double ef_dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double ef_norm3(const double *a) { return sqrt(ef_dot3(a, a)); }

/* Tetrahedron: signed volume, 3 r_in / R_circ, and min/max dihedral angle (radians). */
static void ef_tet_quality(const double *x[4], double *volume, double *ratio, double *dmin, double *dmax) {
  double e1[3], e2[3], e3[3], g[4][3];
  ef_sub3(x[1], x[0], e1);
  ef_sub3(x[2], x[0], e2);
  ef_sub3(x[3], x[0], e3);
  /* 6V times the gradients of the barycentric coordinates: normals of the
   * faces opposite each vertex, pointing towards it. */
  ef_cross3(e2, e3, g[1]);
  ef_cross3(e3, e1, g[2]);
  ef_cross3(e1, e2, g[3]);
  for (int c = 0; c < 3; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
  const double six_v = ef_dot3(e1, g[1]);
  *volume = six_v / 6.0;
  /* r_in = 3V / (sum of face areas); each |g_k| is twice the area of face k. */
  double area2 = 0.0;
  for (int k = 0; k < 4; ++k) area2 += ef_norm3(g[k]);
  const double r_in = area2 > 0.0 ? fabs(six_v) / area2 : 0.0;
  /* R = sqrt((aA+bB+cC)(aA+bB-cC)(aA-bB+cC)(-aA+bB+cC)) / (24 V), a/A opposite edge lengths. */
  double d[6][3];
  ef_sub3(x[1], x[0], d[0]);
  ef_sub3(x[2], x[3], d[1]);
  ef_sub3(x[2], x[0], d[2]);
  ef_sub3(x[1], x[3], d[3]);
  ef_sub3(x[3], x[0], d[4]);
  ef_sub3(x[1], x[2], d[5]);
  const double p = ef_norm3(d[0]) * ef_norm3(d[1]);
  const double q = ef_norm3(d[2]) * ef_norm3(d[3]);
  const double s = ef_norm3(d[4]) * ef_norm3(d[5]);
  const double prod = (p + q + s) * (p + q - s) * (p - q + s) * (-p + q + s);
  const double r_circ = six_v != 0.0 ? sqrt(fmax(prod, 0.0)) / (4.0 * fabs(six_v)) : INFINITY;
  *ratio = (r_circ > 0.0 && isfinite(r_circ)) ? 3.0 * r_in / r_circ : 0.0;
  /* Dihedral angle at the edge shared by the faces opposite k and l: pi - angle(g_k, g_l). */
  *dmin = ef_pi;
  *dmax = 0.0;
  for (int k = 0; k < 4; ++k)
    for (int l = k + 1; l < 4; ++l) {
      const double nk = ef_norm3(g[k]), nl = ef_norm3(g[l]);
      double cosang = (nk > 0.0 && nl > 0.0) ? -ef_dot3(g[k], g[l]) / (nk * nl) : 1.0;
      cosang = fmax(-1.0, fmin(1.0, cosang));
      const double angle = acos(cosang);
      if (angle < *dmin) *dmin = angle;
      if (angle > *dmax) *dmax = angle;
    }
}

/* Triangle (in the xy plane or in space): signed area, 2 r_in / R_circ, min/max angle (radians). */
static void ef_tri_quality(const double *x[3], double *area, double *ratio, double *amin, double *amax) {
  double e1[3], e2[3], n[3];
  ef_sub3(x[1], x[0], e1);
  ef_sub3(x[2], x[0], e2);
  ef_cross3(e1, e2, n);
  *area = 0.5 * (e1[0] * e2[1] - e1[1] * e2[0]);
  if (fabs(*area) == 0.0) *area = 0.5 * ef_norm3(n) * (n[2] < 0.0 ? -1.0 : 1.0);
  const double a_abs = 0.5 * ef_norm3(n);
  double len[3];
  double d[3][3];
  ef_sub3(x[2], x[1], d[0]); /* opposite vertex 0 */
  ef_sub3(x[0], x[2], d[1]);
  ef_sub3(x[1], x[0], d[2]);
  for (int k = 0; k < 3; ++k) len[k] = ef_norm3(d[k]);
  const double perimeter = len[0] + len[1] + len[2];
  const double r_in = perimeter > 0.0 ? 2.0 * a_abs / perimeter : 0.0;
  const double r_circ = a_abs > 0.0 ? len[0] * len[1] * len[2] / (4.0 * a_abs) : INFINITY;
  *ratio = isfinite(r_circ) && r_circ > 0.0 ? 2.0 * r_in / r_circ : 0.0;
  *amin = ef_pi;
  *amax = 0.0;
  for (int k = 0; k < 3; ++k) {
    /* angle at vertex k between the two edges leaving it */
    const double *u = d[(k + 2) % 3], *w = d[(k + 1) % 3];
    const double nu = len[(k + 2) % 3], nw = len[(k + 1) % 3];
    double cosang = (nu > 0.0 && nw > 0.0) ? -ef_dot3(u, w) / (nu * nw) : 1.0;
    cosang = fmax(-1.0, fmin(1.0, cosang));
    const double angle = acos(cosang);
    if (angle < *amin) *amin = angle;
    if (angle > *amax) *amax = angle;
  }
}

/* Sum and minimum of element measures, min/mean radius ratio, extreme dihedral (3D) or interior (2D) angles. */
int ef_mesh_compute_quality(ef_model_part mp, ef_mesh_quality *quality) {
  EF_CHECK(mp && quality, EF_ERR_PARAMETER, "ef_mesh_compute_quality: NULL argument");
  const int npe = mp->nodes_per_element;
  EF_CHECK(npe == 3 || npe == 4 || mp->n_elements == 0, EF_ERR_UNSUPPORTED,
           "quality: elements with %d nodes are not supported", npe);
  EF_CALL(ef_check_element_nodes(mp));
  ef_mesh_quality q = {0.0, INFINITY, INFINITY, 0.0, 180.0, 0.0};
  double ratio_sum = 0.0, compensation = 0.0;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    const double *x[4];
    for (int i = 0; i < npe; ++i) x[i] = mp->coords + 3 * (int64_t)mp->elements[e * npe + i];
    double measure, ratio, amin, amax;
    if (npe == 4)
      ef_tet_quality(x, &measure, &ratio, &amin, &amax);
    else
      ef_tri_quality(x, &measure, &ratio, &amin, &amax);
    /* Neumaier summation: millions of tiny volumes would otherwise drift by ~n eps */
    const double t = q.total_measure + measure;
    compensation += fabs(q.total_measure) >= fabs(measure) ? (q.total_measure - t) + measure
                                                           : (measure - t) + q.total_measure;
    q.total_measure = t;
    if (measure < q.min_measure) q.min_measure = measure;
    if (ratio < q.min_radius_ratio) q.min_radius_ratio = ratio;
    ratio_sum += ratio;
    amin *= 180.0 / ef_pi;
    amax *= 180.0 / ef_pi;
    if (amin < q.min_dihedral_deg) q.min_dihedral_deg = amin;
    if (amax > q.max_dihedral_deg) q.max_dihedral_deg = amax;
  }
  q.total_measure += compensation;
  if (mp->n_elements == 0) {
    q.min_measure = q.min_radius_ratio = 0.0;
    q.min_dihedral_deg = 0.0;
  } else {
    q.mean_radius_ratio = ratio_sum / (double)mp->n_elements;
  }
  *quality = q;
  return EF_SUCCESS;
}

/* renumber.c -- reverse Cuthill-McKee node ordering and element ordering for
 * memory locality of the edge and element loops (see ef_mesh_tools.h). */
#include "edgeflow/ef_mesh_tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "renumber_private.h"
#include "core_parallel.h"

/* Bandwidth max_e (max_{i in e} i - min_{i in e} i): the largest |i - j| over the node graph's edges. */
int64_t ef_mesh_bandwidth(ef_model_part mp) {
  if (!mp || !mp->elements) return 0;
  const int npe = mp->nodes_per_element;
  int64_t bandwidth = 0;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    const ef_index *v = mp->elements + e * npe;
    ef_index lo = v[0], hi = v[0];
    for (int i = 1; i < npe; ++i) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
    if ((int64_t)hi - lo > bandwidth) bandwidth = (int64_t)hi - lo;
  }
  return bandwidth;
}

/* Working data of the Cuthill-McKee search on the graph restricted to nodes < n. */
typedef struct {
  int64_t n;
  const int64_t *ptr;
  const ef_index *adj;
  const int32_t *degree; /* neighbours < n */
  int32_t *level;        /* BFS level per node: -1 when unset, EF_RCM_NUMBERED once numbered */
  ef_index *queue;
} ef_rcm_work;

/* The level of a numbered node: not negative, so every search passes it by. */
#define EF_RCM_NUMBERED INT32_MAX

/* Breadth-first level structure rooted at root over unnumbered nodes; returns
 * its depth (eccentricity of root) and leaves the nodes in work->queue[0..*count),
 * level by level. */
static int32_t ef_rcm_levels(ef_rcm_work *w, ef_index root, int64_t *count) {
  int64_t head = 0, tail = 0;
  w->queue[tail++] = root;
  w->level[root] = 0;
  while (head < tail) {
    const ef_index u = w->queue[head++];
    const int32_t next = w->level[u] + 1;
    for (int64_t k = w->ptr[u]; k < w->ptr[u + 1]; ++k) {
      const ef_index v = w->adj[k];
      if (v >= w->n || w->level[v] >= 0) continue;
      w->level[v] = next;
      w->queue[tail++] = v;
    }
  }
  *count = tail;
  return w->level[w->queue[tail - 1]];
}

/* Reset the levels of the nodes the last level structure touched (keeps the search linear). */
static void ef_rcm_clear_levels(ef_rcm_work *w, int64_t count) {
  for (int64_t k = 0; k < count; ++k) w->level[w->queue[k]] = -1;
}

/* George-Liu pseudo-peripheral node of seed's component: move to a
 * minimum-degree node of the deepest level while the eccentricity grows.
 * The deepest level is the tail of the queue; ties go to the first in it. */
static ef_index ef_rcm_pseudo_peripheral(ef_rcm_work *w, ef_index seed) {
  ef_index root = seed;
  int64_t count = 0;
  int32_t depth = ef_rcm_levels(w, root, &count);
  for (;;) {
    int64_t first = count;
    while (first > 0 && w->level[w->queue[first - 1]] == depth) --first;
    ef_index best = -1;
    for (int64_t k = first; k < count; ++k) {
      const ef_index v = w->queue[k];
      if (best < 0 || w->degree[v] < w->degree[best]) best = v;
    }
    ef_rcm_clear_levels(w, count);
    if (best < 0 || best == root) break;
    int64_t count_best = 0;
    const int32_t depth_best = ef_rcm_levels(w, best, &count_best);
    if (depth_best <= depth) {
      ef_rcm_clear_levels(w, count_best);
      break;
    }
    root = best;
    depth = depth_best;
    count = count_best;
  }
  return root;
}

/* Cuthill-McKee order of the first n nodes (component by component, each from
 * a pseudo-peripheral node, neighbours by increasing degree), then reversed:
 * perm[old] = new. */
static int ef_rcm_permutation(const int64_t *ptr, const ef_index *adj, int64_t n, ef_index *perm) {
  int err = EF_SUCCESS;
  int32_t *degree = NULL, *level = NULL;
  ef_index *queue = NULL, *order = NULL, *by_degree = NULL;
  int64_t *bucket = NULL;
  if (n == 0) return EF_SUCCESS;
  degree = malloc((size_t)n * sizeof *degree);
  level = malloc((size_t)n * sizeof *level);
  queue = malloc((size_t)n * sizeof *queue);
  order = malloc((size_t)n * sizeof *order);
  by_degree = malloc((size_t)n * sizeof *by_degree);
  EF_CHECK_GOTO(degree && level && queue && order && by_degree, EF_ERR_MEMORY, done,
                "out of memory for the Cuthill-McKee search over %lld nodes", (long long)n);
  int32_t max_degree = 0;
  for (int64_t i = 0; i < n; ++i) {
    /* rows are sorted: when the last neighbour is < n, all are */
    int32_t d = (int32_t)(ptr[i + 1] - ptr[i]);
    if (d > 0 && adj[ptr[i + 1] - 1] >= n) {
      d = 0;
      for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) d += adj[k] < n;
    }
    degree[i] = d;
    level[i] = -1;
    if (d > max_degree) max_degree = d;
  }
  /* Seeds are taken in increasing degree (counting sort), so each component
   * starts its peripheral search from one of its lowest-degree nodes. */
  EF_CHECK_GOTO((bucket = calloc((size_t)max_degree + 2, sizeof *bucket)) != NULL, EF_ERR_MEMORY, done,
                "out of memory for the degree buckets");
  for (int64_t i = 0; i < n; ++i) bucket[degree[i] + 1]++;
  for (int32_t d = 0; d <= max_degree; ++d) bucket[d + 1] += bucket[d];
  for (int64_t i = 0; i < n; ++i) by_degree[bucket[degree[i]]++] = (ef_index)i;

  ef_rcm_work w = {n, ptr, adj, degree, level, queue};
  int64_t n_ordered = 0;
  for (int64_t s = 0; s < n; ++s) {
    const ef_index seed = by_degree[s];
    if (level[seed] == EF_RCM_NUMBERED) continue;
    const ef_index start = ef_rcm_pseudo_peripheral(&w, seed);
    int64_t head = n_ordered;
    order[n_ordered++] = start;
    level[start] = EF_RCM_NUMBERED;
    while (head < n_ordered) {
      const ef_index u = order[head++];
      const int64_t first = n_ordered;
      for (int64_t k = ptr[u]; k < ptr[u + 1]; ++k) {
        const ef_index v = adj[k];
        if (v >= n || level[v] == EF_RCM_NUMBERED) continue;
        level[v] = EF_RCM_NUMBERED;
        order[n_ordered++] = v;
      }
      /* insertion sort of the new neighbours by (degree, index): lists are short */
      for (int64_t i = first + 1; i < n_ordered; ++i) {
        const ef_index v = order[i];
        int64_t j = i - 1;
        while (j >= first && (degree[order[j]] > degree[v] || (degree[order[j]] == degree[v] && order[j] > v))) {
          order[j + 1] = order[j];
          --j;
        }
        order[j + 1] = v;
      }
    }
  }
  EF_CHECK_GOTO(n_ordered == n, EF_ERR_INTERNAL, done, "Cuthill-McKee ordered %lld of %lld nodes",
                (long long)n_ordered, (long long)n);
  for (int64_t k = 0; k < n; ++k) perm[order[k]] = (ef_index)(n - 1 - k);
done:
  free(degree);
  free(level);
  free(queue);
  free(order);
  free(by_degree);
  free(bucket);
  return err;
}

/* Cells sorted stably by their smallest node index (a radix sort of (smallest node, cell)): order[new] = old
 * and where[old] = new. */
static int ef_order_cells(const ef_index *cells, int64_t n_cells, int per, int64_t n_nodes, ef_index *order,
                          ef_index *where) {
  if (!ef_core_parallel(n_cells)) { /* one thread: a counting sort by smallest node, one pass each way */
    int64_t *start = NULL;
    EF_CALLOC(start, n_nodes + 1);
    for (int64_t c = 0; c < n_cells; ++c) {
      ef_index lo = cells[c * per];
      for (int i = 1; i < per; ++i)
        if (cells[c * per + i] < lo) lo = cells[c * per + i];
      where[c] = lo; /* key for now */
      start[lo + 1]++;
    }
    for (int64_t i = 0; i < n_nodes; ++i) start[i + 1] += start[i];
    for (int64_t c = 0; c < n_cells; ++c) {
      where[c] = (ef_index)start[where[c]]++;
      order[where[c]] = (ef_index)c;
    }
    free(start);
    return EF_SUCCESS;
  }
  int err = EF_SUCCESS;
  uint64_t *key = malloc((size_t)n_cells * sizeof *key);
  EF_CHECK(key, EF_ERR_MEMORY, "out of memory ordering %lld cells", (long long)n_cells);
  EF_CORE_FOR(
      ef_core_parallel(n_cells), "omp parallel for schedule(static)", for (int64_t c = 0; c < n_cells; ++c) {
        ef_index lo = cells[c * per];
        for (int i = 1; i < per; ++i)
          if (cells[c * per + i] < lo) lo = cells[c * per + i];
        key[c] = (uint64_t)lo;
        order[c] = (ef_index)c;
      });
  EF_CALL_GOTO(ef_radix_sort_pairs(key, order, n_cells), done);
  EF_CORE_FOR(ef_core_parallel(n_cells), "omp parallel for schedule(static)",
              for (int64_t c = 0; c < n_cells; ++c) where[order[c]] = (ef_index)c;);
done:
  free(key);
  return err;
}

/* qsort order of indices: ascending. */
static int ef_compare_index(const void *pa, const void *pb) {
  ef_index a = *(const ef_index *)pa, b = *(const ef_index *)pb;
  return (a > b) - (a < b);
}

int64_t ef_index_list_remap(ef_index *list, int64_t n, const ef_index *map, int64_t range, uint8_t *flags) {
  if (n > 0 && (double)n * log2((double)n + 1.0) > (double)range) {
    /* Long lists on several threads: the flags set (a sorted list of distinct indices through a
     * permutation sets distinct flags), then the range read back in chunks, each writing its flagged
     * indices from the count of those before it: the serial result. */
    enum { MAX_CHUNKS = 256 };
    int chunks = ef_core_chunks(range < n ? n : range);
    if (chunks > MAX_CHUNKS) chunks = MAX_CHUNKS;
    if (chunks > 1) {
      int64_t start[MAX_CHUNKS + 1];
      EF_CORE_FOR(1, "omp parallel for schedule(static)", for (int64_t k = 0; k < n; ++k) flags[map[list[k]]] = 1;);
      EF_CORE_FOR(1, "omp parallel for schedule(static, 1)", for (int c = 0; c < chunks; ++c) {
        int64_t count = 0;
        for (int64_t i = range * c / chunks; i < range * (c + 1) / chunks; ++i) count += flags[i];
        start[c + 1] = count;
      });
      start[0] = 0;
      for (int c = 0; c < chunks; ++c) start[c + 1] += start[c];
      EF_CORE_FOR(1, "omp parallel for schedule(static, 1)", for (int c = 0; c < chunks; ++c) {
        int64_t out = start[c];
        for (int64_t i = range * c / chunks; i < range * (c + 1) / chunks; ++i)
          if (flags[i]) {
            flags[i] = 0;
            list[out++] = (ef_index)i;
          }
      });
      return start[chunks];
    }
    for (int64_t k = 0; k < n; ++k) flags[map[list[k]]] = 1;
    int64_t out = 0;
    for (int64_t c = 0; c < range && out < n; ++c)
      if (flags[c]) {
        flags[c] = 0;
        list[out++] = (ef_index)c;
      }
    return out;
  }
  for (int64_t k = 0; k < n; ++k) list[k] = map[list[k]];
  if (n <= 1) return n;
  qsort(list, (size_t)n, sizeof *list, ef_compare_index);
  int64_t out = 1;
  for (int64_t k = 1; k < n; ++k)
    if (list[k] != list[out - 1]) list[out++] = list[k];
  return out;
}

/* Which list of a sub model part is being renumbered. */
enum { EF_LIST_ELEMENTS, EF_LIST_CONDITIONS };

/* Map a sub model part tree's element or condition lists through where[], re-sorted (ef_index_list_remap). */
static void ef_renumber_smp_lists(ef_sub_model_part **children, int n_children, int which, const ef_index *where,
                                  int64_t n_cells, uint8_t *flags) {
  for (int i = 0; i < n_children; ++i) {
    ef_sub_model_part *smp = children[i];
    if (which == EF_LIST_ELEMENTS)
      smp->n_elements = ef_index_list_remap(smp->elements, smp->n_elements, where, n_cells, flags);
    else
      smp->n_conditions = ef_index_list_remap(smp->conditions, smp->n_conditions, where, n_cells, flags);
    ef_renumber_smp_lists(smp->children, smp->n_children, which, where, n_cells, flags);
  }
}

/* Check that sub model part lists index existing cells before they are mapped. */
static int ef_check_smp_lists(ef_sub_model_part **children, int n_children, int64_t n_elements,
                              int64_t n_conditions) {
  for (int i = 0; i < n_children; ++i) {
    const ef_sub_model_part *smp = children[i];
    for (int64_t k = 0; k < smp->n_elements; ++k)
      EF_CHECK(smp->elements[k] >= 0 && smp->elements[k] < n_elements, EF_ERR_MESH,
               "sub model part '%s' lists element index %d outside [0, %lld)", smp->name,
               (int)smp->elements[k], (long long)n_elements);
    for (int64_t k = 0; k < smp->n_conditions; ++k)
      EF_CHECK(smp->conditions[k] >= 0 && smp->conditions[k] < n_conditions, EF_ERR_MESH,
               "sub model part '%s' lists condition index %d outside [0, %lld)", smp->name,
               (int)smp->conditions[k], (long long)n_conditions);
    EF_CALL(ef_check_smp_lists(smp->children, smp->n_children, n_elements, n_conditions));
  }
  return EF_SUCCESS;
}

/* Reorder cells (connectivity, ids, properties): new cell i is old cell order[i] (a gather); all-or-nothing. */
static int ef_permute_cells(ef_index **cells, int64_t **ids, int64_t **props, int64_t n, int per,
                            const ef_index *order) {
  if (n == 0) return EF_SUCCESS;
  ef_index *c2 = malloc((size_t)(n * per) * sizeof *c2);
  int64_t *i2 = *ids ? malloc((size_t)n * sizeof *i2) : NULL;
  int64_t *p2 = *props ? malloc((size_t)n * sizeof *p2) : NULL;
  if (!c2 || (*ids && !i2) || (*props && !p2)) {
    free(c2);
    free(i2);
    free(p2);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory reordering %lld cells", (long long)n);
  }
  const ef_index *cells_in = *cells;
  const int64_t *ids_in = *ids, *props_in = *props;
  EF_CORE_FOR(
      ef_core_parallel(n), "omp parallel for schedule(static)", for (int64_t c = 0; c < n; ++c) {
        const int64_t from = order[c];
        for (int i = 0; i < per; ++i) c2[c * per + i] = cells_in[from * per + i];
        if (i2) i2[c] = ids_in[from];
        if (p2) p2[c] = props_in[from];
      });
  free(*cells);
  *cells = c2;
  if (i2) {
    free(*ids);
    *ids = i2;
  }
  if (p2) {
    free(*props);
    *props = p2;
  }
  return EF_SUCCESS;
}

/* Reverse Cuthill-McKee on the (owned part of the) node graph, or the Morton order of its coordinates,
 * then cells by smallest node. */
int ef_mesh_renumber(ef_model_part mp, const char *method) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "ef_mesh_renumber: NULL model part");
  const char *m = method ? method : "none";
  if (strcmp(m, "none") == 0) return EF_SUCCESS;
  const int morton = strcmp(m, "morton") == 0;
  EF_CHECK(morton || strcmp(m, "rcm") == 0, EF_ERR_PARAMETER,
           "unknown renumbering method '%s' (use \"rcm\", \"morton\" or \"none\")", m);
  EF_CHECK(!mp->device.sync_to_host, EF_ERR_UNSUPPORTED,
           "renumbering after a strategy took the mesh to a device is not supported; renumber first");
  EF_CALL(ef_check_smp_lists(mp->children, mp->n_children, mp->n_elements, mp->n_conditions));
  const int64_t n = mp->n_nodes;
  if (n == 0) return EF_SUCCESS;
  /* Halo nodes (index >= n_owned_nodes) keep their places; owned ones are reordered among themselves. */
  const int64_t n_owned = (mp->n_owned_nodes > 0 && mp->n_owned_nodes <= n) ? mp->n_owned_nodes : n;

  int err = EF_SUCCESS;
  int64_t *ptr = NULL;
  ef_index *adj = NULL, *perm = NULL, *where = NULL, *order = NULL;
  uint8_t *flags = NULL;
  perm = malloc((size_t)n * sizeof *perm);
  EF_CHECK(perm, EF_ERR_MEMORY, "out of memory for a permutation of %lld nodes", (long long)n);
  if (morton) {
    EF_CALL_GOTO(ef_morton_permutation(mp->coords, mp->dim, n_owned, perm), done);
  } else {
    EF_CALL_GOTO(ef_mesh_node_graph(mp, 1, &ptr, &adj), done);
    EF_CALL_GOTO(ef_rcm_permutation(ptr, adj, n_owned, perm), done);
  }
  for (int64_t i = n_owned; i < n; ++i) perm[i] = (ef_index)i;
  free(ptr);
  free(adj);
  ptr = NULL;
  adj = NULL;
  EF_CALL_GOTO(ef_model_part_permute_nodes(mp, perm), done);

  /* Elements, then conditions, by their smallest new node index. */
  const int64_t n_cells_max = mp->n_elements > mp->n_conditions ? mp->n_elements : mp->n_conditions;
  where = malloc((size_t)(n_cells_max ? n_cells_max : 1) * sizeof *where);
  order = malloc((size_t)(n_cells_max ? n_cells_max : 1) * sizeof *order);
  flags = calloc((size_t)(n_cells_max ? n_cells_max : 1), 1);
  EF_CHECK_GOTO(where && order && flags, EF_ERR_MEMORY, done, "out of memory reordering elements");
  if (mp->n_elements > 0) {
    EF_CALL_GOTO(ef_order_cells(mp->elements, mp->n_elements, mp->nodes_per_element, n, order, where), done);
    EF_CALL_GOTO(ef_permute_cells(&mp->elements, &mp->element_ids, &mp->element_properties, mp->n_elements,
                                  mp->nodes_per_element, order),
                 done);
    ef_renumber_smp_lists(mp->children, mp->n_children, EF_LIST_ELEMENTS, where, mp->n_elements, flags);
  }
  if (mp->n_conditions > 0) {
    EF_CALL_GOTO(ef_order_cells(mp->conditions, mp->n_conditions, mp->nodes_per_condition, n, order, where), done);
    EF_CALL_GOTO(ef_permute_cells(&mp->conditions, &mp->condition_ids, &mp->condition_properties,
                                  mp->n_conditions, mp->nodes_per_condition, order),
                 done);
    ef_renumber_smp_lists(mp->children, mp->n_children, EF_LIST_CONDITIONS, where, mp->n_conditions, flags);
  }
done:
  free(ptr);
  free(adj);
  free(perm);
  free(where);
  free(order);
  free(flags);
  return err;
}

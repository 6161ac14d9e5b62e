/* mesh_check.c -- checkMesh-like topology and quality checks: tangled and over-shared faces,
 * duplicate elements, shape quality, slivers, boundary faces no boundary condition reaches.
 * Everything goes through the node-to-element adjacency, so the cost is O(elements) times the
 * mean number of elements around a node. */
#include "edgeflow/ef_mesh_check.h"
#include "edgeflow/ef_error.h"
#include "core_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Node-to-element adjacency (CSR): the elements of node v are elem[start[v] .. start[v+1]). */
typedef struct {
  int64_t *start;
  ef_index *elem;
} ef_adjacency;

static void ef_adjacency_free(ef_adjacency *adj) {
  free(adj->start);
  free(adj->elem);
  adj->start = NULL;
  adj->elem = NULL;
}

/* Count, prefix-sum, fill, shift back. */
static int ef_adjacency_build(const ef_model_part mp, ef_adjacency *adj) {
  const int npe = mp->nodes_per_element;
  const int64_t n = mp->n_nodes, entries = mp->n_elements * npe;
  adj->start = calloc((size_t)n + 1, sizeof *adj->start);
  adj->elem = malloc((size_t)(entries ? entries : 1) * sizeof *adj->elem);
  if (!adj->start || !adj->elem) {
    ef_adjacency_free(adj);
    return EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory for the node-to-element table (%lld entries)",
                    (long long)entries);
  }
  if (!ef_core_parallel(entries)) {
    for (int64_t k = 0; k < entries; ++k) adj->start[mp->elements[k] + 1]++;
    for (int64_t v = 0; v < n; ++v) adj->start[v + 1] += adj->start[v];
    for (int64_t k = 0; k < entries; ++k) adj->elem[adj->start[mp->elements[k]]++] = (ef_index)(k / npe);
    for (int64_t v = n; v > 0; --v) adj->start[v] = adj->start[v - 1];
    adj->start[0] = 0;
    return EF_SUCCESS;
  }
  /* On several threads: counts and fills by atomic increments, then each node's elements sorted, so
   * the table is the serial one's (elements in increasing order around every node). */
  int64_t *start = adj->start;
  ef_index *elem = adj->elem;
  EF_CORE_FOR(1, "omp parallel for schedule(static)", for (int64_t k = 0; k < entries; ++k) {
    __atomic_fetch_add(&start[mp->elements[k] + 1], 1, __ATOMIC_RELAXED);
  });
  for (int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
  EF_CORE_FOR(1, "omp parallel for schedule(static)", for (int64_t k = 0; k < entries; ++k) {
    elem[__atomic_fetch_add(&start[mp->elements[k]], 1, __ATOMIC_RELAXED)] = (ef_index)(k / npe);
  });
  for (int64_t v = n; v > 0; --v) start[v] = start[v - 1];
  start[0] = 0;
  EF_CORE_FOR(1, "omp parallel for schedule(dynamic, 256)", for (int64_t v = 0; v < n; ++v) {
    ef_index *row = elem + start[v];
    const int64_t m = start[v + 1] - start[v];
    for (int64_t i = 1; i < m; ++i) {
      const ef_index x = row[i];
      int64_t j = i - 1;
      while (j >= 0 && row[j] > x) {
        row[j + 1] = row[j];
        --j;
      }
      row[j + 1] = x;
    }
  });
  return EF_SUCCESS;
}

/* 1 when element g holds every node of nodes[0..m). */
static int ef_holds_all(const ef_model_part mp, ef_index g, const ef_index *nodes, int m) {
  const int npe = mp->nodes_per_element;
  const ef_index *c = mp->elements + (int64_t)g * npe;
  /* every comparison made, none branched on (most elements around a node miss the face) */
  int all = 1;
  if (npe == 4) {
    for (int i = 0; i < m; ++i) {
      const ef_index x = nodes[i];
      all &= (c[0] == x) | (c[1] == x) | (c[2] == x) | (c[3] == x);
    }
  } else {
    for (int i = 0; i < m; ++i) {
      int found = 0;
      for (int k = 0; k < npe; ++k) found |= c[k] == nodes[i];
      all &= found;
    }
  }
  return all;
}

/* The node of element g that is not on the face (g holds the face). */
static ef_index ef_opposite(const ef_model_part mp, ef_index g, const ef_index *face, int m) {
  const ef_index *c = mp->elements + (int64_t)g * mp->nodes_per_element;
  for (int k = 0; k < mp->nodes_per_element; ++k) {
    int on = 0;
    for (int i = 0; i < m && !on; ++i) on = c[k] == face[i];
    if (!on) return c[k];
  }
  return c[0];
}

/* Side of p relative to the face: (b-a) x (p-a) in 2D, ((b-a) x (c-a)) . (p-a) in 3D. */
static double ef_side(const ef_model_part mp, const ef_index *face, ef_index p) {
  const double *a = mp->coords + 3 * (int64_t)face[0], *b = mp->coords + 3 * (int64_t)face[1];
  const double *x = mp->coords + 3 * (int64_t)p;
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]};
  if (mp->dim == 2) return u[0] * w[1] - u[1] * w[0];
  const double *c = mp->coords + 3 * (int64_t)face[2];
  double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  return (u[1] * v[2] - u[2] * v[1]) * w[0] + (u[2] * v[0] - u[0] * v[2]) * w[1] + (u[0] * v[1] - u[1] * v[0]) * w[2];
}

/* Shape quality q (1 equilateral, 0 flat) and the extreme squared edge lengths of element e. */
static double ef_quality(const ef_model_part mp, int64_t e, double measure, double *l2_min, double *l2_max) {
  const int npe = mp->nodes_per_element;
  const ef_index *c = mp->elements + e * npe;
  double sum = 0.0, lo = INFINITY, hi = 0.0;
  for (int i = 0; i < npe; ++i)
    for (int j = i + 1; j < npe; ++j) {
      const double *a = mp->coords + 3 * (int64_t)c[i], *b = mp->coords + 3 * (int64_t)c[j];
      double l2 = (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
      sum += l2;
      if (l2 < lo) lo = l2;
      if (l2 > hi) hi = l2;
    }
  *l2_min = lo;
  *l2_max = hi;
  if (!(sum > 0.0)) return 0.0;
  if (npe == 3) return 4.0 * sqrt(3.0) * measure / sum;
  double rms = sqrt(sum / 6.0);
  return 6.0 * sqrt(2.0) * measure / (rms * rms * rms);
}

typedef struct {
  ef_sub_model_part **list;
  int n, cap;
} ef_smp_list;

static int ef_collect_smp(ef_sub_model_part *smp, const char *path, void *user) {
  (void)path;
  ef_smp_list *l = user;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    void *grown = realloc(l->list, (size_t)cap * sizeof *l->list);
    if (!grown) return EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory");
    l->list = grown;
    l->cap = cap;
  }
  l->list[l->n++] = smp;
  return 0;
}

/* Boundary faces (element, local face) that no sub model part of the list holds whole. */
static int ef_check_coverage(const ef_model_part mp, const char *const *covered, const int64_t *bfaces, int64_t nb,
                             ef_mesh_report *r) {
  ef_smp_list l = {NULL, 0, 0};
  int err = EF_SUCCESS, whole = 0;
  size_t used = 0;
  r->uncovered_hint[0] = '\0';
  if (!covered) {
    err = ef_model_part_visit_sub_model_parts(mp, ef_collect_smp, &l);
    snprintf(r->uncovered_hint, sizeof r->uncovered_hint, "every sub model part");
  } else {
    for (int i = 0; covered[i] && !err; ++i) {
      if (!strcmp(covered[i], mp->name) || ef_model_part_is_root_alias(mp, covered[i])) {
        whole = 1; /* a process on the whole model part reaches every face */
        continue;
      }
      ef_sub_model_part *smp = ef_model_part_find_sub_model_part(mp, covered[i]);
      if (!smp) continue;
      int seen = 0;
      for (int k = 0; k < l.n && !seen; ++k) seen = l.list[k] == smp;
      if (seen) continue;
      err = ef_collect_smp(smp, covered[i], &l);
      if (!err && used < sizeof r->uncovered_hint)
        used += (size_t)snprintf(r->uncovered_hint + used, sizeof r->uncovered_hint - used, "%s%s", used ? ", " : "",
                                 covered[i]);
    }
  }
  int32_t *mark = NULL;
  uint8_t *done = NULL;
  if (!err && !whole && nb > 0) {
    mark = malloc((size_t)mp->n_nodes * sizeof *mark);
    done = calloc((size_t)nb, 1);
    if (!mark || !done) err = EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory");
  }
  r->n_uncovered_faces = 0;
  if (!err && !whole && nb > 0) {
    const int npe = mp->nodes_per_element;
    for (int64_t v = 0; v < mp->n_nodes; ++v) mark[v] = -1;
    for (int s = 0; s < l.n; ++s) {
      const ef_sub_model_part *smp = l.list[s];
      for (int64_t i = 0; i < smp->n_nodes; ++i) mark[smp->nodes[i]] = s;
      for (int64_t b = 0; b < nb; ++b) {
        if (done[b]) continue;
        const ef_index *c = mp->elements + (bfaces[b] / npe) * npe;
        int k = (int)(bfaces[b] % npe), all = 1;
        for (int j = 0; j < npe && all; ++j)
          if (j != k && mark[c[j]] != s) all = 0;
        done[b] = (uint8_t)all;
      }
    }
    for (int64_t b = 0; b < nb; ++b) {
      if (done[b]) continue;
      if (r->n_uncovered_faces++ == 0) {
        const ef_index *c = mp->elements + (bfaces[b] / npe) * npe;
        int k = (int)(bfaces[b] % npe);
        for (int j = 0; j < npe; ++j)
          if (j != k)
            for (int d = 0; d < 3; ++d) r->uncovered_at[d] += mp->coords[3 * (int64_t)c[j] + d] / (npe - 1);
      }
    }
  }
  free(mark);
  free(done);
  free(l.list);
  return err;
}

/* Flags of one element's faces: which are boundary faces (bits 0-3), how many interior faces it is the
 * lower-numbered element of (bits 5-7), and whether it meets a duplicate, an over-shared or a tangled face
 * (bit 4).  With r, those three findings are also counted and the first ones recorded there (the serial
 * pass does this for the few elements whose bit 4 is set). */
enum { EF_FACE_ANOMALY = 1 << 4, EF_FACE_INTERIOR_SHIFT = 5 };
static unsigned ef_element_faces(const ef_model_part mp, const ef_adjacency *adj, int64_t e, ef_mesh_report *r) {
  const int npe = mp->nodes_per_element, m = npe - 1;
  const ef_index *c = mp->elements + e * npe;
  unsigned flags = 0, interior = 0;
  /* Duplicates: a later element around c[0] holding all of e's nodes. */
  for (int64_t a = adj->start[c[0]]; a < adj->start[c[0] + 1]; ++a) {
    ef_index g = adj->elem[a];
    if (g > e && ef_holds_all(mp, g, c, npe)) {
      flags |= EF_FACE_ANOMALY;
      if (r && r->n_duplicate_elements++ == 0) {
        r->duplicate_ids[0] = mp->element_ids[e];
        r->duplicate_ids[1] = mp->element_ids[g];
      }
    }
  }
  /* Faces: the other elements around the face's least-shared node that hold the whole face. */
  for (int k = 0; k < npe; ++k) {
    ef_index face[3];
    int f = 0;
    for (int j = 0; j < npe; ++j)
      if (j != k) face[f++] = c[j];
    ef_index s = face[0];
    for (int i = 1; i < m; ++i)
      if (adj->start[face[i] + 1] - adj->start[face[i]] < adj->start[s + 1] - adj->start[s]) s = face[i];
    int64_t neighbours = 0;
    ef_index g_first = -1, g_min = (ef_index)e;
    for (int64_t a = adj->start[s]; a < adj->start[s + 1]; ++a) {
      ef_index g = adj->elem[a];
      if (g == e || !ef_holds_all(mp, g, face, m)) continue;
      if (neighbours++ == 0) g_first = g;
      if (g < g_min) g_min = g;
    }
    if (neighbours == 0) {
      flags |= 1u << k;
    } else if (neighbours > 1) {
      if (g_min == (ef_index)e) {
        flags |= EF_FACE_ANOMALY;
        if (r && r->n_overshared_faces++ == 0) r->overshared_id = mp->element_ids[e];
      }
    } else if (g_first > e) {
      interior++;
      double se = ef_side(mp, face, c[k]), sg = ef_side(mp, face, ef_opposite(mp, g_first, face, m));
      if ((se > 0.0 && sg > 0.0) || (se < 0.0 && sg < 0.0)) {
        flags |= EF_FACE_ANOMALY;
        if (r && r->n_tangled_faces++ == 0) {
          r->tangled_ids[0] = mp->element_ids[e];
          r->tangled_ids[1] = mp->element_ids[g_first];
        }
      }
    }
  }
  return flags | interior << EF_FACE_INTERIOR_SHIFT;
}

/* One pass over the elements and their faces; see ef_mesh_check.h.  Blocks of elements are examined in
 * parallel (each element's measure, quality and face flags into the block's arrays; extreme edges by
 * min/max), then folded in element order on one thread: sums, first extremes and the boundary face list
 * come out as the serial loop made them, for any thread count. */
int ef_mesh_check(ef_model_part mp, const char *const *covered, ef_mesh_report *r) {
  EF_CHECK(mp && r, EF_ERR_PARAMETER, "ef_mesh_check: NULL argument");
  memset(r, 0, sizeof *r);
  const int npe = mp->nodes_per_element;
  EF_CHECK(mp->n_elements > 0 && (npe == 3 || npe == 4) && npe == mp->dim + 1, EF_ERR_MESH,
           "mesh check: the model part holds no triangles or tetrahedra");
  r->dim = mp->dim;
  r->n_nodes = mp->n_nodes;
  r->n_elements = mp->n_elements;
  r->min_measure = r->min_edge = r->min_quality = INFINITY;
  r->n_uncovered_faces = -1;

  enum { BLOCK = 1 << 15 };
  const int64_t ne = mp->n_elements, block = ne < BLOCK ? ne : BLOCK;
  ef_adjacency adj = {NULL, NULL};
  EF_CALL(ef_adjacency_build(mp, &adj));
  int64_t *bfaces = NULL, nb = 0, cap = 0;
  int err = EF_SUCCESS;
  double *measures = malloc((size_t)block * sizeof *measures), *qualities = malloc((size_t)block * sizeof *qualities);
  uint8_t *faces = malloc((size_t)block);
  if (!measures || !qualities || !faces) err = EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory");
  double sum_measure = 0.0, sum_quality = 0.0, l2_lo = INFINITY, l2_hi = 0.0;
  for (int64_t b0 = 0; b0 < ne && !err; b0 += block) {
    const int64_t b1 = b0 + block < ne ? b0 + block : ne;
    EF_CORE_FOR(
        ef_core_parallel(b1 - b0), "omp parallel for schedule(static) reduction(min : l2_lo) reduction(max : l2_hi)",
        for (int64_t e = b0; e < b1; ++e) {
          double lo, hi;
          const double measure = fabs(ef_model_part_element_measure(mp, e));
          measures[e - b0] = measure;
          qualities[e - b0] = ef_quality(mp, e, measure, &lo, &hi);
          if (lo < l2_lo) l2_lo = lo;
          if (hi > l2_hi) l2_hi = hi;
          faces[e - b0] = (uint8_t)ef_element_faces(mp, &adj, e, NULL);
        });
    for (int64_t e = b0; e < b1 && !err; ++e) {
      const double measure = measures[e - b0], q = qualities[e - b0];
      const unsigned flags = faces[e - b0];
      sum_measure += measure;
      sum_quality += q;
      if (measure < r->min_measure) {
        r->min_measure = measure;
        r->smallest_element_id = mp->element_ids[e];
      }
      if (measure > r->max_measure) r->max_measure = measure;
      if (q < r->min_quality) {
        r->min_quality = q;
        r->worst_element_id = mp->element_ids[e];
      }
      if (q < EF_MESH_SLIVER_QUALITY) r->n_slivers++;
      if (flags & EF_FACE_ANOMALY) ef_element_faces(mp, &adj, e, r);
      r->n_interior_faces += flags >> EF_FACE_INTERIOR_SHIFT;
      for (int k = 0; k < npe; ++k) {
        if (!(flags & (1u << k))) continue;
        if (nb == cap) {
          int64_t grown_cap = cap ? 2 * cap : 1024;
          void *grown = realloc(bfaces, (size_t)grown_cap * sizeof *bfaces);
          if (!grown) {
            err = EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory for the boundary faces");
            break;
          }
          bfaces = grown;
          cap = grown_cap;
        }
        bfaces[nb++] = e * npe + k;
      }
    }
  }
  free(measures);
  free(qualities);
  free(faces);
  r->n_boundary_faces = nb;
  r->mean_measure = sum_measure / (double)mp->n_elements;
  r->mean_quality = sum_quality / (double)mp->n_elements;
  r->min_edge = sqrt(l2_lo);
  r->max_edge = sqrt(l2_hi);
  const double tiny = EF_MESH_TINY_RATIO * r->mean_measure;
  int64_t n_tiny = 0;
  if (!err)
    EF_CORE_FOR(ef_core_parallel(ne), "omp parallel for schedule(static) reduction(+ : n_tiny)",
                for (int64_t e = 0; e < ne; ++e) {
                  if (fabs(ef_model_part_element_measure(mp, e)) < tiny) n_tiny++;
                });
  r->n_tiny = n_tiny;
  ef_adjacency_free(&adj);
  if (!err && !(covered && !covered[0])) err = ef_check_coverage(mp, covered, bfaces, nb, r);
  free(bfaces);
  return err;
}

void ef_mesh_check_print(const ef_mesh_report *r, FILE *out) {
  const char *measure = r->dim == 2 ? "area" : "volume";
  fprintf(out, "Mesh check (%dD): %lld nodes, %lld %s\n", r->dim, (long long)r->n_nodes, (long long)r->n_elements,
          r->dim == 2 ? "triangles" : "tetrahedra");
  fprintf(out, "  faces:            %lld interior, %lld boundary\n", (long long)r->n_interior_faces,
          (long long)r->n_boundary_faces);
  fprintf(out, "  %-6s            min %.4g (element %lld), max %.4g, mean %.4g, min/mean %.3g\n", measure,
          r->min_measure, (long long)r->smallest_element_id, r->max_measure, r->mean_measure,
          r->mean_measure > 0 ? r->min_measure / r->mean_measure : 0.0);
  fprintf(out, "  edge length:      min %.4g, max %.4g\n", r->min_edge, r->max_edge);
  fprintf(out, "  shape quality:    min %.4g (element %lld), mean %.4g (1 = equilateral, 0 = flat)\n", r->min_quality,
          (long long)r->worst_element_id, r->mean_quality);
  fprintf(out, "  slivers (q < %g): %lld\n", EF_MESH_SLIVER_QUALITY, (long long)r->n_slivers);
  fprintf(out, "  tiny (< %g mean): %lld\n", EF_MESH_TINY_RATIO, (long long)r->n_tiny);
  fprintf(out, "  duplicate elements: %lld\n", (long long)r->n_duplicate_elements);
  fprintf(out, "  tangled faces:    %lld\n", (long long)r->n_tangled_faces);
  fprintf(out, "  faces of > 2 elements: %lld\n", (long long)r->n_overshared_faces);
  if (r->n_uncovered_faces >= 0)
    fprintf(out, "  boundary faces without a boundary condition: %lld (checked against: %s)\n",
            (long long)r->n_uncovered_faces, r->uncovered_hint[0] ? r->uncovered_hint : "none");
}

int ef_mesh_check_verdict(const ef_mesh_report *r, const char *source, FILE *warn) {
  EF_CHECK(r, EF_ERR_PARAMETER, "ef_mesh_check_verdict: NULL report");
  if (!source) source = "mesh";
  EF_CHECK(r->n_duplicate_elements == 0, EF_ERR_MESH,
           "%s: elements %lld and %lld have the same nodes (%lld duplicate element(s)): a duplicate doubles the "
           "mass and stiffness there and the answer is wrong with no other sign; remove them",
           source, (long long)r->duplicate_ids[0], (long long)r->duplicate_ids[1],
           (long long)r->n_duplicate_elements);
  EF_CHECK(r->n_overshared_faces == 0, EF_ERR_MESH,
           "%s: %lld face(s) belong to more than two elements (first at element %lld): the mesh overlaps itself",
           source, (long long)r->n_overshared_faces, (long long)r->overshared_id);
  EF_CHECK(r->n_tangled_faces == 0, EF_ERR_MESH,
           "%s: the mesh is tangled: %lld interior face(s) have both their elements on the same side (first "
           "between elements %lld and %lld: an inverted or folded element)",
           source, (long long)r->n_tangled_faces, (long long)r->tangled_ids[0], (long long)r->tangled_ids[1]);
  if (!warn) return EF_SUCCESS;
  if (r->n_slivers)
    fprintf(warn,
            "edgeflow: warning: %s: %lld sliver element(s) (shape quality below %g; worst %.3g at element %lld): "
            "the stable time step shrinks with them\n",
            source, (long long)r->n_slivers, EF_MESH_SLIVER_QUALITY, r->min_quality, (long long)r->worst_element_id);
  if (r->n_tiny)
    fprintf(warn,
            "edgeflow: warning: %s: %lld element(s) below %g of the mean %s (smallest %.3g at element %lld, mean "
            "%.3g): the stable time step shrinks with them\n",
            source, (long long)r->n_tiny, EF_MESH_TINY_RATIO, r->dim == 2 ? "area" : "volume", r->min_measure,
            (long long)r->smallest_element_id, r->mean_measure);
  if (r->n_uncovered_faces > 0)
    fprintf(warn,
            "edgeflow: warning: %s: %lld boundary face(s) lie in no sub model part that a process names (first "
            "near (%g, %g, %g); checked against: %s): no boundary condition acts there, so they keep the natural "
            "one (zero traction)\n",
            source, (long long)r->n_uncovered_faces, r->uncovered_at[0], r->uncovered_at[1], r->uncovered_at[2],
            r->uncovered_hint[0] ? r->uncovered_hint : "none");
  return EF_SUCCESS;
}

/* The sub model parts a case's boundary processes name (every list under "processes" but the
 * initial conditions, gravity and auxiliary ones), NULL-terminated; the strings belong to project. */
static int ef_case_boundary_parts(ef_parameters project, const char ***names) {
  *names = NULL;
  size_t n = 0, cap = 8;
  const char **list = calloc(cap, sizeof *list);
  EF_CHECK(list, EF_ERR_MEMORY, "mesh check: out of memory");
  ef_parameters processes;
  if (project && ef_parameters_has(project, "processes") && !ef_parameters_get(project, "processes", &processes) &&
      ef_parameters_type(processes) == EF_JSON_OBJECT) {
    const char *key;
    for (int i = 0; (key = ef_parameters_key_at(processes, i)); ++i) {
      if (!strcmp(key, "initial_conditions_process_list") || !strcmp(key, "gravity") ||
          !strcmp(key, "auxiliar_process_list"))
        continue;
      ef_parameters block_list, block, settings;
      if (ef_parameters_get(processes, key, &block_list)) continue;
      for (int b = 0; b < ef_parameters_size(block_list); ++b) {
        const char *name;
        if (ef_parameters_at(block_list, b, &block) || !ef_parameters_has(block, "Parameters") ||
            ef_parameters_get(block, "Parameters", &settings) || !ef_parameters_has(settings, "model_part_name") ||
            ef_parameters_get_string(settings, "model_part_name", &name))
          continue;
        if (n + 1 == cap) {
          void *grown = realloc(list, 2 * cap * sizeof *list);
          if (!grown) {
            free(list);
            return EF_ERROR(EF_ERR_MEMORY, "mesh check: out of memory");
          }
          list = grown;
          cap *= 2;
        }
        list[n++] = name;
        list[n] = NULL;
      }
    }
  }
  ef_error_clear();
  *names = list;
  return EF_SUCCESS;
}

int ef_mesh_check_case(ef_model_part mp, ef_parameters project, const char *source, FILE *report, FILE *warn) {
  const char **names = NULL;
  EF_CALL(ef_case_boundary_parts(project, &names));
  ef_mesh_report r;
  int err = ef_mesh_check(mp, names, &r);
  free(names);
  if (err) return err;
  if (report) ef_mesh_check_print(&r, report);
  return ef_mesh_check_verdict(&r, source, warn);
}

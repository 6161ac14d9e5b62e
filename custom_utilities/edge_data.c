/* edge_data.c -- exact P1 edge integrals of a simplex mesh in a row-wise CSR. */
#include "edge_data.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edge_physics.h"
#include "ef_omp.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"

/* Gradients of the barycentric coordinates of a simplex and its measure:
 * grad lambda_k (k = 1..d) are the rows of J^-1, J = [x_1 - x_0, ..., x_d - x_0],
 * grad lambda_0 = -sum_k grad lambda_k; returns the signed determinant of J. */
#if defined(__GNUC__)
__attribute__((noinline)) /* one compiled copy: the element cache and a recomputation agree bitwise under any flags */
#endif
static double simplex_gradients(int dim, const double *coords, const int32_t *nodes, double g[4][3],
                                double *measure) {
  const double *x0 = coords + 3 * (int64_t)nodes[0];
  double a[3][3] = {{0}};
  for (int k = 0; k < dim; ++k) {
    const double *xk = coords + 3 * (int64_t)nodes[k + 1];
    for (int c = 0; c < 3; ++c) a[k][c] = xk[c] - x0[c];
  }
  double det;
  if (dim == 3) {
    /* Rows of J^-1 are the cross products of the other two edge vectors over det. */
    double bc[3] = {a[1][1] * a[2][2] - a[1][2] * a[2][1], a[1][2] * a[2][0] - a[1][0] * a[2][2],
                    a[1][0] * a[2][1] - a[1][1] * a[2][0]};
    double ca[3] = {a[2][1] * a[0][2] - a[2][2] * a[0][1], a[2][2] * a[0][0] - a[2][0] * a[0][2],
                    a[2][0] * a[0][1] - a[2][1] * a[0][0]};
    double ab[3] = {a[0][1] * a[1][2] - a[0][2] * a[1][1], a[0][2] * a[1][0] - a[0][0] * a[1][2],
                    a[0][0] * a[1][1] - a[0][1] * a[1][0]};
    det = a[0][0] * bc[0] + a[0][1] * bc[1] + a[0][2] * bc[2];
    for (int c = 0; c < 3; ++c) {
      g[1][c] = bc[c] / det;
      g[2][c] = ca[c] / det;
      g[3][c] = ab[c] / det;
    }
    *measure = fabs(det) / 6.0;
  } else {
    det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    g[1][0] = a[1][1] / det;
    g[1][1] = -a[1][0] / det;
    g[2][0] = -a[0][1] / det;
    g[2][1] = a[0][0] / det;
    g[1][2] = g[2][2] = 0.0;
    *measure = fabs(det) / 2.0;
  }
  for (int c = 0; c < 3; ++c) {
    g[0][c] = 0.0;
    for (int k = 1; k <= dim; ++k) g[0][c] -= g[k][c];
  }
  return det;
}

/* Sort a short list of node indices in place (rows hold ~6-30 entries). */
static void sort_short(int32_t *v, int n) {
  for (int i = 1; i < n; ++i) {
    int32_t x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = x;
  }
}

/* Neighbours of node i (all nodes sharing an element with it, i excluded), unsorted;
 * marker[j] == i flags j as already taken.  Returns the count written to out. */
static int gather_neighbours(int64_t i, const int64_t *adj_ptr, const int64_t *adj, int npe,
                             const int32_t *elements, int32_t *marker, int32_t *out) {
  int cnt = 0;
  marker[i] = (int32_t)i;
  for (int64_t q = adj_ptr[i]; q < adj_ptr[i + 1]; ++q) {
    const int32_t *en = elements + adj[q] * npe;
    for (int l = 0; l < npe; ++l) {
      int32_t j = en[l];
      if (marker[j] != (int32_t)i) {
        marker[j] = (int32_t)i;
        out[cnt++] = j;
      }
    }
  }
  return cnt;
}

/* Index of j inside the sorted row cols[0..n), or -1. */
static int row_search(const int32_t *cols, int n, int32_t j) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cols[mid] < j)
      lo = mid + 1;
    else if (cols[mid] > j)
      hi = mid - 1;
    else
      return mid;
  }
  return -1;
}

/* The mesh a structure-only build borrows and its node -> element adjacency, elements ascending
 * within each node (this fixes the order of every sum, so no result depends on the thread count). */
struct ef_edge_source_s {
  const double *coords;
  const int32_t *elements;
  int64_t n_elements;
  int npe;
  int64_t *adj_ptr; /* n_nodes + 1 */
  int64_t *adj;     /* n_elements * npe */
  double *elem;     /* per element grad lambda_1..dim (dim x dim) and the measure, or NULL (see element_gradients) */
  double *ahead;    /* the records of rows [0, ahead_rows), computed ahead (ef_edge_data_records_ahead), or NULL */
  int64_t ahead_rows;
};

/* Doubles per element in the element cache: grad lambda_k, k = 1..dim (dim components each), and |e|. */
#define EF_ELEM_CACHE(dim) ((dim) * (dim) + 1)

/* Process-wide limit of the element cache's bytes (ef_edge_data_set_cache_limit). */
static size_t ef_edge_cache_limit = EF_EDGE_DATA_CACHE_LIMIT_DEFAULT;

size_t ef_edge_data_set_cache_limit(size_t bytes) {
  const size_t previous = ef_edge_cache_limit;
  ef_edge_cache_limit = bytes;
  return previous;
}

/* simplex_gradients of element e, from the cache when the build kept one: the cache holds simplex_gradients' own
 * rows 1..dim and measure, and grad lambda_0 is formed by its loop, so the values are bitwise the same. */
static inline void element_gradients(int dim, const ef_edge_source *src, int64_t e, const int32_t *en, double g[4][3],
                                     double *measure) {
  if (!src->elem) {
    simplex_gradients(dim, src->coords, en, g, measure);
    return;
  }
  const double *c = src->elem + e * EF_ELEM_CACHE(dim);
  for (int k = 1; k <= dim; ++k)
    for (int a = 0; a < 3; ++a) g[k][a] = a < dim ? c[(k - 1) * dim + a] : 0.0;
  *measure = c[dim * dim];
  for (int a = 0; a < 3; ++a) {
    g[0][a] = 0.0;
    for (int k = 1; k <= dim; ++k) g[0][a] -= g[k][a];
  }
}

/* Free the source of a structure-only build. */
void ef_edge_data_release_source(ef_edge_data *ed) {
  if (!ed || !ed->source) return;
  free(ed->source->adj_ptr);
  free(ed->source->adj);
  free(ed->source->elem);
  free(ed->source->ahead);
  free(ed->source);
  ed->source = NULL;
}

/* Release the arrays of the edge data and zero the struct. */
void ef_edge_data_free(ef_edge_data *ed) {
  if (!ed) return;
  ef_edge_data_release_source(ed);
  free(ed->row_ptr);
  free(ed->col);
  free(ed->values);
  free(ed->mass);
  free(ed->inv_mass);
  free(ed->nabla_diag);
  free(ed->h);
  free(ed->hmin);
  memset(ed, 0, sizeof *ed);
}

/* n_edges * stride * 8: the records, held or not. */
size_t ef_edge_data_record_bytes(const ef_edge_data *ed) {
  if (!ed || !ed->row_ptr) return 0;
  return (size_t)ed->n_edges * (size_t)ed->stride * sizeof(double);
}

/* Bytes of the CSR, the node arrays and what is held of the records and the source. */
size_t ef_edge_data_bytes(const ef_edge_data *ed) {
  if (!ed || !ed->row_ptr) return 0;
  size_t n = (size_t)ed->n_nodes, e = (size_t)ed->n_edges;
  size_t b = (n + 1) * sizeof(int64_t) + e * sizeof(int32_t) + n * 8 * sizeof(double);
  if (ed->values) b += ef_edge_data_record_bytes(ed);
  if (ed->source) {
    b += (n + 1 + (size_t)ed->source->n_elements * (size_t)ed->source->npe) * sizeof(int64_t);
    if (ed->source->elem) b += (size_t)ed->source->n_elements * EF_ELEM_CACHE(ed->dim) * sizeof(double);
    if (ed->source->ahead)
      b += (size_t)ed->row_ptr[ed->source->ahead_rows] * (size_t)ed->stride * sizeof(double);
  }
  return b;
}

/* Validate the mesh: index range and non-degenerate elements (measure relative to the
 * longest edge^dim above 1e-14, far below any usable sliver).  With cache (EF_ELEM_CACHE(dim) doubles
 * per element) it keeps each valid element's gradients and measure, computed here anyway. */
static int check_elements(int dim, int64_t n_nodes, const double *coords, int64_t n_elements, int npe,
                          const int32_t *elements, double *cache) {
  int64_t bad_index = INT64_MAX, bad_degenerate = INT64_MAX;
  EF_OMP(omp parallel for schedule(static) reduction(min : bad_index, bad_degenerate))
  for (int64_t e = 0; e < n_elements; ++e) {
    const int32_t *en = elements + e * npe;
    int ok = 1;
    for (int l = 0; l < npe; ++l)
      if (en[l] < 0 || en[l] >= n_nodes) ok = 0;
    if (!ok) {
      if (e < bad_index) bad_index = e;
      continue;
    }
    double g[4][3], vol;
    simplex_gradients(dim, coords, en, g, &vol);
    if (cache) {
      double *c = cache + e * EF_ELEM_CACHE(dim);
      for (int k = 1; k <= dim; ++k)
        for (int a = 0; a < dim; ++a) c[(k - 1) * dim + a] = g[k][a];
      c[dim * dim] = vol;
    }
    double lmax = 0.0;
    for (int a = 0; a < npe; ++a)
      for (int b = a + 1; b < npe; ++b) {
        double d2 = 0.0;
        for (int c = 0; c < dim; ++c) {
          double d = coords[3 * (int64_t)en[a] + c] - coords[3 * (int64_t)en[b] + c];
          d2 += d * d;
        }
        if (d2 > lmax) lmax = d2;
      }
    lmax = sqrt(lmax);
    if (!(vol > 1e-14 * pow(lmax, dim)) || !isfinite(vol))
      if (e < bad_degenerate) bad_degenerate = e;
  }
  if (bad_index != INT64_MAX) {
    const int32_t *en = elements + bad_index * npe;
    int l = 0;
    while (l < npe && en[l] >= 0 && en[l] < n_nodes) ++l;
    return EF_ERROR(EF_ERR_MESH, "element %lld references node %lld, outside 0..%lld",
                    (long long)bad_index, (long long)en[l], (long long)n_nodes - 1);
  }
  if (bad_degenerate != INT64_MAX)
    return EF_ERROR(EF_ERR_MESH, "element %lld is degenerate (zero or non-finite %s)",
                    (long long)bad_degenerate, dim == 3 ? "volume" : "area");
  return EF_SUCCESS;
}

/* Row i's integrals over its elements (ascending): the records of its n sorted columns cols into rec
 * (n * S doubles, overwritten) unless rec is NULL, and, when nodes is not NULL, its lumped mass, nabla_II,
 * h and hmin into nodes' arrays.  The one per-row code of both builds and of ef_edge_data_records. */
static void row_integrals(int dim, const ef_edge_source *src, int64_t i, const int32_t *cols, int n, double *rec,
                          ef_edge_data *nodes) {
  const int npe = src->npe, S = EF_EDGE_STRIDE(dim);
  const double mc_off = dim == 3 ? 1.0 / 20.0 : 1.0 / 12.0; /* int N_I N_J / |e|, I != J */
  const double w_node = 1.0 / (dim + 1);                    /* int N_I / |e| */
  if (rec) memset(rec, 0, (size_t)n * (size_t)S * sizeof *rec);
  double mass = 0.0, nd[3] = {0.0, 0.0, 0.0}, hmin = DBL_MAX;
  for (int64_t q = src->adj_ptr[i]; q < src->adj_ptr[i + 1]; ++q) {
    const int64_t e = src->adj[q];
    const int32_t *en = src->elements + e * npe;
    double g[4][3], vol;
    element_gradients(dim, src, e, en, g, &vol);
    int li = 0;
    while (en[li] != (int32_t)i) ++li;
    const double vn = vol * w_node;
    if (nodes) {
      double gmax = 0.0;
      for (int l = 0; l < npe; ++l) {
        double s = 0.0;
        for (int c = 0; c < dim; ++c) s += g[l][c] * g[l][c];
        if (s > gmax) gmax = s;
      }
      const double height = 1.0 / sqrt(gmax); /* smallest vertex-to-opposite-face distance */
      if (height < hmin) hmin = height;
      mass += vn;
      for (int c = 0; c < dim; ++c) nd[c] += vn * g[li][c];
    }
    if (!rec) continue;
    for (int lj = 0; lj < npe; ++lj) {
      if (lj == li) continue;
      double *r = rec + (int64_t)row_search(cols, n, en[lj]) * S;
      r[EF_EDGE_OFF_MC(dim)] += vol * mc_off;
      /* vol * (gi gj): the product commutes bitwise, so L^d_JI == (L^d_IJ)^T exactly. */
      for (int a = 0; a < dim; ++a)
        for (int b = 0; b < dim; ++b) r[EF_EDGE_OFF_LD(dim, a, b)] += vol * (g[li][a] * g[lj][b]);
      for (int c = 0; c < dim; ++c) {
        r[EF_EDGE_OFF_NABLA(dim, c)] += vn * g[lj][c];
        r[EF_EDGE_OFF_G(dim, c)] += vn * g[li][c];
      }
    }
  }
  if (!nodes) return;
  nodes->mass[i] = mass;
  nodes->inv_mass[i] = 1.0 / mass;
  for (int c = 0; c < 3; ++c) nodes->nabla_diag[3 * i + c] = c < dim ? nd[c] : 0.0;
  nodes->h[i] = dim == 3 ? cbrt(mass) : sqrt(mass);
  nodes->hmin[i] = hmin;
}

/* Exact P1 edge integrals (M^c, L^d, nabla, G per directed edge unless structure_only; lumped mass,
 * nabla_II, h, hmin per node); structure_only keeps the source for ef_edge_data_records. */
static int edge_data_build(int dim, int64_t n_nodes, const double *coords, int64_t n_elements,
                           int nodes_per_element, const int32_t *elements, int structure_only, ef_edge_data *out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "ef_edge_data_build: output is NULL");
  memset(out, 0, sizeof *out);
  EF_CHECK(dim == 2 || dim == 3, EF_ERR_PARAMETER, "edge data: dimension must be 2 or 3, got %d", dim);
  EF_CHECK(nodes_per_element == dim + 1, EF_ERR_PARAMETER,
           "edge data: %dD needs %d nodes per element (P1 simplices), got %d", dim, dim + 1,
           nodes_per_element);
  EF_CHECK(n_nodes > 0 && n_nodes < INT32_MAX, EF_ERR_PARAMETER,
           "edge data: node count %lld outside 1..2^31-2 (columns are int32)", (long long)n_nodes);
  EF_CHECK(n_elements > 0, EF_ERR_MESH, "edge data: the mesh has no elements");
  EF_CHECK(coords && elements, EF_ERR_PARAMETER, "edge data: coordinates or connectivity is NULL");
  /* Phases in the timing table, inside the caller's "edge data build". */
  const int ev_check = ef_log_event("setup", "edge data build: element check");
  const int ev_adjacency = ef_log_event("setup", "edge data build: node-element adjacency");
  const int ev_pass1 = ef_log_event("setup", "edge data build: row lengths (pass 1)");
  const int ev_pass2 = ef_log_event("setup", structure_only ? "edge data build: columns, node values (pass 2)"
                                                            : "edge data build: columns, node values, records (pass 2)");
  const int npe = nodes_per_element, S = EF_EDGE_STRIDE(dim);
  int err = EF_SUCCESS;
  int32_t *markers = NULL, *scratch = NULL;
  ef_edge_data ed;
  memset(&ed, 0, sizeof ed);
  ed.dim = dim;
  ed.stride = S;
  ed.n_nodes = n_nodes;

  /* The element cache: each element's gradients and measure, computed once by the check instead of once per
   * vertex in pass 2 and again per vertex in ef_edge_data_records; without it (over the limit, or no memory)
   * they are recomputed there, bitwise the same. */
  double *cache = NULL;
  const size_t cache_bytes = (size_t)n_elements * EF_ELEM_CACHE(dim) * sizeof(double);
  if (cache_bytes <= ef_edge_cache_limit) cache = malloc(cache_bytes);
  ef_log_event_begin(ev_check);
  err = check_elements(dim, n_nodes, coords, n_elements, nodes_per_element, elements, cache);
  ef_log_event_end(ev_check);
  if (err) {
    free(cache);
    return err;
  }

  /* Node -> element adjacency, elements ascending within each node (this fixes the order
   * of every sum below, so the result is independent of the thread count). */
  ef_log_event_begin(ev_adjacency);
  ef_edge_source *src = ed.source = calloc(1, sizeof *ed.source);
  if (!src) free(cache);
  EF_CHECK_GOTO(src, EF_ERR_MEMORY, fail, "edge data: out of memory for the adjacency");
  src->elem = cache;
  src->coords = coords;
  src->elements = elements;
  src->n_elements = n_elements;
  src->npe = npe;
  src->adj_ptr = calloc((size_t)n_nodes + 1, sizeof *src->adj_ptr);
  src->adj = malloc((size_t)n_elements * (size_t)npe * sizeof *src->adj);
  EF_CHECK_GOTO(src->adj_ptr && src->adj, EF_ERR_MEMORY, fail, "edge data: out of memory for the adjacency");
  int64_t *adj_ptr = src->adj_ptr, *adj = src->adj;

  /* One marker array of n ints per thread: here the adjacency's counts, then O(1) de-duplication of
   * neighbours. */
  int nthreads = 1;
#ifdef _OPENMP
  nthreads = omp_get_max_threads();
#endif
  markers = malloc((size_t)nthreads * (size_t)n_nodes * sizeof *markers);
  EF_CHECK_GOTO(markers, EF_ERR_MEMORY, fail, "edge data: out of memory for %d thread work arrays", nthreads);
  int64_t max_adj = 0, unused = -1;
  /* In parallel and deterministic: thread t counts the uses of each node by its contiguous slice of the
   * elements, the slices' counts become offsets in slice order, and each thread fills its own slice in
   * ascending order, so elements ascend within each node whatever the thread count. */
  EF_OMP(omp parallel)
  {
    int tid = 0, nt = 1;
#ifdef _OPENMP
    tid = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    int32_t *cnt = markers + (size_t)tid * (size_t)n_nodes;
    const int64_t e0 = n_elements * tid / nt, e1 = n_elements * (tid + 1) / nt;
    memset(cnt, 0, (size_t)n_nodes * sizeof *cnt);
    for (int64_t q = e0 * npe; q < e1 * npe; ++q) cnt[elements[q]]++;
    EF_OMP(omp barrier)
    EF_OMP(omp for schedule(static))
    for (int64_t i = 0; i < n_nodes; ++i) {
      int32_t sum = 0; /* a node's elements */
      for (int t = 0; t < nt; ++t) {
        int32_t *c = markers + (size_t)t * (size_t)n_nodes + i;
        const int32_t k = *c;
        *c = sum;
        sum += k;
      }
      adj_ptr[i + 1] = sum;
    }
    EF_OMP(omp single)
    for (int64_t i = 0; i < n_nodes; ++i) {
      if (adj_ptr[i + 1] == 0 && unused < 0) unused = i;
      if (adj_ptr[i + 1] > max_adj) max_adj = adj_ptr[i + 1];
      adj_ptr[i + 1] += adj_ptr[i];
    }
    for (int64_t e = e0; e < e1; ++e)
      for (int l = 0; l < npe; ++l) {
        const int32_t j = elements[e * npe + l];
        adj[adj_ptr[j] + cnt[j]++] = e;
      }
  }
  if (unused >= 0) {
    err = EF_ERROR(EF_ERR_MESH, "edge data: node %lld is used by no element", (long long)unused);
    goto fail;
  }

  const int64_t max_nb = max_adj * npe;
  scratch = malloc((size_t)nthreads * (size_t)max_nb * sizeof *scratch);
  EF_CHECK_GOTO(scratch, EF_ERR_MEMORY, fail,
                "edge data: out of memory for %d thread work arrays", nthreads);

  ef_log_event_end(ev_adjacency);
  ef_log_event_begin(ev_pass1);
  /* Pass 1: row lengths. */
  ed.row_ptr = calloc((size_t)n_nodes + 1, sizeof *ed.row_ptr);
  EF_CHECK_GOTO(ed.row_ptr, EF_ERR_MEMORY, fail, "edge data: out of memory");
  EF_OMP(omp parallel)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    int32_t *marker = markers + (size_t)tid * (size_t)n_nodes;
    int32_t *buf = scratch + (size_t)tid * (size_t)max_nb;
    for (int64_t i = 0; i < n_nodes; ++i) marker[i] = -1; /* every thread its own copy */
    EF_OMP(omp for schedule(static))
    for (int64_t i = 0; i < n_nodes; ++i)
      ed.row_ptr[i + 1] = gather_neighbours(i, adj_ptr, adj, npe, elements, marker, buf);
  }
  int64_t max_row = 0;
  for (int64_t i = 0; i < n_nodes; ++i) {
    if (ed.row_ptr[i + 1] > max_row) max_row = ed.row_ptr[i + 1];
    ed.row_ptr[i + 1] += ed.row_ptr[i];
  }
  ed.n_edges = ed.row_ptr[n_nodes];
  ed.max_row = (int)max_row;
  ef_log_event_end(ev_pass1);
  ef_log_event_begin(ev_pass2);

  ed.col = malloc((size_t)ed.n_edges * sizeof *ed.col);
  if (!structure_only) ed.values = malloc((size_t)ed.n_edges * (size_t)S * sizeof *ed.values);
  ed.mass = malloc((size_t)n_nodes * sizeof *ed.mass);
  ed.inv_mass = malloc((size_t)n_nodes * sizeof *ed.inv_mass);
  ed.nabla_diag = malloc(3 * (size_t)n_nodes * sizeof *ed.nabla_diag);
  ed.h = malloc((size_t)n_nodes * sizeof *ed.h);
  ed.hmin = malloc((size_t)n_nodes * sizeof *ed.hmin);
  EF_CHECK_GOTO(ed.col && (structure_only || ed.values) && ed.mass && ed.inv_mass && ed.nabla_diag && ed.h &&
                    ed.hmin,
                EF_ERR_MEMORY, fail, "edge data: out of memory for %lld edges x %d doubles",
                (long long)ed.n_edges, S);

  /* Pass 2: columns (sorted), node values and (unless structure_only) records, each row written only by
   * the thread owning it. */
  EF_OMP(omp parallel)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    int32_t *marker = markers + (size_t)tid * (size_t)n_nodes;
    for (int64_t i = 0; i < n_nodes; ++i) marker[i] = -1;
    EF_OMP(omp for schedule(static))
    for (int64_t i = 0; i < n_nodes; ++i) {
      const int64_t r0 = ed.row_ptr[i];
      const int n = (int)(ed.row_ptr[i + 1] - r0);
      int32_t *cols = ed.col + r0;
      gather_neighbours(i, adj_ptr, adj, npe, elements, marker, cols);
      sort_short(cols, n);
      row_integrals(dim, src, i, cols, n, structure_only ? NULL : ed.values + r0 * S, &ed);
    }
  }
  double measure = 0.0;
  for (int64_t i = 0; i < n_nodes; ++i) measure += ed.mass[i];
  ed.measure = measure;
  ef_log_event_end(ev_pass2);

  free(markers);
  free(scratch);
  if (!structure_only) ef_edge_data_release_source(&ed);
  *out = ed;
  return EF_SUCCESS;

fail:
  free(markers);
  free(scratch);
  ef_edge_data_free(&ed);
  return err;
}

/* Exact P1 edge integrals, every record kept. */
int ef_edge_data_build(int dim, int64_t n_nodes, const double *coords, int64_t n_elements,
                       int nodes_per_element, const int32_t *elements, ef_edge_data *out) {
  return edge_data_build(dim, n_nodes, coords, n_elements, nodes_per_element, elements, 0, out);
}

/* The edge data without the records, the source kept to compute them by row ranges. */
int ef_edge_data_build_structure(int dim, int64_t n_nodes, const double *coords, int64_t n_elements,
                                 int nodes_per_element, const int32_t *elements, ef_edge_data *out) {
  return edge_data_build(dim, n_nodes, coords, n_elements, nodes_per_element, elements, 1, out);
}

int ef_edge_data_records(const ef_edge_data *ed, int64_t r0, int64_t r1, double *out) {
  EF_CHECK(ed && ed->row_ptr && out, EF_ERR_PARAMETER, "edge records: missing edge data or output");
  EF_CHECK(r0 >= 0 && r0 <= r1 && r1 <= ed->n_nodes, EF_ERR_PARAMETER,
           "edge records: rows [%lld, %lld) outside 0..%lld", (long long)r0, (long long)r1, (long long)ed->n_nodes);
  const int S = ed->stride;
  const int64_t e0 = ed->row_ptr[r0];
  if (ed->values) {
    ef_omp_copy(out, ed->values + e0 * S, (size_t)(ed->row_ptr[r1] - e0) * (size_t)S * sizeof(double));
    return EF_SUCCESS;
  }
  EF_CHECK(ed->source, EF_ERR_PARAMETER,
           "edge records: neither kept nor computable (the structure-only build's source was released)");
  const ef_edge_source *src = ed->source;
  if (r0 < src->ahead_rows) { /* the rows computed ahead: copied */
    const int64_t r = r1 < src->ahead_rows ? r1 : src->ahead_rows;
    ef_omp_copy(out, src->ahead + e0 * S, (size_t)(ed->row_ptr[r] - e0) * (size_t)S * sizeof(double));
    if (r == r1) return EF_SUCCESS;
    return ef_edge_data_records(ed, r, r1, out + (ed->row_ptr[r] - e0) * S);
  }
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = r0; i < r1; ++i) {
    const int64_t k = ed->row_ptr[i];
    row_integrals(ed->dim, src, i, ed->col + k, (int)(ed->row_ptr[i + 1] - k), out + (k - e0) * S, NULL);
  }
  return EF_SUCCESS;
}

/* Records of the first rows computed ahead, in pieces of about 8 MiB, until `stop` says so, max_bytes are
 * held or every row is done. */
int ef_edge_data_records_ahead(ef_edge_data *ed, size_t max_bytes, int (*stop)(void *), void *ctx) {
  EF_CHECK(ed && ed->row_ptr, EF_ERR_PARAMETER, "edge records ahead: missing edge data");
  ef_edge_source *src = ed->source;
  if (ed->values || !src || src->ahead) return EF_SUCCESS;
  const size_t rec = (size_t)ed->stride * sizeof(double), total = (size_t)ed->n_edges * rec;
  const size_t bytes = total < max_bytes ? total : max_bytes;
  if (bytes < rec * (size_t)ed->max_row || (stop && stop(ctx))) return EF_SUCCESS;
  double *ahead = malloc(bytes);
  if (!ahead) return EF_SUCCESS; /* computed when asked, as without it */
  const int64_t piece = (int64_t)((size_t)8 << 20) / (int64_t)rec;
  int64_t rows = 0;
  while (rows < ed->n_nodes && !(stop && stop(ctx))) {
    int64_t end = rows + 1; /* whole rows, at least one, about `piece` edges, within `bytes` */
    while (end < ed->n_nodes && ed->row_ptr[end + 1] - ed->row_ptr[rows] <= piece &&
           (size_t)ed->row_ptr[end + 1] * rec <= bytes)
      ++end;
    if ((size_t)ed->row_ptr[end] * rec > bytes) break;
    const int err = ef_edge_data_records(ed, rows, end, ahead + ed->row_ptr[rows] * ed->stride);
    if (err) {
      free(ahead);
      return err;
    }
    rows = end;
  }
  if (rows == 0) {
    free(ahead);
    return EF_SUCCESS;
  }
  src->ahead = ahead;
  src->ahead_rows = rows;
  return EF_SUCCESS;
}

int64_t ef_edge_data_rows_ahead(const ef_edge_data *ed) { return ed && ed->source ? ed->source->ahead_rows : 0; }

/* Contiguous row blocks whose edge records fit in max_doubles each. */
int ef_edge_data_row_blocks(const ef_edge_data *ed, int64_t max_doubles, int64_t *n_blocks,
                            int64_t *row_begin) {
  EF_CHECK(ed && ed->row_ptr && n_blocks, EF_ERR_PARAMETER, "row blocks: missing edge data or output");
  EF_CHECK(max_doubles > 0, EF_ERR_PARAMETER, "row blocks: block size must be positive");
  const int64_t max_edges = max_doubles / ed->stride;
  int64_t nb = 0, start = 0;
  if (row_begin) row_begin[0] = 0;
  while (start < ed->n_nodes) {
    int64_t end = start;
    while (end < ed->n_nodes && ed->row_ptr[end + 1] - ed->row_ptr[start] <= max_edges) ++end;
    EF_CHECK(end > start, EF_ERR_PARAMETER,
             "row blocks: row %lld has %lld edges, more than a block of %lld doubles holds",
             (long long)start, (long long)(ed->row_ptr[start + 1] - ed->row_ptr[start]),
             (long long)max_doubles);
    ++nb;
    if (row_begin) row_begin[nb] = end;
    start = end;
  }
  *n_blocks = nb;
  return EF_SUCCESS;
}

/* Position of the directed edge IJ in the records (binary search in row I). */
int64_t ef_edge_data_find(const ef_edge_data *ed, int64_t i, int64_t j) {
  if (!ed || i < 0 || i >= ed->n_nodes) return -1;
  const int64_t r0 = ed->row_ptr[i];
  int k = row_search(ed->col + r0, (int)(ed->row_ptr[i + 1] - r0), (int32_t)j);
  return k < 0 ? -1 : r0 + k;
}

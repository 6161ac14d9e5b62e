/* ef_mpi_check -- the MPI foundation end to end: partition a mesh over the ranks, build the edge
 * data on every piece, assemble the pressure Laplacian rows of the owned nodes and solve a
 * pressure-like SPD system with a distributed Jacobi-preconditioned CG (halo exchange before each
 * product, reductions through the communicator); compare with the serial CG (host_cg.c) on the
 * same global system.
 *
 *   mpirun -n P ef_mpi_check (--mesh FILE | --box2d N | --box3d N) [--rtol R] [--max-it N]
 *                            [--max-diff D] [--max-its-diff K] [--fail-rank R] [--neumann 1]
 *
 * The system: A = the edge Laplacian (L_IJ = tr L^d_IJ, A_II = -sum_J L_IJ, as the fractional
 * step's pressure matrix), with p = 0 on the nodes of the side x = max x (Dirichlet rows of the
 * identity, their columns eliminated, so A stays symmetric), b_I = M_I f(x_I) for a smooth f.
 * --neumann 1: no Dirichlet node, as the pressure of a closed cavity: A 1 = 0, both CGs work in
 * 1-perp (b's mean removed; host_cg.c's constant_null_space) and the solutions are compared with
 * their means removed.
 * Checks: every node owned exactly once; a halo exchange of 1 and 3 components gives every ghost
 * its owner's value; the owned rows of A (applied to a smooth vector) and of the lumped mass equal
 * the global rows to 1e-12 (the pieces hold every element around an owned node);
 * max |x_P - x_1| / max |x_1| <= --max-diff (1e-8) at rtol (1e-12); the iteration counts differ by
 * at most --max-its-diff (2).  Exit status 0 when all hold.
 *
 * Any error on any rank stops all of them with that rank's message (ef_comm_abort);
 * --fail-rank R makes rank R fail as a rank with bad input would, for the test of that path.
 * --box2d/--box3d: the jittered unit box of tests/ef_test_mesh.h (N cells a side; jitter 0.25 in 2D,
 * 0.1 in 3D, where larger offsets can invert a tetrahedron).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edge_physics.h"
#include "ef_comm_mpi.h"
#include "ef_test_mesh.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_util.h"
#include "host_cg.h"

typedef struct {
  const char *mesh;
  int box_dim, box_n;
  double rtol, max_diff;
  int max_it, max_its_diff, fail_rank, neumann;
} options;

/* Rows 0..n_rows-1 of a matrix over the columns of an edge data (diagonal inside, sorted). */
typedef struct {
  int64_t n_rows;
  int64_t *row_ptr;
  int32_t *col;
  double *val;
  double *diag;
} rows_csr;

static void rows_free(rows_csr *a) {
  free(a->row_ptr);
  free(a->col);
  free(a->val);
  free(a->diag);
  memset(a, 0, sizeof *a);
}

/* The pressure Laplacian rows 0..n_rows-1 of ed with Dirichlet nodes dir (see the top). */
static int assemble_rows(const ef_edge_data *ed, int64_t n_rows, const unsigned char *dir, rows_csr *a) {
  const int d = ed->dim;
  memset(a, 0, sizeof *a);
  a->n_rows = n_rows;
  const int64_t nnz_max = ed->row_ptr[n_rows] + n_rows;
  EF_MALLOC(a->row_ptr, n_rows + 1);
  EF_MALLOC(a->col, nnz_max);
  EF_MALLOC(a->val, nnz_max);
  EF_MALLOC(a->diag, n_rows);
  int64_t nz = 0;
  a->row_ptr[0] = 0;
  for (int64_t i = 0; i < n_rows; ++i) {
    const int64_t k0 = ed->row_ptr[i], ne = ed->row_ptr[i + 1] - k0;
    const double *ev = ed->values + k0 * ed->stride;
    double diag = 0.0;
    for (int64_t k = 0; k < ne; ++k)
      for (int c = 0; c < d; ++c) diag -= EF_EDGE_LD(ev, k, d, c, c);
    if (dir[i]) diag = 1.0;
    a->diag[i] = diag;
    int placed = 0;
    for (int64_t k = 0; k <= ne; ++k) {
      const int32_t j = k < ne ? ed->col[k0 + k] : INT32_MAX;
      if (!placed && j > i) {
        a->col[nz] = (int32_t)i;
        a->val[nz++] = diag;
        placed = 1;
      }
      if (k == ne || dir[i] || dir[j]) continue;
      double l = 0.0;
      for (int c = 0; c < d; ++c) l += EF_EDGE_LD(ev, k, d, c, c);
      a->col[nz] = j;
      a->val[nz++] = l;
    }
    a->row_ptr[i + 1] = nz;
  }
  return EF_SUCCESS;
}

/* The source of the right-hand side. */
static double source(const double *x) { return 1.0 + sin(3.0 * x[0]) * cos(2.0 * x[1]) + 0.5 * x[2]; }

/* Distributed Jacobi CG, the iteration of ef_host_cg_solve (stopping test sqrt(r.D^-1 r) /
 * sqrt(b.D^-1 b) < rtol) with the sums of owned rows reduced over the ranks; x (n_nodes, ghosts
 * included) starts at 0.  Every decision uses reduced values, so all ranks take the same branch. */
static int distributed_cg(ef_comm comm, ef_halo halo, const ef_partition *pt, const rows_csr *A, const double *b,
                          int null_space, double *x, double rtol, int max_it, int *iterations, double *residual) {
  const int64_t n = pt->n_owned;
  int err = EF_SUCCESS;
  /* A 1 = 0 (no Dirichlet row): solve in 1-perp, b's mean removed as the host CG does. */
  double bmean = 0.0;
  if (null_space) {
    for (int64_t i = 0; i < n; ++i) bmean += b[i];
    EF_CALL(ef_comm_allreduce(comm, &bmean, 1, EF_COMM_SUM));
    bmean /= (double)pt->n_global_nodes;
  }
  double *r = NULL, *p = NULL, *q = NULL, *dinv = NULL;
  r = malloc((size_t)n * sizeof *r);
  p = calloc((size_t)pt->n_nodes, sizeof *p);
  q = malloc((size_t)n * sizeof *q);
  dinv = malloc((size_t)n * sizeof *dinv);
  EF_CHECK_GOTO(r && p && q && dinv, EF_ERR_MEMORY, done, "distributed CG: out of memory (%lld rows)",
                (long long)n);
  memset(x, 0, (size_t)pt->n_nodes * sizeof *x);
  double sums[2] = {0.0, 0.0}; /* r.D^-1 r, b.D^-1 b */
  for (int64_t i = 0; i < n; ++i) {
    EF_CHECK_GOTO(A->diag[i] > 0.0, EF_ERR_SOLVER, done, "distributed CG: diagonal of row %lld (global %lld) is %g",
                  (long long)i, (long long)pt->global_node[i], A->diag[i]);
    dinv[i] = 1.0 / A->diag[i];
    r[i] = b[i] - bmean;
    p[i] = dinv[i] * r[i];
    sums[0] += r[i] * dinv[i] * r[i];
    sums[1] += r[i] * dinv[i] * r[i];
  }
  EF_CALL_GOTO(ef_comm_allreduce(comm, sums, 2, EF_COMM_SUM), done);
  double rz = sums[0];
  const double bnorm = sqrt(sums[1]);
  double rnorm = bnorm > 0.0 ? sqrt(rz) / bnorm : 0.0;
  int it = 0;
  while (bnorm > 0.0 && rnorm >= rtol) {
    EF_CALL_GOTO(ef_halo_exchange(halo, p, 1), done);
    double pq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += A->val[k] * p[A->col[k]];
      q[i] = s;
      pq += p[i] * s;
    }
    EF_CALL_GOTO(ef_comm_allreduce(comm, &pq, 1, EF_COMM_SUM), done);
    EF_CHECK_GOTO(pq > 0.0, EF_ERR_SOLVER, done, "distributed CG: p^T A p = %g at iteration %d", pq, it + 1);
    const double alpha = rz / pq;
    double rz_new = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rz_new += r[i] * dinv[i] * r[i];
    }
    EF_CALL_GOTO(ef_comm_allreduce(comm, &rz_new, 1, EF_COMM_SUM), done);
    ++it;
    EF_CHECK_GOTO(isfinite(rz_new), EF_ERR_SOLVER, done, "distributed CG: non-finite residual at iteration %d", it);
    rnorm = sqrt(rz_new) / bnorm;
    if (rnorm < rtol) break;
    EF_CHECK_GOTO(it < max_it, EF_ERR_SOLVER, done, "distributed CG: no convergence in %d iterations (%.3e)", max_it,
                  rnorm);
    const double beta = rz_new / rz;
    rz = rz_new;
    for (int64_t i = 0; i < n; ++i) p[i] = dinv[i] * r[i] + beta * p[i];
  }
  *iterations = it;
  *residual = rnorm;
  err = ef_halo_exchange(halo, x, 1); /* ghosts current, as a caller of a solve expects */
done:
  free(r);
  free(p);
  free(q);
  free(dinv);
  return err;
}

/* Dirichlet nodes: those on the side x = xmax. */
static void mark_dirichlet(int64_t n, const double *coords, double xmax, double tol, int neumann, unsigned char *dir) {
  for (int64_t i = 0; i < n; ++i) dir[i] = !neumann && coords[3 * i] >= xmax - tol;
}

/* The jittered box of ef_test_mesh.h as a model part (nodes and elements only). */
static int box_model_part(const ef_test_mesh *tm, ef_model_part *out) {
  ef_model_part mp = NULL;
  int err = ef_model_part_create(NULL, tm->dim, &mp);
  if (!err) err = ef_model_part_alloc_nodes(mp, tm->n_nodes);
  if (!err) err = ef_model_part_alloc_elements(mp, tm->n_elements, tm->dim + 1);
  if (err) {
    ef_model_part_destroy(&mp);
    return err;
  }
  memcpy(mp->coords, tm->coords, (size_t)tm->n_nodes * 3 * sizeof *mp->coords);
  memcpy(mp->elements, tm->elements, (size_t)(tm->n_elements * (tm->dim + 1)) * sizeof *mp->elements);
  for (int64_t i = 0; i < tm->n_nodes; ++i) mp->node_ids[i] = i + 1;
  for (int64_t e = 0; e < tm->n_elements; ++e) mp->element_ids[e] = e + 1;
  *out = mp;
  return EF_SUCCESS;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){NULL, 0, 0, 1e-12, 1e-8, 20000, 2, -1, 0};
  for (int a = 1; a < argc; ++a) {
    const char *k = argv[a];
    EF_CHECK(a + 1 < argc, EF_ERR_PARAMETER, "ef_mpi_check: %s needs a value", k);
    const char *v = argv[++a];
    char *end = NULL;
    if (!strcmp(k, "--mesh")) {
      o->mesh = v;
      continue;
    }
    double x = strtod(v, &end);
    EF_CHECK(end != v && *end == '\0', EF_ERR_PARAMETER, "ef_mpi_check: %s: '%s' is not a number", k, v);
    if (!strcmp(k, "--box2d") || !strcmp(k, "--box3d")) {
      o->box_dim = k[5] - '0';
      o->box_n = (int)x;
      EF_CHECK(x >= 1 && x <= 400, EF_ERR_PARAMETER, "ef_mpi_check: %s %s: need 1..400 cells a side", k, v);
    } else if (!strcmp(k, "--rtol")) {
      o->rtol = x;
    } else if (!strcmp(k, "--max-diff")) {
      o->max_diff = x;
    } else if (!strcmp(k, "--max-it")) {
      o->max_it = (int)x;
    } else if (!strcmp(k, "--max-its-diff")) {
      o->max_its_diff = (int)x;
    } else if (!strcmp(k, "--fail-rank")) {
      o->fail_rank = (int)x;
    } else if (!strcmp(k, "--neumann")) {
      o->neumann = x != 0.0;
    } else {
      return EF_ERROR(EF_ERR_PARAMETER,
                      "ef_mpi_check: unknown option %s (usage: ef_mpi_check --mesh FILE | --box2d N | --box3d N "
                      "[--rtol R] [--max-it N] [--max-diff D] [--max-its-diff K] [--fail-rank R] [--neumann 1])",
                      k);
    }
  }
  EF_CHECK(!o->mesh != !o->box_dim, EF_ERR_PARAMETER, "ef_mpi_check: give one of --mesh FILE, --box2d N, --box3d N");
  EF_CHECK(o->rtol > 0.0 && o->max_it > 0, EF_ERR_PARAMETER, "ef_mpi_check: need --rtol > 0 and --max-it > 0");
  return EF_SUCCESS;
}

int main(int argc, char **argv) {
  ef_comm comm = NULL;
  if (ef_comm_mpi_init(&argc, &argv, &comm)) {
    fprintf(stderr, "ef_mpi_check: %s\n", ef_error_message());
    return 1;
  }
  const int rank = ef_comm_rank(comm), size = ef_comm_size(comm);
  int err = EF_SUCCESS;
  options o;
  ef_model_part mp = NULL;
  ef_partition pt = {0};
  ef_edge_data ed = {0}, ged = {0};
  ef_halo halo = NULL;
  rows_csr A = {0}, G = {0};
  ef_host_cg *cg = NULL;
  unsigned char *dir = NULL, *gdir = NULL;
  double *b = NULL, *x = NULL, *xg = NULL, *gb = NULL, *xs = NULL, *v3 = NULL, *yg = NULL;
  int dim = 0, npe = 0;
  int64_t n = 0, ne = 0;
  const double *coords = NULL;
  const ef_index *elements = NULL;
  double t_part = 0.0, t_edges = 0.0, t_cg = 0.0, t_serial = 0.0;

  EF_CALL_GOTO(parse(argc, argv, &o), fail);
  if (o.mesh) {
    EF_CALL_GOTO(ef_read_mesh(o.mesh, NULL, &mp), fail);
  } else {
    ef_test_mesh tm = {0};
    int bad = o.box_dim == 2 ? ef_test_mesh_2d(o.box_n, o.box_n, 1.0, 1.0, 0.25, 7, &tm)
                             : ef_test_mesh_3d(o.box_n, o.box_n, o.box_n, 1.0, 1.0, 1.0, 0.1, 7, &tm);
    if (!bad) err = box_model_part(&tm, &mp);
    ef_test_mesh_free(&tm);
    EF_CHECK_GOTO(!bad, EF_ERR_MESH, fail,
                  "ef_mpi_check: the %dD box mesh of %d cells a side failed (out of memory or an inverted element)",
                  o.box_dim, o.box_n);
    if (err) goto fail;
  }
  dim = mp->dim;
  n = mp->n_nodes;
  ne = mp->n_elements;
  npe = mp->nodes_per_element;
  coords = mp->coords;
  elements = mp->elements;
  if (rank == o.fail_rank)
    EF_CHECK_GOTO(0, EF_ERR_IO, fail,
                  "ef_mpi_check: injected failure (--fail-rank %d): this rank cannot read its piece", o.fail_rank);

  /* Partition (every rank reads the mesh and runs the same METIS call). */
  double t0 = ef_wtime();
  EF_CALL_GOTO(ef_partition_create(comm, mp, NULL, &pt), fail);
  t_part = ef_wtime() - t0;

  /* Every node owned exactly once. */
  xg = calloc((size_t)n, sizeof *xg);
  EF_CHECK_GOTO(xg, EF_ERR_MEMORY, fail, "ef_mpi_check: out of memory (%lld nodes)", (long long)n);
  for (int64_t i = 0; i < pt.n_owned; ++i) xg[pt.global_node[i]] += 1.0;
  EF_CALL_GOTO(ef_comm_allreduce(comm, xg, (int)n, EF_COMM_SUM), fail);
  for (int64_t i = 0; i < n; ++i)
    EF_CHECK_GOTO(xg[i] == 1.0, EF_ERR_INTERNAL, fail, "ef_mpi_check: node %lld is owned by %g ranks", (long long)i,
                  xg[i]);

  /* Halo exchange of a 3-component vector: ghosts get their owners' values. */
  EF_CALL_GOTO(ef_halo_create(comm, &pt, 3, &halo), fail);
  v3 = malloc((size_t)pt.n_nodes * 3 * sizeof *v3);
  EF_CHECK_GOTO(v3, EF_ERR_MEMORY, fail, "ef_mpi_check: out of memory");
  for (int64_t i = 0; i < pt.n_nodes; ++i)
    for (int c = 0; c < 3; ++c) v3[3 * i + c] = i < pt.n_owned ? (double)pt.global_node[i] * (c + 1) - c : NAN;
  EF_CALL_GOTO(ef_halo_exchange(halo, v3, 3), fail);
  for (int64_t i = pt.n_owned; i < pt.n_nodes; ++i)
    for (int c = 0; c < 3; ++c)
      EF_CHECK_GOTO(v3[3 * i + c] == (double)pt.global_node[i] * (c + 1) - c, EF_ERR_INTERNAL, fail,
                    "ef_mpi_check: ghost %lld (global %lld) component %d received %g", (long long)i,
                    (long long)pt.global_node[i], c, v3[3 * i + c]);

  /* Edge data and the owned rows of the system on the piece. */
  t0 = ef_wtime();
  EF_CALL_GOTO(ef_edge_data_build(dim, pt.n_nodes, pt.coords, pt.n_elements, npe, pt.elements, &ed), fail);
  t_edges = ef_wtime() - t0;
  double bounds[2] = {-INFINITY, -INFINITY}; /* max x, max extent proxy */
  for (int64_t i = 0; i < pt.n_owned; ++i) {
    if (pt.coords[3 * i] > bounds[0]) bounds[0] = pt.coords[3 * i];
    if (fabs(pt.coords[3 * i]) > bounds[1]) bounds[1] = fabs(pt.coords[3 * i]);
  }
  EF_CALL_GOTO(ef_comm_allreduce(comm, bounds, 2, EF_COMM_MAX), fail);
  const double xtol = 1e-9 * (bounds[1] > 0.0 ? bounds[1] : 1.0);
  dir = malloc((size_t)pt.n_nodes);
  b = malloc((size_t)pt.n_owned * sizeof *b);
  x = malloc((size_t)pt.n_nodes * sizeof *x);
  EF_CHECK_GOTO(dir && b && x, EF_ERR_MEMORY, fail, "ef_mpi_check: out of memory");
  mark_dirichlet(pt.n_nodes, pt.coords, bounds[0], xtol, o.neumann, dir);
  EF_CALL_GOTO(assemble_rows(&ed, pt.n_owned, dir, &A), fail);
  for (int64_t i = 0; i < pt.n_owned; ++i) b[i] = dir[i] ? 0.0 : ed.mass[i] * source(pt.coords + 3 * i);

  int its = 0;
  double res = 0.0;
  t0 = ef_wtime();
  EF_CALL_GOTO(distributed_cg(comm, halo, &pt, &A, b, o.neumann, x, o.rtol, o.max_it, &its, &res), fail);
  t_cg = ef_wtime() - t0;
  for (int64_t i = pt.n_owned; i < pt.n_nodes; ++i) /* the final exchange is a 1-component one */
    EF_CHECK_GOTO(isfinite(x[i]), EF_ERR_INTERNAL, fail, "ef_mpi_check: ghost %lld not received", (long long)i);

  /* The distributed solution on every rank (a sum of owned values), ghosts checked against it. */
  memset(xg, 0, (size_t)n * sizeof *xg);
  for (int64_t i = 0; i < pt.n_owned; ++i) xg[pt.global_node[i]] = x[i];
  EF_CALL_GOTO(ef_comm_allreduce(comm, xg, (int)n, EF_COMM_SUM), fail);
  for (int64_t i = pt.n_owned; i < pt.n_nodes; ++i)
    EF_CHECK_GOTO(x[i] == xg[pt.global_node[i]], EF_ERR_INTERNAL, fail,
                  "ef_mpi_check: ghost %lld (global %lld) holds %.17g, its owner %.17g", (long long)i,
                  (long long)pt.global_node[i], x[i], xg[pt.global_node[i]]);

  /* The owned rows on their own: y = A v (v smooth, ghosts by the halo exchange) and the lumped
   * mass, gathered to compare with the global rows on rank 0. */
  yg = calloc((size_t)(2 * n), sizeof *yg);
  EF_CHECK_GOTO(yg, EF_ERR_MEMORY, fail, "ef_mpi_check: out of memory");
  for (int64_t i = 0; i < pt.n_nodes; ++i) x[i] = i < pt.n_owned ? source(pt.coords + 3 * i) : NAN;
  EF_CALL_GOTO(ef_halo_exchange(halo, x, 1), fail);
  for (int64_t i = 0; i < pt.n_owned; ++i) {
    double s = 0.0;
    for (int64_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += A.val[k] * x[A.col[k]];
    yg[pt.global_node[i]] = s;
    yg[n + pt.global_node[i]] = ed.mass[i];
  }
  EF_CALL_GOTO(ef_comm_allreduce(comm, yg, (int)(2 * n), EF_COMM_SUM), fail);

  /* Per-rank figures: {owned, ghosts, neighbours, elements} min and max. */
  double fig[2][4] = {{(double)pt.n_owned, (double)(pt.n_nodes - pt.n_owned), (double)pt.n_neighbours,
                       (double)pt.n_elements}};
  memcpy(fig[1], fig[0], sizeof fig[0]);
  EF_CALL_GOTO(ef_comm_allreduce(comm, fig[0], 4, EF_COMM_MIN), fail);
  EF_CALL_GOTO(ef_comm_allreduce(comm, fig[1], 4, EF_COMM_MAX), fail);
  double times[4] = {t_part, t_edges, t_cg, 0.0};
  EF_CALL_GOTO(ef_comm_allreduce(comm, times, 4, EF_COMM_MAX), fail);

  /* Rank 0: the serial solve of the same global system, and the verdict. */
  double verdict[3] = {0.0, 0.0, 0.0}; /* failed, relative difference, serial iterations */
  const double row_tol = 1e-12;       /* the owned rows against the global ones (rounding only) */
  if (rank == 0) {
    t0 = ef_wtime();
    EF_CALL_GOTO(ef_edge_data_build(dim, n, coords, ne, npe, elements, &ged), fail);
    gdir = malloc((size_t)n);
    gb = malloc((size_t)n * sizeof *gb);
    xs = calloc((size_t)n, sizeof *xs);
    EF_CHECK_GOTO(gdir && gb && xs, EF_ERR_MEMORY, fail, "ef_mpi_check: out of memory");
    mark_dirichlet(n, coords, bounds[0], xtol, o.neumann, gdir);
    EF_CALL_GOTO(assemble_rows(&ged, n, gdir, &G), fail);
    for (int64_t i = 0; i < n; ++i) gb[i] = gdir[i] ? 0.0 : ged.mass[i] * source(coords + 3 * i);
    ef_csr S = {n, G.row_ptr[n], G.row_ptr, NULL, G.col, G.val, NULL, o.neumann};
    EF_CALL_GOTO(ef_host_cg_create(n, &cg), fail);
    int sits = 0;
    double sres = 0.0;
    EF_CALL_GOTO(ef_host_cg_solve(cg, &S, gb, xs, o.rtol, o.max_it, &sits, &sres), fail);
    t_serial = ef_wtime() - t0;
    /* Neumann: the solutions are compared up to a constant (their means removed). */
    double dmax = 0.0, smax = 0.0, mg = 0.0, ms = 0.0;
    for (int64_t i = 0; o.neumann && i < n; ++i) {
      mg += xg[i] / (double)n;
      ms += xs[i] / (double)n;
    }
    for (int64_t i = 0; i < n; ++i) {
      const double g = xg[i] - mg, v = xs[i] - ms;
      if (fabs(g - v) > dmax) dmax = fabs(g - v);
      if (fabs(v) > smax) smax = fabs(v);
    }
    const double rel = smax > 0.0 ? dmax / smax : dmax;
    /* The rows: A v and the lumped mass of every node from its owner against the global ones. */
    double ydiff = 0.0, ymax = 0.0, mdiff = 0.0, mmax = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t k = G.row_ptr[i]; k < G.row_ptr[i + 1]; ++k) s += G.val[k] * source(coords + 3 * (int64_t)G.col[k]);
      if (fabs(yg[i] - s) > ydiff) ydiff = fabs(yg[i] - s);
      if (fabs(s) > ymax) ymax = fabs(s);
      if (fabs(yg[n + i] - ged.mass[i]) > mdiff) mdiff = fabs(yg[n + i] - ged.mass[i]);
      if (ged.mass[i] > mmax) mmax = ged.mass[i];
    }
    const double yrel = ymax > 0.0 ? ydiff / ymax : ydiff, mrel = mmax > 0.0 ? mdiff / mmax : mdiff;
    const int ok = rel <= o.max_diff && abs(its - sits) <= o.max_its_diff && yrel <= row_tol && mrel <= row_tol;
    printf("ef_mpi_check: %s (%dD, %lld nodes, %lld elements, %s) on %d ranks (%s communicator)\n",
           o.mesh ? o.mesh : (dim == 2 ? "box2d" : "box3d"), dim, (long long)n, (long long)ne,
           o.neumann ? "Neumann: constant null space" : "Dirichlet side x = max", size, ef_comm_name(comm));
    printf("  per rank: owned %.0f..%.0f, ghosts %.0f..%.0f, neighbours %.0f..%.0f, elements %.0f..%.0f\n",
           fig[0][0], fig[1][0], fig[0][1], fig[1][1], fig[0][2], fig[1][2], fig[0][3], fig[1][3]);
    printf("  partition %.3f s, edge data %.3f s, distributed CG %.3f s (slowest rank), serial %.3f s\n", times[0],
           times[1], times[2], t_serial);
    printf("  CG at rtol %.1e: %d iterations on %d ranks, %d serial (allowed difference %d); max |x_P - x_1| / "
           "max |x_1| = %.3e (allowed %.1e)\n",
           o.rtol, its, size, sits, o.max_its_diff, rel, o.max_diff);
    printf("  owned rows against the global rows: max |A v| difference %.3e, lumped mass %.3e (relative, allowed "
           "%.0e)\n",
           yrel, mrel, row_tol);
    printf("  halo exchange (1 and 3 components): every ghost holds its owner's value\n");
    printf("ef_mpi_check: %s\n", ok ? "PASSED" : "FAILED");
    verdict[0] = ok ? 0.0 : 1.0;
    verdict[1] = rel;
    verdict[2] = sits;
  }
  EF_CALL_GOTO(ef_comm_allreduce(comm, verdict, 3, EF_COMM_MAX), fail);
  fflush(stdout);

  ef_host_cg_destroy(&cg);
  rows_free(&A);
  rows_free(&G);
  ef_edge_data_free(&ed);
  ef_edge_data_free(&ged);
  ef_halo_destroy(&halo);
  ef_partition_free(&pt);
  ef_model_part_destroy(&mp);
  free(dir);
  free(gdir);
  free(b);
  free(x);
  free(xg);
  free(gb);
  free(xs);
  free(v3);
  free(yg);
  ef_comm_mpi_finalize(&comm);
  return verdict[0] > 0.0 ? 1 : 0;
fail:
  ef_comm_abort(comm, err, "%s", ef_error_message());
}

/* test_edge_identities.c -- identities the edge data must satisfy up to rounding, on a
 * jittered 2D triangle mesh and a jittered 3D tetrahedron mesh.
 *
 * Tolerance: 1e-12 relative to the magnitude of the terms involved (each check scales by
 * the sum of absolute values it adds up), i.e. a few thousand ulps for sums of ~30 terms
 * whose partial sums cancel; any layout or sign error is O(1) relative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "ef_test_mesh.h"

#define TOL 1e-12

#include "ef_test.h"

/* Boundary integral B_IJ = oint N_I N_J n over the faces that hold both I and J
 * (I == J allowed): |F|/12 (1 + delta) n on triangles, |F|/6 (1 + delta) n on segments. */
static void boundary_integral(const ef_test_mesh *m, int64_t i, int64_t j, double *out) {
  const int d = m->dim;
  out[0] = out[1] = out[2] = 0.0;
  for (int64_t f = 0; f < m->n_faces; ++f) {
    int hi = 0, hj = 0;
    for (int k = 0; k < d; ++k) {
      if (m->faces[f * d + k] == i) hi = 1;
      if (m->faces[f * d + k] == j) hj = 1;
    }
    if (!hi || !hj) continue;
    const double w = m->face_measure[f] * (d == 3 ? 1.0 / 12.0 : 1.0 / 6.0) * (i == j ? 2.0 : 1.0);
    for (int c = 0; c < 3; ++c) out[c] += w * m->face_normal[3 * f + c];
  }
}

/* oint N_I p n for a linear p, exactly: sum over faces of sum_k p_k int N_I N_k n. */
static void boundary_pressure(const ef_test_mesh *m, int64_t i, const double *p, double *out) {
  const int d = m->dim;
  out[0] = out[1] = out[2] = 0.0;
  for (int64_t f = 0; f < m->n_faces; ++f) {
    int has = 0;
    for (int k = 0; k < d; ++k)
      if (m->faces[f * d + k] == i) has = 1;
    if (!has) continue;
    double s = 0.0;
    for (int k = 0; k < d; ++k) {
      int32_t q = m->faces[f * d + k];
      s += p[q] * (q == i ? 2.0 : 1.0);
    }
    s *= m->face_measure[f] * (d == 3 ? 1.0 / 12.0 : 1.0 / 6.0);
    for (int c = 0; c < 3; ++c) out[c] += s * m->face_normal[3 * f + c];
  }
}

/* Faces of each node, so the boundary integrals stay cheap (list of face indices). */
static int64_t *node_faces_ptr, *node_faces;
/* Node -> boundary-face lists. */
static void build_node_faces(const ef_test_mesh *m) {
  node_faces_ptr = calloc((size_t)m->n_nodes + 1, sizeof(int64_t));
  node_faces = malloc((size_t)m->n_faces * m->dim * sizeof(int64_t));
  for (int64_t f = 0; f < m->n_faces * m->dim; ++f) node_faces_ptr[m->faces[f] + 1]++;
  for (int64_t i = 0; i < m->n_nodes; ++i) node_faces_ptr[i + 1] += node_faces_ptr[i];
  int64_t *fill = malloc((size_t)m->n_nodes * sizeof(int64_t));
  memcpy(fill, node_faces_ptr, (size_t)m->n_nodes * sizeof(int64_t));
  for (int64_t f = 0; f < m->n_faces; ++f)
    for (int k = 0; k < m->dim; ++k) node_faces[fill[m->faces[f * m->dim + k]]++] = f;
  free(fill);
}

/* The sub-mesh of faces touching node i, to pass to the boundary integral helpers. */
static ef_test_mesh faces_of(const ef_test_mesh *m, int64_t i, int32_t *fbuf, double *nbuf, double *abuf) {
  ef_test_mesh s = *m;
  int64_t c = 0;
  for (int64_t q = node_faces_ptr[i]; q < node_faces_ptr[i + 1] && c < 64; ++q, ++c) {
    int64_t f = node_faces[q];
    memcpy(fbuf + c * m->dim, m->faces + f * m->dim, (size_t)m->dim * sizeof(int32_t));
    memcpy(nbuf + 3 * c, m->face_normal + 3 * f, 3 * sizeof(double));
    abuf[c] = m->face_measure[f];
  }
  EXPECT(node_faces_ptr[i + 1] - node_faces_ptr[i] <= 64, "node %lld has more than 64 faces", (long long)i);
  s.n_faces = c;
  s.faces = fbuf;
  s.face_normal = nbuf;
  s.face_measure = abuf;
  return s;
}

/* L_II computed independently from the elements: sum_e |e| |grad N_I|^2. */
static void diagonal_laplacian(const ef_test_mesh *m, double *lii) {
  const int d = m->dim, npe = d + 1;
  memset(lii, 0, (size_t)m->n_nodes * sizeof *lii);
  for (int64_t e = 0; e < m->n_elements; ++e) {
    const int32_t *en = m->elements + e * npe;
    /* Gradients by solving the d x d system of edge vectors (independent of edge_data.c:
     * via the inverse computed with Cramer's rule on the transposed matrix). */
    double a[3][3] = {{0}}, g[4][3] = {{0}};
    for (int k = 0; k < d; ++k)
      for (int c = 0; c < d; ++c) a[k][c] = m->coords[3 * (int64_t)en[k + 1] + c] - m->coords[3 * (int64_t)en[0] + c];
    double det, vol;
    if (d == 2) {
      det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
      double inv[2][2] = {{a[1][1] / det, -a[0][1] / det}, {-a[1][0] / det, a[0][0] / det}};
      /* grad lambda_k = column k of inv(A) where A has the edge vectors as rows. */
      for (int k = 0; k < 2; ++k)
        for (int c = 0; c < 2; ++c) g[k + 1][c] = inv[c][k];
      vol = fabs(det) / 2.0;
    } else {
      double cof[3][3];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
          cof[r][c] = a[r1][c1] * a[r2][c2] - a[r1][c2] * a[r2][c1];
        }
      det = a[0][0] * cof[0][0] + a[0][1] * cof[0][1] + a[0][2] * cof[0][2];
      for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c) g[k + 1][c] = cof[k][c] / det;
      vol = fabs(det) / 6.0;
    }
    for (int c = 0; c < d; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    for (int l = 0; l < npe; ++l) {
      double s = 0.0;
      for (int c = 0; c < d; ++c) s += g[l][c] * g[l][c];
      lii[en[l]] += vol * s;
    }
  }
}

/* Every identity of the edge data on one mesh. */
static void check_mesh(const ef_test_mesh *m, const char *label) {
  const int d = m->dim, S = EF_EDGE_STRIDE(d);
  ef_edge_data ed;
  int err = ef_edge_data_build(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &ed);
  if (err) {
    fprintf(stderr, "%s: build failed: %s\n", label, ef_error_message());
    ++failures;
    return;
  }
  EXPECT(ed.stride == (d == 3 ? 16 : 9), "%s: stride %d", label, ed.stride);
  build_node_faces(m);
  int32_t fbuf[3 * 64];
  double nbuf[3 * 64], abuf[64];
  double *lii = malloc((size_t)m->n_nodes * sizeof *lii);
  diagonal_laplacian(m, lii);
  const double volume = d == 3 ? m->lx * m->ly * m->lz : m->lx * m->ly;
  /* Linear fields p = p0 + g.x. */
  const double gp[3] = {0.7, -1.3, d == 3 ? 2.1 : 0.0};
  double *p = malloc((size_t)m->n_nodes * sizeof *p);
  for (int64_t i = 0; i < m->n_nodes; ++i)
    p[i] = 0.4 + gp[0] * m->coords[3 * i] + gp[1] * m->coords[3 * i + 1] + gp[2] * m->coords[3 * i + 2];

  double msum = 0.0;
  for (int64_t i = 0; i < ed.n_nodes; ++i) msum += ed.mass[i];
  EXPECT(fabs(msum - volume) <= TOL * volume, "%s: sum M_II = %.17g, |Omega| = %.17g", label, msum, volume);
  EXPECT(fabs(ed.measure - volume) <= TOL * volume, "%s: measure %.17g", label, ed.measure);

  int64_t n_interior = 0, n_interior_edges = 0;
  for (int64_t i = 0; i < ed.n_nodes; ++i) {
    const int64_t r0 = ed.row_ptr[i], r1 = ed.row_ptr[i + 1];
    const int ne = (int)(r1 - r0);
    const int32_t *ci = ed.col + r0;
    const double *ev = ed.values + r0 * S;
    const int interior = node_faces_ptr[i + 1] == node_faces_ptr[i];
    n_interior += interior;
    ef_test_mesh sub = faces_of(m, i, fbuf, nbuf, abuf);
    for (int k = 1; k < ne; ++k) EXPECT(ci[k - 1] < ci[k], "%s: row %lld not sorted", label, (long long)i);

    double nsum[3] = {0, 0, 0}, nabs = 0.0, lsum = 0.0, labs = 0.0, mcoff = 0.0;
    for (int k = 0; k < ne; ++k) {
      const int64_t j = ci[k];
      const int64_t kj = ef_edge_data_find(&ed, j, i);
      EXPECT(kj >= 0, "%s: edge %lld-%lld has no reverse", label, (long long)i, (long long)j);
      if (kj < 0) continue;
      const double *evj = ed.values + ed.row_ptr[j] * S;
      const int k2 = (int)(kj - ed.row_ptr[j]);
      double scale = 0.0;
      for (int c = 0; c < d; ++c) scale += fabs(EF_EDGE_NABLA(ev, k, d, c));
      /* Packing: G_IJ = nabla_JI. */
      for (int c = 0; c < d; ++c)
        EXPECT(fabs(EF_EDGE_G(ev, k, d, c) - EF_EDGE_NABLA(evj, k2, d, c)) <= TOL * scale,
               "%s: G_IJ != nabla_JI at %lld-%lld", label, (long long)i, (long long)j);
      /* nabla_IJ + nabla_JI = oint N_I N_J n (zero unless a boundary face holds both). */
      double bij[3];
      boundary_integral(&sub, i, j, bij);
      int on_face = bij[0] != 0.0 || bij[1] != 0.0 || bij[2] != 0.0;
      if (!on_face) ++n_interior_edges;
      for (int c = 0; c < d; ++c)
        EXPECT(fabs(EF_EDGE_NABLA(ev, k, d, c) + EF_EDGE_NABLA(evj, k2, d, c) - bij[c]) <= TOL * scale,
               "%s: nabla_IJ + nabla_JI - oint N_I N_J n = %g at %lld-%lld (%s edge)", label,
               EF_EDGE_NABLA(ev, k, d, c) + EF_EDGE_NABLA(evj, k2, d, c) - bij[c], (long long)i, (long long)j,
               on_face ? "boundary" : "interior");
      /* L^d_JI = (L^d_IJ)^T. */
      double lscale = 0.0;
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) lscale += fabs(EF_EDGE_LD(ev, k, d, a, b));
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b)
          EXPECT(fabs(EF_EDGE_LD(ev, k, d, a, b) - EF_EDGE_LD(evj, k2, d, b, a)) <= TOL * lscale,
                 "%s: L^d not transposed at %lld-%lld", label, (long long)i, (long long)j);
      EXPECT(EF_EDGE_MC(ev, k, d) == EF_EDGE_MC(evj, k2, d) && EF_EDGE_MC(ev, k, d) > 0.0,
             "%s: consistent mass not symmetric/positive at %lld-%lld", label, (long long)i, (long long)j);
      for (int c = 0; c < d; ++c) nsum[c] += EF_EDGE_NABLA(ev, k, d, c);
      nabs += scale;
      double l = 0.0;
      for (int c = 0; c < d; ++c) l += EF_EDGE_LD(ev, k, d, c, c);
      lsum += l;
      labs += fabs(l);
      mcoff += EF_EDGE_MC(ev, k, d);
    }
    /* Partition of unity: nabla_II = -sum_{J!=I} nabla_IJ, and 0 inside. */
    for (int c = 0; c < d; ++c) {
      EXPECT(fabs(ed.nabla_diag[3 * i + c] + nsum[c]) <= TOL * nabs, "%s: nabla_II + sum nabla_IJ = %g at %lld",
             label, ed.nabla_diag[3 * i + c] + nsum[c], (long long)i);
      if (interior)
        EXPECT(fabs(ed.nabla_diag[3 * i + c]) <= TOL * nabs, "%s: nabla_II = %g at interior node %lld", label,
               ed.nabla_diag[3 * i + c], (long long)i);
    }
    /* nabla_II = oint N_I N_I n / 2 everywhere (boundary nodes too). */
    double bii[3];
    boundary_integral(&sub, i, i, bii);
    for (int c = 0; c < d; ++c)
      EXPECT(fabs(2.0 * ed.nabla_diag[3 * i + c] - bii[c]) <= TOL * nabs, "%s: 2 nabla_II != oint N_I^2 n at %lld",
             label, (long long)i);
    /* sum_J L_IJ = 0 with L_II from the elements. */
    EXPECT(fabs(lii[i] + lsum) <= TOL * (labs + fabs(lii[i])), "%s: L_II + sum L_IJ = %g at %lld", label,
           lii[i] + lsum, (long long)i);
    /* Off-diagonal share of the consistent mass row: 3/5 (3D), 1/2 (2D) of M_II. */
    const double share = d == 3 ? 0.6 : 0.5;
    EXPECT(fabs(mcoff - share * ed.mass[i]) <= TOL * ed.mass[i], "%s: sum_{J!=I} M^c_IJ = %g, M_II = %g at %lld",
           label, mcoff, ed.mass[i], (long long)i);
    EXPECT(fabs(ed.inv_mass[i] * ed.mass[i] - 1.0) <= 1e-15 * 4, "%s: 1/M_II", label);
    EXPECT(fabs(ed.h[i] - pow(ed.mass[i], 1.0 / d)) <= 1e-14 * ed.h[i], "%s: h_I", label);
    EXPECT(ed.hmin[i] > 0.0 && ed.hmin[i] <= 2.0 * ed.h[i], "%s: hmin %g vs h %g at %lld", label, ed.hmin[i],
           ed.h[i], (long long)i);

    /* Linear p: strong gradient exact everywhere; weak gradient = -M grad p + oint N_I p n;
     * Laplacian zero inside. */
    double sg[3], wg[3], bp[3];
    double pabs = 0.0;
    for (int k = 0; k < ne; ++k) pabs += fabs(p[ci[k]]) + fabs(p[i]);
    if (d == 3) {
      ef_row_strong_gradient(3, i, ne, ci, ev, p, sg);
      ef_row_weak_gradient(3, i, ne, ci, ev, p, wg);
    } else {
      ef_row_strong_gradient(2, i, ne, ci, ev, p, sg);
      ef_row_weak_gradient(2, i, ne, ci, ev, p, wg);
    }
    boundary_pressure(&sub, i, p, bp);
    const double gscale = nabs * pabs * ed.inv_mass[i] + 1e-300;
    for (int c = 0; c < d; ++c) {
      EXPECT(fabs(ed.inv_mass[i] * sg[c] - gp[c]) <= TOL * gscale,
             "%s: strong gradient %g != %g at node %lld (comp %d)", label, ed.inv_mass[i] * sg[c], gp[c],
             (long long)i, c);
      EXPECT(fabs(wg[c] - (-ed.mass[i] * gp[c] + bp[c])) <= TOL * nabs * pabs,
             "%s: weak gradient %g != -M grad p + oint N p n = %g at node %lld", label, wg[c],
             -ed.mass[i] * gp[c] + bp[c], (long long)i);
      if (interior)
        EXPECT(fabs(wg[c] + ed.mass[i] * gp[c]) <= TOL * nabs * pabs, "%s: weak gradient inside", label);
    }
    const double lap = ef_row_scalar_laplacian(d, i, ne, ci, ev, p);
    if (interior)
      EXPECT(fabs(lap) <= TOL * labs * pabs, "%s: Laplacian of a linear field = %g at interior node %lld", label,
             lap, (long long)i);
  }
  EXPECT(n_interior > 0 && n_interior_edges > 0, "%s: the mesh has no interior nodes/edges", label);

  /* Row blocks cover every row once and respect the size. */
  int64_t nb = 0;
  const int64_t max_doubles = (ed.n_edges * S) / 7 + ed.max_row * S;
  err = ef_edge_data_row_blocks(&ed, max_doubles, &nb, NULL);
  EXPECT(!err && nb >= 7 && nb <= 9, "%s: %lld row blocks", label, (long long)nb);
  int64_t *rb = malloc((size_t)(nb + 1) * sizeof *rb);
  err = ef_edge_data_row_blocks(&ed, max_doubles, &nb, rb);
  EXPECT(!err && rb[0] == 0 && rb[nb] == ed.n_nodes, "%s: row block ends", label);
  for (int64_t b = 0; b < nb && !err; ++b)
    EXPECT(rb[b] < rb[b + 1] && (ed.row_ptr[rb[b + 1]] - ed.row_ptr[rb[b]]) * S <= max_doubles,
           "%s: block %lld too large", label, (long long)b);
  EXPECT(ef_edge_data_row_blocks(&ed, S, &nb, NULL) == EF_ERR_PARAMETER, "%s: tiny blocks accepted", label);
  free(rb);

  free(p);
  free(lii);
  free(node_faces_ptr);
  free(node_faces);
  ef_edge_data_free(&ed);
  EXPECT(ed.values == NULL, "free did not reset");
}

/* A structure-only build holds the same arrays bitwise, no records, and computes records of any row range
 * bitwise equal to the full build's (exact: the same per-row code in the same order, so no tolerance). */
static void check_structure_only(const ef_test_mesh *m, const char *label) {
  const int d = m->dim;
  ef_edge_data ed, sd;
  if (ef_edge_data_build(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &ed) ||
      ef_edge_data_build_structure(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &sd)) {
    fprintf(stderr, "%s: build failed: %s\n", label, ef_error_message());
    ++failures;
    return;
  }
  const size_t n = (size_t)ed.n_nodes, E = (size_t)ed.n_edges, S = (size_t)ed.stride;
  EXPECT(!sd.values && sd.source && !ed.source, "%s: structure-only build kept records or lost its source", label);
  EXPECT(sd.dim == ed.dim && sd.stride == ed.stride && sd.n_nodes == ed.n_nodes && sd.n_edges == ed.n_edges &&
             sd.max_row == ed.max_row && sd.measure == ed.measure,
         "%s: structure-only sizes or measure differ", label);
  EXPECT(!memcmp(sd.row_ptr, ed.row_ptr, (n + 1) * 8) && !memcmp(sd.col, ed.col, E * 4) &&
             !memcmp(sd.mass, ed.mass, n * 8) && !memcmp(sd.inv_mass, ed.inv_mass, n * 8) &&
             !memcmp(sd.nabla_diag, ed.nabla_diag, 3 * n * 8) && !memcmp(sd.h, ed.h, n * 8) &&
             !memcmp(sd.hmin, ed.hmin, n * 8),
         "%s: structure-only arrays differ from the full build's", label);
  EXPECT(ef_edge_data_record_bytes(&sd) == E * S * 8 && ef_edge_data_record_bytes(&ed) == E * S * 8,
         "%s: record bytes", label);
  /* the adjacency and the element cache (the test meshes are far below its default limit) */
  const size_t adjacency = (n + 1 + (size_t)m->n_elements * (size_t)(d + 1)) * 8 + (size_t)m->n_elements * (d * d + 1) * 8;
  EXPECT(ef_edge_data_bytes(&sd) == ef_edge_data_bytes(&ed) - E * S * 8 + adjacency,
         "%s: host bytes of the structure-only build %zu, full %zu", label, ef_edge_data_bytes(&sd),
         ef_edge_data_bytes(&ed));

  /* Row ranges: the whole mesh, row blocks of odd sizes, single and empty ranges at both ends. */
  double *buf = malloc(E * S * sizeof *buf);
  const int64_t nn = ed.n_nodes, r[][2] = {{0, nn}, {0, 1}, {nn - 1, nn}, {0, 0}, {nn, nn}, {nn / 3, nn / 3 + 7}};
  for (size_t t = 0; t < sizeof r / sizeof r[0] && buf; ++t) {
    const size_t off = (size_t)ed.row_ptr[r[t][0]] * S, len = (size_t)(ed.row_ptr[r[t][1]] - ed.row_ptr[r[t][0]]) * S;
    for (int full = 0; full < 2; ++full) {
      memset(buf, 0xff, E * S * sizeof *buf);
      const int err = ef_edge_data_records(full ? &ed : &sd, r[t][0], r[t][1], buf);
      EXPECT(!err && !memcmp(buf, ed.values + off, len * 8), "%s: records of rows [%lld, %lld) (%s build) differ",
             label, (long long)r[t][0], (long long)r[t][1], full ? "full" : "structure-only");
      EXPECT(len == E * S || ((const unsigned char *)(buf + len))[0] == 0xff,
             "%s: records of rows [%lld, %lld) wrote past their end", label, (long long)r[t][0], (long long)r[t][1]);
    }
  }
  for (int64_t a = 0, step = 1; a < nn && buf; a += step, step = 2 * step + 1) { /* consecutive ranges */
    const int64_t b = a + step < nn ? a + step : nn;
    const size_t off = (size_t)ed.row_ptr[a] * S, len = (size_t)(ed.row_ptr[b] - ed.row_ptr[a]) * S;
    EXPECT(!ef_edge_data_records(&sd, a, b, buf) && !memcmp(buf, ed.values + off, len * 8),
           "%s: records of rows [%lld, %lld) differ", label, (long long)a, (long long)b);
  }
  EXPECT(buf && ef_edge_data_records(&sd, 2, 1, buf) == EF_ERR_PARAMETER &&
             ef_edge_data_records(&sd, 0, nn + 1, buf) == EF_ERR_PARAMETER &&
             ef_edge_data_records(&sd, 0, 1, NULL) == EF_ERR_PARAMETER,
         "%s: a bad row range or output accepted", label);
  ef_edge_data_release_source(&sd);
  ef_edge_data_release_source(&sd);
  EXPECT(!sd.source && ef_edge_data_bytes(&sd) == ef_edge_data_bytes(&ed) - E * S * 8,
         "%s: the source was not released", label);
  EXPECT(buf && ef_edge_data_records(&sd, 0, 1, buf) == EF_ERR_PARAMETER &&
             strstr(ef_error_message(), "neither kept nor computable"),
         "%s: records without source or values: %s", label, ef_error_message());
  free(buf);
  ef_edge_data_free(&sd);
  ef_edge_data_free(&ed);
}

/* The element cache changes no bit: full and structure-only builds and the latter's records with the cache and
 * without it (limit 0, and one byte below its size: the gradients recomputed per vertex) are memcmp-equal; only the
 * structure-only build's host bytes differ, by the cache's (dim^2 + 1) doubles per element. */
static void check_element_cache(const ef_test_mesh *m, const char *label) {
  const int d = m->dim;
  const size_t cache = (size_t)m->n_elements * (size_t)(d * d + 1) * 8;
  ef_edge_data a, sa, b[2], sb[2];
  int err = ef_edge_data_build(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &a) ||
            ef_edge_data_build_structure(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &sa);
  const size_t limits[2] = {0, cache - 1}, saved = ef_edge_data_set_cache_limit(limits[0]);
  for (int k = 0; k < 2 && !err; ++k) {
    ef_edge_data_set_cache_limit(limits[k]);
    err = ef_edge_data_build(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &b[k]) ||
          ef_edge_data_build_structure(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &sb[k]);
  }
  EXPECT(ef_edge_data_set_cache_limit(saved) == cache - 1 && saved == EF_EDGE_DATA_CACHE_LIMIT_DEFAULT,
         "%s: the cache limit was not kept", label);
  if (err) {
    fprintf(stderr, "%s: build failed: %s\n", label, ef_error_message());
    ++failures;
    return;
  }
  const size_t n = (size_t)a.n_nodes, E = (size_t)a.n_edges, S = (size_t)a.stride;
  double *rec = malloc(E * S * sizeof *rec);
  for (int k = 0; k < 2; ++k) {
    const ef_edge_data *x = &b[k];
    EXPECT(x->n_edges == a.n_edges && x->max_row == a.max_row && x->measure == a.measure &&
               !memcmp(x->row_ptr, a.row_ptr, (n + 1) * 8) && !memcmp(x->col, a.col, E * 4) &&
               !memcmp(x->values, a.values, E * S * 8) && !memcmp(x->mass, a.mass, n * 8) &&
               !memcmp(x->inv_mass, a.inv_mass, n * 8) && !memcmp(x->nabla_diag, a.nabla_diag, 3 * n * 8) &&
               !memcmp(x->h, a.h, n * 8) && !memcmp(x->hmin, a.hmin, n * 8) &&
               !memcmp(sb[k].mass, a.mass, n * 8) && !memcmp(sb[k].hmin, a.hmin, n * 8) &&
               !memcmp(sb[k].nabla_diag, a.nabla_diag, 3 * n * 8),
           "%s: the build without the element cache (limit %zu) differs from the one with it", label, limits[k]);
    EXPECT(ef_edge_data_bytes(&x[0]) == ef_edge_data_bytes(&a) &&
               ef_edge_data_bytes(&sa) == ef_edge_data_bytes(&sb[k]) + cache,
           "%s: host bytes with the cache %zu, without %zu (limit %zu), cache %zu", label, ef_edge_data_bytes(&sa),
           ef_edge_data_bytes(&sb[k]), limits[k], cache);
    for (int with = 0; with < 2 && rec; ++with) {
      memset(rec, 0xff, E * S * sizeof *rec);
      EXPECT(!ef_edge_data_records(with ? &sa : &sb[k], 0, a.n_nodes, rec) && !memcmp(rec, a.values, E * S * 8),
             "%s: records computed %s the element cache differ", label, with ? "with" : "without");
    }
    ef_edge_data_free(&b[k]);
    ef_edge_data_free(&sb[k]);
  }
  free(rec);
  ef_edge_data_free(&a);
  ef_edge_data_free(&sa);
}

/* Records computed ahead (ef_edge_data_records_ahead): all of them, the rows within half their bytes, none when
 * told to stop at once; every row range, within, across and past the rows computed ahead, copies the bits of
 * the full build. */
static int stop_now(void *unused) {
  (void)unused;
  return 1;
}

static void check_records_ahead(const ef_test_mesh *m, const char *label) {
  const int d = m->dim;
  ef_edge_data a;
  if (ef_edge_data_build(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &a)) {
    fprintf(stderr, "%s: build failed: %s\n", label, ef_error_message());
    ++failures;
    return;
  }
  const size_t E = (size_t)a.n_edges, S = (size_t)a.stride, total = E * S * 8;
  double *rec = malloc(total);
  for (int k = 0; k < 3 && rec; ++k) {
    ef_edge_data sa;
    if (ef_edge_data_build_structure(d, m->n_nodes, m->coords, m->n_elements, d + 1, m->elements, &sa)) {
      fprintf(stderr, "%s: build failed: %s\n", label, ef_error_message());
      ++failures;
      break;
    }
    const size_t before = ef_edge_data_bytes(&sa);
    EXPECT(!ef_edge_data_records_ahead(&sa, k == 1 ? total / 2 : total, k == 2 ? stop_now : NULL, NULL),
           "%s: records ahead failed: %s", label, ef_error_message());
    const int64_t ahead = ef_edge_data_rows_ahead(&sa);
    EXPECT(k == 0 ? ahead == a.n_nodes : k == 1 ? ahead > 0 && ahead < a.n_nodes && (size_t)a.row_ptr[ahead] * S * 8 <= total / 2
                                                  : ahead == 0,
           "%s: %lld of %lld rows computed ahead (case %d)", label, (long long)ahead, (long long)a.n_nodes, k);
    EXPECT(ef_edge_data_bytes(&sa) == before + (size_t)a.row_ptr[ahead] * S * 8, "%s: host bytes with %lld rows ahead",
           label, (long long)ahead);
    const int64_t mid = ahead > 1 ? ahead : a.n_nodes / 2;
    const int64_t ranges[4][2] = {{0, a.n_nodes}, {1, mid - 1 > 1 ? mid - 1 : 2}, {mid - 1, mid + 1 < a.n_nodes ? mid + 1 : a.n_nodes},
                                  {mid, a.n_nodes}};
    for (int r = 0; r < 4; ++r) {
      const int64_t r0 = ranges[r][0], r1 = ranges[r][1];
      const size_t len = (size_t)(a.row_ptr[r1] - a.row_ptr[r0]) * S;
      memset(rec, 0xff, total);
      EXPECT(!ef_edge_data_records(&sa, r0, r1, rec) && !memcmp(rec, a.values + a.row_ptr[r0] * S, len * 8),
             "%s: rows [%lld, %lld) with %lld rows computed ahead differ from the full build's", label, (long long)r0,
             (long long)r1, (long long)ahead);
    }
    ef_edge_data_free(&sa);
  }
  free(rec);
  ef_edge_data_free(&a);
}

/* Build errors: degenerate element and out-of-range node are refused with messages. */
static void check_errors(void) {
  double xy[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0};
  int32_t bad_range[3] = {0, 1, 7};
  int32_t degenerate[6] = {0, 1, 2, 0, 1, 3}; /* 0, 1, 3 are collinear */
  ef_edge_data ed;
  EXPECT(ef_edge_data_build(2, 4, xy, 1, 3, bad_range, &ed) == EF_ERR_MESH &&
             strstr(ef_error_message(), "element 0"),
         "out-of-range node not reported: %s", ef_error_message());
  EXPECT(ef_edge_data_build(2, 4, xy, 2, 3, degenerate, &ed) == EF_ERR_MESH && strstr(ef_error_message(), "element 1"),
         "degenerate element not reported: %s", ef_error_message());
  EXPECT(ef_edge_data_build(2, 4, xy, 1, 3, degenerate, &ed) == EF_ERR_MESH && strstr(ef_error_message(), "node 3"),
         "unused node not reported: %s", ef_error_message());
  EXPECT(ef_edge_data_build(3, 4, xy, 1, 3, degenerate, &ed) == EF_ERR_PARAMETER, "3D with triangles accepted");
  EXPECT(ef_edge_data_build_structure(2, 4, xy, 2, 3, degenerate, &ed) == EF_ERR_MESH &&
             strstr(ef_error_message(), "element 1") && !ed.row_ptr && !ed.source,
         "structure-only build: degenerate element not reported: %s", ef_error_message());
  EXPECT(ef_edge_data_build_structure(2, 4, xy, 1, 3, degenerate, &ed) == EF_ERR_MESH &&
             strstr(ef_error_message(), "node 3") && !ed.source,
         "structure-only build: unused node not reported: %s", ef_error_message());
  ef_edge_data_free(NULL);
  ef_edge_data_release_source(NULL);
}

/* Identities on a jittered 2D and 3D mesh, the structure-only build, the element cache and the build errors. */
int main(void) {
  ef_test_mesh m2, m3;
  if (ef_test_mesh_2d(13, 11, 1.3, 0.9, 0.25, 7, &m2) || ef_test_mesh_3d(7, 6, 5, 1.0, 0.8, 0.7, 0.2, 11, &m3)) {
    fprintf(stderr, "mesh generation failed\n");
    return 1;
  }
  check_mesh(&m2, "2D");
  check_mesh(&m3, "3D");
  check_structure_only(&m2, "2D");
  check_structure_only(&m3, "3D");
  check_element_cache(&m2, "2D");
  check_element_cache(&m3, "3D");
  check_records_ahead(&m2, "2D");
  check_records_ahead(&m3, "3D");
  check_errors();
  ef_test_mesh_free(&m2);
  ef_test_mesh_free(&m3);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}

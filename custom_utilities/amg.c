/* amg.c -- set-up of the aggregation multigrid hierarchy (see amg.h): pairwise matching on
 * negative couplings, aggregate maps, member lists, Galerkin patterns, memory figures, and
 * the dense coarsest inverse shared in spirit with the device kernel. */
#include "amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_util.h"

#include "amg_rows.h"
#include "ef_omp.h"
#include "host_dist.h"

/* Defaults of amg.h. */
void ef_amg_settings_default(ef_amg_settings *s) {
  s->max_levels = 10;
  s->coarse_enough = 128;
  s->passes = 3;
  s->strength = 0.25;
  s->coarse_strength = 0.0;
  s->omega = 4.0 / 3.0;
  s->alpha = 1.0;
  s->sweeps = 1;
  s->cycle = EF_AMG_CYCLE_K;
  s->kcycle_levels = 2;
  s->small_rows = 1024;
  s->small_group = 0;
  s->refresh_direct = 0; /* 254 places */
  s->gather_rows = 20000; /* across ranks on the device: the sub-hierarchy from the first level of <= 20k rows */
}

/* A work CSR of the set-up (int64 offsets, owned arrays). */
typedef struct {
  int64_t n, nnz;
  int64_t *rp;
  int32_t *col;
  double *val;
} amg_csr;

static void amg_csr_free(amg_csr *m) {
  free(m->rp);
  free(m->col);
  free(m->val);
  memset(m, 0, sizeof *m);
}

/* A read-only view of a CSR with int64 or int32 offsets. */
typedef struct {
  int64_t n;
  const int64_t *rp64;
  const int32_t *rp32;
  const int32_t *col;
  const double *val;
} amg_view;
#define AMG_RP(v, i) ((v)->rp64 ? (v)->rp64[i] : (int64_t)(v)->rp32[i])

/* Strongest candidate of row i: the neighbour k with mate[k] == want, -a_ik >= thr and -a_ik
 * largest (ties: the first in column order, the smallest index); -1 when none. */
static int32_t amg_strongest(const amg_view *A, int64_t i, double thr, const int32_t *mate, int32_t want) {
  int32_t best = -1;
  double bv = 0.0;
  for (int64_t j = AMG_RP(A, i); j < AMG_RP(A, i + 1); ++j) {
    const int32_t k = A->col[j];
    const double s = -A->val[j];
    if (k != i && s >= thr && s > bv && (want == -2 ? mate[k] == -2 : (mate[k] >= 0 && mate[k] != k))) {
      best = k;
      bv = s;
    }
  }
  return best;
}

#define AMG_MATCH_ROUNDS 8

/* One pairwise matching pass, parallel and deterministic (the same aggregates for any thread
 * count): in each round every unmatched row proposes its strongest unmatched negative
 * neighbour (-a_ik >= strength max_k(-a_ik)), and mutual proposals are matched; after the
 * rounds (or when no row can propose) a row left over joins the pair of its strongest
 * neighbour when it has one, else stays alone.  Rows with no off-diagonal entry get -1 when
 * drop_isolated.  Aggregates are numbered in the order of their smallest row.  work: 3 n ints,
 * thr: n doubles. */
static void amg_pairwise(const amg_view *A, double strength, int drop_isolated, int32_t *agg, int64_t *nc,
                         int32_t *work, double *thr) {
  const int64_t n = A->n;
  int32_t *mate = work, *prop = work + n, *lead = work + 2 * n;
  /* mate: -2 unmatched, -1 dropped, i alone, k its pair; prop: this round's proposal. */
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    double maxneg = 0.0;
    int has_off = 0;
    for (int64_t j = AMG_RP(A, i); j < AMG_RP(A, i + 1); ++j)
      if (A->col[j] != i && A->val[j] != 0.0) {
        has_off = 1;
        if (-A->val[j] > maxneg) maxneg = -A->val[j];
      }
    mate[i] = (!has_off && drop_isolated) ? -1 : maxneg > 0.0 ? -2 : (int32_t)i;
    thr[i] = strength * maxneg;
  }
  int progress = 1;
  for (int round = 0; round < AMG_MATCH_ROUNDS && progress; ++round) {
    /* A row still unmatched rescans only when its last proposal was matched to another row: the candidates only
     * shrink, so a proposal still unmatched is still the strongest and the first of the strongest in column order,
     * and a row that had none still has none (the same proposals as a rescan of every row). */
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      if (mate[i] != -2) {
        prop[i] = -1;
        continue;
      }
      if (round > 0 && (prop[i] < 0 || mate[prop[i]] == -2)) continue;
      prop[i] = amg_strongest(A, i, thr[i], mate, -2);
    }
    progress = 0;
    EF_OMP(omp parallel for schedule(static) reduction(| : progress))
    for (int64_t i = 0; i < n; ++i) {
      const int32_t k = prop[i];
      if (k >= 0 && prop[k] == (int32_t)i) {
        mate[i] = k; /* k sets mate[k] = i in the same loop: each row writes only itself */
        progress = 1;
      }
    }
  }
  /* Leftovers: join the strongest neighbouring pair (decided on the pairs alone), else alone. */
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    prop[i] = -1;
    if (mate[i] != -2) continue;
    const int32_t k = amg_strongest(A, i, thr[i], mate, 0);
    prop[i] = k >= 0 ? (k < mate[k] ? k : mate[k]) : (int32_t)i; /* the pair's smaller row, or itself */
  }
  /* Leader of each row (its aggregate's smallest row in pairs and singletons; the joined pair's). */
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    const int32_t m = mate[i];
    lead[i] = m == -1 ? -1 : m == -2 ? prop[i] : (m < (int32_t)i ? m : (int32_t)i);
  }
  /* Number the leaders in row order: counts per block, then offsets (deterministic). */
  const int64_t bs = ef_reduction_block_rows(n), nb = (n + bs - 1) / bs;
  int64_t cnt[1024 + 1];
  EF_OMP(omp parallel for schedule(static))
  for (int64_t b = 0; b < nb; ++b) {
    int64_t c = 0;
    const int64_t e = (b + 1) * bs < n ? (b + 1) * bs : n;
    for (int64_t i = b * bs; i < e; ++i) c += lead[i] == (int32_t)i;
    cnt[b + 1] = c;
  }
  cnt[0] = 0;
  for (int64_t b = 0; b < nb; ++b) cnt[b + 1] += cnt[b];
  EF_OMP(omp parallel for schedule(static))
  for (int64_t b = 0; b < nb; ++b) {
    int64_t c = cnt[b];
    const int64_t e = (b + 1) * bs < n ? (b + 1) * bs : n;
    for (int64_t i = b * bs; i < e; ++i) agg[i] = lead[i] == (int32_t)i ? (int32_t)c++ : -1;
  }
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i)
    if (lead[i] >= 0 && lead[i] != (int32_t)i) agg[i] = agg[lead[i]];
  *nc = cnt[nb];
}

/* Member lists of the aggregates: mp (nc + 1), mem (rows in aggregate order, rows ascending). */
static int amg_members(int64_t n, const int32_t *agg, int64_t nc, int32_t **mp_out, int32_t **mem_out) {
  int32_t *mp = calloc((size_t)nc + 1, sizeof *mp);
  int32_t *mem = malloc((size_t)(n > 0 ? n : 1) * sizeof *mem);
  int32_t *fill = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *fill);
  if (!mp || !mem || !fill) {
    free(mp);
    free(mem);
    free(fill);
    return EF_ERROR(EF_ERR_MEMORY, "AMG: out of memory for aggregate member lists");
  }
  for (int64_t i = 0; i < n; ++i)
    if (agg[i] >= 0) mp[agg[i] + 1]++;
  for (int64_t I = 0; I < nc; ++I) mp[I + 1] += mp[I];
  for (int64_t I = 0; I < nc; ++I) fill[I] = mp[I];
  for (int64_t i = 0; i < n; ++i)
    if (agg[i] >= 0) mem[fill[agg[i]]++] = (int32_t)i;
  free(fill);
  *mp_out = mp;
  *mem_out = mem;
  return EF_SUCCESS;
}

/* Insertion sort of a short row's columns. */
static void amg_sort_row(int32_t *c, int64_t len) {
  for (int64_t i = 1; i < len; ++i) {
    const int32_t v = c[i];
    int64_t j = i - 1;
    while (j >= 0 && c[j] > v) {
      c[j + 1] = c[j];
      --j;
    }
    c[j + 1] = v;
  }
}

/* Columns of coarse row I (unsorted) into out (NULL: count only); mark is this thread's
 * marker array (entries != I are free). */
static int64_t amg_coarse_row(const amg_view *A, const int32_t *agg, const int32_t *mp, const int32_t *mem,
                              int64_t I, int32_t *mark, int32_t *out) {
  int64_t cnt = 0;
  for (int32_t m = mp[I]; m < mp[I + 1]; ++m) {
    const int64_t i = mem[m];
    for (int64_t j = AMG_RP(A, i); j < AMG_RP(A, i + 1); ++j) {
      const int32_t J = agg[A->col[j]];
      if (J >= 0 && mark[J] != I) {
        mark[J] = (int32_t)I;
        if (out) out[cnt] = J;
        ++cnt;
      }
    }
  }
  return cnt;
}

/* Pattern and values of P^T A P for the aggregate map agg (nc aggregates, members mp/mem; the
 * coarse columns 0..ncol-1, ncol > nc when agg maps ghost columns to coarse ghosts); rows in
 * parallel (OpenMP), each with the same sums in the same order as the refresh.  One pass over the
 * members' rows finds each coarse row's columns and sorts them in a scratch list (its place: the
 * members' entries before it, an upper bound of its length), a second one sums the values. */
static int amg_galerkin(const amg_view *A, const int32_t *agg, int64_t nc, int64_t ncol, const int32_t *mp,
                        const int32_t *mem, amg_csr *C) {
  memset(C, 0, sizeof *C);
  int err = EF_SUCCESS, failed = 0;
  int64_t *ub = malloc((size_t)(nc + 1) * sizeof *ub);
  int32_t *tmp = NULL;
  C->rp = calloc((size_t)nc + 1, sizeof *C->rp);
  EF_CHECK_GOTO(C->rp && ub, EF_ERR_MEMORY, fail, "AMG: out of memory for a coarse pattern");
  ub[0] = 0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t I = 0; I < nc; ++I) {
    int64_t len = 0;
    for (int32_t m = mp[I]; m < mp[I + 1]; ++m) len += AMG_RP(A, mem[m] + 1) - AMG_RP(A, mem[m]);
    ub[I + 1] = len;
  }
  for (int64_t I = 0; I < nc; ++I) ub[I + 1] += ub[I];
  tmp = malloc((size_t)(ub[nc] > 0 ? ub[nc] : 1) * sizeof *tmp);
  EF_CHECK_GOTO(tmp, EF_ERR_MEMORY, fail, "AMG: out of memory for a coarse pattern");
  EF_OMP(omp parallel)
  {
    int32_t *mark = malloc((size_t)(ncol > 0 ? ncol : 1) * sizeof *mark);
    if (!mark) {
      EF_OMP(omp atomic write)
      failed = 1;
    } else {
      for (int64_t I = 0; I < ncol; ++I) mark[I] = -1;
      EF_OMP(omp for schedule(static))
      for (int64_t I = 0; I < nc; ++I) {
        const int64_t cnt = amg_coarse_row(A, agg, mp, mem, I, mark, tmp + ub[I]);
        amg_sort_row(tmp + ub[I], cnt);
        C->rp[I + 1] = cnt;
      }
    }
    free(mark);
  }
  EF_CHECK_GOTO(!failed, EF_ERR_MEMORY, fail, "AMG: out of memory for a coarse pattern");
  for (int64_t I = 0; I < nc; ++I) C->rp[I + 1] += C->rp[I];
  C->n = nc;
  C->nnz = C->rp[nc];
  C->col = malloc((size_t)(C->nnz > 0 ? C->nnz : 1) * sizeof *C->col);
  C->val = calloc((size_t)(C->nnz > 0 ? C->nnz : 1), sizeof *C->val);
  EF_CHECK_GOTO(C->col && C->val, EF_ERR_MEMORY, fail, "AMG: out of memory for a coarse matrix");
  EF_OMP(omp parallel)
  {
    /* pos[J]: J's place in the row being built (the refresh's binary search, found once per row: the same sums in
     * the same order); only the row's own columns are read. */
    int32_t *pos = malloc((size_t)(ncol > 0 ? ncol : 1) * sizeof *pos);
    if (!pos) {
      EF_OMP(omp atomic write)
      failed = 1;
    } else {
      EF_OMP(omp for schedule(static))
      for (int64_t I = 0; I < nc; ++I) {
        const int64_t cb = C->rp[I], ce = C->rp[I + 1];
        memcpy(C->col + cb, tmp + ub[I], (size_t)(ce - cb) * sizeof *C->col);
        for (int64_t k = cb; k < ce; ++k) pos[C->col[k]] = (int32_t)(k - cb);
        double *cv = C->val + cb;
        for (int32_t m = mp[I]; m < mp[I + 1]; ++m) {
          const int64_t i = mem[m];
          for (int64_t j = AMG_RP(A, i); j < AMG_RP(A, i + 1); ++j) {
            const int32_t J = agg[A->col[j]];
            if (J >= 0) cv[pos[J]] += A->val[j];
          }
        }
      }
    }
    free(pos);
  }
  EF_CHECK_GOTO(!failed, EF_ERR_MEMORY, fail, "AMG: out of memory for a coarse pattern");
  free(tmp);
  free(ub);
  return EF_SUCCESS;
fail:
  free(tmp);
  free(ub);
  amg_csr_free(C);
  return err;
}

/* Free every array of a level that the hierarchy owns. */
static void amg_level_free(ef_amg_level *L) {
  ef_host_dist_destroy(&L->halo);
  free(L->ghost_global);
  free(L->row_ptr);
  free(L->own_col);
  free(L->own_val);
  free(L->dinv);
  free(L->agg);
  free(L->mem_ptr);
  free(L->mem);
  free(L->cpos);
  free(L->r);
  free(L->x);
  free(L->t);
  free(L->v1);
  free(L->v2);
  free(L->w1);
  free(L->w2);
  free(L->q);
  memset(L, 0, sizeof *L);
}

/* The view of level l's matrix. */
static amg_view amg_level_view(const ef_amg_level *L) {
  amg_view v = {L->n, L->row_ptr64, L->row_ptr, L->col, L->val};
  return v;
}

/* Aggregate map of one level: `passes` pairwise passes, each on the Galerkin matrix of the
 * previous one, composed.  *nc: aggregates. */
static int amg_aggregate(const ef_amg_settings *s, const amg_view *A, int32_t *agg, int64_t *nc) {
  int err = EF_SUCCESS;
  amg_csr cur = {0};
  int32_t *a = malloc((size_t)(A->n > 0 ? A->n : 1) * sizeof *a);
  int32_t *work = malloc((size_t)(A->n > 0 ? A->n : 1) * 3 * sizeof *work);
  double *thr = malloc((size_t)(A->n > 0 ? A->n : 1) * sizeof *thr);
  int32_t *mp = NULL, *mem = NULL;
  if (!a || !work || !thr) {
    free(a);
    free(work);
    free(thr);
    return EF_ERROR(EF_ERR_MEMORY, "AMG: out of memory in the aggregation");
  }
  amg_view v = *A;
  int64_t n_cur = A->n;
  for (int p = 0; p < s->passes; ++p) {
    int64_t c = 0;
    amg_pairwise(&v, s->strength, p == 0, a, &c, work, thr);
    if (p == 0) memcpy(agg, a, (size_t)A->n * sizeof *agg);
    else
      for (int64_t i = 0; i < A->n; ++i) agg[i] = agg[i] >= 0 ? a[agg[i]] : -1;
    *nc = c;
    if (p + 1 == s->passes || c == 0 || c == n_cur) break;
    amg_csr next;
    err = amg_members(v.n, a, c, &mp, &mem);
    if (!err) err = amg_galerkin(&v, a, c, c, mp, mem, &next);
    free(mp);
    free(mem);
    mp = mem = NULL;
    if (err) break;
    amg_csr_free(&cur);
    cur = next;
    v = (amg_view){cur.n, cur.rp, NULL, cur.col, cur.val};
    n_cur = c;
  }
  amg_csr_free(&cur);
  free(a);
  free(work);
  free(thr);
  return err;
}

/* ---------------------------------------------------------------------------
 * Several ranks (docs/mpi.md): aggregates inside each rank's owned rows, coarse rows numbered
 * globally (each rank's aggregates one block, the blocks in rank order), the coarsest level
 * gathered on every rank. */

#define AMG_DIST_TAG 700 /* + level: the message tag of a level's halo exchange */

/* Aggregates of the owned rows of v (n owned rows, columns owned and ghost): the passes of
 * amg_aggregate on the owned block, couplings to ghosts left out; then a row left out there
 * that couples only to ghosts (it is no fixed-pressure row) becomes an aggregate of its own. */
static int amg_aggregate_owned(const ef_amg_settings *s, const amg_view *v, int32_t *agg, int64_t *nc) {
  const int64_t n = v->n;
  amg_csr B = {0};
  B.n = n;
  B.rp = malloc((size_t)(n + 1) * sizeof *B.rp);
  B.col = malloc((size_t)(AMG_RP(v, n) > 0 ? AMG_RP(v, n) : 1) * sizeof *B.col);
  B.val = malloc((size_t)(AMG_RP(v, n) > 0 ? AMG_RP(v, n) : 1) * sizeof *B.val);
  if (!B.rp || !B.col || !B.val) {
    amg_csr_free(&B);
    return EF_ERROR(EF_ERR_MEMORY, "AMG: out of memory for the owned block");
  }
  B.rp[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = B.rp[i];
    for (int64_t j = AMG_RP(v, i); j < AMG_RP(v, i + 1); ++j)
      if (v->col[j] < n) {
        B.col[k] = v->col[j];
        B.val[k++] = v->val[j];
      }
    B.rp[i + 1] = k;
  }
  B.nnz = B.rp[n];
  amg_view bv = {n, B.rp, NULL, B.col, B.val};
  int err = amg_aggregate(s, &bv, agg, nc);
  amg_csr_free(&B);
  if (err) return err;
  for (int64_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    for (int64_t j = AMG_RP(v, i); j < AMG_RP(v, i + 1); ++j)
      if (v->col[j] != i && v->val[j] != 0.0) {
        agg[i] = (int32_t)(*nc)++;
        break;
      }
  }
  return EF_SUCCESS;
}

static int amg_cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The sum over the ranks of v (nc owned aggregates here) and this rank's first coarse row. */
static int amg_dist_count(ef_comm comm, int64_t nc, int64_t *total, int64_t *first) {
  const int rank = ef_comm_rank(comm), size = ef_comm_size(comm);
  double *c = calloc((size_t)size, sizeof *c);
  EF_CHECK(c, EF_ERR_MEMORY, "AMG: out of memory");
  c[rank] = (double)nc;
  int err = ef_comm_allreduce(comm, c, size, EF_COMM_SUM);
  *total = *first = 0;
  for (int r = 0; !err && r < size; ++r) {
    if (r < rank) *first += (int64_t)c[r];
    *total += (int64_t)c[r];
  }
  free(c);
  return err;
}

/* Level C = the aggregates of F (nc owned here, first the first global one): F->agg extended
 * over F's ghost columns (their owners' aggregates, by one exchange of global numbers, as C's
 * ghost columns numbered nc.. in ascending global order), C's ghost rows and halo. */
static int amg_dist_coarse(ef_amg_level *F, ef_amg_level *C, int64_t nc, int64_t first, int64_t total, int level) {
  const int64_t n = F->n, ng = F->n_ghost;
  int err = EF_SUCCESS;
  double *g = malloc((size_t)(n + ng > 0 ? n + ng : 1) * sizeof *g);
  int64_t *u = malloc((size_t)(ng > 0 ? ng : 1) * sizeof *u);
  EF_CHECK_GOTO(g && u, EF_ERR_MEMORY, done, "AMG: out of memory for the coarse ghosts");
  for (int64_t i = 0; i < n; ++i) g[i] = F->agg[i] >= 0 ? (double)(first + F->agg[i]) : -1.0;
  EF_CALL_GOTO(ef_host_dist_exchange(F->halo, g), done);
  int64_t m = 0;
  for (int64_t k = 0; k < ng; ++k)
    if (g[n + k] >= 0.0) u[m++] = (int64_t)g[n + k];
  qsort(u, (size_t)m, sizeof *u, amg_cmp_i64);
  int64_t ncg = 0;
  for (int64_t k = 0; k < m; ++k)
    if (!ncg || u[k] != u[ncg - 1]) u[ncg++] = u[k];
  for (int64_t k = 0; k < ng; ++k) {
    if (g[n + k] < 0.0) {
      F->agg[n + k] = -1;
      continue;
    }
    const int64_t key = (int64_t)g[n + k];
    const int64_t *hit = bsearch(&key, u, (size_t)ncg, sizeof *u, amg_cmp_i64);
    F->agg[n + k] = (int32_t)(nc + (hit - u));
  }
  C->n_ghost = ncg;
  C->n_global = total;
  C->ghost_global = u;
  u = NULL;
  EF_CALL_GOTO(ef_host_dist_create(ef_host_dist_comm(F->halo), nc, ncg, C->ghost_global, AMG_DIST_TAG + level + 1,
                                   &C->halo),
               done);
done:
  free(g);
  free(u);
  return err;
}

/* The coarsest level's pattern gathered on every rank in the global numbering (h->g_rp, g_col;
 * each rank's rows from its first row on), and the arrays its values and right-hand side are
 * gathered into.  A reduction of zero-padded arrays gathers: each entry has one contributor. */
static int amg_dist_gather_pattern(ef_amg *h) {
  const ef_amg_level *L = &h->lev[h->n_levels - 1];
  const amg_view v = {L->n, L->row_ptr64, L->row_ptr, L->col, L->val};
  const int64_t nc = h->nc, first = ef_host_dist_first_row(L->halo);
  int err = EF_SUCCESS;
  double *len = calloc((size_t)nc, sizeof *len), *gc = NULL;
  h->g_rp = calloc((size_t)nc + 1, sizeof *h->g_rp);
  h->g_r = malloc((size_t)nc * sizeof *h->g_r);
  EF_CHECK_GOTO(len && h->g_rp && h->g_r, EF_ERR_MEMORY, done, "AMG: out of memory for the gathered level");
  for (int64_t I = 0; I < L->n; ++I) len[first + I] = (double)(AMG_RP(&v, I + 1) - AMG_RP(&v, I));
  EF_CALL_GOTO(ef_host_dist_sum(L->halo, len, (int)nc), done);
  for (int64_t I = 0; I < nc; ++I) h->g_rp[I + 1] = h->g_rp[I] + (int32_t)len[I];
  const int64_t nnz = h->g_rp[nc];
  gc = calloc((size_t)(nnz > 0 ? nnz : 1), sizeof *gc);
  h->g_col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *h->g_col);
  h->g_val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *h->g_val);
  EF_CHECK_GOTO(gc && h->g_col && h->g_val, EF_ERR_MEMORY, done, "AMG: out of memory for the gathered level");
  for (int64_t I = 0; I < L->n; ++I)
    for (int64_t j = AMG_RP(&v, I); j < AMG_RP(&v, I + 1); ++j) {
      const int32_t c = L->col[j];
      gc[h->g_rp[first + I] + (j - AMG_RP(&v, I))] = (double)(c < L->n ? first + c : L->ghost_global[c - L->n]);
    }
  EF_CALL_GOTO(ef_host_dist_sum(L->halo, gc, (int)nnz), done);
  for (int64_t k = 0; k < nnz; ++k) h->g_col[k] = (int32_t)gc[k];
done:
  free(len);
  free(gc);
  return err;
}

/* Build the hierarchy (amg.h); maps: the aggregate maps of the first n_maps levels, or NULL. */
static int amg_create(const ef_amg_settings *s, const ef_amg_matrix *A, const ef_amg_ranks *ranks, int n_maps,
                      int32_t *const *maps, ef_amg **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "ef_amg_create: NULL output");
  *out = NULL;
  EF_CHECK(s && A && A->row_ptr && A->col && A->val && A->n >= 1, EF_ERR_PARAMETER,
           "ef_amg_create: empty or NULL matrix");
  EF_CHECK(s->max_levels >= 1 && s->max_levels <= 32 && s->passes >= 1 && s->passes <= 4 &&
               s->omega > 0.0 && s->omega < 2.0 && s->alpha > 0.0 && s->sweeps >= 1 &&
               s->coarse_enough >= 1 && s->strength >= 0.0 && s->strength <= 1.0 && s->small_rows >= 0 &&
               s->small_rows <= 65536 && s->small_group >= 0 && s->small_group <= 65536,
           EF_ERR_PARAMETER,
           "AMG settings out of range: max_levels %d (1..32), passes %d (1..4), omega %g (0..2), "
           "alpha %g (> 0), sweeps %d (>= 1), coarse_enough %lld (>= 1), strength %g (0..1), small_rows %lld (0..65536), small_group %d (0..65536)",
           s->max_levels, s->passes, s->omega, s->alpha, s->sweeps, (long long)s->coarse_enough,
           s->strength, (long long)s->small_rows, s->small_group);
  EF_CHECK(A->n < INT32_MAX, EF_ERR_UNSUPPORTED, "AMG: %lld rows exceed int32 indices", (long long)A->n);
  double t0 = ef_wtime();
  /* Set-up phases in the timing table (the aggregation's passes include their own Galerkin products). */
  const int ev_aggregate = ef_log_event("setup", "AMG set-up: aggregation");
  const int ev_galerkin = ef_log_event("setup", "AMG set-up: members and Galerkin products");
  const int ev_rest = ef_log_event("setup", "AMG set-up: level vectors, host values");
  ef_amg *h = calloc(1, sizeof *h);
  EF_CHECK(h, EF_ERR_MEMORY, "AMG: out of memory");
  h->s = *s;
  h->constant_null_space = A->constant_null_space;
  int err = EF_SUCCESS;
  ef_amg_level *L0 = &h->lev[0];
  L0->n = A->n;
  L0->nnz = A->nnz;
  L0->row_ptr64 = A->row_ptr;
  L0->col = A->col;
  L0->val = A->val;
  L0->n_global = A->n;
  h->distributed = ranks && ef_comm_size(ranks->comm) > 1;
  if (h->distributed) { /* several ranks: level 0's halo from the global rows */
    EF_CHECK_GOTO(ranks->global_row && ranks->n_ghost >= 0, EF_ERR_PARAMETER, fail,
                  "AMG: a matrix of several ranks without global rows");
    L0->n_ghost = ranks->n_ghost;
    L0->ghost_global = malloc((size_t)(ranks->n_ghost > 0 ? ranks->n_ghost : 1) * sizeof *L0->ghost_global);
    EF_CHECK_GOTO(L0->ghost_global, EF_ERR_MEMORY, fail, "AMG: out of memory");
    memcpy(L0->ghost_global, ranks->global_row + A->n, (size_t)ranks->n_ghost * sizeof *L0->ghost_global);
    EF_CALL_GOTO(ef_host_dist_create(ranks->comm, A->n, ranks->n_ghost, L0->ghost_global, AMG_DIST_TAG, &L0->halo),
                 fail);
    L0->n_global = ef_host_dist_global_rows(L0->halo);
  }
  h->n_levels = 1;
  while (maps ? h->n_levels - 1 < n_maps
              : (h->n_levels < s->max_levels && h->lev[h->n_levels - 1].n_global > s->coarse_enough)) {
    ef_amg_level *F = &h->lev[h->n_levels - 1], *C = &h->lev[h->n_levels];
    amg_view v = amg_level_view(F);
    F->agg = malloc((size_t)(F->n + F->n_ghost > 0 ? F->n + F->n_ghost : 1) * sizeof *F->agg);
    EF_CHECK_GOTO(F->agg, EF_ERR_MEMORY, fail, "AMG: out of memory for an aggregate map");
    int64_t nc = 0;
    if (maps) { /* a saved map: entries -1 or 0..nc-1, every aggregate used */
      const int32_t *m = maps[h->n_levels - 1];
      for (int64_t i = 0; i < F->n; ++i) {
        EF_CHECK_GOTO(m[i] >= -1 && m[i] < F->n, EF_ERR_PARSE, fail, "AMG: saved aggregate map %d is damaged",
                      h->n_levels - 1);
        F->agg[i] = m[i];
        if (m[i] + 1 > nc) nc = m[i] + 1;
      }
      EF_CHECK_GOTO(nc > 0 || h->distributed, EF_ERR_PARSE, fail, "AMG: saved aggregate map %d is empty",
                    h->n_levels - 1); /* several ranks: a rank may own no aggregate of a coarse level */
    } else {
      ef_amg_settings sl = *s; /* coarse levels: every negative coupling is strong (see amg.h) */
      if (h->n_levels > 1) sl.strength = s->coarse_strength;
      ef_log_event_begin(ev_aggregate);
      err = h->distributed ? amg_aggregate_owned(&sl, &v, F->agg, &nc) : amg_aggregate(&sl, &v, F->agg, &nc);
      ef_log_event_end(ev_aggregate);
      if (err) goto fail;
    }
    int64_t nc_total = nc, nc_first = 0; /* several ranks: over all of them, and this rank's first */
    if (h->distributed) EF_CALL_GOTO(amg_dist_count(ranks->comm, nc, &nc_total, &nc_first), fail);
    if (!maps && (nc_total == 0 || 4 * nc_total > 3 * F->n_global)) { /* coarsening by less than 4/3 stalls: F stays the coarsest */
      free(F->agg);
      F->agg = NULL;
      break;
    }
    C->n_global = nc_total;
    if (h->distributed) EF_CALL_GOTO(amg_dist_coarse(F, C, nc, nc_first, nc_total, h->n_levels - 1), fail);
    amg_csr Cm;
    ef_log_event_begin(ev_galerkin);
    err = amg_members(F->n, F->agg, nc, &F->mem_ptr, &F->mem);
    if (!err) err = amg_galerkin(&v, F->agg, nc, nc + C->n_ghost, F->mem_ptr, F->mem, &Cm);
    ef_log_event_end(ev_galerkin);
    if (err) goto fail;
    EF_CHECK_GOTO(Cm.nnz < INT32_MAX, EF_ERR_UNSUPPORTED, fail, "AMG: coarse matrix too large");
    C->n = Cm.n;
    C->nnz = Cm.nnz;
    C->row_ptr = malloc((size_t)(Cm.n + 1) * sizeof *C->row_ptr);
    if (!C->row_ptr) {
      amg_csr_free(&Cm);
      err = EF_ERROR(EF_ERR_MEMORY, "AMG: out of memory");
      goto fail;
    }
    for (int64_t I = 0; I <= Cm.n; ++I) C->row_ptr[I] = (int32_t)Cm.rp[I];
    free(Cm.rp);
    C->col = C->own_col = Cm.col;
    C->val = C->own_val = Cm.val;
    h->n_levels++;
  }
  ef_log_event_begin(ev_rest);
  ef_amg_level *Lc = &h->lev[h->n_levels - 1];
  h->nc = Lc->n_global;
  EF_CHECK_GOTO(h->nc <= 4096, EF_ERR_UNSUPPORTED, fail,
                "AMG: the coarsest level has %lld rows (coarsening stalled or max_levels too small); "
                "the dense coarsest solve allows at most 4096", (long long)h->nc);
  h->coarse_inv = malloc((size_t)(h->nc * h->nc) * sizeof *h->coarse_inv);
  EF_CHECK_GOTO(h->coarse_inv, EF_ERR_MEMORY, fail, "AMG: out of memory for the coarsest inverse");
  if (h->distributed) EF_CALL_GOTO(amg_dist_gather_pattern(h), fail);
  for (int l = 0; l < h->n_levels; ++l) {
    ef_amg_level *L = &h->lev[l];
    size_t n = (size_t)(L->n + L->n_ghost > 0 ? L->n + L->n_ghost : 1); /* vectors: owned and ghost rows */
    L->dinv = malloc(n * sizeof *L->dinv);
    L->r = malloc(n * sizeof *L->r);
    L->x = malloc(n * sizeof *L->x);
    L->t = malloc(n * sizeof *L->t);
    L->v1 = malloc(n * sizeof *L->v1);
    L->v2 = malloc(n * sizeof *L->v2);
    L->w1 = malloc(n * sizeof *L->w1);
    L->w2 = malloc(n * sizeof *L->w2);
    L->q = malloc(n * sizeof *L->q);
    EF_CHECK_GOTO(L->dinv && L->r && L->x && L->t && L->v1 && L->v2 && L->w1 && L->w2 && L->q, EF_ERR_MEMORY,
                  fail, "AMG: out of memory for level vectors");
  }
  EF_CALL_GOTO(ef_amg_refresh_host_part(h, NULL, 0), fail); /* the Galerkin products made the coarse values */
  ef_log_event_end(ev_rest);
  h->setup_seconds = ef_wtime() - t0;
  *out = h;
  return EF_SUCCESS;
fail:
  ef_amg_destroy(&h);
  return err;
}

int ef_amg_create(const ef_amg_settings *s, const ef_amg_matrix *A, ef_amg **out) {
  return amg_create(s, A, NULL, 0, NULL, out);
}

int ef_amg_create_from_maps(const ef_amg_settings *s, const ef_amg_matrix *A, int n_maps, int32_t *const *maps,
                            ef_amg **out) {
  EF_CHECK(n_maps >= 0 && n_maps < 32 && (maps || n_maps == 0), EF_ERR_PARAMETER, "AMG: bad saved maps");
  return amg_create(s, A, NULL, n_maps, maps, out);
}

int ef_amg_create_ranks(const ef_amg_settings *s, const ef_amg_matrix *A, const ef_amg_ranks *ranks, int n_maps,
                        int32_t *const *maps, ef_amg **out) {
  EF_CHECK(n_maps >= 0 && n_maps < 32 && (maps || n_maps == 0), EF_ERR_PARAMETER, "AMG: bad saved maps");
  return amg_create(s, A, ranks, maps ? n_maps : 0, maps, out);
}

/* Free the hierarchy. */
void ef_amg_destroy(ef_amg **h) {
  if (!h || !*h) return;
  for (int l = 0; l < 32; ++l) amg_level_free(&(*h)->lev[l]);
  free((*h)->coarse_inv);
  free((*h)->g_rp);
  free((*h)->g_col);
  free((*h)->g_val);
  free((*h)->g_r);
  free(*h);
  *h = NULL;
}

/* Hierarchy and fine-matrix bytes as amg.h states them. */
void ef_amg_memory(const ef_amg *h, double *hierarchy_bytes, double *fine_bytes, double *work_bytes,
                   double *operator_complexity) {
  double hier = 0.0, work = 0.0, nnz = 0.0;
  const ef_amg_level *L0 = &h->lev[0];
  double fine = (L0->nnz < INT32_MAX ? 4.0 : 8.0) * (double)(L0->n + 1) + 12.0 * (double)L0->nnz;
  for (int l = 0; l < h->n_levels; ++l) {
    const ef_amg_level *L = &h->lev[l];
    nnz += (double)L->nnz;
    if (l > 0) hier += 4.0 * (double)(L->n + 1) + 12.0 * (double)L->nnz;
    hier += 8.0 * (double)L->n; /* dinv */
    if (l + 1 < h->n_levels)    /* agg, members, member offsets */
      hier += 8.0 * (double)L->n + 4.0 * (double)(h->lev[l + 1].n + 1);
    work += (l == 0 ? 1.0 : 8.0) * 8.0 * (double)L->n;
  }
  hier += 8.0 * (double)h->nc * (double)h->nc;
  if (hierarchy_bytes) *hierarchy_bytes = hier;
  if (fine_bytes) *fine_bytes = fine;
  if (work_bytes) *work_bytes = work;
  if (operator_complexity) *operator_complexity = nnz / (double)L0->nnz;
}

/* W = A_c (+ beta 1 1^T). */
void ef_amg_dense_fill(int64_t nc, const int32_t *rp, const int32_t *col, const double *val,
                       int null_space, double *W) {
  double tr = 0.0;
  for (int64_t i = 0; i < nc * nc; ++i) W[i] = 0.0;
  for (int64_t i = 0; i < nc; ++i)
    for (int32_t j = rp[i]; j < rp[i + 1]; ++j) {
      W[i * nc + col[j]] = val[j];
      if (col[j] == i) tr += val[j];
    }
  if (null_space) {
    const double beta = tr / ((double)nc * (double)nc);
    for (int64_t i = 0; i < nc * nc; ++i) W[i] += beta;
  }
}

/* In-place Gauss-Jordan inverse (no pivoting: SPD), then W = (W + W^T) / 2. */
int ef_amg_dense_invert(int64_t nc, double *W) {
  for (int64_t k = 0; k < nc; ++k) {
    const double p = W[k * nc + k];
    EF_CHECK(p > 0.0 && isfinite(p), EF_ERR_SOLVER,
             "AMG: the coarsest matrix (%lld rows) is not positive definite (pivot %lld is %g)",
             (long long)nc, (long long)k, p);
    const double ip = 1.0 / p;
    W[k * nc + k] = 1.0;
    for (int64_t j = 0; j < nc; ++j) W[k * nc + j] *= ip;
    for (int64_t i = 0; i < nc; ++i) {
      if (i == k) continue;
      const double f = W[i * nc + k];
      W[i * nc + k] = 0.0;
      for (int64_t j = 0; j < nc; ++j) W[i * nc + j] -= f * W[k * nc + j];
    }
  }
  for (int64_t i = 0; i < nc; ++i)
    for (int64_t j = i + 1; j < nc; ++j) {
      const double a = 0.5 * (W[i * nc + j] + W[j * nc + i]);
      W[i * nc + j] = W[j * nc + i] = a;
    }
  return EF_SUCCESS;
}

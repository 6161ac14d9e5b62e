/* host_dist.c -- rows of a host vector over the ranks, and their halo exchange (host_dist.h). */
#include "host_dist.h"

#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"

struct ef_host_dist_s {
  ef_comm comm;
  int tag;
  int64_t n_owned, n_ghost, first, n_global;
  int n_peers;
  int *peers;             /* ranks, ascending */
  int64_t *send_count, *recv_count;
  int64_t *send_off;      /* n_peers + 1 */
  int64_t *recv_off;      /* n_peers + 1 */
  int64_t *send_idx;      /* owned local rows sent, peer by peer */
  int64_t *recv_idx;      /* ghost local rows (n_owned + k) received, peer by peer */
  double *send_buf, *recv_buf;
  double **send_ptr, **recv_ptr;
};

void ef_host_dist_destroy(ef_host_dist **dp) {
  if (!dp || !*dp) return;
  ef_host_dist *d = *dp;
  free(d->peers);
  free(d->send_count);
  free(d->recv_count);
  free(d->send_off);
  free(d->recv_off);
  free(d->send_idx);
  free(d->recv_idx);
  free(d->send_buf);
  free(d->recv_buf);
  free(d->send_ptr);
  free(d->recv_ptr);
  free(d);
  *dp = NULL;
}

/* The rank whose block [off[r], off[r+1]) holds global row g (off ascending, size + 1 entries). */
static int dist_owner(const int64_t *off, int size, int64_t g) {
  int lo = 0, hi = size - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (off[mid] <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* One exchange of the per-peer buffers (counts per peer). */
static int dist_exchange(ef_host_dist *d, double *const *send, const int64_t *send_count, double *const *recv,
                         const int64_t *recv_count) {
  void *pending = NULL;
  EF_CALL(ef_comm_exchange_begin(d->comm, d->n_peers, d->peers, send, send_count, recv, recv_count, d->tag,
                                 &pending));
  return ef_comm_exchange_end(d->comm, pending);
}

int ef_host_dist_create(ef_comm comm, int64_t n_owned, int64_t n_ghost, const int64_t *ghost_global, int tag,
                        ef_host_dist **out) {
  EF_CHECK(out && n_owned >= 0 && n_ghost >= 0 && (ghost_global || !n_ghost), EF_ERR_PARAMETER,
           "distributed rows: bad arguments");
  *out = NULL;
  const int rank = ef_comm_rank(comm), size = ef_comm_size(comm);
  int err = EF_SUCCESS;
  int64_t *off = calloc((size_t)size + 1, sizeof *off);
  double *tab = calloc((size_t)size * (size_t)size, sizeof *tab), *cnt = calloc((size_t)size, sizeof *cnt);
  int *owner = malloc((size_t)(n_ghost > 0 ? n_ghost : 1) * sizeof *owner);
  ef_host_dist *d = calloc(1, sizeof *d);
  EF_CHECK_GOTO(off && tab && cnt && owner && d, EF_ERR_MEMORY, fail, "distributed rows: out of memory");
  d->comm = comm;
  d->tag = tag;
  d->n_owned = n_owned;
  d->n_ghost = n_ghost;
  /* Blocks in rank order: offsets from the owned counts. */
  cnt[rank] = (double)n_owned;
  EF_CALL_GOTO(ef_comm_allreduce(comm, cnt, size, EF_COMM_SUM), fail);
  for (int r = 0; r < size; ++r) off[r + 1] = off[r] + (int64_t)cnt[r];
  d->first = off[rank];
  d->n_global = off[size];
  /* Owners of the ghosts, and the symmetric peer table. */
  for (int64_t k = 0; k < n_ghost; ++k) {
    const int64_t g = ghost_global[k];
    EF_CHECK_GOTO(g >= 0 && g < d->n_global && (g < d->first || g >= d->first + n_owned), EF_ERR_PARAMETER, fail,
                  "distributed rows: ghost %lld has global row %lld, not another rank's (%lld rows)", (long long)k,
                  (long long)g, (long long)d->n_global);
    owner[k] = dist_owner(off, size, g);
    tab[(size_t)rank * (size_t)size + (size_t)owner[k]] = 1.0;
  }
  EF_CALL_GOTO(ef_comm_allreduce(comm, tab, size * size, EF_COMM_MAX), fail);
  d->peers = malloc((size_t)size * sizeof *d->peers);
  EF_CHECK_GOTO(d->peers, EF_ERR_MEMORY, fail, "distributed rows: out of memory");
  for (int r = 0; r < size; ++r)
    if (r != rank && (tab[(size_t)rank * (size_t)size + (size_t)r] > 0.0 || tab[(size_t)r * (size_t)size + (size_t)rank] > 0.0))
      d->peers[d->n_peers++] = r;
  const int np = d->n_peers, npa = np > 0 ? np : 1;
  d->send_count = calloc((size_t)npa, sizeof *d->send_count);
  d->recv_count = calloc((size_t)npa, sizeof *d->recv_count);
  d->send_off = calloc((size_t)npa + 1, sizeof *d->send_off);
  d->recv_off = calloc((size_t)npa + 1, sizeof *d->recv_off);
  d->send_ptr = calloc((size_t)npa, sizeof *d->send_ptr);
  d->recv_ptr = calloc((size_t)npa, sizeof *d->recv_ptr);
  d->recv_idx = malloc((size_t)(n_ghost > 0 ? n_ghost : 1) * sizeof *d->recv_idx);
  double *want = calloc((size_t)npa, sizeof *want), *give = calloc((size_t)npa, sizeof *give);
  double **wp = calloc((size_t)npa, sizeof *wp), **gp = calloc((size_t)npa, sizeof *gp);
  int64_t *one = malloc((size_t)npa * sizeof *one);
  double *reqd = NULL, *asked = NULL;
  EF_CHECK_GOTO(d->send_count && d->recv_count && d->send_off && d->recv_off && d->send_ptr && d->recv_ptr &&
                    d->recv_idx && want && give && wp && gp && one,
                EF_ERR_MEMORY, done, "distributed rows: out of memory");
  /* The ghosts peer by peer (the order of the request, and so of the values received). */
  for (int k = 0; k < np; ++k) {
    one[k] = 1;
    for (int64_t g = 0; g < n_ghost; ++g)
      if (owner[g] == d->peers[k]) d->recv_idx[d->recv_off[k] + d->recv_count[k]++] = n_owned + g;
    d->recv_off[k + 1] = d->recv_off[k] + d->recv_count[k];
    want[k] = (double)d->recv_count[k];
    wp[k] = want + k;
    gp[k] = give + k;
  }
  EF_CHECK_GOTO(d->recv_off[np] == n_ghost, EF_ERR_PARAMETER, done, "distributed rows: a ghost without a peer");
  err = dist_exchange(d, wp, one, gp, one);
  if (err) goto done;
  for (int k = 0; k < np; ++k) {
    d->send_count[k] = (int64_t)give[k];
    d->send_off[k + 1] = d->send_off[k] + d->send_count[k];
  }
  const int64_t ns = d->send_off[np];
  reqd = malloc((size_t)(n_ghost > 0 ? n_ghost : 1) * sizeof *reqd);
  asked = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *asked);
  d->send_idx = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *d->send_idx);
  d->send_buf = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *d->send_buf);
  d->recv_buf = malloc((size_t)(n_ghost > 0 ? n_ghost : 1) * sizeof *d->recv_buf);
  EF_CHECK_GOTO(reqd && asked && d->send_idx && d->send_buf && d->recv_buf, EF_ERR_MEMORY, done,
                "distributed rows: out of memory");
  for (int64_t j = 0; j < n_ghost; ++j) reqd[j] = (double)ghost_global[d->recv_idx[j] - n_owned];
  for (int k = 0; k < np; ++k) {
    wp[k] = reqd + d->recv_off[k];
    gp[k] = asked + d->send_off[k];
    d->send_ptr[k] = d->send_buf + d->send_off[k];
    d->recv_ptr[k] = d->recv_buf + d->recv_off[k];
  }
  err = dist_exchange(d, wp, d->recv_count, gp, d->send_count);
  if (err) goto done;
  for (int64_t j = 0; j < ns; ++j) {
    const int64_t i = (int64_t)asked[j] - d->first;
    EF_CHECK_GOTO(i >= 0 && i < n_owned, EF_ERR_PARAMETER, done,
                  "distributed rows: a peer asked for global row %lld, not owned here", (long long)asked[j]);
    d->send_idx[j] = i;
  }
done:
  free(want);
  free(give);
  free(wp);
  free(gp);
  free(one);
  free(reqd);
  free(asked);
  if (err) goto fail;
  free(off);
  free(tab);
  free(cnt);
  free(owner);
  *out = d;
  return EF_SUCCESS;
fail:
  free(off);
  free(tab);
  free(cnt);
  free(owner);
  ef_host_dist_destroy(&d);
  return err;
}

int ef_host_dist_from_matrix(const ef_matrix *A, int tag, ef_host_dist **out) {
  EF_CHECK(A && out, EF_ERR_PARAMETER, "distributed rows: NULL argument");
  *out = NULL;
  if (ef_comm_size(A->layout.comm) <= 1) return EF_SUCCESS;
  EF_CHECK(A->global_row, EF_ERR_PARAMETER, "distributed rows: a matrix of several ranks without global rows");
  return ef_host_dist_create(A->layout.comm, A->layout.n_owned, A->layout.n_ghost, A->global_row + A->layout.n_owned,
                             tag, out);
}

int ef_host_dist_exchange(ef_host_dist *d, double *x) {
  if (!d) return EF_SUCCESS;
  const int64_t ns = d->send_off[d->n_peers];
  for (int64_t j = 0; j < ns; ++j) d->send_buf[j] = x[d->send_idx[j]];
  EF_CALL(dist_exchange(d, d->send_ptr, d->send_count, d->recv_ptr, d->recv_count));
  for (int64_t j = 0; j < d->n_ghost; ++j) x[d->recv_idx[j]] = d->recv_buf[j];
  return EF_SUCCESS;
}

int ef_host_dist_sum(const ef_host_dist *d, double *values, int n) {
  return d ? ef_comm_allreduce(d->comm, values, n, EF_COMM_SUM) : EF_SUCCESS;
}

int64_t ef_host_dist_global_rows(const ef_host_dist *d) { return d ? d->n_global : -1; }
int64_t ef_host_dist_first_row(const ef_host_dist *d) { return d ? d->first : 0; }
int64_t ef_host_dist_ghost_rows(const ef_host_dist *d) { return d ? d->n_ghost : 0; }
ef_comm ef_host_dist_comm(const ef_host_dist *d) { return d ? d->comm : NULL; }

void ef_host_dist_plan(const ef_host_dist *d, int *n_peers, const int **peers, const int64_t **send_count,
                       const int64_t **send_idx, const int64_t **recv_count, const int64_t **recv_idx, int *tag) {
  *n_peers = d ? d->n_peers : 0;
  *peers = d ? d->peers : NULL;
  *send_count = d ? d->send_count : NULL;
  *send_idx = d ? d->send_idx : NULL;
  *recv_count = d ? d->recv_count : NULL;
  *recv_idx = d ? d->recv_idx : NULL;
  *tag = d ? d->tag : 0;
}

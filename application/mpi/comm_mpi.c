/* comm_mpi.c -- ef_comm_ops over MPI (ef_comm_mpi.h). */
#include "ef_comm_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "edgeflow/ef_error.h"

typedef struct {
  MPI_Comm comm;
} ef_mpi_context;

/* 1 when ef_comm_mpi_init called MPI_Init (and ef_comm_mpi_finalize calls MPI_Finalize). */
static int ef_mpi_initialized_here;

/* The pending requests of one exchange. */
typedef struct {
  int n;
  MPI_Request *requests;
} ef_mpi_pending;

static int ef_mpi_fail(int rc, const char *file, int line, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) text[0] = '\0';
  return ef_error_set(EF_ERR_COMM, file, line, "%s failed: %s (MPI error %d)", what, text, rc);
}

#define EF_MPI_CALL(call)                                                 \
  do {                                                                    \
    int ef_mpi_rc_ = (call);                                              \
    if (ef_mpi_rc_ != MPI_SUCCESS) return ef_mpi_fail(ef_mpi_rc_, __FILE__, __LINE__, #call); \
  } while (0)

static int mpi_allreduce(void *context, double *values, int n, ef_comm_op op) {
  ef_mpi_context *c = context;
  MPI_Op mop = op == EF_COMM_SUM ? MPI_SUM : op == EF_COMM_MIN ? MPI_MIN : MPI_MAX;
  EF_MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, mop, c->comm));
  return EF_SUCCESS;
}

static int mpi_barrier(void *context) {
  ef_mpi_context *c = context;
  EF_MPI_CALL(MPI_Barrier(c->comm));
  return EF_SUCCESS;
}

static void mpi_abort(void *context, int code) {
  (void)context;
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
}

static int mpi_exchange_end(void *context, void *pending);

static int mpi_exchange_begin(void *context, int n_peers, const int *peers, double *const *send,
                              const int64_t *send_count, double *const *recv, const int64_t *recv_count, int tag,
                              void **pending) {
  ef_mpi_context *c = context;
  *pending = NULL;
  for (int k = 0; k < n_peers; ++k)
    EF_CHECK(send_count[k] <= INT_MAX && recv_count[k] <= INT_MAX, EF_ERR_UNSUPPORTED,
             "MPI exchange: %lld / %lld doubles with rank %d exceed an int count", (long long)send_count[k],
             (long long)recv_count[k], peers[k]);
  ef_mpi_pending *p;
  EF_CALLOC(p, 1);
  p->requests = malloc((size_t)(2 * n_peers + 1) * sizeof *p->requests);
  if (!p->requests) {
    free(p);
    return EF_ERROR(EF_ERR_MEMORY, "MPI exchange: out of memory for %d requests", 2 * n_peers);
  }
  /* Receives first, so the sends find them posted. */
  int rc = MPI_SUCCESS;
  const char *what = "MPI_Irecv";
  for (int k = 0; k < n_peers && rc == MPI_SUCCESS; ++k) {
    rc = MPI_Irecv(recv[k], (int)recv_count[k], MPI_DOUBLE, peers[k], tag, c->comm, p->requests + p->n);
    if (rc == MPI_SUCCESS) p->n++;
  }
  if (rc == MPI_SUCCESS) what = "MPI_Isend";
  for (int k = 0; k < n_peers && rc == MPI_SUCCESS; ++k) {
    rc = MPI_Isend(send[k], (int)send_count[k], MPI_DOUBLE, peers[k], tag, c->comm, p->requests + p->n);
    if (rc == MPI_SUCCESS) p->n++;
  }
  if (rc != MPI_SUCCESS) {
    int err = ef_mpi_fail(rc, __FILE__, __LINE__, what);
    for (int k = 0; k < p->n; ++k) MPI_Cancel(p->requests + k);
    (void)mpi_exchange_end(context, p);
    return err;
  }
  *pending = p;
  return EF_SUCCESS;
}

static int mpi_exchange_end(void *context, void *pending) {
  (void)context;
  ef_mpi_pending *p = pending;
  if (!p) return EF_SUCCESS;
  int rc = p->n ? MPI_Waitall(p->n, p->requests, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
  free(p->requests);
  free(p);
  if (rc != MPI_SUCCESS) return ef_mpi_fail(rc, __FILE__, __LINE__, "MPI_Waitall");
  return EF_SUCCESS;
}

static void mpi_destroy(void *context) {
  ef_mpi_context *c = context;
  if (!c) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c);
}

static const ef_comm_ops ef_mpi_ops = {"mpi",           mpi_allreduce,    mpi_barrier, mpi_abort,
                                       mpi_exchange_begin, mpi_exchange_end, mpi_destroy};

int ef_comm_mpi_init(int *argc, char ***argv, ef_comm *world) {
  EF_CHECK(world, EF_ERR_PARAMETER, "ef_comm_mpi_init: NULL result");
  *world = NULL;
  int initialized = 0;
  EF_MPI_CALL(MPI_Initialized(&initialized));
  if (!initialized) EF_MPI_CALL(MPI_Init(argc, argv));
  ef_mpi_context *c = calloc(1, sizeof *c);
  EF_CHECK(c, EF_ERR_MEMORY, "ef_comm_mpi_init: out of memory");
  c->comm = MPI_COMM_NULL;
  ef_mpi_initialized_here = !initialized;
  int rank = 0, size = 1, rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c->comm, &rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c->comm, &size);
  if (rc != MPI_SUCCESS) {
    mpi_destroy(c);
    return ef_mpi_fail(rc, __FILE__, __LINE__, "setting up the world communicator");
  }
  int err = ef_comm_create(&ef_mpi_ops, c, rank, size, world);
  if (err) mpi_destroy(c);
  return err;
}

int ef_comm_mpi_finalize(ef_comm *world) {
  ef_comm_destroy(world);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (ef_mpi_initialized_here && !finalized) {
    ef_mpi_initialized_here = 0;
    EF_MPI_CALL(MPI_Finalize());
  }
  return EF_SUCCESS;
}

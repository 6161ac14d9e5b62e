/* comm.c -- the communicator seam of ef_comm.h and its serial implementation. */
#include "edgeflow/ef_comm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef EF_HAVE_MPI
#include <dlfcn.h>
#endif

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"

struct ef_comm_s {
  const ef_comm_ops *ops;
  void *context;
  int rank, size;
};

/* ---------------------------------------------------------------------------
 * Serial: one process, no peers. */

static int serial_allreduce(void *context, double *values, int n, ef_comm_op op) {
  (void)context;
  (void)values;
  (void)n;
  (void)op;
  return EF_SUCCESS;
}

static int serial_barrier(void *context) {
  (void)context;
  return EF_SUCCESS;
}

static void serial_abort(void *context, int code) {
  (void)context;
  exit(code);
}

static int serial_exchange_begin(void *context, int n_peers, const int *peers, double *const *send,
                                 const int64_t *send_count, double *const *recv, const int64_t *recv_count,
                                 int tag, void **pending) {
  (void)context;
  (void)send;
  (void)send_count;
  (void)recv;
  (void)recv_count;
  (void)tag;
  *pending = NULL;
  EF_CHECK(n_peers == 0, EF_ERR_INTERNAL, "serial communicator: exchange with %d peer(s) (rank %d first)",
           n_peers, peers ? peers[0] : -1);
  return EF_SUCCESS;
}

static int serial_exchange_end(void *context, void *pending) {
  (void)context;
  (void)pending;
  return EF_SUCCESS;
}

static const ef_comm_ops serial_ops = {"serial",         serial_allreduce, serial_barrier, serial_abort,
                                       serial_exchange_begin, serial_exchange_end, NULL};
static struct ef_comm_s serial_comm = {&serial_ops, NULL, 0, 1};

ef_comm ef_comm_serial(void) { return &serial_comm; }

/* ---------------------------------------------------------------------------
 * Dispatch. */

static ef_comm resolve(ef_comm comm) { return comm ? comm : &serial_comm; }

int ef_comm_create(const ef_comm_ops *ops, void *context, int rank, int size, ef_comm *comm) {
  EF_CHECK(comm, EF_ERR_PARAMETER, "ef_comm_create: NULL result pointer");
  *comm = NULL;
  EF_CHECK(ops && ops->allreduce && ops->barrier && ops->abort && ops->exchange_begin && ops->exchange_end,
           EF_ERR_PARAMETER, "ef_comm_create: the operations table '%s' is incomplete",
           ops && ops->name ? ops->name : "?");
  EF_CHECK(size >= 1 && rank >= 0 && rank < size, EF_ERR_PARAMETER, "ef_comm_create: rank %d of %d", rank,
           size);
  struct ef_comm_s *c;
  EF_MALLOC(c, 1);
  c->ops = ops;
  c->context = context;
  c->rank = rank;
  c->size = size;
  *comm = c;
  return EF_SUCCESS;
}

void ef_comm_destroy(ef_comm *comm) {
  if (!comm || !*comm) return;
  if (*comm != &serial_comm) {
    if ((*comm)->ops->destroy) (*comm)->ops->destroy((*comm)->context);
    free(*comm);
  }
  *comm = NULL;
}

int ef_comm_rank(ef_comm comm) { return resolve(comm)->rank; }
int ef_comm_size(ef_comm comm) { return resolve(comm)->size; }
const char *ef_comm_name(ef_comm comm) { return resolve(comm)->ops->name; }

int ef_comm_allreduce(ef_comm comm, double *values, int n, ef_comm_op op) {
  ef_comm c = resolve(comm);
  EF_CHECK(n >= 0 && (values || n == 0), EF_ERR_PARAMETER, "ef_comm_allreduce: %d values at %p", n,
           (void *)values);
  EF_CHECK(op == EF_COMM_SUM || op == EF_COMM_MIN || op == EF_COMM_MAX, EF_ERR_PARAMETER,
           "ef_comm_allreduce: unknown operation %d", (int)op);
  if (n == 0 || c->size == 1) return EF_SUCCESS;
  return c->ops->allreduce(c->context, values, n, op);
}

int ef_comm_barrier(ef_comm comm) {
  ef_comm c = resolve(comm);
  return c->size == 1 ? EF_SUCCESS : c->ops->barrier(c->context);
}

void ef_comm_abort(ef_comm comm, int code, const char *fmt, ...) {
  ef_comm c = resolve(comm);
  char message[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt ? fmt : "(no message)", ap);
  va_end(ap);
  fprintf(stderr, "edgeflow: rank %d of %d: %s\n", c->rank, c->size, message);
  fflush(stderr);
  fflush(stdout);
  if (code < 1 || code > 255) code = 1;
  c->ops->abort(c->context, code);
  exit(code); /* an implementation's abort does not return; if it did, stop this rank at least */
}

int ef_comm_exchange_begin(ef_comm comm, int n_peers, const int *peers, double *const *send,
                           const int64_t *send_count, double *const *recv, const int64_t *recv_count, int tag,
                           void **pending) {
  ef_comm c = resolve(comm);
  EF_CHECK(pending, EF_ERR_PARAMETER, "ef_comm_exchange_begin: NULL pending pointer");
  *pending = NULL;
  EF_CHECK(n_peers >= 0 && (n_peers == 0 || (peers && send && send_count && recv && recv_count)),
           EF_ERR_PARAMETER, "ef_comm_exchange_begin: %d peers with missing lists", n_peers);
  for (int k = 0; k < n_peers; ++k)
    EF_CHECK(peers[k] >= 0 && peers[k] < c->size && peers[k] != c->rank && send_count[k] >= 0 &&
                 recv_count[k] >= 0,
             EF_ERR_PARAMETER, "ef_comm_exchange_begin: rank %d of %d: bad peer %d (send %lld, receive %lld)",
             c->rank, c->size, peers[k], (long long)send_count[k], (long long)recv_count[k]);
  return c->ops->exchange_begin(c->context, n_peers, peers, send, send_count, recv, recv_count, tag, pending);
}

int ef_comm_exchange_end(ef_comm comm, void *pending) {
  ef_comm c = resolve(comm);
  return c->ops->exchange_end(c->context, pending);
}

/* ---------------------------------------------------------------------------
 * The world communicator of a launched process (libedgeflow_mpi, loaded by name). */

int ef_comm_launched_size(void) {
  static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
    const char *v = getenv(names[k]);
    if (v && v[0]) {
      long n = strtol(v, NULL, 10);
      if (n > 0 && n < INT32_MAX) return (int)n;
    }
  }
  return 0;
}

int ef_comm_have_mpi(void) {
#ifdef EF_HAVE_MPI
  return 1;
#else
  return 0;
#endif
}

#ifdef EF_HAVE_MPI
typedef int (*ef_comm_mpi_init_fn)(int *argc, char ***argv, ef_comm *world);
typedef int (*ef_comm_mpi_finalize_fn)(ef_comm *world);
static ef_comm ef_world;
static ef_comm_mpi_finalize_fn ef_world_finalize;

static void ef_comm_world_at_exit(void) {
  if (ef_world && ef_world_finalize) (void)ef_world_finalize(&ef_world);
  ef_world = NULL;
}
#endif

int ef_comm_world(ef_comm *world) {
  EF_CHECK(world, EF_ERR_PARAMETER, "ef_comm_world: NULL result");
  *world = NULL;
#ifndef EF_HAVE_MPI
  return EF_ERROR(EF_ERR_UNSUPPORTED,
                  "this edgeflow was built without MPI (configure with -DEDGEFLOW_MPI=ON, with libopenmpi-dev and "
                  "libmetis-dev installed)");
#else
  *world = ef_world;
  if (ef_world) return EF_SUCCESS;
  void *handle = NULL;
  int err = ef_registry_open_library("mpi", &handle);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "the MPI communicator library cannot be loaded");
  ef_comm_mpi_init_fn init;
  *(void **)(&init) = dlsym(handle, "ef_comm_mpi_init");
  *(void **)(&ef_world_finalize) = dlsym(handle, "ef_comm_mpi_finalize");
  EF_CHECK(init && ef_world_finalize, EF_ERR_NOT_FOUND,
           "libedgeflow_mpi has no ef_comm_mpi_init / ef_comm_mpi_finalize");
  EF_CALL(init(NULL, NULL, &ef_world));
  if (atexit(ef_comm_world_at_exit)) {
    ef_comm_world_at_exit();
    return EF_ERROR(EF_ERR_INTERNAL, "ef_comm_world: atexit failed");
  }
  *world = ef_world;
  return EF_SUCCESS;
#endif
}

/* core_parallel.h -- OpenMP in the core's mesh phases (refinement, mesh check, renumbering): loops that
 * run in parallel on large meshes and serially, with no OpenMP call at all, on small ones or on one
 * thread.  Every parallel loop here writes disjoint outputs, reduces exactly (min, max, bitwise or,
 * integer counts), or fills rows in any order that are then sorted, so the results do not depend on the
 * thread count. */
#ifndef EF_CORE_PARALLEL_H
#define EF_CORE_PARALLEL_H

#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Loops over fewer items stay serial: a team costs more than they do.  Small meshes (those of the
 * failure-injection tests among them) never enter the OpenMP runtime, which allocates for every team
 * and aborts when an allocation fails. */
#define EF_CORE_PARALLEL_MIN 4096

/* 1 when a loop over n items should run in parallel: n large enough and more than one thread. */
static inline int ef_core_parallel(int64_t n) {
#ifdef _OPENMP
  return n >= EF_CORE_PARALLEL_MIN && omp_get_max_threads() > 1;
#else
  (void)n;
  return 0;
#endif
}

/* Number of chunks a loop over n items is cut into: one a thread when it runs in parallel, else 1. */
static inline int ef_core_chunks(int64_t n) {
#ifdef _OPENMP
  if (ef_core_parallel(n)) return omp_get_max_threads();
#endif
  (void)n;
  return 1;
}

/* EF_CORE_FOR(cond, "omp parallel for ...", for (...) body;): the loop under the pragma when cond holds
 * (and the build has OpenMP), the same loop without it otherwise. */
#ifdef _OPENMP
#define EF_CORE_FOR(cond, pragma, ...) \
  do {                                 \
    if (cond) {                        \
      _Pragma(pragma) __VA_ARGS__      \
    } else {                           \
      __VA_ARGS__                      \
    }                                  \
  } while (0)
#else
#define EF_CORE_FOR(cond, pragma, ...) \
  do {                                 \
    (void)(cond);                      \
    __VA_ARGS__                        \
  } while (0)
#endif

#endif

/* parallel.h -- (core, private) a loop over [0, n) split into one contiguous range per OpenMP thread when
 * n >= min_parallel; below it a single call over [0, n) that never enters OpenMP (a small mesh takes
 * microseconds, and the allocation-failure tests then never reach libgomp, whose own refused allocations
 * are fatal).  A body must write only what its range owns. */
#ifndef EF_CORE_PARALLEL_H
#define EF_CORE_PARALLEL_H

#include <stdint.h>

typedef void (*ef_range_body)(void *ctx, int64_t lo, int64_t hi);
void ef_parallel_ranges(int64_t n, int64_t min_parallel, ef_range_body body, void *ctx);

#endif

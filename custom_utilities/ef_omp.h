/* ef_omp.h -- the OpenMP helpers the plugin's host loops share. */
#ifndef EF_OMP_H
#define EF_OMP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
/* A pragma that disappears in builds without OpenMP: EF_OMP(omp parallel for). */
#define EF_OMP(x) _Pragma(#x)
#else
#define EF_OMP(x)
#endif

/* Rows per reduction block: partial sums per block, added in block order, make every dot
 * product and norm independent of the thread count.  The block size depends on n only
 * (never on the thread count): about 1024 blocks, so that the loops over blocks keep every
 * thread busy, at least 64 rows so that a block is worth scheduling. */
static inline int64_t ef_reduction_block_rows(int64_t n) {
  int64_t b = (n + 1023) / 1024;
  return b < 64 ? 64 : b;
}

/* to[0..bytes) = from[0..bytes), 64 KiB pieces over the threads (one thread below 1 MiB). */
static inline void ef_omp_copy(void *to, const void *from, size_t bytes) {
  const int64_t pieces = (int64_t)((bytes + 65535) / 65536);
  EF_OMP(omp parallel for schedule(static) if (pieces > 16))
  for (int64_t c = 0; c < pieces; ++c) {
    const size_t a = (size_t)c * 65536, b = a + 65536 < bytes ? a + 65536 : bytes;
    memcpy((char *)to + a, (const char *)from + a, b - a);
  }
}

#endif

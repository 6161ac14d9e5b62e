/* ef_test_alloc.h -- failure injection for the out-of-memory tests.
 *
 * malloc, calloc, realloc and free are interposed (the library resolves them to these
 * definitions) and forward to glibc's __libc_* entry points.  While `counting`, the
 * allocation with index fail_at (counted in n_calls) is refused, and `live` counts the
 * blocks handed out and not yet freed.  EF_TEST_ALLOC is 1 where this works: glibc without
 * AddressSanitizer (which owns the allocator); elsewhere 0 and the test skips.
 *
 * It defines malloc: include it in one test source, before anything else of its own. */
#ifndef EF_TEST_ALLOC_H
#define EF_TEST_ALLOC_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define EF_SKIP_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EF_SKIP_INTERPOSE 1
#endif
#endif

#if !defined(EF_SKIP_INTERPOSE) && defined(__GLIBC__)
#define EF_TEST_ALLOC 1

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long fail_at = -1; /* index of the allocation to refuse; -1: none */
static long n_calls = 0;  /* allocations seen while counting */
static long live = 0;     /* blocks handed out and not yet freed */
static int counting = 0;

/* 1 when this allocation is the one to refuse. */
static int refuse(void) {
  if (!counting) return 0;
  return n_calls++ == fail_at;
}

/* The interposed allocator: counts, refuses one, forwards the rest. */
void *malloc(size_t n) {
  if (refuse()) return NULL;
  void *p = __libc_malloc(n);
  if (p && counting) live++;
  return p;
}
void *calloc(size_t a, size_t b) {
  if (refuse()) return NULL;
  void *p = __libc_calloc(a, b);
  if (p && counting) live++;
  return p;
}
void *realloc(void *old, size_t n) {
  if (!old) return malloc(n);
  if (refuse()) return NULL;
  return __libc_realloc(old, n); /* a moved block is still one block */
}
void free(void *p) {
  if (p && counting) live--;
  __libc_free(p);
}
#else
#define EF_TEST_ALLOC 0
#endif

#endif

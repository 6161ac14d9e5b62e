/* mesh_source.c -- file buffer, line/token splitting and checked number parsing for the readers. */
#include "mesh_source.h"

#include "edgeflow/ef_error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Load the file at path into a NUL-terminated buffer. */
int ef_mesh_source_open(ef_mesh_source *src, const char *path) {
  EF_CHECK(src && path, EF_ERR_PARAMETER, "ef_mesh_source_open: NULL argument");
  memset(src, 0, sizeof *src);
  src->path = path;
  src->line = 1;
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open mesh file '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(buf, EF_ERR_MEMORY, fail, "out of memory reading '%s'", path);
  for (;;) {
    if (n + 1 >= cap) {
      EF_CHECK_GOTO(cap <= SIZE_MAX / 2, EF_ERR_MEMORY, fail, "'%s' is too large", path);
      char *grown = realloc(buf, cap * 2);
      EF_CHECK_GOTO(grown, EF_ERR_MEMORY, fail, "out of memory reading '%s' (%zu bytes so far)", path, n);
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  EF_CHECK_GOTO(!ferror(f), EF_ERR_IO, fail, "error reading '%s': %s", path, strerror(errno));
  buf[n] = '\0';
  fclose(f);
  src->data = buf;
  src->size = n;
  return EF_SUCCESS;
fail:
  free(buf);
  fclose(f);
  return err;
}

/* Copy size bytes of data (a file's contents held in memory) into a NUL-terminated buffer. */
int ef_mesh_source_open_memory(ef_mesh_source *src, const char *name, const void *data, size_t size) {
  EF_CHECK(src && name && (data || !size), EF_ERR_PARAMETER, "ef_mesh_source_open_memory: NULL argument");
  memset(src, 0, sizeof *src);
  src->path = name;
  src->line = 1;
  EF_CHECK(size < SIZE_MAX, EF_ERR_MEMORY, "'%s' is too large", name);
  char *buf = malloc(size + 1);
  EF_CHECK(buf, EF_ERR_MEMORY, "out of memory reading '%s' (%zu bytes)", name, size);
  if (size) memcpy(buf, data, size);
  buf[size] = '\0';
  src->data = buf;
  src->size = size;
  return EF_SUCCESS;
}

/* Free the buffer; the struct can be opened again. */
void ef_mesh_source_close(ef_mesh_source *src) {
  if (!src) return;
  free(src->data);
  src->data = NULL;
  src->size = src->pos = 0;
}

/* Hand out the next line and move the cursor past its newline. */
int ef_mesh_source_next_line(ef_mesh_source *src, char **begin, char **end, long *line) {
  if (src->pos >= src->size) return 0;
  char *b = src->data + src->pos;
  char *nl = memchr(b, '\n', src->size - src->pos);
  char *e = nl ? nl : src->data + src->size;
  src->pos = (size_t)(e - src->data) + (nl ? 1 : 0);
  *line = src->line;
  if (nl) src->line++;
  if (e > b && e[-1] == '\r') --e;
  *begin = b;
  *end = e;
  return 1;
}

/* Field separators within a line. */
int ef_mesh_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Cut the line at blanks; the final slot keeps the remainder when tokens run over. */
int ef_mesh_split(char *begin, char *end, char **tokens, int max) {
  int n = 0;
  char *p = begin;
  while (p < end) {
    while (p < end && ef_mesh_is_blank(*p)) ++p;
    if (p >= end) break;
    if (n == max - 1) {
      /* The rest of the line, without trailing blanks, is the last token. */
      char *q = end;
      while (q > p && ef_mesh_is_blank(q[-1])) --q;
      *q = '\0';
      tokens[n++] = p;
      /* Count what is left so callers can say how many fields they saw. */
      int extra = 0;
      for (char *r = p; r < q;) {
        while (r < q && ef_mesh_is_blank(*r)) ++r;
        if (r >= q) break;
        ++extra;
        while (r < q && !ef_mesh_is_blank(*r)) ++r;
      }
      return n - 1 + extra;
    }
    tokens[n++] = p;
    while (p < end && !ef_mesh_is_blank(*p)) ++p;
    *p = '\0'; /* p == end is the line terminator or the buffer's NUL, both ours to overwrite */
    ++p;
  }
  return n;
}

/* Decimal integer over the whole token (optional sign), rejecting overflow and any other character.
 * Hand-written because strtoll's locale and base handling dominated reading time. */
int ef_mesh_parse_i64(const char *token, int64_t *value) {
  if (!token) return -1;
  const char *p = token;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if (!*p) return -1;
  uint64_t acc = 0;
  for (; *p; ++p) {
    if (*p < '0' || *p > '9') return -1;
    unsigned d = (unsigned)(*p - '0');
    if (acc > (UINT64_MAX - d) / 10) return -1;
    acc = acc * 10 + d;
  }
  if (acc > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return -1;
  *value = neg ? (acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
  return 0;
}

/* strtod over the whole token, rejecting NaN, Inf, overflow and trailing characters. */
int ef_mesh_parse_f64(const char *token, double *value) {
  if (!token || !*token) return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(token, &end);
  if (end == token || *end || !isfinite(v)) return -1;
  if (errno == ERANGE && fabs(v) > 1.0) return -1; /* overflow; underflow to ~0 is harmless */
  *value = v;
  return 0;
}

/* Copy the next n bytes at the cursor; -1 when the file ends first. */
static int ef_read_le(ef_mesh_source *src, unsigned char *out, size_t n) {
  if (src->pos > src->size || src->size - src->pos < n) return -1;
  /* Files are little-endian; assemble bytes so the host order does not matter. */
  memcpy(out, src->data + src->pos, n);
  src->pos += n;
  return 0;
}

/* 4-byte little-endian signed integer. */
int ef_mesh_read_i32(ef_mesh_source *src, int32_t *value) {
  unsigned char b[4];
  if (ef_read_le(src, b, 4)) return -1;
  uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  memcpy(value, &u, 4); /* two's complement reinterpretation without UB */
  return 0;
}

/* 8-byte little-endian unsigned integer. */
int ef_mesh_read_u64(ef_mesh_source *src, uint64_t *value) {
  unsigned char b[8];
  if (ef_read_le(src, b, 8)) return -1;
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | b[i];
  *value = u;
  return 0;
}

/* 8-byte little-endian IEEE double. */
int ef_mesh_read_f64(ef_mesh_source *src, double *value) {
  uint64_t u;
  if (ef_mesh_read_u64(src, &u)) return -1;
  memcpy(value, &u, 8);
  return 0;
}

/* Prefix the message with "path:LINE: " or "path: byte N: ". */
int ef_mesh_source_error(const ef_mesh_source *src, int code, const char *file, int line,
                         long long where, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (src->binary)
    return ef_error_set(code, file, line, "%s: byte %lld: %s", src->path, where, msg);
  return ef_error_set(code, file, line, "%s:%lld: %s", src->path, where, msg);
}

/* Geometric growth so that n appends cost O(n) copies in total. */
int ef_mesh_grow(void **array, int64_t *capacity, int64_t need, size_t elem) {
  if (need <= *capacity) return EF_SUCCESS;
  int64_t cap = *capacity > 0 ? *capacity : 64;
  while (cap < need) {
    EF_CHECK(cap <= INT64_MAX / 2, EF_ERR_MEMORY, "array too large (%lld entries)", (long long)need);
    cap *= 2;
  }
  EF_CHECK((uint64_t)cap <= SIZE_MAX / elem, EF_ERR_MEMORY, "array too large (%lld entries)", (long long)cap);
  void *grown = realloc(*array, (size_t)cap * elem);
  EF_CHECK(grown, EF_ERR_MEMORY, "out of memory growing an array to %lld entries", (long long)cap);
  *array = grown;
  *capacity = cap;
  return EF_SUCCESS;
}

/* qsort order for (id, position) pairs: by id, then position. */
static int ef_id_pair_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Direct table when the id range is at most 4n + 1024 wide (memory stays O(n)), else sorted pairs. */
int ef_mesh_id_map_build(ef_mesh_id_map *map, const int64_t *ids, int64_t n, int64_t *dup_first,
                         int64_t *dup_second) {
  memset(map, 0, sizeof *map);
  *dup_first = *dup_second = -1;
  map->n = n;
  if (n <= 0) return EF_SUCCESS;
  int64_t lo = ids[0], hi = ids[0];
  for (int64_t i = 1; i < n; ++i) {
    if (ids[i] < lo) lo = ids[i];
    if (ids[i] > hi) hi = ids[i];
  }
  /* hi - lo cannot overflow for the positive ids the readers accept, but stay safe. */
  int dense = hi >= lo && (uint64_t)hi - (uint64_t)lo < (uint64_t)(4 * n + 1024);
  if (dense) {
    int64_t span = hi - lo + 1;
    EF_MALLOC(map->table, span);
    for (int64_t k = 0; k < span; ++k) map->table[k] = -1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t *slot = &map->table[ids[i] - lo];
      if (*slot >= 0 && *dup_second < 0) {
        *dup_first = *slot;
        *dup_second = i;
      }
      if (*slot < 0) *slot = i;
    }
    map->min = lo;
    map->span = span;
    map->dense = 1;
    return EF_SUCCESS;
  }
  EF_MALLOC(map->table, 2 * n);
  for (int64_t i = 0; i < n; ++i) {
    map->table[2 * i] = ids[i];
    map->table[2 * i + 1] = i;
  }
  qsort(map->table, (size_t)n, 2 * sizeof *map->table, ef_id_pair_cmp);
  for (int64_t i = 1; i < n; ++i)
    if (map->table[2 * i] == map->table[2 * i - 2]) {
      *dup_first = map->table[2 * i - 1];
      *dup_second = map->table[2 * i + 1];
      break;
    }
  return EF_SUCCESS;
}

/* O(1) in the direct table, O(log n) in the sorted one. */
int64_t ef_mesh_id_map_find(const ef_mesh_id_map *map, int64_t id) {
  if (map->dense) {
    if (id < map->min || id - map->min >= map->span) return -1;
    return map->table[id - map->min];
  }
  int64_t lo = 0, hi = map->n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int64_t v = map->table[2 * mid];
    if (v < id) lo = mid + 1;
    else if (v > id) hi = mid - 1;
    else return map->table[2 * mid + 1];
  }
  return -1;
}

/* Release the map; safe on a zeroed or freed one. */
void ef_mesh_id_map_free(ef_mesh_id_map *map) {
  if (!map) return;
  free(map->table);
  memset(map, 0, sizeof *map);
}

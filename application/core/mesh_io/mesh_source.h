/* mesh_source.h -- private helpers shared by the mesh readers: a whole file in
 * memory with a cursor, line and token splitting, strict number parsing,
 * bounded little-endian binary reads, and errors that name file and line (or
 * byte offset for binary data). */
#ifndef EF_MESH_SOURCE_H
#define EF_MESH_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *path;
  char *data;   /* the file plus a terminating NUL */
  size_t size;  /* bytes in the file */
  size_t pos;   /* cursor */
  long line;    /* 1-based number of the line the cursor is on */
  int binary;   /* positions in messages are byte offsets, not lines */
} ef_mesh_source;

/* Read the whole file into memory. */
int ef_mesh_source_open(ef_mesh_source *src, const char *path);
/* The same from bytes in memory (copied); name stands for the path in messages. */
int ef_mesh_source_open_memory(ef_mesh_source *src, const char *name, const void *data, size_t size);
void ef_mesh_source_close(ef_mesh_source *src);

/* Next line [*begin, *end) without its "\r\n"; *line gets its number.
 * Returns 1, or 0 at end of file. */
int ef_mesh_source_next_line(ef_mesh_source *src, char **begin, char **end, long *line);

/* Space, tab, CR, VT, FF: what separates fields on a line. */
int ef_mesh_is_blank(char c);

/* Split [begin, end) in place at blanks into at most max tokens (NUL-terminated);
 * when there are more, the last one holds the rest of the line.  Returns the count. */
int ef_mesh_split(char *begin, char *end, char **tokens, int max);

/* Whole-token parsers: 0 on success, -1 when the token is not a (finite) number. */
int ef_mesh_parse_i64(const char *token, int64_t *value);
int ef_mesh_parse_f64(const char *token, double *value);

/* Binary reads at the cursor (little-endian); -1 when the file ends first. */
int ef_mesh_read_i32(ef_mesh_source *src, int32_t *value);
int ef_mesh_read_u64(ef_mesh_source *src, uint64_t *value);
int ef_mesh_read_f64(ef_mesh_source *src, double *value);

/* Record "path:LINE: message" (or "path: byte N: message" for binary sources)
 * as an EF_ERR_PARSE-style error with the caller's code. where is a line
 * number or a byte offset. */
int ef_mesh_source_error(const ef_mesh_source *src, int code, const char *file, int line,
                         long long where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
#define EF_SRC_ERROR(src, code, where, ...) \
  ef_mesh_source_error((src), (code), __FILE__, __LINE__, (long long)(where), __VA_ARGS__)

/* File id -> position map.  Ids from meshers are nearly dense, so a direct
 * table is used when max - min is at most a few times the count; otherwise a
 * sorted table with binary search. */
typedef struct {
  int64_t n;          /* number of ids */
  int64_t min, span;  /* direct table covers [min, min + span) */
  int64_t *table;     /* direct: position or -1; sorted: (id, position) pairs */
  int dense;
} ef_mesh_id_map;

/* Build the map over ids[0..n).  When an id repeats, *dup_first and *dup_second
 * get the positions of two occurrences (first < second) and the map is not usable
 * (returns EF_SUCCESS all the same; check *dup_second >= 0). */
int ef_mesh_id_map_build(ef_mesh_id_map *map, const int64_t *ids, int64_t n, int64_t *dup_first,
                         int64_t *dup_second);
/* Position of id, or -1. */
int64_t ef_mesh_id_map_find(const ef_mesh_id_map *map, int64_t id);
void ef_mesh_id_map_free(ef_mesh_id_map *map);

/* Grow *array (element size elem) so that it holds at least need entries. */
int ef_mesh_grow(void **array, int64_t *capacity, int64_t need, size_t elem);

/* The readers on a file held in memory (fuzzing, tests): name stands for the path. */
struct ef_model_part_s;
int ef_read_mdpa_memory(const char *name, const void *data, size_t size, struct ef_model_part_s *mp);
int ef_read_gmsh_memory(const char *name, const void *data, size_t size, struct ef_model_part_s *mp);

#endif

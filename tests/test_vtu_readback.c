/* test_vtu_readback.c -- independent mini reader of our .vtu output for the C tests. */
#include "test_vtu_readback.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TVR_HAVE_ZLIB
#include <zlib.h>
#endif

/* printf into why; returns 1 so callers can `return fail(...)`. */
static int fail(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return 1;
}

/* Whole file, NUL-terminated. */
char *tvr_slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = 2 * cap + 65536 + 1;
      char *grown = realloc(buf, cap);
      if (!grown) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, 65536, f);
    n += got;
    if (got < 65536) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (size) *size = n;
  return buf;
}

/* Value of attribute key inside the tag [tag, end), into out; 0 if present. */
static int attr(const char *tag, const char *end, const char *key, char *out, size_t out_n) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, " %s=\"", key);
  size_t pl = strlen(pattern);
  for (const char *p = tag; p + pl <= end; ++p) {
    if (memcmp(p, pattern, pl) != 0) continue;
    const char *v = p + pl;
    const char *q = memchr(v, '"', (size_t)(end - v));
    if (!q || (size_t)(q - v) >= out_n) return 1;
    /* Undo the five XML escapes the writer may use. */
    static const char *ent[5][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""},
                                    {"&apos;", "'"}};
    size_t k = 0;
    while (v < q) {
      int hit = 0;
      for (int e = 0; e < 5 && !hit; ++e) {
        size_t l = strlen(ent[e][0]);
        if ((size_t)(q - v) >= l && !memcmp(v, ent[e][0], l)) {
          out[k++] = ent[e][1][0];
          v += l;
          hit = 1;
        }
      }
      if (!hit) out[k++] = *v++;
    }
    out[k] = '\0';
    return 0;
  }
  return 1;
}

/* Bytes per value of a VTK type name; 0 for names this reader does not know. */
static size_t type_size(const char *type) {
  if (!strcmp(type, "Float64") || !strcmp(type, "Int64")) return 8;
  if (!strcmp(type, "Int32")) return 4;
  if (!strcmp(type, "UInt8")) return 1;
  return 0;
}

/* Ascii values between p and end into a->data. */
static int parse_ascii(tvr_array *a, const char *p, const char *end, char *why, size_t wn) {
  size_t cap = 64, n = 0;
  unsigned char *data = malloc(cap * 8);
  if (!data) return fail(why, wn, "out of memory");
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) ++p;
    if (p >= end) break;
    if (n == cap) {
      cap *= 2;
      unsigned char *g = realloc(data, cap * 8);
      if (!g) {
        free(data);
        return fail(why, wn, "out of memory");
      }
      data = g;
    }
    char *stop;
    errno = 0;
    if (a->elem_size == 8 && a->type[0] == 'F') {
      double v = strtod(p, &stop);
      memcpy(data + n * 8, &v, 8);
    } else {
      long long v = strtoll(p, &stop, 10);
      if (a->elem_size == 8) {
        int64_t w = v;
        memcpy(data + n * 8, &w, 8);
      } else if (a->elem_size == 4) {
        int32_t w = (int32_t)v;
        memcpy(data + n * 4, &w, 4);
      } else {
        data[n] = (unsigned char)v;
      }
    }
    if (stop == p || stop > end) {
      free(data);
      return fail(why, wn, "array '%s': bad ascii value", a->name);
    }
    p = stop;
    ++n;
  }
  a->data = data;
  a->n_values = n;
  return 0;
}

/* Little-endian UInt64 at p. */
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* Appended array at base+offset (raw: byte count + bytes; zlib: block table + blocks). */
static int parse_appended(tvr_array *a, const tvr_doc *doc, const unsigned char *base,
                          const unsigned char *file_end, uint64_t offset, char *why, size_t wn) {
  if (offset > (uint64_t)(file_end - base)) return fail(why, wn, "array '%s': offset past the end", a->name);
  const unsigned char *p = base + offset;
  size_t left = (size_t)(file_end - p);
  if (!doc->compressed) {
    if (left < 8) return fail(why, wn, "array '%s': truncated header", a->name);
    uint64_t nbytes = get_u64(p);
    if (nbytes > left - 8 || nbytes % a->elem_size)
      return fail(why, wn, "array '%s': bad byte count %" PRIu64, a->name, nbytes);
    a->data = malloc(nbytes ? nbytes : 1);
    if (!a->data) return fail(why, wn, "out of memory");
    memcpy(a->data, p + 8, nbytes);
    a->n_values = nbytes / a->elem_size;
    return 0;
  }
#ifdef TVR_HAVE_ZLIB
  if (left < 24) return fail(why, wn, "array '%s': truncated block table", a->name);
  uint64_t nb = get_u64(p), bs = get_u64(p + 8), last = get_u64(p + 16);
  if (nb > left / 8 || 8 * (3 + nb) > left || bs < 32768 || bs > 1048576 || last >= bs)
    return fail(why, wn, "array '%s': bad block table (%" PRIu64 " blocks of %" PRIu64 ", last %" PRIu64 ")",
                a->name, nb, bs, last);
  uint64_t total = nb == 0 ? 0 : (last ? (nb - 1) * bs + last : nb * bs);
  const unsigned char *z = p + 8 * (3 + nb);
  unsigned char *out = malloc(total ? total : 1);
  if (!out) return fail(why, wn, "out of memory");
  uint64_t done = 0;
  for (uint64_t b = 0; b < nb; ++b) {
    uint64_t zs = get_u64(p + 8 * (3 + b));
    uint64_t want = (b + 1 == nb && last) ? last : bs;
    if (zs > (uint64_t)(file_end - z)) {
      free(out);
      return fail(why, wn, "array '%s': block %" PRIu64 " runs past the end", a->name, b);
    }
    uLongf got = (uLongf)want;
    if (uncompress(out + done, &got, z, (uLong)zs) != Z_OK || got != want) {
      free(out);
      return fail(why, wn, "array '%s': block %" PRIu64 " does not inflate to %" PRIu64 " bytes",
                  a->name, b, want);
    }
    z += zs;
    done += want;
  }
  if (total % a->elem_size) {
    free(out);
    return fail(why, wn, "array '%s': %" PRIu64 " bytes is not whole values", a->name, total);
  }
  a->data = out;
  a->n_values = total / a->elem_size;
  return 0;
#else
  (void)left;
  return fail(why, wn, "compressed file but the test was built without zlib");
#endif
}

/* Parse the XML part, then each array inline or from the appended block. */
int tvr_read(const char *path, tvr_doc *doc, char *why, size_t wn) {
  memset(doc, 0, sizeof *doc);
  size_t size;
  char *text = tvr_slurp(path, &size);
  if (!text) return fail(why, wn, "cannot read %s", path);
  int err = 0;
  char value[256];
  const char *vtk = strstr(text, "<VTKFile ");
  const char *vtk_end = vtk ? strchr(vtk, '>') : NULL;
  if (!vtk_end || attr(vtk, vtk_end, "type", value, sizeof value) || strcmp(value, "UnstructuredGrid") ||
      attr(vtk, vtk_end, "version", value, sizeof value) || strcmp(value, "1.0") ||
      attr(vtk, vtk_end, "header_type", value, sizeof value) || strcmp(value, "UInt64") ||
      attr(vtk, vtk_end, "byte_order", value, sizeof value) || strcmp(value, "LittleEndian")) {
    err = fail(why, wn, "%s: bad or missing <VTKFile> header", path);
    goto done;
  }
  doc->compressed = attr(vtk, vtk_end, "compressor", value, sizeof value) == 0;
  if (doc->compressed && strcmp(value, "vtkZLibDataCompressor")) {
    err = fail(why, wn, "%s: unknown compressor %s", path, value);
    goto done;
  }
  const char *piece = strstr(text, "<Piece ");
  const char *piece_end = piece ? strchr(piece, '>') : NULL;
  char np[32], nc[32];
  if (!piece_end || attr(piece, piece_end, "NumberOfPoints", np, sizeof np) ||
      attr(piece, piece_end, "NumberOfCells", nc, sizeof nc)) {
    err = fail(why, wn, "%s: no <Piece> with point and cell counts", path);
    goto done;
  }
  doc->n_points = strtoll(np, NULL, 10);
  doc->n_cells = strtoll(nc, NULL, 10);
  const char *appended = strstr(text, "<AppendedData encoding=\"raw\">");
  const unsigned char *base = NULL;
  if (appended) {
    const char *us = strchr(appended, '_');
    if (!us) {
      err = fail(why, wn, "%s: <AppendedData> without '_'", path);
      goto done;
    }
    base = (const unsigned char *)us + 1;
  }
  /* Walk the XML part only: binary data may contain anything. */
  const char *xml_end = appended ? appended : text + size;
  static const char *sections[] = {"PointData", "CellData", "Points", "Cells"};
  const char *section = NULL;
  for (const char *p = text; p < xml_end; ++p) {
    if (*p != '<') continue;
    for (int s = 0; s < 4; ++s) {
      size_t l = strlen(sections[s]);
      if (!strncmp(p + 1, sections[s], l) && (p[1 + l] == '>' || p[1 + l] == ' ')) section = sections[s];
    }
    if (strncmp(p, "<DataArray ", 11) != 0) continue;
    const char *end = strchr(p, '>');
    if (!end || !section || doc->n_arrays == 64) {
      err = fail(why, wn, "%s: stray or too many <DataArray>", path);
      goto done;
    }
    tvr_array *a = &doc->arrays[doc->n_arrays++];
    snprintf(a->section, sizeof a->section, "%s", section);
    if (attr(p, end, "Name", a->name, sizeof a->name)) a->name[0] = '\0';
    if (attr(p, end, "type", a->type, sizeof a->type) || !(a->elem_size = type_size(a->type))) {
      err = fail(why, wn, "%s: DataArray '%s' with bad type", path, a->name);
      goto done;
    }
    a->n_components = attr(p, end, "NumberOfComponents", value, sizeof value) ? 1 : atoi(value);
    if (attr(p, end, "format", value, sizeof value)) {
      err = fail(why, wn, "%s: DataArray '%s' without format", path, a->name);
      goto done;
    }
    if (!strcmp(value, "ascii")) {
      doc->ascii = 1;
      const char *close = strstr(end, "</DataArray>");
      if (!close) {
        err = fail(why, wn, "%s: unterminated ascii DataArray '%s'", path, a->name);
        goto done;
      }
      if ((err = parse_ascii(a, end + 1, close, why, wn))) goto done;
      p = close;
    } else if (!strcmp(value, "appended") && base) {
      if (attr(p, end, "offset", value, sizeof value)) {
        err = fail(why, wn, "%s: appended DataArray '%s' without offset", path, a->name);
        goto done;
      }
      if ((err = parse_appended(a, doc, base, (const unsigned char *)text + size,
                                strtoull(value, NULL, 10), why, wn)))
        goto done;
    } else {
      err = fail(why, wn, "%s: DataArray '%s' has unexpected format %s", path, a->name, value);
      goto done;
    }
  }
done:
  free(text);
  if (err) tvr_free(doc);
  return err;
}

/* Free the arrays of doc. */
void tvr_free(tvr_doc *doc) {
  for (int i = 0; i < doc->n_arrays; ++i) free(doc->arrays[i].data);
  doc->n_arrays = 0;
}

/* The array of doc in section with name (NULL: the first, for the points). */
static const tvr_array *find(const tvr_doc *doc, const char *section, const char *name) {
  for (int i = 0; i < doc->n_arrays; ++i)
    if (!strcmp(doc->arrays[i].section, section) && (!name || !strcmp(doc->arrays[i].name, name)))
      return &doc->arrays[i];
  return NULL;
}

/* VTK type name of a writer type. */
static const char *type_name(ef_vtk_scalar_type t) {
  static const char *names[] = {"Float64", "Int64", "Int32", "UInt8"};
  return names[t];
}

/* One expected array, as a writer would see it. */
typedef struct {
  const char *section, *name;
  ef_vtk_scalar_type type;
  int n_components;
  uint64_t n_values;
  const void *data;
} expect_array;

/* The arrays m describes, offsets and types materialised; *owned to free. */
static int expected_arrays(const ef_vtu_mesh *m, expect_array *out, int *n, void **owned1, void **owned2) {
  int k = 0;
  int64_t conn_len = m->offsets ? (m->n_cells ? m->offsets[m->n_cells - 1] : 0)
                                : m->n_cells * m->nodes_per_cell;
  int64_t *offsets = NULL;
  uint8_t *types = NULL;
  if (!m->offsets) {
    offsets = malloc((size_t)(m->n_cells + 1) * sizeof *offsets);
    if (!offsets) return 1;
    for (int64_t c = 0; c < m->n_cells; ++c) offsets[c] = (c + 1) * m->nodes_per_cell;
  }
  if (!m->types) {
    types = malloc((size_t)m->n_cells + 1);
    if (!types) {
      free(offsets);
      return 1;
    }
    memset(types, m->cell_type, (size_t)m->n_cells);
  }
  *owned1 = offsets;
  *owned2 = types;
  for (int i = 0; i < m->n_point_data; ++i)
    out[k++] = (expect_array){"PointData", m->point_data[i].name, m->point_data[i].type,
                              m->point_data[i].n_components,
                              (uint64_t)m->n_points * (uint64_t)m->point_data[i].n_components,
                              m->point_data[i].values};
  for (int i = 0; i < m->n_cell_data; ++i)
    out[k++] = (expect_array){"CellData", m->cell_data[i].name, m->cell_data[i].type,
                              m->cell_data[i].n_components,
                              (uint64_t)m->n_cells * (uint64_t)m->cell_data[i].n_components,
                              m->cell_data[i].values};
  out[k++] = (expect_array){"Points", "", EF_VTK_FLOAT64, 3, 3 * (uint64_t)m->n_points, m->points};
  out[k++] = (expect_array){"Cells", "connectivity", m->connectivity_type, 1, (uint64_t)conn_len,
                            m->connectivity};
  out[k++] = (expect_array){"Cells", "offsets", EF_VTK_INT64, 1, (uint64_t)m->n_cells,
                            m->offsets ? (const void *)m->offsets : offsets};
  out[k++] = (expect_array){"Cells", "types", EF_VTK_UINT8, 1, (uint64_t)m->n_cells,
                            m->types ? (const void *)m->types : types};
  *n = k;
  return 0;
}

/* Bytes per value of a writer type. */
static size_t ef_type_size(ef_vtk_scalar_type t) { return t == EF_VTK_UINT8 ? 1 : t == EF_VTK_INT32 ? 4 : 8; }

/* Same counts, same set of arrays, each with equal type, shape and bytes. */
int tvr_compare(const tvr_doc *doc, const ef_vtu_mesh *m, char *why, size_t wn) {
  if (doc->n_points != m->n_points || doc->n_cells != m->n_cells)
    return fail(why, wn, "counts %" PRId64 "/%" PRId64 " instead of %" PRId64 "/%" PRId64, doc->n_points,
                doc->n_cells, m->n_points, m->n_cells);
  expect_array ex[70];
  int n = 0;
  void *o1 = NULL, *o2 = NULL;
  if (expected_arrays(m, ex, &n, &o1, &o2)) return fail(why, wn, "out of memory");
  int err = 0;
  if (doc->n_arrays != n) err = fail(why, wn, "%d arrays instead of %d", doc->n_arrays, n);
  for (int i = 0; i < n && !err; ++i) {
    const tvr_array *a = find(doc, ex[i].section, strcmp(ex[i].section, "Points") ? ex[i].name : NULL);
    if (!a)
      err = fail(why, wn, "%s array '%s' missing", ex[i].section, ex[i].name);
    else if (strcmp(a->type, type_name(ex[i].type)) || a->n_components != ex[i].n_components)
      err = fail(why, wn, "%s array '%s' is %s x %d instead of %s x %d", ex[i].section, ex[i].name,
                 a->type, a->n_components, type_name(ex[i].type), ex[i].n_components);
    else if (a->n_values != ex[i].n_values)
      err = fail(why, wn, "%s array '%s' has %" PRIu64 " values instead of %" PRIu64, ex[i].section,
                 ex[i].name, a->n_values, ex[i].n_values);
    else if (a->n_values && memcmp(a->data, ex[i].data, a->n_values * a->elem_size))
      err = fail(why, wn, "%s array '%s' differs bitwise", ex[i].section, ex[i].name);
  }
  free(o1);
  free(o2);
  return err;
}

/* tvr_read + tvr_compare, reporting to stderr. */
int tvr_check_file(const char *path, const ef_vtu_mesh *m) {
  tvr_doc doc;
  char why[512];
  if (tvr_read(path, &doc, why, sizeof why)) {
    fprintf(stderr, "reading back %s: %s\n", path, why);
    return 1;
  }
  int err = tvr_compare(&doc, m, why, sizeof why);
  if (err) fprintf(stderr, "reading back %s: %s\n", path, why);
  tvr_free(&doc);
  return err;
}

/* Little-endian u32; non-zero on a write error. */
static int put_u32(FILE *f, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  return fwrite(b, 1, 4, f) != 4;
}

/* Little-endian u64; non-zero on a write error. */
static int put_u64(FILE *f, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = (unsigned char)(v >> (8 * i));
  return fwrite(b, 1, 8, f) != 8;
}

/* Every array of m, in the sidecar format of test_vtu_readback.h. */
int tvr_write_expect(const char *vtu_path, const ef_vtu_mesh *m) {
  char path[4096];
  snprintf(path, sizeof path, "%s.expect", vtu_path);
  expect_array ex[70];
  int n = 0;
  void *o1 = NULL, *o2 = NULL;
  if (expected_arrays(m, ex, &n, &o1, &o2)) return 1;
  FILE *f = fopen(path, "wb");
  int err = !f;
  if (f) {
    static const char dtype[] = {'d', 'q', 'i', 'B'};
    err |= fwrite("EFVTKEXP1\n", 1, 10, f) != 10;
    for (int i = 0; i < n; ++i) {
      uint32_t sl = (uint32_t)strlen(ex[i].section), nl = (uint32_t)strlen(ex[i].name);
      err |= put_u32(f, sl) || fwrite(ex[i].section, 1, sl, f) != sl;
      err |= put_u32(f, nl) || (nl && fwrite(ex[i].name, 1, nl, f) != nl);
      err |= fputc(dtype[ex[i].type], f) == EOF;
      err |= put_u32(f, (uint32_t)ex[i].n_components) || put_u64(f, ex[i].n_values);
      size_t bytes = (size_t)ex[i].n_values * ef_type_size(ex[i].type);
      err |= bytes && fwrite(ex[i].data, 1, bytes, f) != bytes;
    }
    err |= fclose(f) != 0;
  }
  free(o1);
  free(o2);
  if (err) fprintf(stderr, "cannot write %s\n", path);
  return err;
}

/* 1 if anything (even a dangling link) has this name. */
int tvr_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* rm -r without following links; a missing path is fine. */
int tvr_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : 1;
  if (!S_ISDIR(st.st_mode)) return unlink(path) != 0;
  DIR *d = opendir(path);
  if (!d) return 1;
  int err = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    err |= tvr_remove_tree(child);
  }
  closedir(d);
  return err | (rmdir(path) != 0);
}

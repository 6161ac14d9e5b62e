/* vtu_writer.c -- VTK XML UnstructuredGrid (.vtu) and collection (.pvd) output.
 *
 * The file layout follows VTK's XML format description (version 1.0,
 * header_type UInt64): binary output puts every array in one
 * <AppendedData encoding="raw"> block, each array prefixed by its byte count,
 * or, compressed, by the zlib block table (number of blocks, block size, size
 * of a partial last block or 0, then each block's compressed size).
 */
#include "edgeflow/ef_vtk_output.h"

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_util.h"
#include "number_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef EF_HAVE_ZLIB
#include <zlib.h>
#endif

#define VTU_CHUNK_BYTES ((size_t)1 << 16)          /* staging buffer of generated data */
#define VTU_DEFAULT_BLOCK ((int64_t)1 << 16)       /* zlib block: VTK reads it back block by block */
#define VTU_MIN_BLOCK ((int64_t)1 << 15)
#define VTU_MAX_BLOCK ((int64_t)1 << 20)

/* ---------------------------------------------------------------------------
 * Errors and atomic files. */

/* Record EF_ERR_IO with "what 'path': strerror(e)". */
static int vtu_io_error(const char *file, int line, const char *what, const char *path, int e) {
  char text[256];
  if (e == 0) e = EIO;
  if (strerror_r(e, text, sizeof text) != 0) snprintf(text, sizeof text, "errno %d", e);
  return ef_error_set(EF_ERR_IO, file, line, "%s '%s': %s", what, path, text);
}
#define VTU_IO_ERROR(what, path, e) vtu_io_error(__FILE__, __LINE__, (what), (path), (e))

/* An output file being written under a temporary name beside its final one. */
typedef struct {
  FILE *f;
  const char *path; /* final name (borrowed) */
  char *tmp;        /* ".name.tmp.<pid>" in the same folder, so rename() is atomic */
} vtu_file;

/* Open path's temporary sibling for writing. */
static int vtu_file_open(const char *path, vtu_file *vf) {
  vf->f = NULL;
  vf->path = path;
  vf->tmp = NULL;
  EF_CHECK(path && path[0], EF_ERR_PARAMETER, "empty output file name");
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = path + dir_len;
  EF_CHECK(base[0], EF_ERR_PARAMETER, "output file name '%s' names a folder", path);
  size_t n = strlen(path) + 40;
  EF_MALLOC(vf->tmp, n);
  snprintf(vf->tmp, n, "%.*s.%s.tmp.%ld", (int)dir_len, path, base, (long)getpid());
  vf->f = fopen(vf->tmp, "wb");
  if (!vf->f) {
    int e = errno;
    int err = VTU_IO_ERROR("cannot create the temporary file for", path, e);
    free(vf->tmp);
    vf->tmp = NULL;
    return err;
  }
  return EF_SUCCESS;
}

/* Drop a failed file: close and remove the temporary, leave the final name alone. */
static void vtu_file_abort(vtu_file *vf) {
  if (vf->f) fclose(vf->f);
  if (vf->tmp) unlink(vf->tmp);
  free(vf->tmp);
  vf->f = NULL;
  vf->tmp = NULL;
}

/* Flush the data (to disk when sync), then rename it into place: readers see the old file or the
 * whole new one.  Without sync that holds against a crash of the program (the kernel has every
 * byte before the rename); sync extends it to a crash of the machine, at one disk round trip. */
static int vtu_file_commit(vtu_file *vf, int sync) {
  int err = EF_SUCCESS;
  if (fflush(vf->f) != 0) {
    err = VTU_IO_ERROR("cannot write", vf->path, errno);
    goto fail;
  }
  /* EINVAL: the descriptor cannot be synced (not a regular file); nothing to wait for. */
  if (sync && fsync(fileno(vf->f)) != 0 && errno != EINVAL) {
    err = VTU_IO_ERROR("cannot sync", vf->path, errno);
    goto fail;
  }
  FILE *f = vf->f;
  vf->f = NULL;
  if (fclose(f) != 0) {
    err = VTU_IO_ERROR("cannot close", vf->path, errno);
    goto fail;
  }
  if (rename(vf->tmp, vf->path) != 0) {
    err = VTU_IO_ERROR("cannot rename the temporary file onto", vf->path, errno);
    goto fail;
  }
  free(vf->tmp);
  vf->tmp = NULL;
  if (!sync) return EF_SUCCESS;
  /* Make the rename itself durable; best effort, as some file systems refuse to sync folders. */
  const char *slash = strrchr(vf->path, '/');
  char dir[4096];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - vf->path) + 1, vf->path);
  int fd = open(dir, O_RDONLY);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  return EF_SUCCESS;
fail:
  vtu_file_abort(vf);
  return err;
}

/* Write n bytes. */
static int vtu_put(vtu_file *vf, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, vf->f) != n) return VTU_IO_ERROR("cannot write", vf->path, errno);
  return EF_SUCCESS;
}

/* printf into the file. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int vtu_printf(vtu_file *vf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(vf->f, fmt, ap);
  va_end(ap);
  if (n < 0) return VTU_IO_ERROR("cannot write", vf->path, errno);
  return EF_SUCCESS;
}

/* Write s with the five XML special characters escaped. */
static int vtu_put_escaped(vtu_file *vf, const char *s) {
  for (; *s; ++s) {
    const char *rep = NULL;
    switch (*s) {
      case '&': rep = "&amp;"; break;
      case '<': rep = "&lt;"; break;
      case '>': rep = "&gt;"; break;
      case '"': rep = "&quot;"; break;
      case '\'': rep = "&apos;"; break;
      default: break;
    }
    EF_CALL(rep ? vtu_put(vf, rep, strlen(rep)) : vtu_put(vf, s, 1));
  }
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Data streams: every DataArray, whether stored or generated, as a sequence of values. */

enum { VTU_SRC_ARRAY, VTU_SRC_UNIFORM_OFFSETS, VTU_SRC_CONSTANT };

typedef struct {
  const char *section; /* "PointData", "CellData", "Points", "Cells" */
  const char *name;    /* NULL for the points */
  ef_vtk_scalar_type type;
  int n_components;
  uint64_t n_values; /* scalars, not tuples */
  int source;
  const void *data; /* VTU_SRC_ARRAY */
  int64_t param;    /* cell size (offsets) or the constant */
  uint64_t offset;  /* into the appended block */
  unsigned char *packed; /* compressed: block table + blocks */
  uint64_t packed_size;
} vtu_stream;

/* Bytes per value. */
static size_t vtu_type_size(ef_vtk_scalar_type t) {
  return t == EF_VTK_UINT8 ? 1 : t == EF_VTK_INT32 ? 4 : 8;
}

/* The type= attribute VTK expects. */
static const char *vtu_type_name(ef_vtk_scalar_type t) {
  switch (t) {
    case EF_VTK_FLOAT64: return "Float64";
    case EF_VTK_INT64: return "Int64";
    case EF_VTK_INT32: return "Int32";
    case EF_VTK_UINT8: return "UInt8";
  }
  return "?";
}

/* 1 on little-endian hosts, where arrays go to the file as they are in memory. */
static int vtu_host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Reverse the bytes of count elements of size es in place (big-endian hosts only). */
static void vtu_to_little_endian(void *buf, size_t count, size_t es) {
  if (es == 1 || vtu_host_is_little_endian()) return;
  unsigned char *b = buf;
  for (size_t i = 0; i < count; ++i, b += es)
    for (size_t j = 0; j < es / 2; ++j) {
      unsigned char t = b[j];
      b[j] = b[es - 1 - j];
      b[es - 1 - j] = t;
    }
}

/* Values first..first+count-1 of s into out, in host byte order. */
static void vtu_stream_fill(const vtu_stream *s, uint64_t first, size_t count, void *out) {
  size_t es = vtu_type_size(s->type);
  if (s->source == VTU_SRC_ARRAY) {
    memcpy(out, (const unsigned char *)s->data + first * es, count * es);
  } else if (s->source == VTU_SRC_UNIFORM_OFFSETS) {
    int64_t *o = out;
    for (size_t i = 0; i < count; ++i) o[i] = (int64_t)(first + i + 1) * s->param;
  } else {
    memset(out, (int)s->param, count);
  }
}

/* One UInt64 block header word, little endian. */
static int vtu_put_u64(vtu_file *vf, uint64_t v) {
  vtu_to_little_endian(&v, 1, 8);
  return vtu_put(vf, &v, 8);
}

/* Appended raw array: its byte count, then its bytes. */
static int vtu_write_raw(vtu_file *vf, const vtu_stream *s, unsigned char *chunk) {
  size_t es = vtu_type_size(s->type);
  EF_CALL(vtu_put_u64(vf, s->n_values * es));
  if (s->source == VTU_SRC_ARRAY && vtu_host_is_little_endian())
    return vtu_put(vf, s->data, (size_t)(s->n_values * es));
  size_t per_chunk = VTU_CHUNK_BYTES / es;
  for (uint64_t first = 0; first < s->n_values; first += per_chunk) {
    size_t count = (size_t)(s->n_values - first < per_chunk ? s->n_values - first : per_chunk);
    vtu_stream_fill(s, first, count, chunk);
    vtu_to_little_endian(chunk, count, es);
    EF_CALL(vtu_put(vf, chunk, count * es));
  }
  return EF_SUCCESS;
}

/* Above this magnitude a double rounded to fewer than 17 digits may pass the largest double
 * (1.7976931348623157e308 at 15 digits is 1.79769313486232e+308): it would read back as infinity,
 * and VTK refuses the whole array, so these few values are written with 17 digits. */
#define VTU_ASCII_EXACT_ABOVE 1.5e308

/* Inline text: doubles at `digits` significant digits (17 reads back bit for bit), integers whole,
 * formatted without a printf call per value (number_format.h), n_components or 6 values a line. */
static int vtu_write_ascii(vtu_file *vf, const vtu_stream *s, unsigned char *chunk, int digits) {
  size_t es = vtu_type_size(s->type);
  size_t per_chunk = VTU_CHUNK_BYTES / es;
  uint64_t per_line = s->n_components > 1 ? (uint64_t)s->n_components : 6;
  uint64_t left_on_line = per_line;
  char text[VTU_CHUNK_BYTES / 4];
  size_t used = 0;
  for (uint64_t first = 0; first < s->n_values; first += per_chunk) {
    size_t count = (size_t)(s->n_values - first < per_chunk ? s->n_values - first : per_chunk);
    vtu_stream_fill(s, first, count, chunk);
    for (size_t i = 0; i < count; ++i) {
      if (used + EF_NUMBER_FORMAT_MAX + 1 > sizeof text) {
        EF_CALL(vtu_put(vf, text, used));
        used = 0;
      }
      switch (s->type) {
        case EF_VTK_FLOAT64: {
          double v;
          memcpy(&v, chunk + i * 8, 8);
          used += ef_number_format_double(text + used, v, fabs(v) < VTU_ASCII_EXACT_ABOVE ? digits : 17);
          break;
        }
        case EF_VTK_INT64: {
          int64_t v;
          memcpy(&v, chunk + i * 8, 8);
          used += ef_number_format_int64(text + used, v);
          break;
        }
        case EF_VTK_INT32: {
          int32_t v;
          memcpy(&v, chunk + i * 4, 4);
          used += ef_number_format_int64(text + used, v);
          break;
        }
        default:
          used += ef_number_format_uint64(text + used, chunk[i]);
          break;
      }
      if (--left_on_line == 0 || first + i + 1 == s->n_values) {
        text[used++] = '\n';
        left_on_line = per_line;
      } else {
        text[used++] = ' ';
      }
    }
  }
  return vtu_put(vf, text, used);
}

#ifdef EF_HAVE_ZLIB
/* Compress s into s->packed: [n_blocks, block, partial last block or 0, compressed sizes...] + blocks. */
static int vtu_pack_zlib(vtu_stream *s, size_t block, int level, unsigned char *raw, unsigned char *z,
                         size_t z_cap) {
  size_t es = vtu_type_size(s->type);
  uint64_t n_bytes = s->n_values * es;
  uint64_t n_blocks = (n_bytes + block - 1) / block;
  uint64_t table_bytes = 8 * (3 + n_blocks);
  uint64_t cap = table_bytes + n_bytes / 2 + 64;
  unsigned char *buf;
  EF_MALLOC(buf, cap);
  uint64_t table[3] = {n_blocks, block, n_bytes % block};
  memcpy(buf, table, sizeof table);
  uint64_t size = table_bytes;
  for (uint64_t b = 0; b < n_blocks; ++b) {
    size_t len = (size_t)(n_bytes - b * block < block ? n_bytes - b * block : block);
    vtu_stream_fill(s, b * block / es, len / es, raw);
    vtu_to_little_endian(raw, len / es, es);
    uLongf z_len = (uLongf)z_cap;
    int zerr = compress2(z, &z_len, raw, (uLong)len, level);
    if (zerr != Z_OK) {
      free(buf);
      return EF_ERROR(zerr == Z_MEM_ERROR ? EF_ERR_MEMORY : EF_ERR_INTERNAL,
                      "zlib compress2 failed (%d) on array '%s'", zerr, s->name ? s->name : "Points");
    }
    if (size + z_len > cap) {
      uint64_t new_cap = 2 * cap + z_len;
      unsigned char *grown = realloc(buf, new_cap);
      if (!grown) {
        free(buf);
        return EF_ERROR(EF_ERR_MEMORY, "out of memory compressing array '%s'",
                        s->name ? s->name : "Points");
      }
      buf = grown;
      cap = new_cap;
    }
    memcpy(buf + size, z, z_len);
    uint64_t z_len64 = z_len;
    memcpy(buf + 8 * (3 + b), &z_len64, 8);
    size += z_len;
  }
  vtu_to_little_endian(buf, 3 + n_blocks, 8);
  s->packed = buf;
  s->packed_size = size;
  return EF_SUCCESS;
}
#endif

/* ---------------------------------------------------------------------------
 * The .vtu writer. */

/* Points a VTK cell type must have; 0 for types this writer does not know. */
static int vtu_cell_size(int type) {
  switch (type) {
    case EF_VTK_VERTEX: return 1;
    case EF_VTK_LINE: return 2;
    case EF_VTK_TRIANGLE: return 3;
    case EF_VTK_TETRA: return 4;
    default: return 0;
  }
}

/* Connectivity entry i of mesh. */
static int64_t vtu_conn(const ef_vtu_mesh *m, int64_t i) {
  return m->connectivity_type == EF_VTK_INT32 ? ((const int32_t *)m->connectivity)[i]
                                              : ((const int64_t *)m->connectivity)[i];
}

/* Check cell sizes, types and point indices; *conn_len = connectivity length. */
static int vtu_check_mesh(const char *path, const ef_vtu_mesh *m, int64_t *conn_len) {
  EF_CHECK(m->n_points >= 0 && m->n_cells >= 0, EF_ERR_PARAMETER,
           "%s: negative point or cell count", path);
  EF_CHECK(m->n_points == 0 || m->points, EF_ERR_PARAMETER, "%s: points missing", path);
  EF_CHECK(m->connectivity_type == EF_VTK_INT32 || m->connectivity_type == EF_VTK_INT64,
           EF_ERR_PARAMETER, "%s: connectivity must be Int32 or Int64", path);
  EF_CHECK(m->n_cells == 0 || m->connectivity, EF_ERR_PARAMETER, "%s: connectivity missing", path);
  if (!m->types)
    EF_CHECK(m->n_cells == 0 || vtu_cell_size(m->cell_type), EF_ERR_PARAMETER,
             "%s: unsupported VTK cell type %d", path, m->cell_type);
  if (!m->offsets)
    EF_CHECK(m->n_cells == 0 || m->nodes_per_cell >= 1, EF_ERR_PARAMETER,
             "%s: nodes_per_cell %d with no offsets", path, m->nodes_per_cell);
  int64_t end = 0;
  for (int64_t c = 0; c < m->n_cells; ++c) {
    int64_t begin = end;
    end = m->offsets ? m->offsets[c] : begin + m->nodes_per_cell;
    int type = m->types ? m->types[c] : m->cell_type;
    int size = vtu_cell_size(type);
    EF_CHECK(size, EF_ERR_PARAMETER, "%s: cell %" PRId64 " has unsupported VTK type %d", path, c, type);
    EF_CHECK(end - begin == size, EF_ERR_PARAMETER,
             "%s: cell %" PRId64 " of VTK type %d has %" PRId64 " points instead of %d", path, c, type,
             end - begin, size);
    for (int64_t i = begin; i < end; ++i) {
      int64_t p = vtu_conn(m, i);
      EF_CHECK(p >= 0 && p < m->n_points, EF_ERR_PARAMETER,
               "%s: cell %" PRId64 " refers to point %" PRId64 " of %" PRId64, path, c, p, m->n_points);
    }
  }
  *conn_len = end;
  return EF_SUCCESS;
}

/* Append a stream for a point/cell data array after checking it. */
static int vtu_data_stream(const char *path, const char *section, const ef_vtk_data_array *a,
                           int64_t n_tuples, vtu_stream *s) {
  EF_CHECK(a->name && a->name[0], EF_ERR_PARAMETER, "%s: %s array without a name", path, section);
  EF_CHECK(a->type == EF_VTK_FLOAT64 || a->type == EF_VTK_INT64 || a->type == EF_VTK_INT32,
           EF_ERR_PARAMETER, "%s: %s array '%s' must be Float64, Int64 or Int32", path, section,
           a->name);
  EF_CHECK(a->n_components >= 1, EF_ERR_PARAMETER, "%s: %s array '%s' has %d components", path,
           section, a->name, a->n_components);
  EF_CHECK(n_tuples == 0 || a->values, EF_ERR_PARAMETER, "%s: %s array '%s' has no values", path,
           section, a->name);
  memset(s, 0, sizeof *s);
  s->section = section;
  s->name = a->name;
  s->type = a->type;
  s->n_components = a->n_components;
  s->n_values = (uint64_t)n_tuples * (uint64_t)a->n_components;
  s->source = VTU_SRC_ARRAY;
  s->data = a->values;
  return EF_SUCCESS;
}

/* The <DataArray> element of s: inline values (ascii_digits: significant digits of doubles) or,
 * with ascii_digits 0, an offset into the appended block. */
static int vtu_write_data_array(vtu_file *vf, const vtu_stream *s, int ascii_digits, unsigned char *chunk) {
  EF_CALL(vtu_printf(vf, "        <DataArray type=\"%s\"", vtu_type_name(s->type)));
  if (s->name) {
    EF_CALL(vtu_printf(vf, " Name=\""));
    EF_CALL(vtu_put_escaped(vf, s->name));
    EF_CALL(vtu_printf(vf, "\""));
  }
  if (s->n_components > 1) EF_CALL(vtu_printf(vf, " NumberOfComponents=\"%d\"", s->n_components));
  if (!ascii_digits) return vtu_printf(vf, " format=\"appended\" offset=\"%" PRIu64 "\"/>\n", s->offset);
  EF_CALL(vtu_printf(vf, " format=\"ascii\">\n"));
  EF_CALL(vtu_write_ascii(vf, s, chunk, ascii_digits));
  return vtu_printf(vf, "        </DataArray>\n");
}

/* XML header (and inline data when ascii_digits, the digits of doubles, is not 0), then the
 * appended block when binary. */
static int vtu_write_file(vtu_file *vf, const ef_vtu_mesh *m, vtu_stream *st, int n_st, int ascii_digits,
                          int compress, unsigned char *chunk) {
  EF_CALL(vtu_printf(vf,
                     "<?xml version=\"1.0\"?>\n"
                     "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
                     "header_type=\"UInt64\"%s>\n"
                     "  <UnstructuredGrid>\n"
                     "    <Piece NumberOfPoints=\"%" PRId64 "\" NumberOfCells=\"%" PRId64 "\">\n",
                     compress ? " compressor=\"vtkZLibDataCompressor\"" : "", m->n_points,
                     m->n_cells));
  static const char *sections[] = {"PointData", "CellData", "Points", "Cells"};
  for (int k = 0; k < 4; ++k) {
    EF_CALL(vtu_printf(vf, "      <%s>\n", sections[k]));
    for (int i = 0; i < n_st; ++i)
      if (st[i].section == sections[k]) EF_CALL(vtu_write_data_array(vf, &st[i], ascii_digits, chunk));
    EF_CALL(vtu_printf(vf, "      </%s>\n", sections[k]));
  }
  EF_CALL(vtu_printf(vf, "    </Piece>\n  </UnstructuredGrid>\n"));
  if (!ascii_digits) {
    EF_CALL(vtu_printf(vf, "  <AppendedData encoding=\"raw\">\n   _"));
    for (int i = 0; i < n_st; ++i) {
      if (compress)
        EF_CALL(vtu_put(vf, st[i].packed, (size_t)st[i].packed_size));
      else
        EF_CALL(vtu_write_raw(vf, &st[i], chunk));
    }
    EF_CALL(vtu_printf(vf, "\n  </AppendedData>\n"));
  }
  return vtu_printf(vf, "</VTKFile>\n");
}

/* Write one VTK XML UnstructuredGrid piece atomically (see ef_vtk_output.h). */
int ef_vtu_write(const char *path, const ef_vtu_mesh *mesh, const ef_vtu_write_options *opt) {
  EF_CHECK(path && mesh, EF_ERR_PARAMETER, "ef_vtu_write: path and mesh are required");
  ef_vtu_write_options o = {.format = EF_VTK_FORMAT_BINARY};
  if (opt) o = *opt;
  int ascii = o.format == EF_VTK_FORMAT_ASCII;
  EF_CHECK(ascii || o.format == EF_VTK_FORMAT_BINARY, EF_ERR_PARAMETER, "%s: unknown format %d",
           path, (int)o.format);
  EF_CHECK(!(ascii && o.compress), EF_ERR_PARAMETER,
           "%s: compression needs the binary format, not ascii", path);
  EF_CHECK(o.precision >= 0 && o.precision <= 17, EF_ERR_PARAMETER,
           "%s: ascii precision %d is not 1..17 significant digits (0: 17)", path, o.precision);
  int ascii_digits = ascii ? (o.precision ? o.precision : 17) : 0;
#ifndef EF_HAVE_ZLIB
  EF_CHECK(!o.compress, EF_ERR_UNSUPPORTED, "%s: this build has no zlib; write uncompressed", path);
#endif
  int64_t block = o.block_size ? o.block_size : VTU_DEFAULT_BLOCK;
  EF_CHECK(block >= VTU_MIN_BLOCK && block <= VTU_MAX_BLOCK && block % 8 == 0, EF_ERR_PARAMETER,
           "%s: compression block size %" PRId64 " is not a multiple of 8 in [32 KiB, 1 MiB]", path,
           block);
  EF_CHECK(o.compression_level >= 0 && o.compression_level <= 9, EF_ERR_PARAMETER,
           "%s: compression level %d outside 0..9", path, o.compression_level);
  EF_CHECK(mesh->n_point_data >= 0 && mesh->n_cell_data >= 0 &&
               (mesh->n_point_data == 0 || mesh->point_data) &&
               (mesh->n_cell_data == 0 || mesh->cell_data),
           EF_ERR_PARAMETER, "%s: bad point/cell data lists", path);
  int64_t conn_len = 0;
  EF_CALL(vtu_check_mesh(path, mesh, &conn_len));

  int err = EF_SUCCESS;
  int n_st = mesh->n_point_data + mesh->n_cell_data + 4;
  vtu_stream *st = NULL;
  unsigned char *chunk = NULL, *z = NULL;
  vtu_file vf = {NULL, path, NULL};
  st = calloc((size_t)n_st, sizeof *st);
  size_t chunk_bytes = o.compress ? (size_t)block : VTU_CHUNK_BYTES;
  chunk = malloc(chunk_bytes);
  EF_CHECK_GOTO(st && chunk, EF_ERR_MEMORY, done, "%s: out of memory", path);

  int k = 0;
  for (int i = 0; i < mesh->n_point_data; ++i, ++k)
    EF_CALL_GOTO(vtu_data_stream(path, "PointData", &mesh->point_data[i], mesh->n_points, &st[k]), done);
  for (int i = 0; i < mesh->n_cell_data; ++i, ++k)
    EF_CALL_GOTO(vtu_data_stream(path, "CellData", &mesh->cell_data[i], mesh->n_cells, &st[k]), done);
  st[k++] = (vtu_stream){.section = "Points", .type = EF_VTK_FLOAT64, .n_components = 3,
                         .n_values = 3 * (uint64_t)mesh->n_points, .source = VTU_SRC_ARRAY,
                         .data = mesh->points};
  st[k++] = (vtu_stream){.section = "Cells", .name = "connectivity", .type = mesh->connectivity_type,
                         .n_components = 1, .n_values = (uint64_t)conn_len, .source = VTU_SRC_ARRAY,
                         .data = mesh->connectivity};
  st[k++] = mesh->offsets
                ? (vtu_stream){.section = "Cells", .name = "offsets", .type = EF_VTK_INT64,
                               .n_components = 1, .n_values = (uint64_t)mesh->n_cells,
                               .source = VTU_SRC_ARRAY, .data = mesh->offsets}
                : (vtu_stream){.section = "Cells", .name = "offsets", .type = EF_VTK_INT64,
                               .n_components = 1, .n_values = (uint64_t)mesh->n_cells,
                               .source = VTU_SRC_UNIFORM_OFFSETS, .param = mesh->nodes_per_cell};
  st[k++] = mesh->types
                ? (vtu_stream){.section = "Cells", .name = "types", .type = EF_VTK_UINT8,
                               .n_components = 1, .n_values = (uint64_t)mesh->n_cells,
                               .source = VTU_SRC_ARRAY, .data = mesh->types}
                : (vtu_stream){.section = "Cells", .name = "types", .type = EF_VTK_UINT8,
                               .n_components = 1, .n_values = (uint64_t)mesh->n_cells,
                               .source = VTU_SRC_CONSTANT, .param = mesh->cell_type};

  /* Offsets into the appended block; compressed sizes are only known after compressing. */
  uint64_t offset = 0;
  if (o.compress) {
#ifdef EF_HAVE_ZLIB
    size_t z_cap = (size_t)compressBound((uLong)block);
    z = malloc(z_cap);
    EF_CHECK_GOTO(z, EF_ERR_MEMORY, done, "%s: out of memory", path);
    /* Level 1 by default: on a 1M-node field it took half the time of zlib's default 6 for
     * files only 6% larger. */
    int level = o.compression_level ? o.compression_level : 1;
    for (int i = 0; i < n_st; ++i) {
      EF_CALL_GOTO(vtu_pack_zlib(&st[i], (size_t)block, level, chunk, z, z_cap), done);
      st[i].offset = offset;
      offset += st[i].packed_size;
    }
#endif
  } else {
    for (int i = 0; i < n_st; ++i) {
      st[i].offset = offset;
      offset += 8 + st[i].n_values * vtu_type_size(st[i].type);
    }
  }

  EF_CALL_GOTO(vtu_file_open(path, &vf), done);
  err = vtu_write_file(&vf, mesh, st, n_st, ascii_digits, o.compress, chunk);
  if (err)
    vtu_file_abort(&vf);
  else
    err = vtu_file_commit(&vf, o.sync);
done:
  if (st)
    for (int i = 0; i < n_st; ++i) free(st[i].packed);
  free(st);
  free(chunk);
  free(z);
  return err;
}

/* Shortest of %.15g..%.17g that reads back as exactly v, so times stay readable ("0.1"). */
static void vtu_format_exact(char *buf, size_t n, double v) {
  for (int digits = 15; digits <= 17; ++digits) {
    snprintf(buf, n, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
}

#define VTU_PVD_CLOSING "  </Collection>\n</VTKFile>\n"

/* One DataSet line of a .pvd, as ef_vtk_pvd_write writes it, into a malloc'ed string. */
static int vtu_pvd_line(double time, const char *file, char **out, size_t *len) {
  char t[32];
  vtu_format_exact(t, sizeof t, time);
  size_t cap = strlen(file) * 6 + 128;
  char *b;
  EF_MALLOC(b, cap);
  size_t n = (size_t)snprintf(b, cap, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"", t);
  for (const char *c = file; *c; ++c) {
    const char *r = *c == '&' ? "&amp;" : *c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '"' ? "&quot;"
                  : *c == '\'' ? "&apos;" : NULL;
    if (r) {
      memcpy(b + n, r, strlen(r));
      n += strlen(r);
    } else {
      b[n++] = *c;
    }
  }
  memcpy(b + n, "\"/>\n", 5);
  n += 4;
  *out = b;
  *len = n;
  return EF_SUCCESS;
}

static int vtu_pvd_write(const char *path, int n, const double *times, const char *const *files, int sync);

/* Write a ParaView collection file listing (time, file) pairs (fsync'd). */
int ef_vtk_pvd_write(const char *path, int n, const double *times, const char *const *files) {
  return vtu_pvd_write(path, n, times, files, 1);
}

/* ef_vtk_pvd_write, synced or not. */
static int vtu_pvd_write(const char *path, int n, const double *times, const char *const *files, int sync) {
  EF_CHECK(path && n >= 0 && (n == 0 || (times && files)), EF_ERR_PARAMETER,
           "ef_vtk_pvd_write: bad arguments");
  vtu_file vf;
  EF_CALL(vtu_file_open(path, &vf));
  int err = vtu_printf(&vf,
                       "<?xml version=\"1.0\"?>\n"
                       "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                       "  <Collection>\n");
  for (int i = 0; i < n && !err; ++i) {
    char t[32];
    vtu_format_exact(t, sizeof t, times[i]);
    err = vtu_printf(&vf, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"", t);
    if (!err) err = vtu_put_escaped(&vf, files[i]);
    if (!err) err = vtu_printf(&vf, "\"/>\n");
  }
  if (!err) err = vtu_printf(&vf, VTU_PVD_CLOSING);
  if (err) {
    vtu_file_abort(&vf);
    return err;
  }
  return vtu_file_commit(&vf, sync);
}

/* Parse Kratos' file_format value. */
int ef_vtk_format_from_string(const char *text, ef_vtk_format *format) {
  EF_CHECK(text && format, EF_ERR_PARAMETER, "ef_vtk_format_from_string: NULL argument");
  if (strcmp(text, "ascii") == 0)
    *format = EF_VTK_FORMAT_ASCII;
  else if (strcmp(text, "binary") == 0)
    *format = EF_VTK_FORMAT_BINARY;
  else
    return EF_ERROR(EF_ERR_PARAMETER, "VTK file_format '%s' is not one of \"ascii\", \"binary\"", text);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Model part output. */

/* One .pvd time series: the steps written so far, in the order first written. */
typedef struct {
  char *pvd_name; /* file name inside the output folder */
  int n, cap;
  int *steps;
  double *times;
  char **files; /* .vtu names relative to the folder */
  int n_synced;   /* files[0..n_synced) are fsync'd (ef_vtk_output_sync) and not written since */
  int fd;         /* the .pvd kept open for appends in place (-1: not yet) */
  int64_t tail;   /* offset of the closing tags */
  int64_t last;   /* offset of the last DataSet line */
  int64_t end;    /* bytes in the file (whitespace may pad the closing tags) */
} vtk_series;

/* Collections up to this many entries are rewritten whole at each output (atomically, under a
 * temporary name); longer ones get each new entry written in place over the closing tags, so an
 * output costs O(1) however long the run (one pwrite of one line and the closing tags: a reader
 * or a kill -9 sees the file before or after it, each a complete collection). */
#define VTK_PVD_REWRITE_MAX 32

struct ef_vtk_output_s {
  char *folder;
  char *base_name; /* NULL: the model part's name */
  char *part;      /* NULL: the whole model part in the main file */
  int n_variables;
  char **variables;
  ef_vtu_write_options write;
  int n_ranks, rank; /* MPI: this rank's piece of n_ranks (ef_vtk_output_options) */
  int write_ids;
  int write_conditions;
  int output_sub_model_parts;
  int n_sub_model_parts; /* 0: all */
  char **sub_model_parts;
  int n_series;
  vtk_series *series;
  int ascii_measured; /* the ascii/binary size warning was given */
  /* MPI (ef_vtk_output_reduce_parts): the root ("") and every sub model part by dotted path, with
   * what it holds over all ranks (elements, conditions, nodes; each counted once, on the rank owning
   * its first node), so every rank's piece of a part writes the same kind of cells and arrays. */
  int n_parts; /* -1: not reduced yet */
  char **part_paths;
  int64_t *part_counts; /* 3 per part */
};

/* Copy of s (NULL stays NULL). */
static int vtk_strdup(const char *s, char **out) {
  *out = NULL;
  if (!s) return EF_SUCCESS;
  size_t n = strlen(s) + 1;
  EF_MALLOC(*out, n);
  memcpy(*out, s, n);
  return EF_SUCCESS;
}

/* Free n strings and their list (NULL is fine). */
static void vtk_free_list(int n, char **list) {
  if (!list) return;
  for (int i = 0; i < n; ++i) free(list[i]);
  free(list);
}

/* Copy of a list of n strings, each required; nothing is left allocated on failure. */
static int vtk_strdup_list(int n, const char *const *in, const char *what, char ***out) {
  *out = NULL;
  if (n == 0) return EF_SUCCESS;
  EF_CHECK(in, EF_ERR_PARAMETER, "VTK output: %d %s given as a NULL list", n, what);
  char **list;
  EF_CALLOC(list, n);
  int err = EF_SUCCESS;
  for (int i = 0; i < n && !err; ++i) {
    if (!in[i] || !in[i][0])
      err = EF_ERROR(EF_ERR_PARAMETER, "VTK output: %s %d is empty", what, i);
    else
      err = vtk_strdup(in[i], &list[i]);
  }
  if (err) {
    vtk_free_list(n, list);
    return err;
  }
  *out = list;
  return EF_SUCCESS;
}

/* mkdir -p of the output folder (ef_util.h), with this writer's message. */
static int vtk_make_folders(const char *path) {
  char failed[4096];
  int e = ef_make_folders_errno(path, failed, sizeof failed);
  if (!e) return EF_SUCCESS;
  char what[64 + sizeof failed];
  snprintf(what, sizeof what, "cannot create '%s' on the way to the output folder", failed);
  return VTU_IO_ERROR(what, path, e);
}

/* Create the output object from validated, copied options. */
int ef_vtk_output_create(const ef_vtk_output_options *opt, ef_vtk_output *out) {
  EF_CHECK(opt && out, EF_ERR_PARAMETER, "ef_vtk_output_create: NULL argument");
  *out = NULL;
  EF_CHECK(opt->format == EF_VTK_FORMAT_ASCII || opt->format == EF_VTK_FORMAT_BINARY,
           EF_ERR_PARAMETER, "VTK output: unknown format %d", (int)opt->format);
  EF_CHECK(!(opt->format == EF_VTK_FORMAT_ASCII && opt->compress), EF_ERR_PARAMETER,
           "VTK output: compression needs the binary format, not ascii");
  EF_CHECK(opt->precision >= 0 && opt->precision <= 17, EF_ERR_PARAMETER,
           "VTK output: ascii precision %d is not 1..17 significant digits (0: 17)", opt->precision);
#ifndef EF_HAVE_ZLIB
  EF_CHECK(!opt->compress, EF_ERR_UNSUPPORTED,
           "VTK output: compression requested but this build has no zlib");
#endif
  EF_CHECK(opt->n_variables >= 0 && opt->n_sub_model_parts >= 0, EF_ERR_PARAMETER,
           "VTK output: negative list length");
  EF_CHECK(!opt->base_name || (opt->base_name[0] && !strchr(opt->base_name, '/')), EF_ERR_PARAMETER,
           "VTK output: base name '%s' must be a non-empty file name without '/'",
           opt->base_name ? opt->base_name : "");
  ef_vtk_output o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  int err;
  const char *folder = opt->output_folder && opt->output_folder[0] ? opt->output_folder : "vtk_output";
  EF_CALL_GOTO(vtk_strdup(folder, &o->folder), fail);
  EF_CALL_GOTO(vtk_strdup(opt->base_name, &o->base_name), fail);
  EF_CALL_GOTO(vtk_strdup(opt->part, &o->part), fail);
  EF_CALL_GOTO(vtk_strdup_list(opt->n_variables, opt->variables, "variable", &o->variables), fail);
  o->n_variables = opt->n_variables;
  EF_CALL_GOTO(vtk_strdup_list(opt->n_sub_model_parts, opt->sub_model_parts, "sub model part",
                               &o->sub_model_parts),
               fail);
  o->n_sub_model_parts = opt->n_sub_model_parts;
  o->write.format = opt->format;
  o->write.compress = opt->compress;
  o->write.precision = opt->precision;
  o->write_ids = opt->write_ids;
  o->write_conditions = opt->write_conditions;
  o->output_sub_model_parts = opt->output_sub_model_parts;
  o->write.sync = opt->sync;
  err = EF_SUCCESS;
  EF_CHECK_GOTO(opt->n_ranks <= 1 || (opt->rank >= 0 && opt->rank < opt->n_ranks), EF_ERR_PARAMETER, fail,
                "VTK output: rank %d of %d", opt->rank, opt->n_ranks);
  o->n_ranks = opt->n_ranks > 1 ? opt->n_ranks : 1;
  o->rank = opt->n_ranks > 1 ? opt->rank : 0;
  o->n_parts = -1;
  *out = o;
  return EF_SUCCESS;
fail:
  ef_vtk_output_destroy(&o);
  return err;
}

/* fsync path (best effort for folders, which some file systems refuse). */
static int vtk_fsync_path(const char *path, int is_folder) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return is_folder ? EF_SUCCESS : VTU_IO_ERROR("cannot open for sync", path, errno);
  int e = fsync(fd) != 0 && errno != EINVAL && !is_folder ? errno : 0;
  close(fd);
  return e ? VTU_IO_ERROR("cannot sync", path, e) : EF_SUCCESS;
}

/* fsync every file written since the last call (so a run that syncs at each restart point pays for
 * each file once), each .pvd and the folder. */
int ef_vtk_output_sync(ef_vtk_output o) {
  if (!o) return EF_SUCCESS;
  size_t cap = strlen(o->folder) + 2;
  for (int i = 0; i < o->n_series; ++i) {
    vtk_series *s = &o->series[i];
    for (int k = s->n_synced; k < s->n; ++k)
      if (strlen(s->files[k]) + strlen(o->folder) + 2 > cap) cap = strlen(s->files[k]) + strlen(o->folder) + 2;
    if (strlen(s->pvd_name) + strlen(o->folder) + 2 > cap) cap = strlen(s->pvd_name) + strlen(o->folder) + 2;
  }
  char *path;
  EF_MALLOC(path, cap);
  int err = EF_SUCCESS;
  for (int i = 0; i < o->n_series && !err; ++i) {
    vtk_series *s = &o->series[i];
    for (int k = s->n_synced; k < s->n && !err; ++k) { /* only those written since the last sync */
      snprintf(path, cap, "%s/%s", o->folder, s->files[k]);
      err = vtk_fsync_path(path, 0);
    }
    snprintf(path, cap, "%s/%s", o->folder, s->pvd_name);
    if (!err) err = vtk_fsync_path(path, 0);
    if (!err) s->n_synced = s->n;
  }
  if (!err) err = vtk_fsync_path(o->folder, 1);
  free(path);
  return err;
}

/* Free the output object and its series. */
void ef_vtk_output_destroy(ef_vtk_output *out) {
  if (!out || !*out) return;
  ef_vtk_output o = *out;
  free(o->folder);
  free(o->base_name);
  free(o->part);
  vtk_free_list(o->n_variables, o->variables);
  vtk_free_list(o->n_sub_model_parts, o->sub_model_parts);
  vtk_free_list(o->n_parts, o->part_paths);
  free(o->part_counts);
  for (int i = 0; i < o->n_series; ++i) {
    vtk_series *s = &o->series[i];
    if (s->fd >= 0) close(s->fd);
    free(s->pvd_name);
    free(s->steps);
    free(s->times);
    vtk_free_list(s->n, s->files);
  }
  free(o->series);
  free(o);
  *out = NULL;
}

/* Replace the .pvd whole (atomically); past VTK_PVD_REWRITE_MAX entries, keep it open for appends. */
static int vtk_series_rewrite(vtk_series *s, const char *path, int sync) {
  if (s->fd >= 0) close(s->fd); /* the rename below replaces the file it points to */
  s->fd = -1;
  EF_CALL(vtu_pvd_write(path, s->n, s->times, (const char *const *)s->files, sync));
  if (s->n < VTK_PVD_REWRITE_MAX) return EF_SUCCESS;
  char *line;
  size_t len;
  EF_CALL(vtu_pvd_line(s->times[s->n - 1], s->files[s->n - 1], &line, &len));
  free(line);
  struct stat st;
  s->fd = open(path, O_WRONLY | O_CLOEXEC);
  if (s->fd < 0 || fstat(s->fd, &st) != 0) {
    int e = errno;
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    return VTU_IO_ERROR("cannot reopen", path, e);
  }
  s->end = (int64_t)st.st_size;
  s->tail = s->end - (int64_t)strlen(VTU_PVD_CLOSING);
  s->last = s->tail - (int64_t)len;
  return EF_SUCCESS;
}

/* The last entry of s is new (is_new) or replaces the last one: write it and the closing tags over
 * the old closing tags (or over the old last line) in one pwrite; spaces pad what a shorter line
 * leaves behind the closing tags (whitespace after the root element is valid XML). */
static int vtk_series_append(vtk_series *s, const char *path, int is_new, int sync) {
  char *line;
  size_t len;
  EF_CALL(vtu_pvd_line(s->times[s->n - 1], s->files[s->n - 1], &line, &len));
  const size_t closing = strlen(VTU_PVD_CLOSING);
  const int64_t at = is_new ? s->tail : s->last;
  int64_t new_end = at + (int64_t)(len + closing);
  size_t total = len + closing + (size_t)(new_end < s->end ? s->end - new_end : 0);
  char *buf = malloc(total);
  if (!buf) {
    free(line);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  memcpy(buf, line, len);
  memcpy(buf + len, VTU_PVD_CLOSING, closing);
  memset(buf + len + closing, ' ', total - len - closing);
  free(line);
  size_t done = 0;
  int err = EF_SUCCESS;
  while (done < total) {
    ssize_t w = pwrite(s->fd, buf + done, total - done, (off_t)(at + (int64_t)done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = VTU_IO_ERROR("cannot append to", path, w < 0 ? errno : ENOSPC);
      break;
    }
    done += (size_t)w;
  }
  free(buf);
  if (err) {
    /* The file may now be inconsistent: rewrite it whole at the next output. */
    close(s->fd);
    s->fd = -1;
    return err;
  }
  s->last = at;
  s->tail = at + (int64_t)len;
  if (at + (int64_t)total > s->end) s->end = at + (int64_t)total;
  if (sync && fdatasync(s->fd) != 0 && errno != EINVAL) return VTU_IO_ERROR("cannot sync", path, errno);
  return EF_SUCCESS;
}

/* Record (step, time, file) in series pvd_name (replacing an earlier write of
 * the same step); *series: the series, *k: the entry's index, *is_new: 1 when it was added. */
static int vtk_series_put(ef_vtk_output o, const char *pvd_name, int step, double time, const char *file,
                          vtk_series **series, int *k_out, int *is_new_out) {
  vtk_series *s = NULL;
  for (int i = 0; i < o->n_series && !s; ++i)
    if (strcmp(o->series[i].pvd_name, pvd_name) == 0) s = &o->series[i];
  if (!s) {
    vtk_series *grown = realloc(o->series, (size_t)(o->n_series + 1) * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
    o->series = grown;
    s = &o->series[o->n_series];
    memset(s, 0, sizeof *s);
    s->fd = -1;
    ++o->n_series;
    EF_CALL(vtk_strdup(pvd_name, &s->pvd_name));
  }
  int k = 0;
  if (s->n > 0 && step > s->steps[s->n - 1])
    k = s->n; /* the usual case, a later step: no search (a run writes hundreds of thousands) */
  else
    while (k < s->n && s->steps[k] != step) ++k;
  const int is_new = k == s->n;
  if (k < s->n_synced) s->n_synced = k; /* rewritten: sync it again */
  if (k == s->n) {
    if (s->n == s->cap) {
      int cap = s->cap ? 2 * s->cap : 16;
      int *steps = realloc(s->steps, (size_t)cap * sizeof *steps);
      if (steps) s->steps = steps;
      double *times = realloc(s->times, (size_t)cap * sizeof *times);
      if (times) s->times = times;
      char **files = realloc(s->files, (size_t)cap * sizeof *files);
      if (files) s->files = files;
      EF_CHECK(steps && times && files, EF_ERR_MEMORY, "out of memory");
      s->cap = cap;
    }
    s->files[k] = NULL;
    ++s->n;
  }
  char *copy;
  EF_CALL(vtk_strdup(file, &copy));
  free(s->files[k]);
  s->files[k] = copy;
  s->steps[k] = step;
  s->times[k] = time;
  *series = s;
  *k_out = k;
  *is_new_out = is_new;
  return EF_SUCCESS;
}

/* Write the .pvd of series s after entry k changed (is_new: it was added); k = -1: rewrite it whole. */
static int vtk_series_write(ef_vtk_output o, vtk_series *s, int k, int is_new) {
  size_t n = strlen(o->folder) + strlen(s->pvd_name) + 2;
  char *path;
  EF_MALLOC(path, n);
  snprintf(path, n, "%s/%s", o->folder, s->pvd_name);
  /* O(1): the last entry written in place over the closing tags; else the whole file anew. */
  int err = k == s->n - 1 && s->fd >= 0 ? vtk_series_append(s, path, is_new, o->write.sync)
                                        : vtk_series_rewrite(s, path, o->write.sync);
  free(path);
  return err;
}

/* Record (step, time, file) in series pvd_name and update its .pvd. */
static int vtk_series_add(ef_vtk_output o, const char *pvd_name, int step, double time,
                          const char *file) {
  vtk_series *s;
  int k, is_new;
  EF_CALL(vtk_series_put(o, pvd_name, step, time, file, &s, &k, &is_new));
  return vtk_series_write(o, s, k, is_new);
}

/* VTK type of a cell with n nodes (triangles in 2D, tetrahedra and triangles in 3D). */
static int vtk_cell_type_of(int n) {
  static const int types[] = {0, EF_VTK_VERTEX, EF_VTK_LINE, EF_VTK_TRIANGLE, EF_VTK_TETRA};
  return n >= 1 && n <= 4 ? types[n] : 0;
}

/* A model part, or part of one, as writer arrays; buffers it had to build are owned. */
typedef struct {
  ef_vtu_mesh mesh;
  ef_vtk_data_array *point_data;
  ef_vtk_data_array cell_data[3];
  int n_owned;
  void **owned;
} vtk_piece;

/* Free what vtk_piece_build allocated. */
static void vtk_piece_free(vtk_piece *pc) {
  for (int i = 0; i < pc->n_owned; ++i) free(pc->owned[i]);
  free(pc->owned);
  free(pc->point_data);
}

/* Allocate n elements of size bytes owned by the piece. */
static int vtk_piece_alloc(vtk_piece *pc, int64_t n, size_t size, void **p) {
  *p = malloc(n > 0 ? (size_t)n * size : 1);
  EF_CHECK(*p, EF_ERR_MEMORY, "out of memory allocating %lld x %zu bytes for VTK output",
           (long long)n, size);
  pc->owned[pc->n_owned++] = *p;
  return EF_SUCCESS;
}

/* Check that n indices lie in [0, limit). */
static int vtk_check_indices(const char *path, const char *what, const ef_index *idx, int64_t n,
                             int64_t limit) {
  for (int64_t i = 0; i < n; ++i)
    EF_CHECK(idx[i] >= 0 && idx[i] < limit, EF_ERR_MESH,
             "sub model part '%s' refers to %s index %d of %lld", path, what, (int)idx[i],
             (long long)limit);
  return EF_SUCCESS;
}

/* Visitor form: check a sub model part's lists before anything is written. */
static int vtk_check_sub_model_part(ef_sub_model_part *smp, const char *path, void *user) {
  ef_model_part mp = user;
  EF_CALL(vtk_check_indices(path, "element", smp->elements, smp->n_elements, mp->n_elements));
  EF_CALL(vtk_check_indices(path, "condition", smp->conditions, smp->n_conditions, mp->n_conditions));
  return vtk_check_indices(path, "node", smp->nodes, smp->n_nodes, mp->n_nodes);
}

/* Flag the nodes of one cell as used, refusing indices outside the model part. */
static int vtk_mark_nodes(ef_index *map, int64_t n_nodes, const ef_index *cell, int count,
                          const char *what, int64_t id) {
  for (int j = 0; j < count; ++j) {
    EF_CHECK(cell[j] >= 0 && cell[j] < n_nodes, EF_ERR_MESH,
             "%s %lld refers to node index %d of %lld", what, (long long)id, (int)cell[j],
             (long long)n_nodes);
    map[cell[j]] = 0;
  }
  return EF_SUCCESS;
}

/* The cells of a piece: element, condition and vertex (node) index lists, NULL meaning every element
 * (condition) of the model part; `local`: the points are the nodes those cells use, renumbered in
 * increasing order (else every node of the model part, the cells' indices as they are);
 * element_ids / condition_ids: with write_ids, an ELEMENT_ID / CONDITION_ID cell array (-1 on the
 * cells of the other kind). */
typedef struct {
  int64_t n_el, n_co, n_vx;
  const ef_index *el, *co, *vx;
  int local;
  int element_ids, condition_ids;
} vtk_cells;

/* One process: the whole model part (smp NULL: its elements, and its conditions with
 * write_conditions) or one sub model part: its elements, else its conditions, else its nodes as
 * vertices, on the nodes those use. */
static vtk_cells vtk_cells_serial(ef_vtk_output o, ef_model_part mp, const ef_sub_model_part *smp) {
  vtk_cells c;
  memset(&c, 0, sizeof c);
  if (!smp) {
    c.n_el = mp->n_elements;
    c.n_co = o->write_conditions ? mp->n_conditions : 0;
  } else if (smp->n_elements) {
    c.n_el = smp->n_elements;
    c.el = smp->elements;
  } else if (smp->n_conditions) {
    c.n_co = smp->n_conditions;
    c.co = smp->conditions;
  } else {
    c.n_vx = smp->n_nodes;
    c.vx = smp->nodes;
  }
  c.local = smp != NULL;
  c.element_ids = c.n_el > 0;
  c.condition_ids = c.n_co > 0;
  return c;
}

/* Describe the cells of `cells` with their nodes and the output's variables as writer arrays. */
static int vtk_piece_build(ef_vtk_output o, ef_model_part mp, ef_variable **vars, const vtk_cells *cells,
                           vtk_piece *pc) {
  memset(pc, 0, sizeof *pc);
  EF_CALLOC(pc->owned, 13 + o->n_variables);
  EF_CALLOC(pc->point_data, 1 + o->n_variables);
  const int64_t n_el = cells->n_el, n_co = cells->n_co, n_vx = cells->n_vx;
  const ef_index *el = cells->el, *co = cells->co, *vx = cells->vx; /* NULL: all of them */
  const int local = cells->local;
  const int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  ef_vtu_mesh *m = &pc->mesh;
  m->n_cells = n_el + n_co + n_vx;

  /* Local numbering for sub model parts: map[global] = local or -1. */
  ef_index *map = NULL, *nodes = NULL;
  int64_t n_local = mp->n_nodes;
  if (local) {
    EF_CALL(vtk_piece_alloc(pc, mp->n_nodes, sizeof *map, (void **)&map));
    for (int64_t i = 0; i < mp->n_nodes; ++i) map[i] = -1;
    for (int64_t c = 0; c < n_el; ++c)
      EF_CALL(vtk_mark_nodes(map, mp->n_nodes, mp->elements + (int64_t)el[c] * npe, npe, "element",
                             mp->element_ids ? mp->element_ids[el[c]] : el[c]));
    for (int64_t c = 0; c < n_co; ++c)
      EF_CALL(vtk_mark_nodes(map, mp->n_nodes, mp->conditions + (int64_t)co[c] * npc, npc,
                             "condition", mp->condition_ids ? mp->condition_ids[co[c]] : co[c]));
    for (int64_t c = 0; c < n_vx; ++c) map[vx[c]] = 0;
    n_local = 0;
    for (int64_t i = 0; i < mp->n_nodes; ++i)
      if (map[i] == 0) ++n_local;
    EF_CALL(vtk_piece_alloc(pc, n_local, sizeof *nodes, (void **)&nodes));
    n_local = 0;
    for (int64_t i = 0; i < mp->n_nodes; ++i)
      if (map[i] == 0) {
        nodes[n_local] = (ef_index)i;
        map[i] = (ef_index)n_local++;
      }
  }
  m->n_points = n_local;

  /* Nodal arrays: the model part's own, or gathered onto the local nodes. */
  m->points = mp->coords;
  if (local) {
    double *xyz;
    EF_CALL(vtk_piece_alloc(pc, 3 * n_local, sizeof *xyz, (void **)&xyz));
    for (int64_t i = 0; i < n_local; ++i)
      memcpy(xyz + 3 * i, mp->coords + 3 * (int64_t)nodes[i], 3 * sizeof *xyz);
    m->points = xyz;
  }
  for (int v = 0; v < o->n_variables; ++v) {
    int nc = vars[v]->n_components;
    const double *values = vars[v]->values;
    if (local) {
      double *gathered;
      EF_CALL(vtk_piece_alloc(pc, nc * n_local, sizeof *gathered, (void **)&gathered));
      for (int64_t i = 0; i < n_local; ++i)
        memcpy(gathered + nc * i, values + nc * (int64_t)nodes[i], (size_t)nc * sizeof *gathered);
      values = gathered;
    }
    pc->point_data[m->n_point_data++] =
        (ef_vtk_data_array){vars[v]->name, EF_VTK_FLOAT64, nc, values};
  }
  if (o->write_ids) {
    const int64_t *ids = mp->node_ids;
    if (local && mp->node_ids) {
      int64_t *gathered;
      EF_CALL(vtk_piece_alloc(pc, n_local, sizeof *gathered, (void **)&gathered));
      for (int64_t i = 0; i < n_local; ++i) gathered[i] = mp->node_ids[nodes[i]];
      ids = gathered;
    }
    pc->point_data[m->n_point_data++] = (ef_vtk_data_array){"NODE_ID", EF_VTK_INT64, 1, ids};
  }
  m->point_data = pc->point_data;

  /* Cells: the element array itself when that is all we write, else built. */
  m->connectivity_type = EF_VTK_INT32;
  if (!local && n_co == 0) {
    m->connectivity = mp->elements;
    m->nodes_per_cell = npe;
    m->cell_type = vtk_cell_type_of(npe);
  } else {
    int64_t conn_len = n_el * npe + n_co * npc + n_vx;
    ef_index *conn;
    int64_t *offsets;
    uint8_t *types;
    EF_CALL(vtk_piece_alloc(pc, conn_len, sizeof *conn, (void **)&conn));
    EF_CALL(vtk_piece_alloc(pc, m->n_cells, sizeof *offsets, (void **)&offsets));
    EF_CALL(vtk_piece_alloc(pc, m->n_cells, sizeof *types, (void **)&types));
    int64_t k = 0, c = 0;
    for (int64_t i = 0; i < n_el; ++i, ++c) {
      const ef_index *cell = mp->elements + (int64_t)(el ? el[i] : i) * npe;
      for (int j = 0; j < npe; ++j) conn[k++] = map ? map[cell[j]] : cell[j];
      offsets[c] = k;
      types[c] = (uint8_t)vtk_cell_type_of(npe);
    }
    for (int64_t i = 0; i < n_co; ++i, ++c) {
      const ef_index *cell = mp->conditions + (int64_t)(co ? co[i] : i) * npc;
      for (int j = 0; j < npc; ++j) conn[k++] = map ? map[cell[j]] : cell[j];
      offsets[c] = k;
      types[c] = (uint8_t)vtk_cell_type_of(npc);
    }
    for (int64_t i = 0; i < n_vx; ++i, ++c) {
      conn[k++] = map[vx[i]];
      offsets[c] = k;
      types[c] = EF_VTK_VERTEX;
    }
    m->connectivity = conn;
    m->offsets = offsets;
    m->types = types;
  }

  /* Entity ids per cell; -1 on cells of the other kind. */
  if (o->write_ids && cells->element_ids) {
    const int64_t *ids = mp->element_ids;
    if ((el || n_co) && mp->element_ids) {
      int64_t *cell_ids;
      EF_CALL(vtk_piece_alloc(pc, m->n_cells, sizeof *cell_ids, (void **)&cell_ids));
      for (int64_t i = 0; i < m->n_cells; ++i)
        cell_ids[i] = i < n_el ? mp->element_ids[el ? el[i] : i] : -1;
      ids = cell_ids;
    }
    pc->cell_data[m->n_cell_data++] = (ef_vtk_data_array){"ELEMENT_ID", EF_VTK_INT64, 1, ids};
  }
  if (o->write_ids && cells->condition_ids) {
    int64_t *cell_ids = NULL;
    if (mp->condition_ids) {
      EF_CALL(vtk_piece_alloc(pc, m->n_cells, sizeof *cell_ids, (void **)&cell_ids));
      for (int64_t i = 0; i < m->n_cells; ++i) {
        int64_t j = i - n_el; /* condition number */
        cell_ids[i] = j >= 0 && j < n_co ? mp->condition_ids[co ? co[j] : j] : -1;
      }
    }
    pc->cell_data[m->n_cell_data++] = (ef_vtk_data_array){"CONDITION_ID", EF_VTK_INT64, 1, cell_ids};
  }
  m->cell_data = pc->cell_data;
  return EF_SUCCESS;
}

/* Characters safe in a file name; anything else in a sub model part path becomes '_'. */
static void vtk_sanitize(char *s) {
  for (; *s; ++s) {
    char c = *s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    if (!ok) *s = '_';
  }
}

/* Once per output object: write the first ascii piece again as binary under a hidden name,
 * compare the sizes and say what ascii costs. */
static int vtk_ascii_warning(ef_vtk_output o, const char *ascii_path, const ef_vtu_mesh *mesh) {
  o->ascii_measured = 1;
  size_t n = strlen(o->folder) + 64;
  char *probe;
  EF_MALLOC(probe, n);
  snprintf(probe, n, "%s/.binary_size_probe.%ld.vtu", o->folder, (long)getpid());
  ef_vtu_write_options binary = {.format = EF_VTK_FORMAT_BINARY};
  int err = ef_vtu_write(probe, mesh, &binary);
  struct stat sa, sb;
  if (!err && stat(ascii_path, &sa) == 0 && stat(probe, &sb) == 0 && sb.st_size > 0)
    fprintf(stderr,
            "edgeflow: warning: VTK output to %s is ascii: %s is %.3g MB, %.1fx the %.3g MB of the same data in "
            "binary (measured); \"file_format\": \"binary\" is exact, %sfaster to write and read\n",
            o->folder, ascii_path, (double)sa.st_size / 1e6, (double)sa.st_size / (double)sb.st_size,
            (double)sb.st_size / 1e6, sa.st_size > sb.st_size ? "smaller and " : ""); /* 7 digits can be smaller */
  unlink(probe);
  free(probe);
  if (err) ef_error_clear(); /* the measurement is advice: its failure is not the output's */
  return EF_SUCCESS;
}

typedef struct {
  ef_vtk_output out;
  ef_model_part mp;
  ef_variable **vars;
  const char *base;
  int step;
  double time;
} vtk_write_context;

/* MPI: <base>_<step>.pvtu over the pieces <base>_<step>_<r>.vtu of every rank, with the arrays of m (every
 * rank writes the same arrays). */
static int vtk_write_pvtu(ef_vtk_output o, const char *tag, int step, const ef_vtu_mesh *m, char **pvtu_name) {
  size_t cap = 1024 + (size_t)o->n_ranks * (strlen(tag) + 64) + (size_t)(m->n_point_data + m->n_cell_data) * 160;
  char *text = malloc(cap), *name = malloc(strlen(tag) + 32), *full = NULL;
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(text && name, EF_ERR_MEMORY, done, "out of memory");
  size_t u = 0;
  u += (size_t)snprintf(text + u, cap - u,
                        "<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" "
                        "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PUnstructuredGrid GhostLevel=\"0\">\n"
                        "    <PPointData>\n");
  for (int k = 0; k < m->n_point_data; ++k)
    u += (size_t)snprintf(text + u, cap - u, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\"/>\n",
                          vtu_type_name(m->point_data[k].type), m->point_data[k].name, m->point_data[k].n_components);
  u += (size_t)snprintf(text + u, cap - u, "    </PPointData>\n    <PCellData>\n");
  for (int k = 0; k < m->n_cell_data; ++k)
    u += (size_t)snprintf(text + u, cap - u, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\"/>\n",
                          vtu_type_name(m->cell_data[k].type), m->cell_data[k].name, m->cell_data[k].n_components);
  u += (size_t)snprintf(text + u, cap - u,
                        "    </PCellData>\n    <PPoints>\n      <PDataArray type=\"Float64\" NumberOfComponents=\"3\"/>\n"
                        "    </PPoints>\n");
  for (int r = 0; r < o->n_ranks; ++r)
    u += (size_t)snprintf(text + u, cap - u, "    <Piece Source=\"%s_%d_%d.vtu\"/>\n", tag, step, r);
  u += (size_t)snprintf(text + u, cap - u, "  </PUnstructuredGrid>\n</VTKFile>\n");
  EF_CHECK_GOTO(u < cap, EF_ERR_INTERNAL, done, "VTK output: .pvtu text of %zu bytes overflowed", u);
  snprintf(name, strlen(tag) + 32, "%s_%d.pvtu", tag, step);
  full = malloc(strlen(o->folder) + strlen(name) + 2);
  EF_CHECK_GOTO(full, EF_ERR_MEMORY, done, "out of memory");
  sprintf(full, "%s/%s", o->folder, name);
  EF_CALL_GOTO(ef_write_text_file_atomic(full, text), done);
  *pvtu_name = name;
  name = NULL;
done:
  free(text);
  free(name);
  free(full);
  return err;
}

/* MPI: this rank's share of a part (smp NULL: the root), each entity on exactly one rank: the elements
 * and conditions whose first node it owns (as the model part split keeps every element and condition
 * with an owned node, that rank has them) and the owned nodes; their number in count[0..2] and, where
 * el / co / vx are not NULL, their indices. */
static void vtk_owned(ef_model_part mp, const ef_sub_model_part *smp, int64_t count[3], ef_index *el, ef_index *co,
                      ef_index *vx) {
  const int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  const int64_t n_el = smp ? smp->n_elements : mp->n_elements, n_co = smp ? smp->n_conditions : mp->n_conditions;
  const int64_t n_vx = smp ? smp->n_nodes : mp->n_owned_nodes;
  count[0] = count[1] = count[2] = 0;
  for (int64_t i = 0; i < n_el; ++i) {
    const ef_index e = smp ? smp->elements[i] : (ef_index)i;
    if (mp->elements[(int64_t)e * npe] < mp->n_owned_nodes) {
      if (el) el[count[0]] = e;
      ++count[0];
    }
  }
  for (int64_t i = 0; i < n_co; ++i) {
    const ef_index c = smp ? smp->conditions[i] : (ef_index)i;
    if (mp->conditions[(int64_t)c * npc] < mp->n_owned_nodes) {
      if (co) co[count[1]] = c;
      ++count[1];
    }
  }
  for (int64_t i = 0; i < n_vx; ++i) {
    const ef_index v = smp ? smp->nodes[i] : (ef_index)i;
    if (v < mp->n_owned_nodes) {
      if (vx) vx[count[2]] = v;
      ++count[2];
    }
  }
}

typedef struct {
  ef_vtk_output o;
  ef_model_part mp;
  int n;          /* parts visited */
  double *counts; /* NULL: only count the parts */
} vtk_parts_visit;

/* Visitor of ef_vtk_output_reduce_parts: check the part's lists, then record its path and local counts. */
static int vtk_parts_visit_one(ef_sub_model_part *smp, const char *path, void *user) {
  vtk_parts_visit *v = user;
  if (v->counts) {
    EF_CALL(vtk_check_sub_model_part(smp, path, v->mp));
    int64_t count[3];
    vtk_owned(v->mp, smp, count, NULL, NULL, NULL);
    for (int k = 0; k < 3; ++k) v->counts[3 * v->n + k] = (double)count[k];
    EF_CALL(vtk_strdup(path, &v->o->part_paths[v->n]));
  }
  ++v->n;
  return EF_SUCCESS;
}

int ef_vtk_output_reduce_parts(ef_vtk_output o, ef_model_part mp, ef_comm comm) {
  EF_CHECK(o && mp, EF_ERR_PARAMETER, "ef_vtk_output_reduce_parts: NULL argument");
  if (o->n_ranks <= 1) return EF_SUCCESS;
  EF_CHECK(mp->n_owned_nodes >= 0 && mp->n_owned_nodes <= mp->n_nodes, EF_ERR_PARAMETER,
           "VTK output of model part '%s': %lld owned nodes of %lld", mp->name ? mp->name : "",
           (long long)mp->n_owned_nodes, (long long)mp->n_nodes);
  vtk_free_list(o->n_parts, o->part_paths);
  free(o->part_counts);
  o->part_paths = NULL;
  o->part_counts = NULL;
  o->n_parts = -1;
  vtk_parts_visit v = {o, mp, 1, NULL}; /* the root first */
  EF_CALL(ef_model_part_visit_sub_model_parts(mp, vtk_parts_visit_one, &v));
  const int n = v.n;
  double *counts;
  EF_CALLOC(counts, 3 * (size_t)n);
  int err = EF_SUCCESS;
  if (!(o->part_paths = calloc((size_t)n, sizeof *o->part_paths)) ||
      !(o->part_counts = malloc(3 * (size_t)n * sizeof *o->part_counts))) {
    err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    goto done;
  }
  int64_t root[3];
  vtk_owned(mp, NULL, root, NULL, NULL, NULL);
  for (int k = 0; k < 3; ++k) counts[k] = (double)root[k];
  EF_CALL_GOTO(vtk_strdup("", &o->part_paths[0]), done);
  v.n = 1;
  v.counts = counts;
  EF_CALL_GOTO(ef_model_part_visit_sub_model_parts(mp, vtk_parts_visit_one, &v), done);
  /* Every rank holds the same tree (the split keeps it whole), so the lists line up. */
  EF_CALL_GOTO(ef_comm_allreduce(comm, counts, 3 * n, EF_COMM_SUM), done);
  for (int i = 0; i < 3 * n; ++i) o->part_counts[i] = (int64_t)counts[i];
  o->n_parts = n;
done:
  if (err) {
    vtk_free_list(n, o->part_paths);
    free(o->part_counts);
    o->part_paths = NULL;
    o->part_counts = NULL;
  }
  free(counts);
  return err;
}

/* MPI: rank o->rank's cells of the part `key` (dotted path, "" the root; smp its sub model part, NULL
 * for the root): the kind the serial file of the part has (decided by the counts over all ranks, so
 * every piece has the same cells and arrays), restricted to this rank's share (vtk_owned); the index
 * lists are allocated into *lists (free it). */
static int vtk_cells_rank(ef_vtk_output o, ef_model_part mp, const ef_sub_model_part *smp, const char *key,
                          vtk_cells *c, ef_index **lists) {
  memset(c, 0, sizeof *c);
  *lists = NULL;
  const int64_t *total = NULL;
  for (int i = 0; i < o->n_parts && !total; ++i)
    if (!strcmp(o->part_paths[i], key)) total = o->part_counts + 3 * i;
  EF_CHECK(o->n_parts >= 0, EF_ERR_PARAMETER,
           "VTK output on %d ranks: ef_vtk_output_reduce_parts must be called (on every rank) before the first "
           "write", o->n_ranks);
  EF_CHECK(total, EF_ERR_PARAMETER,
           "VTK output on %d ranks: sub model part '%s' was not there when ef_vtk_output_reduce_parts ran",
           o->n_ranks, key);
  int64_t n[3];
  vtk_owned(mp, smp, n, NULL, NULL, NULL);
  ef_index *list;
  EF_MALLOC(list, (size_t)(n[0] + n[1] + n[2] + 1)); /* never NULL: an empty list is not "all" */
  vtk_owned(mp, smp, n, list, list + n[0], list + n[0] + n[1]);
  *lists = list;
  c->local = 1;
  if (!smp) { /* the root: its elements, and its conditions with write_conditions */
    c->n_el = n[0];
    c->el = list;
    c->n_co = o->write_conditions ? n[1] : 0;
    c->co = list + n[0];
    c->element_ids = total[0] > 0;
    c->condition_ids = o->write_conditions && total[1] > 0;
  } else if (total[0] > 0) {
    c->n_el = n[0];
    c->el = list;
    c->element_ids = 1;
  } else if (total[1] > 0) {
    c->n_co = n[1];
    c->co = list + n[0];
    c->condition_ids = 1;
  } else {
    c->n_vx = n[2];
    c->vx = list + n[0] + n[1];
  }
  return EF_SUCCESS;
}

/* Write one file of the part smp (NULL: the whole model part), named <base>_<path> (path NULL:
 * <base>), and update its series.  key: the part's dotted path ("" the root) for the counts over the
 * ranks.  On several ranks: this rank's piece <tag>_<step>_<rank>.vtu with a PARTITION cell array;
 * rank 0 also writes <tag>_<step>.pvtu over the pieces and keeps <tag>.pvd over the .pvtu files. */
static int vtk_write_piece(const vtk_write_context *w, const ef_sub_model_part *smp, const char *path,
                           const char *key) {
  ef_vtk_output o = w->out;
  char *tag = NULL, *file = NULL, *full = NULL, *pvd = NULL, *pvtu = NULL;
  ef_index *lists = NULL;
  int32_t *partition = NULL;
  vtk_piece pc;
  memset(&pc, 0, sizeof pc);
  vtk_cells cells;
  int err = EF_SUCCESS;
  if (o->n_ranks > 1)
    EF_CALL_GOTO(vtk_cells_rank(o, w->mp, smp, key, &cells, &lists), done);
  else
    cells = vtk_cells_serial(o, w->mp, smp);
  EF_CALL_GOTO(vtk_piece_build(o, w->mp, w->vars, &cells, &pc), done);
  if (o->n_ranks > 1) {
    partition = malloc((size_t)(pc.mesh.n_cells + 1) * sizeof *partition);
    EF_CHECK_GOTO(partition, EF_ERR_MEMORY, done, "out of memory");
    for (int64_t c = 0; c < pc.mesh.n_cells; ++c) partition[c] = o->rank;
    pc.cell_data[pc.mesh.n_cell_data++] = (ef_vtk_data_array){"PARTITION", EF_VTK_INT32, 1, partition};
    pc.mesh.cell_data = pc.cell_data;
  }
  size_t n = strlen(w->base) + (path ? strlen(path) : 0) + 2;
  EF_CHECK_GOTO((tag = malloc(n)) != NULL, EF_ERR_MEMORY, done, "out of memory");
  if (path)
    snprintf(tag, n, "%s_%s", w->base, path);
  else
    snprintf(tag, n, "%s", w->base);
  /* Names from the mesh file become file names: keep them inside the folder. */
  vtk_sanitize(tag + (o->base_name ? strlen(o->base_name) : 0));
  n = strlen(tag) + 48;
  size_t n_full = strlen(o->folder) + n + 2;
  file = malloc(n);
  pvd = malloc(n);
  full = malloc(n_full);
  EF_CHECK_GOTO(file && pvd && full, EF_ERR_MEMORY, done, "out of memory");
  if (o->n_ranks > 1)
    snprintf(file, n, "%s_%d_%d.vtu", tag, w->step, o->rank);
  else
    snprintf(file, n, "%s_%d.vtu", tag, w->step);
  snprintf(pvd, n, "%s.pvd", tag);
  snprintf(full, n_full, "%s/%s", o->folder, file);
  EF_CALL_GOTO(ef_vtu_write(full, &pc.mesh, &o->write), done);
  if (o->n_ranks > 1) {
    if (o->rank == 0) {
      EF_CALL_GOTO(vtk_write_pvtu(o, tag, w->step, &pc.mesh, &pvtu), done);
      EF_CALL_GOTO(vtk_series_add(o, pvd, w->step, w->time, pvtu), done);
    }
  } else {
    if (o->write.format == EF_VTK_FORMAT_ASCII && !o->ascii_measured)
      EF_CALL_GOTO(vtk_ascii_warning(o, full, &pc.mesh), done);
    EF_CALL_GOTO(vtk_series_add(o, pvd, w->step, w->time, file), done);
  }
done:
  vtk_piece_free(&pc);
  free(lists);
  free(partition);
  free(tag);
  free(file);
  free(pvd);
  free(full);
  free(pvtu);
  return err;
}

/* Visitor form of vtk_write_piece for "every sub model part". */
static int vtk_visit_write(ef_sub_model_part *smp, const char *path, void *user) {
  return vtk_write_piece(user, smp, path, path);
}

/* Dotted path of smp from the root's children down. */
static int vtk_smp_path(const ef_sub_model_part *smp, char **out) {
  size_t n = 0;
  for (const ef_sub_model_part *s = smp; s; s = s->parent) n += strlen(s->name) + 1;
  EF_MALLOC(*out, n);
  char *end = *out + n - 1;
  *end = '\0';
  for (const ef_sub_model_part *s = smp; s; s = s->parent) {
    size_t len = strlen(s->name);
    end -= len;
    memcpy(end, s->name, len);
    if (s->parent) *--end = '.';
  }
  return EF_SUCCESS;
}

/* Write the model part (and selected sub model parts) for this step; rewrite the .pvd files. */
int ef_vtk_output_write(ef_vtk_output out, ef_model_part mp, int step, double time) {
  EF_CHECK(out && mp, EF_ERR_PARAMETER, "ef_vtk_output_write: NULL argument");
  EF_CALL(ef_model_part_sync_to_host(mp));
  int err = EF_SUCCESS;
  ef_variable **vars = NULL;
  ef_sub_model_part **parts = NULL, *main_part = NULL;
  char **paths = NULL, *main_path = NULL;
  int n_listed = out->output_sub_model_parts ? out->n_sub_model_parts : 0;
  vars = calloc((size_t)out->n_variables + 1, sizeof *vars);
  parts = calloc((size_t)n_listed + 1, sizeof *parts);
  paths = calloc((size_t)n_listed + 1, sizeof *paths);
  EF_CHECK_GOTO(vars && parts && paths, EF_ERR_MEMORY, done, "out of memory");
  /* Resolve every name first, so a typo writes nothing rather than half a step. */
  for (int v = 0; v < out->n_variables && !err; ++v)
    err = ef_model_part_get_variable(mp, out->variables[v], &vars[v]);
  if (!err && out->part) {
    err = ef_model_part_get_sub_model_part(mp, out->part, &main_part);
    if (!err) err = vtk_check_sub_model_part(main_part, out->part, mp);
    if (!err) err = vtk_smp_path(main_part, &main_path);
  }
  for (int i = 0; i < n_listed && !err; ++i) {
    err = ef_model_part_get_sub_model_part(mp, out->sub_model_parts[i], &parts[i]);
    if (!err) err = vtk_smp_path(parts[i], &paths[i]);
    if (!err) err = vtk_check_sub_model_part(parts[i], paths[i], mp);
  }
  if (!err && out->output_sub_model_parts && n_listed == 0)
    err = ef_model_part_visit_sub_model_parts(mp, vtk_check_sub_model_part, mp);
  if (err) {
    err = ef_error_push(err, __FILE__, __LINE__, "VTK output of model part '%s'",
                        mp->name ? mp->name : "");
    goto done;
  }
  EF_CALL_GOTO(vtk_make_folders(out->folder), done);
  vtk_write_context w = {out, mp, vars, out->base_name ? out->base_name : mp->name, step, time};
  if (!w.base || !w.base[0]) w.base = "model_part";
  EF_CALL_GOTO(vtk_write_piece(&w, main_part, NULL, main_path ? main_path : ""), done);
  if (out->output_sub_model_parts && n_listed == 0)
    EF_CALL_GOTO(ef_model_part_visit_sub_model_parts(mp, vtk_visit_write, &w), done);
  for (int i = 0; i < n_listed; ++i) EF_CALL_GOTO(vtk_write_piece(&w, parts[i], paths[i], paths[i]), done);
done:
  free(main_path);
  if (paths)
    for (int i = 0; i < n_listed; ++i) free(paths[i]);
  free(paths);
  free(parts);
  free(vars);
  return err;
}

/* ---------------------------------------------------------------------------
 * Restarts: the series written so far. */

int ef_vtk_output_save_state(ef_vtk_output o, ef_restart_writer *w) {
  EF_CHECK(o && w, EF_ERR_PARAMETER, "ef_vtk_output_save_state: NULL argument");
  EF_CALL(ef_restart_write_int64(w, "vtk.series", o->n_series));
  for (int i = 0; i < o->n_series; ++i) {
    const vtk_series *s = &o->series[i];
    char key[64];
    size_t size = 1, used = 0;
    for (int k = 0; k < s->n; ++k) size += strlen(s->files[k]) + 1;
    char *files;
    EF_MALLOC(files, size);
    files[0] = '\0';
    for (int k = 0; k < s->n; ++k) used += (size_t)snprintf(files + used, size - used, "%s\n", s->files[k]);
    int64_t *steps = malloc((size_t)(s->n ? s->n : 1) * sizeof *steps);
    int err = steps ? EF_SUCCESS : EF_ERROR(EF_ERR_MEMORY, "out of memory");
    for (int k = 0; !err && k < s->n; ++k) steps[k] = s->steps[k];
    snprintf(key, sizeof key, "vtk.%d.pvd", i);
    if (!err) err = ef_restart_write_string(w, key, s->pvd_name);
    snprintf(key, sizeof key, "vtk.%d.steps", i);
    if (!err) err = ef_restart_write_int64s(w, key, steps, s->n);
    snprintf(key, sizeof key, "vtk.%d.times", i);
    if (!err) err = ef_restart_write_doubles(w, key, s->times, s->n);
    snprintf(key, sizeof key, "vtk.%d.files", i);
    if (!err) err = ef_restart_write_string(w, key, files);
    free(steps);
    free(files);
    EF_CALL(err);
  }
  return EF_SUCCESS;
}

/* The series as saved; each .pvd rewritten (entries written after the restart point drop out). */
int ef_vtk_output_load_state(ef_vtk_output o, ef_restart_reader *r) {
  EF_CHECK(o && r, EF_ERR_PARAMETER, "ef_vtk_output_load_state: NULL argument");
  int64_t n_series;
  EF_CALL(ef_restart_read_int64(r, "vtk.series", &n_series));
  for (int i = 0; i < (int)n_series; ++i) {
    char key[64], pvd[4096];
    snprintf(key, sizeof key, "vtk.%d.pvd", i);
    EF_CALL(ef_restart_read_string(r, key, pvd, sizeof pvd));
    snprintf(key, sizeof key, "vtk.%d.steps", i);
    const int64_t n = ef_restart_count(r, key);
    EF_CHECK(n >= 0, EF_ERR_PARSE, "restart file '%s': no record '%s'", ef_restart_reader_path(r), key);
    int64_t *steps = malloc((size_t)(n ? n : 1) * sizeof *steps);
    double *times = malloc((size_t)(n ? n : 1) * sizeof *times);
    char *files = NULL;
    int err = steps && times ? EF_SUCCESS : EF_ERROR(EF_ERR_MEMORY, "out of memory");
    if (!err) err = ef_restart_read_int64s(r, key, steps, n);
    snprintf(key, sizeof key, "vtk.%d.times", i);
    if (!err) err = ef_restart_read_doubles(r, key, times, n);
    snprintf(key, sizeof key, "vtk.%d.files", i);
    const int64_t nf = ef_restart_count(r, key);
    if (!err && nf < 0) err = EF_ERROR(EF_ERR_PARSE, "restart file '%s': no record '%s'", ef_restart_reader_path(r), key);
    if (!err && !(files = malloc((size_t)nf + 1))) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    if (!err) err = ef_restart_read_string(r, key, files, (size_t)nf + 1);
    /* Drop what this object recorded so far (nothing, in a fresh process) for this series. */
    for (int j = 0; !err && j < o->n_series; ++j)
      if (!strcmp(o->series[j].pvd_name, pvd)) o->series[j].n = 0;
    vtk_series *s = NULL;
    const char *p = files;
    for (int64_t k = 0; !err && k < n; ++k) {
      size_t len = strcspn(p, "\n");
      char name[4096];
      snprintf(name, sizeof name, "%.*s", (int)len, p);
      p += len + (p[len] ? 1 : 0);
      int kk, is_new;
      err = vtk_series_put(o, pvd, (int)steps[k], times[k], name, &s, &kk, &is_new);
    }
    if (!err && s) err = vtk_series_write(o, s, -1, 0);
    free(steps);
    free(times);
    free(files);
    EF_CALL(err);
  }
  return EF_SUCCESS;
}

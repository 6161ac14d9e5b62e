/* matrix_io.c -- reader and writer of the peers' binary linear-system format. */
#include "matrix_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"

#define EF_IO_CHUNK 65536 /* items per buffered conversion step */

/* 1 when this host stores integers little-endian (the file's order). */
static int ef_host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Reverse the bytes of count items of size bytes each, in place. */
static void ef_swap_items(void *data, size_t size, size_t count) {
  unsigned char *p = data;
  for (size_t i = 0; i < count; ++i, p += size)
    for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* Read count items of size bytes at the current position (which is *offset) into dst,
 * converting from little-endian; *offset advances. */
static int ef_read_items(FILE *f, const char *path, void *dst, size_t size, size_t count,
                         int64_t *offset, const char *what) {
  size_t got = count ? fread(dst, size, count, f) : 0;
  if (got != count)
    return EF_ERROR(EF_ERR_IO, "matrix file '%s', byte offset %" PRId64 ": cannot read %s (%s)",
                    path, *offset + (int64_t)(got * size), what,
                    ferror(f) ? strerror(errno) : "unexpected end of file");
  if (!ef_host_little_endian()) ef_swap_items(dst, size, count);
  *offset += (int64_t)(size * count);
  return EF_SUCCESS;
}

/* Write count items of size bytes as little-endian. */
static int ef_write_items(FILE *f, const char *path, const void *src, size_t size, size_t count) {
  if (!count) return EF_SUCCESS;
  if (ef_host_little_endian()) {
    EF_CHECK(fwrite(src, size, count, f) == count, EF_ERR_IO, "cannot write '%s': %s", path,
             strerror(errno));
    return EF_SUCCESS;
  }
  unsigned char buffer[8 * 512];
  const unsigned char *p = src;
  size_t per = sizeof buffer / size;
  for (size_t done = 0; done < count; done += per) {
    size_t k = count - done < per ? count - done : per;
    memcpy(buffer, p + done * size, k * size);
    ef_swap_items(buffer, size, k);
    EF_CHECK(fwrite(buffer, size, k, f) == k, EF_ERR_IO, "cannot write '%s': %s", path,
             strerror(errno));
  }
  return EF_SUCCESS;
}

/* Structural validity of a CSR matrix (see matrix_io.h). */
int ef_csr_matrix_check(const ef_csr_matrix *A, const char *what) {
  if (!what) what = "matrix";
  EF_CHECK(A, EF_ERR_PARAMETER, "%s: no matrix", what);
  EF_CHECK(A->n >= 0 && A->nnz >= 0, EF_ERR_PARAMETER, "%s: negative size n=%" PRId64
           " nnz=%" PRId64, what, A->n, A->nnz);
  EF_CHECK(A->row_ptr || A->n == 0, EF_ERR_PARAMETER, "%s: no row_ptr", what);
  EF_CHECK((A->col && A->values) || A->nnz == 0, EF_ERR_PARAMETER, "%s: no column/value arrays",
           what);
  if (A->n == 0) return EF_SUCCESS;
  EF_CHECK(A->row_ptr[0] == 0, EF_ERR_PARAMETER, "%s: row_ptr[0] = %" PRId64 ", expected 0", what,
           A->row_ptr[0]);
  for (int64_t i = 0; i < A->n; ++i) {
    int64_t b = A->row_ptr[i], e = A->row_ptr[i + 1];
    EF_CHECK(e >= b, EF_ERR_PARAMETER, "%s: row_ptr[%" PRId64 "] = %" PRId64
             " < row_ptr[%" PRId64 "] = %" PRId64 " (row_ptr must not decrease)",
             what, i + 1, e, i, b);
    EF_CHECK(e <= A->nnz, EF_ERR_PARAMETER, "%s: row_ptr[%" PRId64 "] = %" PRId64
             " exceeds nnz = %" PRId64, what, i + 1, e, A->nnz);
    for (int64_t k = b; k < e; ++k) {
      int32_t c = A->col[k];
      EF_CHECK(c >= 0 && c < A->n, EF_ERR_PARAMETER, "%s: row %" PRId64 ": column %" PRId32
               " at entry %" PRId64 " is outside [0, %" PRId64 ")", what, i, c, k, A->n);
      EF_CHECK(k == b || c > A->col[k - 1], EF_ERR_PARAMETER, "%s: row %" PRId64
               ": columns not strictly increasing at entry %" PRId64 " (%" PRId32 " after %" PRId32
               ")", what, i, k, c, A->col[k - 1]);
      EF_CHECK(isfinite(A->values[k]), EF_ERR_PARAMETER, "%s: row %" PRId64
               ": value at entry %" PRId64 " is not finite", what, i, k);
    }
  }
  EF_CHECK(A->row_ptr[A->n] == A->nnz, EF_ERR_PARAMETER, "%s: row_ptr[n] = %" PRId64
           " but nnz = %" PRId64, what, A->row_ptr[A->n], A->nnz);
  return EF_SUCCESS;
}

/* Free a system and its arrays. */
void ef_linear_system_destroy(ef_linear_system **s) {
  if (!s || !*s) return;
  free((*s)->row_ptr);
  free((*s)->col);
  free((*s)->values);
  free((*s)->rhs);
  free((*s)->solution);
  free(*s);
  *s = NULL;
}

/* View of the matrix part of a system. */
ef_csr_matrix ef_linear_system_matrix(const ef_linear_system *s) {
  ef_csr_matrix A = {s->n, s->nnz, s->row_ptr, s->col, s->values};
  return A;
}

/* Read n doubles and require each to be finite (the offset names the first bad one). */
static int ef_read_finite(FILE *f, const char *path, double *dst, int64_t count, int64_t *offset,
                          const char *what) {
  int64_t start = *offset;
  EF_CALL(ef_read_items(f, path, dst, sizeof(double), (size_t)count, offset, what));
  for (int64_t i = 0; i < count; ++i)
    EF_CHECK(isfinite(dst[i]), EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64
             ": %s[%" PRId64 "] is not finite", path, start + 8 * i, what, i);
  return EF_SUCCESS;
}

/* The body of the reader once the file is open and its size known. */
static int ef_read_system_body(FILE *f, const char *path, int64_t file_size,
                               ef_linear_system *s) {
  int64_t offset = 0, header[2];
  EF_CHECK(file_size >= 16, EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64
           ": truncated header (the file has %" PRId64 " bytes, the header needs 16)",
           path, file_size, file_size);
  EF_CALL(ef_read_items(f, path, header, 8, 2, &offset, "header"));
  int64_t n = header[0], nnz = header[1];
  EF_CHECK(n >= 0 && n <= INT32_MAX, EF_ERR_PARSE, "matrix file '%s', byte offset 0: n = %" PRId64
           " is outside [0, 2^31)", path, n);
  EF_CHECK(nnz >= 0 && nnz <= INT32_MAX, EF_ERR_PARSE, "matrix file '%s', byte offset 8: nnz = %"
           PRId64 " is outside [0, 2^31) (int32 row offsets)", path, nnz);
  int64_t off_rp = 16, off_col = off_rp + 4 * (n + 1), off_val = off_col + 4 * nnz;
  int64_t off_rhs = off_val + 8 * nnz, off_end = off_rhs + 8 * n, off_sol_end = off_end + 8 * n;
  if (file_size < off_end) {
    const char *section = file_size < off_col ? "row_ptr" : file_size < off_val ? "col_idx"
                          : file_size < off_rhs ? "values" : "rhs";
    return EF_ERROR(EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64
                    ": truncated inside %s (n = %" PRId64 ", nnz = %" PRId64 " need %" PRId64
                    " bytes, the file has %" PRId64 "; n or nnz may be wrong)",
                    path, file_size, section, n, nnz, off_end, file_size);
  }
  EF_CHECK(file_size == off_end || file_size == off_sol_end, EF_ERR_PARSE,
           "matrix file '%s', byte offset %" PRId64 ": %" PRId64 " unexpected bytes after the rhs "
           "(n = %" PRId64 ", nnz = %" PRId64 " give %" PRId64 " bytes, or %" PRId64
           " with a solution block; n or nnz may be wrong)",
           path, off_end, file_size - off_end, n, nnz, off_end, off_sol_end);

  s->n = n;
  s->nnz = nnz;
  int32_t *rp32;
  EF_MALLOC(rp32, n + 1);
  int err = ef_read_items(f, path, rp32, 4, (size_t)(n + 1), &offset, "row_ptr");
  if (!err && rp32[0] != 0)
    err = EF_ERROR(EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64
                   ": row_ptr[0] = %" PRId32 ", expected 0", path, off_rp, rp32[0]);
  for (int64_t i = 0; !err && i < n; ++i)
    if (rp32[i + 1] < rp32[i])
      err = EF_ERROR(EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64 ": row_ptr[%" PRId64
                     "] = %" PRId32 " < row_ptr[%" PRId64 "] = %" PRId32
                     " (row_ptr must not decrease)", path, off_rp + 4 * (i + 1), i + 1,
                     rp32[i + 1], i, rp32[i]);
  if (!err && rp32[n] != nnz)
    err = EF_ERROR(EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64 ": row_ptr[n] = %" PRId32
                   " but the header says nnz = %" PRId64, path, off_rp + 4 * n, rp32[n], nnz);
  if (!err) {
    s->row_ptr = malloc((size_t)(n + 1) * sizeof *s->row_ptr);
    if (!s->row_ptr) err = EF_ERROR(EF_ERR_MEMORY, "out of memory for row_ptr (n = %" PRId64 ")", n);
    for (int64_t i = 0; !err && i <= n; ++i) s->row_ptr[i] = rp32[i];
  }
  free(rp32);
  if (err) return err;

  EF_MALLOC(s->col, nnz);
  EF_CALL(ef_read_items(f, path, s->col, 4, (size_t)nnz, &offset, "col_idx"));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) {
      int32_t c = s->col[k];
      EF_CHECK(c >= 0 && c < n, EF_ERR_PARSE, "matrix file '%s', byte offset %" PRId64
               ": col_idx[%" PRId64 "] = %" PRId32 " (row %" PRId64 ") is outside [0, %" PRId64
               ")", path, off_col + 4 * k, k, c, i, n);
      EF_CHECK(k == s->row_ptr[i] || c > s->col[k - 1], EF_ERR_PARSE,
               "matrix file '%s', byte offset %" PRId64 ": col_idx[%" PRId64 "] = %" PRId32
               " follows %" PRId32 " in row %" PRId64 " (columns must be sorted and unique)",
               path, off_col + 4 * k, k, c, s->col[k - 1], i);
    }
  EF_MALLOC(s->values, nnz);
  EF_CALL(ef_read_finite(f, path, s->values, nnz, &offset, "values"));
  EF_MALLOC(s->rhs, n);
  EF_CALL(ef_read_finite(f, path, s->rhs, n, &offset, "rhs"));
  if (file_size == off_sol_end && n > 0) {
    EF_MALLOC(s->solution, n);
    EF_CALL(ef_read_finite(f, path, s->solution, n, &offset, "solution"));
  }
  return EF_SUCCESS;
}

/* Open, size and read a system file (format in matrix_io.h). */
int ef_linear_system_read(const char *path, ef_linear_system **out) {
  EF_CHECK(path && out, EF_ERR_PARAMETER, "ef_linear_system_read: NULL argument");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open matrix file '%s': %s", path, strerror(errno));
  int err = EF_SUCCESS;
  int64_t size = -1;
  if (fseeko(f, 0, SEEK_END) == 0) size = (int64_t)ftello(f);
  if (size < 0 || fseeko(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return EF_ERROR(EF_ERR_IO, "cannot determine the size of matrix file '%s': %s", path,
                    strerror(errno));
  }
  ef_linear_system *s = calloc(1, sizeof *s);
  if (!s) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  if (!err) err = ef_read_system_body(f, path, size, s);
  fclose(f);
  if (err) {
    ef_linear_system_destroy(&s);
    return err;
  }
  *out = s;
  return EF_SUCCESS;
}

/* Write the header and arrays of a system in the peers' layout. */
static int ef_write_system_body(FILE *f, const char *path, const ef_csr_matrix *A,
                                const double *rhs, const double *solution) {
  int64_t header[2] = {A->n, A->nnz};
  EF_CALL(ef_write_items(f, path, header, 8, 2));
  int32_t buffer[EF_IO_CHUNK];
  for (int64_t i = 0; i <= A->n; i += EF_IO_CHUNK) {
    int64_t k = A->n + 1 - i < EF_IO_CHUNK ? A->n + 1 - i : EF_IO_CHUNK;
    for (int64_t j = 0; j < k; ++j) buffer[j] = (int32_t)A->row_ptr[i + j];
    EF_CALL(ef_write_items(f, path, buffer, 4, (size_t)k));
  }
  EF_CALL(ef_write_items(f, path, A->col, 4, (size_t)A->nnz));
  EF_CALL(ef_write_items(f, path, A->values, 8, (size_t)A->nnz));
  EF_CALL(ef_write_items(f, path, rhs, 8, (size_t)A->n));
  if (solution) EF_CALL(ef_write_items(f, path, solution, 8, (size_t)A->n));
  return EF_SUCCESS;
}

/* Write a system file (format in matrix_io.h). */
int ef_linear_system_write(const char *path, const ef_csr_matrix *A, const double *rhs,
                           const double *solution) {
  EF_CHECK(path && A && (rhs || A->n == 0), EF_ERR_PARAMETER, "ef_linear_system_write: NULL argument");
  EF_CALL(ef_csr_matrix_check(A, path));
  EF_CHECK(A->n <= INT32_MAX && A->nnz <= INT32_MAX, EF_ERR_PARAMETER,
           "'%s': n = %" PRId64 ", nnz = %" PRId64 " do not fit the format's int32 offsets", path,
           A->n, A->nnz);
  FILE *f = fopen(path, "wb");
  EF_CHECK(f, EF_ERR_IO, "cannot create matrix file '%s': %s", path, strerror(errno));
  int err = ef_write_system_body(f, path, A, rhs, solution);
  if (fclose(f) != 0 && !err)
    err = EF_ERROR(EF_ERR_IO, "cannot finish writing '%s': %s", path, strerror(errno));
  return err;
}

/* Write int64 n, float64 x[n]. */
int ef_vector_file_write(const char *path, int64_t n, const double *x) {
  EF_CHECK(path && n >= 0 && (x || n == 0), EF_ERR_PARAMETER, "ef_vector_file_write: bad argument");
  FILE *f = fopen(path, "wb");
  EF_CHECK(f, EF_ERR_IO, "cannot create vector file '%s': %s", path, strerror(errno));
  int err = ef_write_items(f, path, &n, 8, 1);
  if (!err) err = ef_write_items(f, path, x, 8, (size_t)n);
  if (fclose(f) != 0 && !err)
    err = EF_ERROR(EF_ERR_IO, "cannot finish writing '%s': %s", path, strerror(errno));
  return err;
}

/* Read int64 n, float64 x[n] and require the file to end there. */
int ef_vector_file_read(const char *path, int64_t *n, double **x) {
  EF_CHECK(path && n && x, EF_ERR_PARAMETER, "ef_vector_file_read: NULL argument");
  *x = NULL;
  *n = 0;
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open vector file '%s': %s", path, strerror(errno));
  int64_t size = -1, offset = 0, count = 0;
  if (fseeko(f, 0, SEEK_END) == 0) size = (int64_t)ftello(f);
  int err = (size < 0 || fseeko(f, 0, SEEK_SET) != 0)
                ? EF_ERROR(EF_ERR_IO, "cannot size vector file '%s'", path)
                : ef_read_items(f, path, &count, 8, 1, &offset, "length");
  if (!err && (count < 0 || size != 8 + 8 * count))
    err = EF_ERROR(EF_ERR_PARSE, "vector file '%s', byte offset 0: length %" PRId64
                   " does not match the file size %" PRId64, path, count, size);
  double *v = NULL;
  if (!err && count > 0) {
    v = malloc((size_t)count * sizeof *v);
    if (!v) err = EF_ERROR(EF_ERR_MEMORY, "out of memory for %" PRId64 " doubles", count);
  }
  if (!err) err = ef_read_finite(f, path, v, count, &offset, "x");
  fclose(f);
  if (err) {
    free(v);
    return err;
  }
  *n = count;
  *x = v;
  return EF_SUCCESS;
}

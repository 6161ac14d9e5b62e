/* matrix_io.h -- the binary linear-system file shared with the pressure-solver peers.
 *
 * Layout (little-endian, no padding), exactly the peers' (shared/peers/README.md):
 *     int64 n, int64 nnz,
 *     int32 row_ptr[n+1], int32 col_idx[nnz], float64 values[nnz], float64 rhs[n]
 * CSR, zero-based, column indices strictly increasing inside each row.  We may
 * append one optional block, float64 solution[n]; the peers read a fixed-size
 * prefix, so such a file still works for them.  A lone vector file (a solution
 * kept apart from its system) is  int64 n, float64 x[n].
 *
 * The reader checks everything a solver relies on (sizes against the file
 * length, row_ptr[0] == 0, monotone row_ptr, row_ptr[n] == nnz, columns in
 * range and sorted, finite values) and names the file and the byte offset of
 * the first offending item.  Host-side only: no OpenCL here.
 */
#ifndef EF_MATRIX_IO_H
#define EF_MATRIX_IO_H

#include <stdint.h>

#include "edgeflow/ef_strategy.h" /* ef_csr_matrix */

#ifdef __cplusplus
extern "C" {
#endif

/* A system read from a file; it owns its arrays. */
typedef struct {
  int64_t n;
  int64_t nnz;
  int64_t *row_ptr;  /* n + 1 (int32 in the file, widened here to match ef_csr_matrix) */
  int32_t *col;      /* nnz */
  double *values;    /* nnz */
  double *rhs;       /* n */
  double *solution;  /* n, or NULL when the file has no trailing solution block */
} ef_linear_system;

/* Read a system file; *out is NULL on failure. */
int ef_linear_system_read(const char *path, ef_linear_system **out);

/* Write A and rhs (and solution when not NULL) in the peers' layout.  Fails with
 * EF_ERR_PARAMETER when A does not pass ef_csr_matrix_check or does not fit the
 * format's 32-bit offsets. */
int ef_linear_system_write(const char *path, const ef_csr_matrix *A, const double *rhs,
                           const double *solution);

/* A non-owning view of the system's matrix. */
ef_csr_matrix ef_linear_system_matrix(const ef_linear_system *s);

/* Free the system; accepts NULL and *s == NULL, sets *s to NULL. */
void ef_linear_system_destroy(ef_linear_system **s);

/* Structural check of an in-memory CSR (what names it in the message):
 * n >= 0, row_ptr[0] == 0, monotone, row_ptr[n] == nnz, columns in [0, n) and
 * strictly increasing inside each row, finite values. */
int ef_csr_matrix_check(const ef_csr_matrix *A, const char *what);

/* A lone vector file: int64 n, float64 x[n]. */
int ef_vector_file_write(const char *path, int64_t n, const double *x);
/* Reads it into a new array (*x, free()); *n receives its length. */
int ef_vector_file_read(const char *path, int64_t *n, double **x);

#ifdef __cplusplus
}
#endif
#endif

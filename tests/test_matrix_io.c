/* test_matrix_io.c -- the peers' binary system format: round trips, a file built
 * byte by byte, and every kind of bad file (message names file and byte offset). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "edgeflow/ef_error.h"
#include "matrix_io.h"

#include "ef_test.h"

static char work[1024];

/* Path of a file in the work folder. */
static const char *path_of(const char *name) {
  static char p[1200];
  snprintf(p, sizeof p, "%s/%s", work, name);
  return p;
}

/* A little-endian byte image of a system file, built without the writer. */
typedef struct {
  unsigned char data[4096];
  size_t size;
} image;

/* Append an integer of bytes bytes, little-endian. */
static void put(image *im, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) im->data[im->size++] = (unsigned char)(v >> (8 * i));
}
/* Append a double, little-endian. */
static void put_f64(image *im, double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  put(im, u, 8);
}

/* The 3x3 system [[4,-1,0],[-1,4,-1],[0,-1,4]], rhs (1,2,3), optional solution. */
static void make_image(image *im, int with_solution) {
  im->size = 0;
  const int32_t rp[4] = {0, 2, 5, 7}, col[7] = {0, 1, 0, 1, 2, 1, 2};
  const double val[7] = {4, -1, -1, 4, -1, -1, 4}, rhs[3] = {1, 2, 3}, sol[3] = {0.5, 1, 1};
  put(im, 3, 8);
  put(im, 7, 8);
  for (int i = 0; i < 4; ++i) put(im, (uint32_t)rp[i], 4);
  for (int i = 0; i < 7; ++i) put(im, (uint32_t)col[i], 4);
  for (int i = 0; i < 7; ++i) put_f64(im, val[i]);
  for (int i = 0; i < 3; ++i) put_f64(im, rhs[i]);
  if (with_solution)
    for (int i = 0; i < 3; ++i) put_f64(im, sol[i]);
}

/* Write an image to a file of the work folder. */
static int write_image(const char *name, const image *im) {
  FILE *f = fopen(path_of(name), "wb");
  if (!f) return 1;
  size_t w = fwrite(im->data, 1, im->size, f);
  fclose(f);
  return w != im->size;
}

/* Reading name must fail with code and a message naming the file and "byte offset <offset>". */
static int expect_bad(const char *name, const image *im, int code, long offset, const char *word) {
  ASSERT(!write_image(name, im), "cannot write %s", name);
  ef_linear_system *s = (ef_linear_system *)1;
  int err = ef_linear_system_read(path_of(name), &s);
  ASSERT(err == code, "%s: got %s, want %s (%s)", name, ef_error_name(err), ef_error_name(code),
         ef_error_message());
  ASSERT(s == NULL, "%s: output not cleared", name);
  const char *msg = ef_error_message();
  ASSERT(strstr(msg, name) != NULL, "%s: message does not name the file: %s", name, msg);
  char needle[64];
  snprintf(needle, sizeof needle, "byte offset %ld", offset);
  ASSERT(strstr(msg, needle) != NULL, "%s: message lacks '%s': %s", name, needle, msg);
  ASSERT(!word || strstr(msg, word) != NULL, "%s: message lacks '%s': %s", name, word, msg);
  return 0;
}

/* Round trips, the hand-made file, every bad file. */
int main(int argc, char **argv) {
  snprintf(work, sizeof work, "%s", argc > 1 ? argv[1] : "matrix_io_work");
  if (mkdir(work, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s\n", work);
    return 1;
  }
  image im;

  /* A file laid out by hand reads back exactly. */
  make_image(&im, 0);
  ASSERT(!write_image("hand.bin", &im), "write");
  ef_linear_system *s = NULL;
  ASSERT(ef_linear_system_read(path_of("hand.bin"), &s) == 0, "%s", ef_error_message());
  ASSERT(s->n == 3 && s->nnz == 7 && s->row_ptr[3] == 7 && s->col[4] == 2 && s->values[3] == 4.0 &&
             s->rhs[2] == 3.0 && s->solution == NULL, "hand-made file read wrongly");

  /* Writer round trip, without and with the solution block; the bytes equal the
   * hand-made image (same layout as the peers). */
  ef_csr_matrix A = ef_linear_system_matrix(s);
  ASSERT(ef_linear_system_write(path_of("round.bin"), &A, s->rhs, NULL) == 0, "%s", ef_error_message());
  FILE *f = fopen(path_of("round.bin"), "rb");
  unsigned char buf[4096];
  size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  ASSERT(got == im.size && memcmp(buf, im.data, got) == 0, "writer bytes differ from the layout");
  const double sol[3] = {0.5, 1, 1};
  ASSERT(ef_linear_system_write(path_of("sol.bin"), &A, s->rhs, sol) == 0, "%s", ef_error_message());
  ef_linear_system *t = NULL;
  ASSERT(ef_linear_system_read(path_of("sol.bin"), &t) == 0, "%s", ef_error_message());
  ASSERT(t->solution && t->solution[0] == 0.5 && t->solution[2] == 1.0, "solution block lost");
  for (int64_t k = 0; k < 7; ++k)
    ASSERT(t->col[k] == s->col[k] && t->values[k] == s->values[k], "entry %ld differs", (long)k);
  ef_linear_system_destroy(&t);
  ASSERT(t == NULL, "destroy must clear the handle");
  ef_linear_system_destroy(&t); /* NULL is fine */

  /* Lone vector file. */
  ASSERT(ef_vector_file_write(path_of("x.bin"), 3, sol) == 0, "%s", ef_error_message());
  int64_t nx = 0;
  double *x = NULL;
  ASSERT(ef_vector_file_read(path_of("x.bin"), &nx, &x) == 0 && nx == 3 && x[1] == 1.0,
         "vector round trip");
  free(x);

  /* The writer refuses an invalid matrix. */
  int32_t bad_col[7] = {1, 0, 0, 1, 2, 1, 2};
  ef_csr_matrix B = A;
  B.col = bad_col;
  ASSERT(ef_linear_system_write(path_of("never.bin"), &B, s->rhs, NULL) == EF_ERR_PARAMETER,
         "unsorted columns written");
  ef_linear_system_destroy(&s);

  /* Bad files.  Offsets: header 0..15, row_ptr at 16, col_idx at 32, values at 60,
   * rhs at 116, end at 140. */
  make_image(&im, 0);
  im.size = 100; /* cut inside the values */
  if (expect_bad("truncated.bin", &im, EF_ERR_PARSE, 100, "values")) return 1;
  make_image(&im, 0);
  im.size = 10;
  if (expect_bad("short_header.bin", &im, EF_ERR_PARSE, 10, "header")) return 1;
  make_image(&im, 0);
  im.data[8] = 9; /* nnz 9 while row_ptr ends at 7: the sizes no longer add up */
  if (expect_bad("nnz_too_big.bin", &im, EF_ERR_PARSE, 140, "truncated")) return 1;
  make_image(&im, 0);
  im.data[0] = 2; /* n = 2: the file is longer than the header says */
  if (expect_bad("n_inconsistent.bin", &im, EF_ERR_PARSE, 128, "unexpected bytes")) return 1;
  make_image(&im, 0);
  im.data[7] = 0x80; /* negative n */
  if (expect_bad("negative_n.bin", &im, EF_ERR_PARSE, 0, "n =")) return 1;
  make_image(&im, 0);
  im.data[16] = 1; /* row_ptr[0] = 1 */
  if (expect_bad("rp0.bin", &im, EF_ERR_PARSE, 16, "row_ptr[0]")) return 1;
  make_image(&im, 0);
  im.data[20] = 6; /* row_ptr[1] = 6 > row_ptr[2] = 5 */
  if (expect_bad("rp_order.bin", &im, EF_ERR_PARSE, 24, "must not decrease")) return 1;
  make_image(&im, 0);
  im.data[28] = 6; /* row_ptr[3] = 6 != nnz */
  if (expect_bad("rp_end.bin", &im, EF_ERR_PARSE, 28, "nnz")) return 1;
  make_image(&im, 0);
  im.data[32 + 4 * 4] = 3; /* col_idx[4] = 3 >= n */
  if (expect_bad("col_range.bin", &im, EF_ERR_PARSE, 48, "outside")) return 1;
  make_image(&im, 0);
  im.data[32 + 4 * 3] = 0; /* col_idx[3] = 0 after col_idx[2] = 0 in row 1 */
  if (expect_bad("col_order.bin", &im, EF_ERR_PARSE, 44, "sorted")) return 1;
  make_image(&im, 0);
  memset(im.data + 60 + 8 * 2 + 6, 0xff, 2); /* values[2] = NaN */
  if (expect_bad("nan.bin", &im, EF_ERR_PARSE, 76, "finite")) return 1;
  make_image(&im, 1);
  im.size -= 4; /* half a solution block */
  if (expect_bad("trailing.bin", &im, EF_ERR_PARSE, 140, "unexpected bytes")) return 1;

  ASSERT(ef_linear_system_read(path_of("does_not_exist.bin"), &s) == EF_ERR_IO &&
             strstr(ef_error_message(), "does_not_exist.bin"), "missing file: %s", ef_error_message());
  return 0;
}

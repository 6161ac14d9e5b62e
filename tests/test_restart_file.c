/* test_restart_file: the restart file layer (application/core/restart.c) on its own.
 *   1. records of every type round-trip bit-exactly, by section and key, in any order;
 *   2. a missing record, a resized one and one of another type are errors naming file,
 *      section and key;
 *   3. a truncated file, a flipped byte, a newer format version and a non-restart file are
 *      refused with their cause; nothing is left under the final name when a write is aborted;
 *   4. the mesh fingerprint changes with a coordinate's last bit and with connectivity.
 * usage: test_restart_file WORK_FOLDER */
#include "ef_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "edgeflow/ef_restart.h"
#include "edgeflow/ef_util.h"

/* Copy path to copy with byte at (negative: from the end) xor'ed by mask, or cut to length. */
static void ef_copy_damaged(const char *path, const char *copy, long at, unsigned char mask, long length) {
  FILE *f = fopen(path, "rb");
  unsigned char buffer[1 << 16];
  size_t n = f ? fread(buffer, 1, sizeof buffer, f) : 0;
  if (f) fclose(f);
  if (at < 0) at += (long)n;
  if (at >= 0 && (size_t)at < n) buffer[at] ^= mask;
  if (length >= 0 && (size_t)length < n) n = (size_t)length;
  f = fopen(copy, "wb");
  if (f) {
    fwrite(buffer, 1, n, f);
    fclose(f);
  }
}

int main(int argc, char **argv) {
  const char *work = argc > 1 ? argv[1] : "test_restart_file_out";
  ASSERT_OK(ef_make_folders(work));
  char path[4096], bad[4096];
  snprintf(path, sizeof path, "%s/a.rest", work);
  snprintf(bad, sizeof bad, "%s/bad.rest", work);

  /* 1. Round trip. */
  const double v[3] = {0.1, -1e-300, 1.0 / 3.0};
  const int64_t k[2] = {-7, INT64_MAX};
  ef_restart_writer *w = NULL;
  ASSERT_OK(ef_restart_writer_open(path, 0x1234abcdULL, &w));
  EXPECT_FAIL(ef_restart_write_double(w, "x", 1.0), EF_ERR_PARAMETER, "no section");
  ASSERT_OK(ef_restart_writer_section(w, "one"));
  EXPECT_OK(ef_restart_write_doubles(w, "v", v, 3));
  EXPECT_OK(ef_restart_write_int64s(w, "k", k, 2));
  EXPECT_OK(ef_restart_write_string(w, "s", "text"));
  EXPECT_OK(ef_restart_write_doubles(w, "empty", NULL, 0));
  ASSERT_OK(ef_restart_writer_section(w, "two"));
  EXPECT_OK(ef_restart_write_double(w, "v", 2.5));
  ASSERT_OK(ef_restart_writer_commit(&w));
  EXPECT(w == NULL, "commit frees the writer");

  ef_restart_reader *r = NULL;
  ASSERT_OK(ef_restart_reader_open(path, &r));
  EXPECT(ef_restart_reader_fingerprint(r) == 0x1234abcdULL, "fingerprint");
  EXPECT(ef_restart_reader_section(r, "two") == 1 && ef_restart_reader_section(r, "three") == 0, "sections");
  double x = 0, back[3];
  int64_t kb[2];
  char text[16];
  ef_restart_reader_section(r, "two");
  EXPECT_OK(ef_restart_read_double(r, "v", &x));
  EXPECT(x == 2.5, "two/v is %g", x);
  ef_restart_reader_section(r, "one");
  EXPECT_OK(ef_restart_read_string(r, "s", text, sizeof text));
  EXPECT_OK(ef_restart_read_int64s(r, "k", kb, 2));
  EXPECT_OK(ef_restart_read_doubles(r, "v", back, 3));
  EXPECT(!memcmp(back, v, sizeof v) && kb[0] == k[0] && kb[1] == k[1] && !strcmp(text, "text"), "values differ");
  EXPECT(ef_restart_count(r, "empty") == 0 && ef_restart_count(r, "none") == -1, "counts");

  /* 2. Missing, resized, other type. */
  EXPECT_FAIL(ef_restart_read_double(r, "none", &x), EF_ERR_PARSE, "no record 'none' in section 'one'");
  EXPECT_FAIL(ef_restart_read_doubles(r, "v", back, 2), EF_ERR_PARSE, "one/v");
  EXPECT_FAIL(ef_restart_read_doubles(r, "k", back, 2), EF_ERR_PARSE, "of type");
  EXPECT_FAIL(ef_restart_read_string(r, "s", text, 3), EF_ERR_PARSE, "too long");
  ef_restart_reader_close(&r);
  EXPECT(r == NULL, "close sets NULL");
  ef_restart_reader_close(NULL);

  /* 3. Damaged files. */
  struct stat st;
  ASSERT(stat(path, &st) == 0, "no file");
  ef_copy_damaged(path, bad, 0, 0, st.st_size - 9);
  EXPECT_FAIL(ef_restart_reader_open(bad, &r), EF_ERR_PARSE, "damaged or truncated");
  ef_copy_damaged(path, bad, 40, 0x10, -1);
  EXPECT_FAIL(ef_restart_reader_open(bad, &r), EF_ERR_PARSE, "damaged or truncated");
  ef_copy_damaged(path, bad, 8, 0x02, -1); /* version 1 -> 3 */
  EXPECT_FAIL(ef_restart_reader_open(bad, &r), EF_ERR_UNSUPPORTED, "format version 3");
  ef_copy_damaged(path, bad, 0, 0x20, -1);
  EXPECT_FAIL(ef_restart_reader_open(bad, &r), EF_ERR_PARSE, "not an edgeflow restart file");
  EXPECT_FAIL(ef_restart_reader_open("/nonexistent/x.rest", &r), EF_ERR_IO, "cannot open");
  snprintf(bad, sizeof bad, "%s/aborted.rest", work);
  ASSERT_OK(ef_restart_writer_open(bad, 1, &w));
  ef_restart_writer_abort(&w);
  EXPECT(stat(bad, &st) != 0 && w == NULL, "an aborted file exists");
  EXPECT_FAIL(ef_restart_writer_open("/nonexistent/folder/x.rest", 1, &w), EF_ERR_IO, "cannot create");

  /* 4. Fingerprints. */
  ef_model_part mp = NULL;
  ASSERT_OK(ef_model_part_create(NULL, 2, &mp));
  ASSERT_OK(ef_model_part_alloc_nodes(mp, 3));
  ASSERT_OK(ef_model_part_alloc_elements(mp, 1, 3));
  const double xy[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  memcpy(mp->coords, xy, sizeof xy);
  for (int i = 0; i < 3; i++) mp->elements[i] = i;
  const uint64_t f0 = ef_model_part_fingerprint(mp);
  mp->coords[3] = nextafter(1.0, 2.0);
  const uint64_t f1 = ef_model_part_fingerprint(mp);
  mp->coords[3] = 1.0;
  mp->elements[1] = 2;
  mp->elements[2] = 1;
  const uint64_t f2 = ef_model_part_fingerprint(mp);
  mp->elements[1] = 1;
  mp->elements[2] = 2;
  EXPECT(f0 != f1 && f0 != f2 && f1 != f2 && ef_model_part_fingerprint(mp) == f0, "fingerprints %llx %llx %llx",
         (unsigned long long)f0, (unsigned long long)f1, (unsigned long long)f2);
  ef_model_part_destroy(&mp);
  return failures != 0;
}

/* ef_restart.h -- restart files: the state a run needs to continue bit-identically.
 *
 * A restart file is binary, little endian, written to a hidden temporary name in its folder,
 * fsync'ed and renamed into place (a crash never leaves a partial file under the final name):
 *
 *   "EFRESTRT"  u32 format version  u32 0x01020304 (byte order)  u64 mesh fingerprint
 *   records:    u32 key length, key ("section/name"), u32 type (1 f64, 2 i64, 3 bytes),
 *               u64 count, count values
 *   end:        an empty key with type 0, then u64 FNV-1a hash of every byte before it
 *
 * Every component writes its own section (the analysis "analysis" and "model_part", the
 * strategy "strategy", its linear solver "linear_solver", process i "process.i") and finds its
 * records by name, so a reader skips what it does not know and a missing or resized record is
 * an error naming the file, the section and the record.  A file of a newer format version or
 * of another mesh (fingerprint: node count, coordinates and connectivity after refinement and
 * renumbering) is refused.
 */
#ifndef EF_RESTART_H
#define EF_RESTART_H

#include <stddef.h>
#include <stdint.h>

#include "edgeflow/ef_model_part.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format this build writes, and the newest it reads. */
#define EF_RESTART_FORMAT_VERSION 1u

typedef struct ef_restart_writer_s ef_restart_writer;
typedef struct ef_restart_reader_s ef_restart_reader;

/* FNV-1a 64 of the mesh: dimension, counts, coordinates and element connectivity. */
uint64_t ef_model_part_fingerprint(ef_model_part mp);

/* Start a restart file for path (written to a temporary name until commit). */
int ef_restart_writer_open(const char *path, uint64_t fingerprint, ef_restart_writer **w);
/* Records after this call belong to section (a short name without '/'). */
int ef_restart_writer_section(ef_restart_writer *w, const char *section);
int ef_restart_write_doubles(ef_restart_writer *w, const char *key, const double *values, int64_t n);
int ef_restart_write_int64s(ef_restart_writer *w, const char *key, const int64_t *values, int64_t n);
int ef_restart_write_bytes(ef_restart_writer *w, const char *key, const void *bytes, int64_t n);
int ef_restart_write_double(ef_restart_writer *w, const char *key, double value);
int ef_restart_write_int64(ef_restart_writer *w, const char *key, int64_t value);
int ef_restart_write_string(ef_restart_writer *w, const char *key, const char *text);
/* Finish: trailer, flush, fsync, rename into place, fsync the folder; frees *w (also on failure,
 * when the temporary file is removed). */
int ef_restart_writer_commit(ef_restart_writer **w);
/* The same, giving the file's checksum (the hash its last 8 bytes hold) when it succeeds. */
int ef_restart_writer_commit_checksum(ef_restart_writer **w, uint64_t *checksum);
/* Drop an unfinished file (NULL-safe). */
void ef_restart_writer_abort(ef_restart_writer **w);

/* Read and check a whole restart file (magic, byte order, format version, hash). */
int ef_restart_reader_open(const char *path, ef_restart_reader **r);
void ef_restart_reader_close(ef_restart_reader **r);
const char *ef_restart_reader_path(const ef_restart_reader *r);
uint64_t ef_restart_reader_fingerprint(const ef_restart_reader *r);
/* The checksum of the whole file (checked by ef_restart_reader_open). */
uint64_t ef_restart_reader_checksum(const ef_restart_reader *r);
/* Select the section later lookups search; 1 when it has any record, else 0. */
int ef_restart_reader_section(ef_restart_reader *r, const char *section);
/* Values of a record of the current section; -1 when absent. */
int64_t ef_restart_count(const ef_restart_reader *r, const char *key);
/* Reads fail naming file, section, key and both counts unless exactly n values are stored. */
int ef_restart_read_doubles(ef_restart_reader *r, const char *key, double *values, int64_t n);
int ef_restart_read_int64s(ef_restart_reader *r, const char *key, int64_t *values, int64_t n);
int ef_restart_read_bytes(ef_restart_reader *r, const char *key, void *bytes, int64_t n);
int ef_restart_read_double(ef_restart_reader *r, const char *key, double *value);
int ef_restart_read_int64(ef_restart_reader *r, const char *key, int64_t *value);
/* A string record into text (size bytes, terminated); too long is an error. */
int ef_restart_read_string(ef_restart_reader *r, const char *key, char *text, size_t size);

#ifdef __cplusplus
}
#endif
#endif

/* restart.c -- restart files: records written through a running hash, committed atomically,
 * read back whole and indexed by key (format in ef_restart.h). */
#include "edgeflow/ef_restart.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char ef_restart_magic[8] = {'E', 'F', 'R', 'E', 'S', 'T', 'R', 'T'};
#define EF_RESTART_ORDER 0x01020304u
#define EF_FNV_OFFSET 14695981039346656037ull
#define EF_FNV_PRIME 1099511628211ull
enum { EF_REC_END = 0, EF_REC_F64 = 1, EF_REC_I64 = 2, EF_REC_BYTES = 3 };

/* h = FNV-1a over n bytes. */
static uint64_t ef_fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= EF_FNV_PRIME;
  }
  return h;
}

/* FNV-1a 64 of dim, counts, coordinates and connectivity. */
uint64_t ef_model_part_fingerprint(ef_model_part mp) {
  uint64_t h = EF_FNV_OFFSET;
  if (!mp) return h;
  const int64_t head[4] = {mp->dim, mp->n_nodes, mp->n_elements, mp->nodes_per_element};
  h = ef_fnv(h, head, sizeof head);
  if (mp->coords) h = ef_fnv(h, mp->coords, (size_t)(3 * mp->n_nodes) * sizeof *mp->coords);
  if (mp->elements)
    h = ef_fnv(h, mp->elements, (size_t)(mp->n_elements * mp->nodes_per_element) * sizeof *mp->elements);
  return h;
}

/* ---------------------------------------------------------------------------
 * Writer. */

struct ef_restart_writer_s {
  FILE *f;
  char path[4096], temp[4200], section[64];
  uint64_t hash;
  int failed; /* errno of the first failed write */
};

/* Write n bytes through the hash; the first failure sticks. */
static void ef_restart_put(ef_restart_writer *w, const void *data, size_t n) {
  if (w->failed || n == 0) return;
  if (fwrite(data, 1, n, w->f) != n) {
    w->failed = errno ? errno : EIO;
    return;
  }
  w->hash = ef_fnv(w->hash, data, n);
}

int ef_restart_writer_open(const char *path, uint64_t fingerprint, ef_restart_writer **out) {
  EF_CHECK(path && path[0] && out, EF_ERR_PARAMETER, "ef_restart_writer_open: bad arguments");
  *out = NULL;
  ef_restart_writer *w = calloc(1, sizeof *w);
  EF_CHECK(w, EF_ERR_MEMORY, "out of memory");
  snprintf(w->path, sizeof w->path, "%s", path);
  const char *slash = strrchr(path, '/');
  if (slash)
    snprintf(w->temp, sizeof w->temp, "%.*s/.%s.tmp.%ld", (int)(slash - path), path, slash + 1, (long)getpid());
  else
    snprintf(w->temp, sizeof w->temp, ".%s.tmp.%ld", path, (long)getpid());
  w->f = fopen(w->temp, "wb");
  if (!w->f) {
    int e = errno;
    free(w);
    return EF_ERROR(EF_ERR_IO, "cannot create the restart file '%s': %s", path, strerror(e));
  }
  w->hash = EF_FNV_OFFSET;
  const uint32_t version = EF_RESTART_FORMAT_VERSION, order = EF_RESTART_ORDER;
  ef_restart_put(w, ef_restart_magic, sizeof ef_restart_magic);
  ef_restart_put(w, &version, sizeof version);
  ef_restart_put(w, &order, sizeof order);
  ef_restart_put(w, &fingerprint, sizeof fingerprint);
  *out = w;
  return EF_SUCCESS;
}

int ef_restart_writer_section(ef_restart_writer *w, const char *section) {
  EF_CHECK(w && section && section[0] && !strchr(section, '/') && strlen(section) < sizeof w->section,
           EF_ERR_PARAMETER, "restart file: bad section name '%s'", section ? section : "(null)");
  snprintf(w->section, sizeof w->section, "%s", section);
  return EF_SUCCESS;
}

/* One record: "section/key", type, count, payload. */
static int ef_restart_record(ef_restart_writer *w, const char *key, uint32_t type, const void *data, int64_t count,
                             size_t size) {
  EF_CHECK(w && key && key[0] && w->section[0] && count >= 0 && (data || count == 0), EF_ERR_PARAMETER,
           "restart file: bad record '%s' (no section selected, or no data)", key ? key : "(null)");
  char full[256];
  int len = snprintf(full, sizeof full, "%s/%s", w->section, key);
  EF_CHECK(len > 0 && (size_t)len < sizeof full, EF_ERR_PARAMETER, "restart file: key '%s/%s' too long", w->section,
           key);
  const uint32_t klen = (uint32_t)len;
  const uint64_t n = (uint64_t)count;
  ef_restart_put(w, &klen, sizeof klen);
  ef_restart_put(w, full, klen);
  ef_restart_put(w, &type, sizeof type);
  ef_restart_put(w, &n, sizeof n);
  ef_restart_put(w, data, (size_t)count * size);
  EF_CHECK(!w->failed, EF_ERR_IO, "cannot write the restart file '%s': %s", w->path, strerror(w->failed));
  return EF_SUCCESS;
}

int ef_restart_write_doubles(ef_restart_writer *w, const char *key, const double *v, int64_t n) {
  return ef_restart_record(w, key, EF_REC_F64, v, n, sizeof *v);
}
int ef_restart_write_int64s(ef_restart_writer *w, const char *key, const int64_t *v, int64_t n) {
  return ef_restart_record(w, key, EF_REC_I64, v, n, sizeof *v);
}
int ef_restart_write_bytes(ef_restart_writer *w, const char *key, const void *bytes, int64_t n) {
  return ef_restart_record(w, key, EF_REC_BYTES, bytes, n, 1);
}
int ef_restart_write_double(ef_restart_writer *w, const char *key, double value) {
  return ef_restart_record(w, key, EF_REC_F64, &value, 1, sizeof value);
}
int ef_restart_write_int64(ef_restart_writer *w, const char *key, int64_t value) {
  return ef_restart_record(w, key, EF_REC_I64, &value, 1, sizeof value);
}
int ef_restart_write_string(ef_restart_writer *w, const char *key, const char *text) {
  return ef_restart_record(w, key, EF_REC_BYTES, text ? text : "", (int64_t)strlen(text ? text : ""), 1);
}

void ef_restart_writer_abort(ef_restart_writer **pw) {
  if (!pw || !*pw) return;
  ef_restart_writer *w = *pw;
  if (w->f) fclose(w->f);
  unlink(w->temp);
  free(w);
  *pw = NULL;
}

/* fsync the folder holding path, so the rename itself is durable. */
static void ef_sync_folder_of(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

int ef_restart_writer_commit(ef_restart_writer **pw) { return ef_restart_writer_commit_checksum(pw, NULL); }

int ef_restart_writer_commit_checksum(ef_restart_writer **pw, uint64_t *checksum) {
  EF_CHECK(pw && *pw, EF_ERR_PARAMETER, "ef_restart_writer_commit: no writer");
  ef_restart_writer *w = *pw;
  const uint32_t zero32 = 0, end = EF_REC_END;
  const uint64_t zero64 = 0;
  ef_restart_put(w, &zero32, sizeof zero32);
  ef_restart_put(w, &end, sizeof end);
  ef_restart_put(w, &zero64, sizeof zero64);
  const uint64_t hash = w->hash;
  ef_restart_put(w, &hash, sizeof hash);
  int e = w->failed;
  if (!e && fflush(w->f)) e = errno;
  if (!e && fsync(fileno(w->f)) && errno != EINVAL && errno != EROFS) e = errno;
  if (fclose(w->f) && !e) e = errno;
  w->f = NULL;
  if (!e && rename(w->temp, w->path)) e = errno;
  if (e) {
    char path[4096];
    snprintf(path, sizeof path, "%s", w->path);
    ef_restart_writer_abort(pw);
    return EF_ERROR(EF_ERR_IO, "cannot write the restart file '%s': %s", path, strerror(e));
  }
  ef_sync_folder_of(w->path);
  if (checksum) *checksum = hash;
  free(w);
  *pw = NULL;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Reader. */

typedef struct {
  const char *key; /* inside data, not terminated: key_len bytes */
  uint32_t key_len, type;
  uint64_t count;
  const unsigned char *payload;
} ef_restart_entry;

struct ef_restart_reader_s {
  char path[4096], section[64];
  unsigned char *data;
  size_t size;
  uint32_t version;
  uint64_t fingerprint;
  int n_entries;
  ef_restart_entry *entries;
};

void ef_restart_reader_close(ef_restart_reader **pr) {
  if (!pr || !*pr) return;
  free((*pr)->data);
  free((*pr)->entries);
  free(*pr);
  *pr = NULL;
}

const char *ef_restart_reader_path(const ef_restart_reader *r) { return r ? r->path : ""; }
uint64_t ef_restart_reader_fingerprint(const ef_restart_reader *r) { return r ? r->fingerprint : 0; }
uint64_t ef_restart_reader_checksum(const ef_restart_reader *r) {
  uint64_t stored = 0;
  if (r && r->size >= 8) memcpy(&stored, r->data + r->size - 8, 8);
  return stored;
}

/* Size of one value of a record type. */
static size_t ef_restart_type_size(uint32_t type) {
  return type == EF_REC_F64 ? sizeof(double) : type == EF_REC_I64 ? sizeof(int64_t) : 1;
}

/* Index the records after the header; fails on any inconsistency. */
static int ef_restart_index(ef_restart_reader *r) {
  size_t at = 24;
  const size_t end = r->size - 8;
  for (;;) {
    uint32_t klen, type;
    uint64_t count;
    EF_CHECK(at + 16 <= end, EF_ERR_PARSE, "restart file '%s' is truncated (record at byte %zu)", r->path, at);
    memcpy(&klen, r->data + at, 4);
    EF_CHECK(klen < 256 && at + 4 + klen + 12 <= end, EF_ERR_PARSE, "restart file '%s' is damaged at byte %zu",
             r->path, at);
    memcpy(&type, r->data + at + 4 + klen, 4);
    memcpy(&count, r->data + at + 8 + klen, 8);
    const size_t payload = at + 16 + klen;
    if (klen == 0 && type == EF_REC_END) {
      EF_CHECK(payload == end, EF_ERR_PARSE, "restart file '%s' has bytes after its end record", r->path);
      return EF_SUCCESS;
    }
    EF_CHECK(type >= EF_REC_F64 && type <= EF_REC_BYTES && count <= (end - payload) / ef_restart_type_size(type),
             EF_ERR_PARSE, "restart file '%s' is damaged at byte %zu", r->path, at);
    ef_restart_entry *grown = realloc(r->entries, (size_t)(r->n_entries + 1) * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
    r->entries = grown;
    r->entries[r->n_entries++] =
        (ef_restart_entry){(const char *)r->data + at + 4, klen, type, count, r->data + payload};
    at = payload + (size_t)count * ef_restart_type_size(type);
  }
}

int ef_restart_reader_open(const char *path, ef_restart_reader **out) {
  EF_CHECK(path && out, EF_ERR_PARAMETER, "ef_restart_reader_open: bad arguments");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open the restart file '%s': %s", path, strerror(errno));
  ef_restart_reader *r = calloc(1, sizeof *r);
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(r, EF_ERR_MEMORY, fail, "out of memory");
  snprintf(r->path, sizeof r->path, "%s", path);
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  EF_CHECK_GOTO(size >= 0 && fseek(f, 0, SEEK_SET) == 0, EF_ERR_IO, fail, "cannot read the restart file '%s'", path);
  r->size = (size_t)size;
  r->data = malloc(r->size ? r->size : 1);
  EF_CHECK_GOTO(r->data, EF_ERR_MEMORY, fail, "out of memory reading the restart file '%s' (%ld bytes)", path, size);
  EF_CHECK_GOTO(fread(r->data, 1, r->size, f) == r->size, EF_ERR_IO, fail, "cannot read the restart file '%s'", path);
  EF_CHECK_GOTO(r->size >= 24 + 16 + 8 && !memcmp(r->data, ef_restart_magic, 8), EF_ERR_PARSE, fail,
                "'%s' is not an edgeflow restart file", path);
  uint32_t order;
  memcpy(&r->version, r->data + 8, 4);
  memcpy(&order, r->data + 12, 4);
  memcpy(&r->fingerprint, r->data + 16, 8);
  EF_CHECK_GOTO(order == EF_RESTART_ORDER, EF_ERR_PARSE, fail,
                "restart file '%s' was written on a machine of the other byte order", path);
  EF_CHECK_GOTO(r->version <= EF_RESTART_FORMAT_VERSION && r->version >= 1, EF_ERR_UNSUPPORTED, fail,
                "restart file '%s' has format version %u; this edgeflow reads versions 1 to %u (the file was "
                "written by a newer edgeflow: continue the run with that version)",
                path, r->version, EF_RESTART_FORMAT_VERSION);
  uint64_t stored;
  memcpy(&stored, r->data + r->size - 8, 8);
  EF_CHECK_GOTO(stored == ef_fnv(EF_FNV_OFFSET, r->data, r->size - 8), EF_ERR_PARSE, fail,
                "restart file '%s' is damaged or truncated (its checksum does not match)", path);
  EF_CALL_GOTO(ef_restart_index(r), fail);
  fclose(f);
  *out = r;
  return EF_SUCCESS;
fail:
  fclose(f);
  ef_restart_reader_close(&r);
  return err;
}

int ef_restart_reader_section(ef_restart_reader *r, const char *section) {
  snprintf(r->section, sizeof r->section, "%s", section);
  const size_t n = strlen(r->section);
  for (int i = 0; i < r->n_entries; i++)
    if (r->entries[i].key_len > n && !memcmp(r->entries[i].key, r->section, n) && r->entries[i].key[n] == '/')
      return 1;
  return 0;
}

/* The record "section/key" of the current section, or NULL. */
static const ef_restart_entry *ef_restart_find(const ef_restart_reader *r, const char *key) {
  const size_t ns = strlen(r->section), nk = strlen(key);
  for (int i = 0; i < r->n_entries; i++) {
    const ef_restart_entry *e = &r->entries[i];
    if (e->key_len == ns + 1 + nk && !memcmp(e->key, r->section, ns) && e->key[ns] == '/' &&
        !memcmp(e->key + ns + 1, key, nk))
      return e;
  }
  return NULL;
}

int64_t ef_restart_count(const ef_restart_reader *r, const char *key) {
  const ef_restart_entry *e = ef_restart_find(r, key);
  return e ? (int64_t)e->count : -1;
}

/* Copy exactly n values of type into out. */
static int ef_restart_get(ef_restart_reader *r, const char *key, uint32_t type, void *out, int64_t n) {
  const ef_restart_entry *e = ef_restart_find(r, key);
  EF_CHECK(e, EF_ERR_PARSE, "restart file '%s' has no record '%s' in section '%s'", r->path, key, r->section);
  EF_CHECK(e->type == type && (int64_t)e->count == n, EF_ERR_PARSE,
           "restart file '%s': record '%s/%s' holds %llu values of type %u, expected %lld of type %u", r->path,
           r->section, key, (unsigned long long)e->count, e->type, (long long)n, type);
  memcpy(out, e->payload, (size_t)n * ef_restart_type_size(type));
  return EF_SUCCESS;
}

int ef_restart_read_doubles(ef_restart_reader *r, const char *key, double *v, int64_t n) {
  return ef_restart_get(r, key, EF_REC_F64, v, n);
}
int ef_restart_read_int64s(ef_restart_reader *r, const char *key, int64_t *v, int64_t n) {
  return ef_restart_get(r, key, EF_REC_I64, v, n);
}
int ef_restart_read_bytes(ef_restart_reader *r, const char *key, void *bytes, int64_t n) {
  return ef_restart_get(r, key, EF_REC_BYTES, bytes, n);
}
int ef_restart_read_double(ef_restart_reader *r, const char *key, double *value) {
  return ef_restart_get(r, key, EF_REC_F64, value, 1);
}
int ef_restart_read_int64(ef_restart_reader *r, const char *key, int64_t *value) {
  return ef_restart_get(r, key, EF_REC_I64, value, 1);
}
int ef_restart_read_string(ef_restart_reader *r, const char *key, char *text, size_t size) {
  const int64_t n = ef_restart_count(r, key);
  EF_CHECK(n >= 0, EF_ERR_PARSE, "restart file '%s' has no record '%s' in section '%s'", r->path, key, r->section);
  EF_CHECK((size_t)n < size, EF_ERR_PARSE, "restart file '%s': record '%s/%s' is too long (%lld bytes)", r->path,
           r->section, key, (long long)n);
  EF_CALL(ef_restart_get(r, key, EF_REC_BYTES, text, n));
  text[n] = '\0';
  return EF_SUCCESS;
}

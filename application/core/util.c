/* util.c -- the small utilities of ef_util.h. */
#include "edgeflow/ef_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "edgeflow/ef_error.h"

double ef_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Make one folder; an existing folder is fine, an existing file is ENOTDIR. */
static int ef_make_one_folder(const char *p) {
  if (mkdir(p, 0777) == 0) return 0;
  int e = errno;
  struct stat st;
  if (e == EEXIST) e = (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) ? 0 : ENOTDIR;
  return e;
}

int ef_make_folders_errno(const char *path, char *failed, size_t failed_size) {
  if (failed && failed_size) failed[0] = '\0';
  if (!path || !path[0]) return 0;
  size_t n = strlen(path);
  char *p = malloc(n + 1);
  if (!p) return ENOMEM;
  memcpy(p, path, n + 1);
  int e = 0;
  for (size_t i = 1; i <= n && !e; ++i) {
    if (p[i] != '/' && p[i] != '\0') continue;
    if (p[i - 1] == '/') continue; /* "a//b", "a/" */
    char saved = p[i];
    p[i] = '\0';
    e = ef_make_one_folder(p);
    if (e && failed) ef_copy_string(failed, failed_size, p);
    p[i] = saved;
  }
  free(p);
  return e;
}

int ef_make_folders(const char *path) {
  char failed[4096];
  int e = ef_make_folders_errno(path, failed, sizeof failed);
  if (e == ENOMEM && !failed[0]) return EF_ERROR(EF_ERR_MEMORY, "out of memory creating folder '%s'", path);
  if (e) return EF_ERROR(EF_ERR_IO, "cannot create folder '%s': %s", failed, strerror(e));
  return EF_SUCCESS;
}

int ef_copy_string(char *dst, size_t size, const char *src) {
  if (!size) return 0;
  if (!src) src = "";
  size_t n = strlen(src);
  int fits = n < size;
  if (!fits) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
  return fits;
}

char *ef_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void ef_resolve_path(const char *folder, const char *name, char *out, size_t size) {
  if (name[0] == '/' || access(name, R_OK) == 0) {
    snprintf(out, size, "%s", name);
    return;
  }
  snprintf(out, size, "%s/%s", folder, name);
}

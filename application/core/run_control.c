/* run_control.c -- stop requests, output-folder file lists and the run manifest (run_control.h). */
#define _XOPEN_SOURCE 700
#include "run_control.h"
#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_util.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * Stop requests. */

static volatile sig_atomic_t ef_stop_signal;

/* Async-signal-safe: only stores the number; the loop acts at the end of the step. */
void ef_request_stop(int signal_number) { ef_stop_signal = signal_number > 0 ? signal_number : SIGTERM; }
int ef_stop_requested(void) { return (int)ef_stop_signal; }
void ef_stop_clear(void) { ef_stop_signal = 0; }

static void ef_stop_handler(int signal_number) { ef_request_stop(signal_number); }

/* SIGINT and SIGTERM finish the current step (a second signal still stops at once). */
int ef_install_stop_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ef_stop_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND; /* the second signal gets the default action: an impatient user wins */
  EF_CHECK(sigaction(SIGINT, &sa, NULL) == 0 && sigaction(SIGTERM, &sa, NULL) == 0, EF_ERR_INTERNAL,
           "cannot install the SIGINT/SIGTERM handlers: %s", strerror(errno));
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * File lists. */

void ef_file_list_free(ef_file_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) free(l->names[i]);
  free(l->names);
  memset(l, 0, sizeof *l);
}

int ef_file_list_add(ef_file_list *l, const char *name) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    char **grown = realloc(l->names, (size_t)cap * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory listing files");
    l->names = grown;
    l->cap = cap;
  }
  l->names[l->n] = ef_strdup(name);
  EF_CHECK(l->names[l->n], EF_ERR_MEMORY, "out of memory listing files");
  l->n++;
  return EF_SUCCESS;
}

static int ef_cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void ef_file_list_sort(ef_file_list *l) {
  if (l->n > 1) qsort(l->names, (size_t)l->n, sizeof *l->names, ef_cmp_names);
}

int ef_file_list_has(const ef_file_list *l, const char *name) {
  return l->n > 0 && bsearch(&name, l->names, (size_t)l->n, sizeof *l->names, ef_cmp_names) != NULL;
}

/* nftw has no user pointer: the scan in progress (the analysis runs on one thread). */
static ef_file_list *ef_scan_list;
static size_t ef_scan_prefix;
static int ef_scan_err;

/* A temporary file of an atomic write: ".NAME.tmp.PID" (or .tmp). */
static int ef_is_temporary(const char *base) { return base[0] == '.' && strstr(base, ".tmp"); }

static int ef_scan_visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  if (type != FTW_F) return 0;
  const char *base = path + ftw->base, *rel = path + ef_scan_prefix;
  while (*rel == '/') rel++;
  if (ef_is_temporary(base) || !strcmp(rel, EF_MANIFEST_NAME)) return 0;
  if (ef_file_list_add(ef_scan_list, rel)) {
    ef_scan_err = EF_ERR_MEMORY;
    return 1;
  }
  return 0;
}

int ef_folder_scan(const char *folder, ef_file_list *out) {
  memset(out, 0, sizeof *out);
  struct stat st;
  if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) return EF_SUCCESS;
  ef_scan_list = out;
  ef_scan_prefix = strlen(folder);
  ef_scan_err = 0;
  int rc = nftw(folder, ef_scan_visit, 32, FTW_PHYS);
  ef_scan_list = NULL;
  if (ef_scan_err || rc != 0) {
    ef_file_list_free(out);
    return ef_scan_err ? ef_scan_err : EF_ERROR(EF_ERR_IO, "cannot list the output folder '%s'", folder);
  }
  ef_file_list_sort(out);
  return EF_SUCCESS;
}

int ef_manifest_read(const char *folder, ef_file_list *out, int *exists) {
  memset(out, 0, sizeof *out);
  *exists = 0;
  char path[4200], line[4200];
  snprintf(path, sizeof path, "%s/%s", folder, EF_MANIFEST_NAME);
  FILE *f = fopen(path, "r");
  if (!f) return EF_SUCCESS;
  *exists = 1;
  int err = EF_SUCCESS;
  while (!err && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] && line[0] != '#') err = ef_file_list_add(out, line);
  }
  fclose(f);
  if (err) ef_file_list_free(out);
  ef_file_list_sort(out);
  return err;
}

int ef_manifest_write(const char *folder, const ef_file_list *now, const ef_file_list *before) {
  size_t size = 128, used = 0;
  for (int i = 0; i < now->n; i++) size += strlen(now->names[i]) + 1;
  char *text = malloc(size);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory writing the run manifest");
  used += (size_t)snprintf(text, size, "# files this edgeflow run created (edgeflow run --overwrite removes them)\n");
  for (int i = 0; i < now->n; i++)
    if (!before || !ef_file_list_has(before, now->names[i]))
      used += (size_t)snprintf(text + used, size - used, "%s\n", now->names[i]);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", folder, EF_MANIFEST_NAME);
  int err = ef_write_text_file_atomic(path, text);
  free(text);
  return err;
}

/* A relative path with no "..": what a manifest may name. */
static int ef_safe_relative(const char *name) {
  if (!name[0] || name[0] == '/') return 0;
  for (const char *p = name; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') return 0;
    p += n;
    while (*p == '/') p++;
  }
  return 1;
}

int ef_manifest_remove_files(const char *folder, const ef_file_list *files, int *removed) {
  *removed = 0;
  char path[8400];
  for (int i = 0; i < files->n; i++) {
    if (!ef_safe_relative(files->names[i])) continue;
    snprintf(path, sizeof path, "%s/%s", folder, files->names[i]);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    EF_CHECK(unlink(path) == 0, EF_ERR_IO, "cannot remove '%s' (listed in the previous run's manifest): %s", path,
             strerror(errno));
    (*removed)++;
    /* Folders the run made and left empty go too (rmdir fails harmlessly on the others). */
    for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(folder); slash = strrchr(path, '/')) {
      *slash = '\0';
      if (rmdir(path) != 0) break;
    }
  }
  snprintf(path, sizeof path, "%s/%s", folder, EF_MANIFEST_NAME);
  if (unlink(path) != 0 && errno != ENOENT)
    return EF_ERROR(EF_ERR_IO, "cannot remove '%s': %s", path, strerror(errno));
  return EF_SUCCESS;
}

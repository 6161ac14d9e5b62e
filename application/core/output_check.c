/* output_check.c -- output folders proven writable before the first step, so a run does not
 * learn at its first output (hours in) that it cannot keep its results. */
#include "output_check.h"

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A probe file in the existing folder, removed again. */
static int ef_folder_takes_files(const char *folder, const char *what, const char *given_by) {
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/.edgeflow_write_check_%ld", folder, (long)getpid());
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
  int e = errno;
  EF_CHECK(fd >= 0, EF_ERR_IO, "%s '%s' (%s) is not writable: %s; no step was run", what, folder, given_by,
           strerror(e));
  close(fd);
  unlink(probe);
  return EF_SUCCESS;
}

/* Create folder (and its parents) and a probe file in it, then remove the probe. */
static int ef_folder_writable(const char *folder, const char *what, const char *given_by) {
  char failed[4096];
  int e = ef_make_folders_errno(folder, failed, sizeof failed);
  EF_CHECK(e == 0, EF_ERR_IO, "%s '%s' (%s) cannot be created: '%s': %s; no step was run", what, folder, given_by,
           failed, strerror(e));
  return ef_folder_takes_files(folder, what, given_by);
}

static int ef_output_folder_writable(const char *folder, const char *given_by) {
  return ef_folder_writable(folder, "output folder", given_by);
}

/* Without creating anything: folder exists and takes files, or its nearest existing ancestor is a
 * folder in which the missing ones can be created. */
static int ef_folder_creatable(const char *folder, const char *what, const char *given_by) {
  char p[4096];
  struct stat st;
  int fits = ef_copy_string(p, sizeof p, folder);
  EF_CHECK(fits && p[0], EF_ERR_IO, "%s '%s' (%s): the path is empty or too long; no step was run", what, folder,
           given_by);
  for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; --n) p[n - 1] = '\0'; /* "a/b/" is "a/b" */
  for (int first = 1;; first = 0) {
    if (stat(p, &st) == 0) {
      EF_CHECK(S_ISDIR(st.st_mode), EF_ERR_IO, "%s '%s' (%s) cannot be created: '%s': %s; no step was run", what,
               folder, given_by, p, strerror(ENOTDIR));
      if (first) return ef_folder_takes_files(folder, what, given_by);
      EF_CHECK(access(p, W_OK | X_OK) == 0, EF_ERR_IO, "%s '%s' (%s) cannot be created: '%s': %s; no step was run",
               what, folder, given_by, p, strerror(errno));
      return EF_SUCCESS;
    }
    const int e = errno;
    EF_CHECK((e == ENOENT || e == ENOTDIR) && strcmp(p, ".") && strcmp(p, "/"), EF_ERR_IO,
             "%s '%s' (%s) cannot be created: '%s': %s; no step was run", what, folder, given_by, p, strerror(e));
    char *slash = strrchr(p, '/'); /* the parent: "a/b" -> "a", "b" -> ".", "/b" -> "/" */
    if (!slash)
      snprintf(p, sizeof p, ".");
    else if (slash == p)
      p[1] = '\0';
    else
      *slash = '\0';
  }
}

int ef_restart_destination_check(const char *folder, const char *given_by, int create) {
  return create ? ef_folder_writable(folder, "restart folder", given_by)
                : ef_folder_creatable(folder, "restart folder", given_by);
}

int ef_output_destinations_check(ef_parameters project, const char *output_folder) {
  const char *base = output_folder && output_folder[0] ? output_folder : ".";
  EF_CALL(ef_output_folder_writable(base, "problem_data.output_folder"));
  ef_parameters lists, list, block, settings;
  if (!project || !ef_parameters_has(project, "output_processes")) return EF_SUCCESS;
  EF_CALL(ef_parameters_get(project, "output_processes", &lists));
  if (ef_parameters_type(lists) != EF_JSON_OBJECT) return EF_SUCCESS;
  const char *key;
  for (int i = 0; (key = ef_parameters_key_at(lists, i)); ++i) {
    EF_CALL(ef_parameters_get(lists, key, &list));
    for (int b = 0; b < ef_parameters_size(list); ++b) {
      EF_CALL(ef_parameters_at(list, b, &block));
      if (ef_parameters_type(block) != EF_JSON_OBJECT || !ef_parameters_has(block, "Parameters")) continue;
      EF_CALL(ef_parameters_get(block, "Parameters", &settings));
      if (ef_parameters_type(settings) != EF_JSON_OBJECT) continue;
      static const char *const keys[] = {"output_path", "folder_name"};
      for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
        const char *path;
        if (!ef_parameters_has(settings, keys[k])) continue;
        ef_parameters v;
        EF_CALL(ef_parameters_get(settings, keys[k], &v));
        if (ef_parameters_type(v) != EF_JSON_STRING) continue;
        EF_CALL(ef_parameters_as_string(v, &path));
        if (!path[0]) continue;
        char folder[4096], given_by[1024];
        if (path[0] == '/') snprintf(folder, sizeof folder, "%s", path);
        else snprintf(folder, sizeof folder, "%s/%s", base, path);
        snprintf(given_by, sizeof given_by, "%s", ef_parameters_path(v));
        EF_CALL(ef_output_folder_writable(folder, given_by));
      }
    }
  }
  return EF_SUCCESS;
}

/* process_csv.c -- output files the output processes share: append-only CSV files whose
 * rows reach the disk whole, and Kratos' rounding of output times.
 *
 * Each row is formatted in memory by the caller, handed to one write(2) on a file
 * descriptor kept open, and (with sync_each_row) fdatasync'd; if the write comes back
 * short (disk full) the file is cut back to its last complete row, so it always ends with
 * a complete row.
 */
#include "process_internal.h"
#include "edgeflow/ef_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Open (truncate) folder/sub/name and write the header line; the folders are created. */
int ef_csv_open(const char *folder, const char *sub, const char *name, const char *header, int sync_each_row,
                ef_csv_file *f) {
  f->fd = -1;
  f->sync_each_row = sync_each_row;
  f->length = 0;
  f->path[0] = '\0';
  char dir[4096];
  const char *base = folder && folder[0] ? folder : ".";
  if (sub && sub[0] == '/') snprintf(dir, sizeof dir, "%s", sub);
  else if (sub && sub[0]) snprintf(dir, sizeof dir, "%s/%s", base, sub);
  else snprintf(dir, sizeof dir, "%s", base);
  EF_CHECK(!strchr(name, '/'), EF_ERR_PARAMETER, "output file name '%s' contains '/'; use output_path for folders",
           name);
  EF_CHECK(name[0], EF_ERR_PARAMETER, "empty output file name");
  EF_CALL(ef_make_folders(dir));
  int n = snprintf(f->path, sizeof f->path, "%s/%s", dir, name);
  EF_CHECK(n > 0 && (size_t)n < sizeof f->path, EF_ERR_PARAMETER, "output path too long: '%s/%s'", dir, name);
  f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  EF_CHECK(f->fd >= 0, EF_ERR_IO, "cannot create '%s': %s", f->path, strerror(errno));
  return ef_csv_append(f, header, strlen(header));
}

/* Append one complete row: one write, then fdatasync; a short write is undone. */
int ef_csv_append(ef_csv_file *f, const char *row, size_t n) {
  EF_CHECK(f->fd >= 0, EF_ERR_INTERNAL, "CSV file '%s' is not open", f->path);
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(f->fd, row + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int saved = w < 0 ? errno : ENOSPC;
      /* Cut the partial row so the file still ends with a complete one. */
      if (ftruncate(f->fd, (off_t)f->length) == 0) (void)lseek(f->fd, (off_t)f->length, SEEK_SET);
      return EF_ERROR(EF_ERR_IO, "cannot write to '%s': %s", f->path, strerror(saved));
    }
    done += (size_t)w;
  }
  f->length += (int64_t)n;
  if (!f->sync_each_row) return EF_SUCCESS;
  /* EINVAL: the file system cannot sync (e.g. a pipe or special file); the data is written anyway. */
  if (fdatasync(f->fd) && errno != EINVAL && errno != EROFS)
    return EF_ERROR(EF_ERR_IO, "cannot sync '%s': %s", f->path, strerror(errno));
  return EF_SUCCESS;
}

/* At a restart point: the rows so far durable (with sync_each_row they already are). */
int ef_csv_sync(ef_csv_file *f) {
  if (!f || f->fd < 0 || f->sync_each_row) return EF_SUCCESS;
  if (fdatasync(f->fd) && errno != EINVAL && errno != EROFS)
    return EF_ERROR(EF_ERR_IO, "cannot sync '%s': %s", f->path, strerror(errno));
  return EF_SUCCESS;
}

/* Close the file (NULL-safe, idempotent). */
void ef_csv_close(ef_csv_file *f) {
  if (!f || f->fd < 0) return;
  if (!f->sync_each_row) (void)fdatasync(f->fd);
  close(f->fd);
  f->fd = -1;
}

/* Round t to 12 significant digits, as Kratos does before comparing output times. */
double ef_output_time(double t) {
  char text[64];
  snprintf(text, sizeof text, "%.12g", t);
  return strtod(text, NULL);
}

/* Which clock an output_interval counts. */
int ef_output_control_parse(const char *label, const char *text, ef_output_control *control) {
  if (!strcmp(text, "step")) *control = EF_CONTROL_STEP;
  else if (!strcmp(text, "time")) *control = EF_CONTROL_TIME;
  else if (!strcmp(text, "solver_step")) *control = EF_CONTROL_SOLVER_STEP;
  else
    return EF_ERROR(EF_ERR_PARAMETER, "%s: output_control_type is '%s'; expected \"step\", \"time\" or \"solver_step\"",
                    label, text);
  return EF_SUCCESS;
}

/* now = rounded t, the (user) step, or the solver's step. */
double ef_output_clock(ef_output_control control, const long *solver_step, double time, int step) {
  if (control == EF_CONTROL_TIME) return ef_output_time(time);
  if (control == EF_CONTROL_SOLVER_STEP && solver_step) return (double)*solver_step;
  return (double)step;
}

/* next <- next + k interval, the smallest k with next > now. */
void ef_output_schedule(ef_output_control control, double interval, double now, double *next) {
  if (interval <= 0.0) return;
  while (*next <= now) *next = control == EF_CONTROL_TIME ? ef_output_time(*next + interval) : *next + interval;
}

/* ---------------------------------------------------------------------------
 * Restarts: a continued run appends to the files of the run it continues. */

/* Fresh: ef_csv_open.  Restarted: reopen folder/sub/name without truncating it. */
int ef_csv_open_run(const ef_process_context *ctx, const char *sub, const char *name, const char *header,
                    int sync_each_row, ef_csv_file *f) {
  if (!ctx->restart) return ef_csv_open(ctx->output_folder, sub, name, header, sync_each_row, f);
  f->fd = -1;
  f->sync_each_row = sync_each_row;
  f->length = 0;
  const char *base = ctx->output_folder && ctx->output_folder[0] ? ctx->output_folder : ".";
  int n;
  if (sub && sub[0] == '/') n = snprintf(f->path, sizeof f->path, "%s/%s", sub, name);
  else if (sub && sub[0]) n = snprintf(f->path, sizeof f->path, "%s/%s/%s", base, sub, name);
  else n = snprintf(f->path, sizeof f->path, "%s/%s", base, name);
  EF_CHECK(n > 0 && (size_t)n < sizeof f->path, EF_ERR_PARAMETER, "output path too long for '%s'", name);
  f->fd = open(f->path, O_WRONLY | O_CLOEXEC);
  EF_CHECK(f->fd >= 0, EF_ERR_IO,
           "cannot continue '%s' from the restart file: %s (a restarted run continues in the output folder of the run "
           "that wrote the restart file)", f->path, strerror(errno));
  off_t end = lseek(f->fd, 0, SEEK_END);
  EF_CHECK(end >= 0, EF_ERR_IO, "cannot seek in '%s': %s", f->path, strerror(errno));
  f->length = (int64_t)end;
  return EF_SUCCESS;
}

int ef_csv_save_state(const ef_csv_file *f, ef_restart_writer *w, const char *key) {
  return ef_restart_write_int64(w, key, f->fd >= 0 ? f->length : -1);
}

/* Rows written after the restart point go: the continued run writes them again. */
int ef_csv_load_state(ef_csv_file *f, ef_restart_reader *r, const char *key) {
  int64_t length;
  EF_CALL(ef_restart_read_int64(r, key, &length));
  if (length < 0 || f->fd < 0) return EF_SUCCESS;
  EF_CHECK(length <= f->length, EF_ERR_IO,
           "'%s' has %lld bytes, fewer than the %lld it had when the restart file was written: it was changed since",
           f->path, (long long)f->length, (long long)length);
  EF_CHECK(ftruncate(f->fd, (off_t)length) == 0 && lseek(f->fd, (off_t)length, SEEK_SET) == (off_t)length, EF_ERR_IO,
           "cannot cut '%s' back to the restart point: %s", f->path, strerror(errno));
  f->length = length;
  return EF_SUCCESS;
}

/* fsync_log.c -- an LD_PRELOAD shim for tests/workflow/test_restart_durable.py: every fsync,
 * fdatasync, rename, write and pwrite the program makes through the C library is appended, with
 * the file's path, to the file named by EF_FSYNC_LOG, in the order they happen:
 *
 *   sync<TAB>path            fsync / fdatasync succeeded (a folder too)
 *   rename<TAB>old<TAB>new   rename succeeded
 *   write<TAB>path           write / pwrite wrote at least one byte
 *
 * so the test can tell, at the rename that puts a restart file in place, whether every output
 * written before it was synced after its last write.  Writes through stdio (fwrite) bypass the
 * shim; the files written that way are written under a temporary name and renamed, which it sees.
 * The log is written with raw system calls, so it never logs itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static int log_fd = -2;

static void log_line(const char *kind, const char *a, const char *b) {
  if (log_fd == -2) {
    const char *path = getenv("EF_FSYNC_LOG");
    log_fd = path ? (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }
  if (log_fd < 0) return;
  char line[8500];
  int n = snprintf(line, sizeof line, "%s\t%s%s%s\n", kind, a, b ? "\t" : "", b ? b : "");
  if (n <= 0) return;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  (void)syscall(SYS_write, log_fd, line, (size_t)n); /* O_APPEND: one line per call, whole */
}

/* The path of fd ("" when it has none or is the log itself). */
static void fd_path(int fd, char *out, size_t size) {
  out[0] = '\0';
  if (fd < 0 || fd == log_fd) return;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, size - 1);
  out[n > 0 ? n : 0] = '\0';
}

static void log_fd_event(const char *kind, int fd) {
  char path[4096];
  fd_path(fd, path, sizeof path);
  if (path[0] == '/') log_line(kind, path, NULL);
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, #name))

int fsync(int fd) {
  int r = REAL(fsync, int (*)(int))(fd);
  if (r == 0) log_fd_event("sync", fd);
  return r;
}

int fdatasync(int fd) {
  int r = REAL(fdatasync, int (*)(int))(fd);
  if (r == 0) log_fd_event("sync", fd);
  return r;
}

int rename(const char *old, const char *new) {
  int r = REAL(rename, int (*)(const char *, const char *))(old, new);
  if (r == 0) log_line("rename", old, new);
  return r;
}

ssize_t write(int fd, const void *buf, size_t n) {
  ssize_t r = REAL(write, ssize_t (*)(int, const void *, size_t))(fd, buf, n);
  if (r > 0 && fd > 2) log_fd_event("write", fd);
  return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
  ssize_t r = REAL(pwrite, ssize_t (*)(int, const void *, size_t, off_t))(fd, buf, n, offset);
  if (r > 0) log_fd_event("write", fd);
  return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) {
  ssize_t r = REAL(pwrite64, ssize_t (*)(int, const void *, size_t, off_t))(fd, buf, n, offset);
  if (r > 0) log_fd_event("write", fd);
  return r;
}

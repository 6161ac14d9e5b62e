/* error.c -- thread-local error message storage. */
#include "edgeflow/ef_error.h"

#include <stdio.h>
#include <string.h>

#define EF_ERROR_MESSAGE_SIZE 4096

static _Thread_local char ef_error_buffer[EF_ERROR_MESSAGE_SIZE];

static const char *ef_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

int ef_error_setv(int code, const char *file, int line, const char *fmt, va_list ap) {
  int n = snprintf(ef_error_buffer, sizeof ef_error_buffer, "%s:%d: ", ef_basename(file), line);
  if (n < 0 || (size_t)n >= sizeof ef_error_buffer) n = 0;
  vsnprintf(ef_error_buffer + n, sizeof ef_error_buffer - (size_t)n, fmt, ap);
  return code;
}

int ef_error_set(int code, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ef_error_setv(code, file, line, fmt, ap);
  va_end(ap);
  return code;
}

int ef_error_push(int code, const char *file, int line, const char *fmt, ...) {
  char previous[EF_ERROR_MESSAGE_SIZE];
  memcpy(previous, ef_error_buffer, sizeof previous);
  va_list ap;
  va_start(ap, fmt);
  ef_error_setv(code, file, line, fmt, ap);
  va_end(ap);
  size_t used = strlen(ef_error_buffer);
  if (previous[0] && used + 2 < sizeof ef_error_buffer)
    snprintf(ef_error_buffer + used, sizeof ef_error_buffer - used, "\n  caused by: %s", previous);
  return code;
}

const char *ef_error_message(void) { return ef_error_buffer; }

void ef_error_clear(void) { ef_error_buffer[0] = '\0'; }

const char *ef_error_name(int code) {
  static const char *names[] = {"EF_SUCCESS",        "EF_ERR_MEMORY",     "EF_ERR_IO",
                                "EF_ERR_PARSE",      "EF_ERR_PARAMETER",  "EF_ERR_MESH",
                                "EF_ERR_NOT_FOUND",  "EF_ERR_UNSUPPORTED", "EF_ERR_OPENCL",
                                "EF_ERR_PETSC",      "EF_ERR_SOLVER",     "EF_ERR_DIVERGED",
                                "EF_ERR_INTERNAL",   "EF_ERR_COMM"};
  if (code < 0 || code >= (int)(sizeof names / sizeof names[0])) return "EF_ERR_UNKNOWN";
  return names[code];
}

/* ef_error.h -- error codes and the macros that carry them.
 *
 * Every function that can fail returns int: EF_SUCCESS (0) or one of the codes
 * below.  The failing site records a message "file:line: cause" in a
 * thread-local buffer the caller can print with ef_error_message().  Library
 * code never calls abort() or exit().
 */
#ifndef EF_ERROR_H
#define EF_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  EF_SUCCESS = 0,
  EF_ERR_MEMORY = 1,      /* allocation failed */
  EF_ERR_IO = 2,          /* a file could not be opened, read or written */
  EF_ERR_PARSE = 3,       /* bad input: syntax, counts, values in a file */
  EF_ERR_PARAMETER = 4,   /* bad parameters: unknown key, wrong type, bad value */
  EF_ERR_MESH = 5,        /* mesh checks failed: degenerate elements, missing nodes */
  EF_ERR_NOT_FOUND = 6,   /* a name is not registered / an entity is missing */
  EF_ERR_UNSUPPORTED = 7, /* the build or device lacks a feature */
  EF_ERR_OPENCL = 8,      /* an OpenCL call failed */
  EF_ERR_PETSC = 9,       /* a PETSc call failed */
  EF_ERR_SOLVER = 10,     /* linear solver broke down or did not converge */
  EF_ERR_DIVERGED = 11,   /* the flow solution diverged */
  EF_ERR_INTERNAL = 12,   /* a broken invariant: a bug */
  EF_ERR_COMM = 13        /* a communication (MPI) call failed */
};

/* Record an error message (printf style) for this thread and return code. */
int ef_error_set(int code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int ef_error_setv(int code, const char *file, int line, const char *fmt, va_list ap);
/* Prepend context ("while reading X") to the current message; returns code. */
int ef_error_push(int code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The last message recorded on this thread ("" if none). */
const char *ef_error_message(void);
/* Forget the last message. */
void ef_error_clear(void);
/* A short name for a code: "EF_ERR_PARSE". */
const char *ef_error_name(int code);

/* Fail with code and message when cond does not hold. */
#define EF_CHECK(cond, code, ...)                                   \
  do {                                                              \
    if (!(cond)) return ef_error_set((code), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* Return an error unconditionally. */
#define EF_ERROR(code, ...) ef_error_set((code), __FILE__, __LINE__, __VA_ARGS__)

/* Propagate a failing call's code; its message is kept. */
#define EF_CALL(expr)                 \
  do {                                \
    int ef_call_err_ = (expr);        \
    if (ef_call_err_) return ef_call_err_; \
  } while (0)

/* Propagate and jump to a cleanup label: needs `int err` in scope. */
#define EF_CALL_GOTO(expr, label)     \
  do {                                \
    err = (expr);                     \
    if (err) goto label;              \
  } while (0)

#define EF_CHECK_GOTO(cond, code, label, ...)                          \
  do {                                                                 \
    if (!(cond)) {                                                     \
      err = ef_error_set((code), __FILE__, __LINE__, __VA_ARGS__);     \
      goto label;                                                      \
    }                                                                  \
  } while (0)

/* Allocation that fails with EF_ERR_MEMORY. */
#define EF_MALLOC(ptr, count)                                                    \
  do {                                                                           \
    size_t ef_n_ = (size_t)(count);                                              \
    (ptr) = ef_n_ ? malloc(ef_n_ * sizeof(*(ptr))) : NULL;                       \
    EF_CHECK(!ef_n_ || (ptr), EF_ERR_MEMORY, "out of memory allocating %zu x %zu bytes", \
             ef_n_, sizeof(*(ptr)));                                             \
  } while (0)
#define EF_CALLOC(ptr, count)                                                    \
  do {                                                                           \
    size_t ef_n_ = (size_t)(count);                                              \
    (ptr) = ef_n_ ? calloc(ef_n_, sizeof(*(ptr))) : NULL;                        \
    EF_CHECK(!ef_n_ || (ptr), EF_ERR_MEMORY, "out of memory allocating %zu x %zu bytes", \
             ef_n_, sizeof(*(ptr)));                                             \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif

/* ef_test.h -- the checks every test uses, in two styles:
 *
 *   EXPECT(cond, "fmt", ...)          count a failure in `failures` and go on; the test
 *   EXPECT_OK(call)                   returns failures (or failures != 0) at the end;
 *   EXPECT_NEAR(a, b, tol)            |a - b| <= tol;
 *   EXPECT_FAIL(call, code, needle)   call returns code with needle in the message;
 *
 *   ASSERT(cond, "fmt", ...)          stop the test (exit 1) at the first failure, for
 *   ASSERT_OK(call)                   what the rest cannot do without;
 *   ASSERT_FAIL(call, code, needle)   as EXPECT_FAIL, then clears the error.
 *
 * Each failure prints file, line and the condition (or the call with its error) and the
 * message, if any; EXPECT* print the first 20 and count them all.  The message, where given,
 * starts with a string literal.  A test that cannot run returns EF_TEST_SKIP. */
#ifndef EF_TEST_H
#define EF_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"

#define EF_TEST_SKIP 77 /* CTest SKIP_RETURN_CODE: no OpenCL device, no shared data */

static int failures __attribute__((unused)) = 0;

/* Print and count an EXPECT failure (the first 20 are printed). */
#define EF_TEST_FAILED_(...)                   \
  do {                                         \
    if (failures < 20) {                       \
      fprintf(stderr, __VA_ARGS__);            \
      fputc('\n', stderr);                     \
    }                                          \
    ++failures;                                \
  } while (0)

#define EXPECT(cond, ...)                                                   \
  do {                                                                      \
    if (!(cond)) {                                                          \
      if (failures < 20) {                                                  \
        fprintf(stderr, "%s:%d: FAILED %s:", __FILE__, __LINE__, #cond);     \
        fprintf(stderr, " " __VA_ARGS__);                                   \
        fputc('\n', stderr);                                                \
      }                                                                     \
      ++failures;                                                           \
    }                                                                       \
  } while (0)

#define EXPECT_OK(call)                                                                         \
  do {                                                                                          \
    int ef_test_e_ = (call);                                                                    \
    if (ef_test_e_)                                                                             \
      EF_TEST_FAILED_("%s:%d: %s failed (%s): %s", __FILE__, __LINE__, #call, ef_error_name(ef_test_e_), \
                      ef_error_message());                                                      \
  } while (0)

#define EXPECT_NEAR(a, b, tol)                                                                  \
  do {                                                                                          \
    double ef_test_a_ = (a), ef_test_b_ = (b);                                                  \
    if (!(fabs(ef_test_a_ - ef_test_b_) <= (tol)))                                              \
      EF_TEST_FAILED_("%s:%d: %s = %.17g, expected %.17g (tolerance %g)", __FILE__, __LINE__, #a, \
                      ef_test_a_, ef_test_b_, (double)(tol));                                   \
  } while (0)

#define EXPECT_FAIL(call, code, needle)                                                         \
  do {                                                                                          \
    int ef_test_e_ = (call);                                                                    \
    if (ef_test_e_ != (code) || !strstr(ef_error_message(), (needle)))                          \
      EF_TEST_FAILED_("%s:%d: %s: expected %s with '%s', got %s: %s", __FILE__, __LINE__, #call, \
                      ef_error_name(code), (needle), ef_error_name(ef_test_e_), ef_error_message()); \
  } while (0)

#define ASSERT(cond, ...)                                               \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: FAILED %s:", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, " " __VA_ARGS__);                                 \
      fputc('\n', stderr);                                              \
      exit(1);                                                          \
    }                                                                   \
  } while (0)

#define ASSERT_OK(call)                                                                          \
  do {                                                                                           \
    int ef_test_e_ = (call);                                                                     \
    if (ef_test_e_) {                                                                            \
      fprintf(stderr, "%s:%d: %s failed (%s): %s\n", __FILE__, __LINE__, #call,                  \
              ef_error_name(ef_test_e_), ef_error_message());                                    \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

#define ASSERT_FAIL(call, code, needle)                                                          \
  do {                                                                                           \
    int ef_test_e_ = (call);                                                                     \
    if (ef_test_e_ != (code) || !strstr(ef_error_message(), (needle))) {                         \
      fprintf(stderr, "%s:%d: %s: expected %s with '%s', got %s: %s\n", __FILE__, __LINE__, #call, \
              ef_error_name(code), (needle), ef_error_name(ef_test_e_), ef_error_message());     \
      exit(1);                                                                                   \
    }                                                                                            \
    ef_error_clear();                                                                            \
  } while (0)

/* Uniform in [-1, 1), deterministic on every platform (a 64-bit LCG's top 53 bits). */
static inline double ef_test_uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

#endif

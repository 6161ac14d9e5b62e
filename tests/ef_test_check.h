/* ef_test_check.h -- checks for tests that stop at the first failure: each prints the file,
 * line and failed condition (or failing call with its error) and returns 1 from the test. */
#ifndef EF_TEST_CHECK_H
#define EF_TEST_CHECK_H

#include <stdio.h>

#include "edgeflow/ef_error.h"

#define EF_TEST_SKIP 77 /* CTest SKIP_RETURN_CODE: no OpenCL device, no shared data */

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define EXPECT_OK(call)                                                         \
  do {                                                                          \
    int e_ = (call);                                                            \
    if (e_) {                                                                   \
      fprintf(stderr, "%s:%d: %s failed (%s): %s\n", __FILE__, __LINE__, #call, \
              ef_error_name(e_), ef_error_message());                           \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

#endif

/* ef_test_count.h -- checks for tests that go on after a failure: EXPECT prints the file, line,
 * condition and message (the first 20 failures) and counts it in `failures`, which the test
 * returns at the end; OK stops the test at a failing call, printing its error. */
#ifndef EF_TEST_COUNT_H
#define EF_TEST_COUNT_H

#include <stdio.h>
#include <stdlib.h>

#include "edgeflow/ef_error.h"

static int failures = 0;

#define EXPECT(cond, ...)                                                    \
  do {                                                                       \
    if (!(cond)) {                                                           \
      if (failures < 20) {                                                   \
        fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);    \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
      }                                                                      \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

#define OK(call)                                                             \
  do {                                                                       \
    int ok_rc_ = (call);                                                     \
    if (ok_rc_) {                                                            \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
              ef_error_name(ok_rc_), ef_error_message());                    \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#endif

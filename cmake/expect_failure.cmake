# cmake -DCOMMAND=<list> -DEXPECT=<regex> -DSECONDS=<n> -P expect_failure.cmake
# Passes when COMMAND exits non-zero within SECONDS and its output (stdout + stderr) matches EXPECT:
# a failure must be reported, not hang and not be swallowed.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT ${SECONDS})
message("${out}")
if(rc STREQUAL "0")
  message(FATAL_ERROR "expected a failure, the command succeeded")
elseif(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the command did not exit within ${SECONDS} s or could not run: ${rc}")
elseif(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit status ${rc}, but the output does not match '${EXPECT}'")
endif()
message("exit status ${rc} with the expected message")

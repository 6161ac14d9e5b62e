# Fuzz harnesses (tests/fuzz).  In every build each harness also links with a plain driver
# (fuzz_replay.c) and a CTest replays its committed corpus and the inputs that once crashed it;
# with -DEF_FUZZ=ON (clang) the libFuzzer programs fuzz_<name> are built as well:
#   build-fuzz/bin/fuzz_mdpa -max_total_time=60 tests/fuzz/corpus/mdpa
set(EF_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(EF_FUZZ_HARNESSES mdpa gmsh parameters expression)
foreach(name ${EF_FUZZ_HARNESSES})
  set(harness ${EF_FUZZ_DIR}/fuzz_${name}.c)
  add_executable(fuzz_replay_${name} ${harness} ${EF_FUZZ_DIR}/fuzz_replay.c)
  target_link_libraries(fuzz_replay_${name} PRIVATE edgeflow_core m)
  target_include_directories(fuzz_replay_${name} PRIVATE ${EF_FUZZ_DIR} ${CMAKE_SOURCE_DIR}/application/core/mesh_io)
  set(inputs ${EF_FUZZ_DIR}/corpus/${name})
  if(EXISTS ${EF_FUZZ_DIR}/crashes/${name})
    list(APPEND inputs ${EF_FUZZ_DIR}/crashes/${name})
  endif()
  add_test(NAME fuzz_regression_${name} COMMAND fuzz_replay_${name} ${inputs})
  set_tests_properties(fuzz_regression_${name} PROPERTIES LABELS "unit;io;fuzz")
  if(EF_FUZZ)
    add_executable(fuzz_${name} ${harness})
    target_link_libraries(fuzz_${name} PRIVATE edgeflow_core m)
    target_include_directories(fuzz_${name} PRIVATE ${EF_FUZZ_DIR} ${CMAKE_SOURCE_DIR}/application/core/mesh_io)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()

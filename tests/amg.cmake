# The aggregation multigrid preconditioner: host set-up, refresh and apply; device hierarchy,
# refresh, cycle and (flexible) CG against the host; oclgrind on a tiny device run.
ef_add_c_test(test_amg_host SOURCES test_amg.c LABELS "unit" ARGS host)
set_property(TEST test_amg_host APPEND PROPERTY ENVIRONMENT "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
if(EF_WITH_OPENCL)
  set(EF_AMG_TEST_CACHE ${CMAKE_CURRENT_BINARY_DIR}/opencl_cache)
  add_test(NAME test_amg_opencl COMMAND test_amg_host opencl ${EF_AMG_TEST_CACHE})
  set_tests_properties(test_amg_opencl PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77 TIMEOUT 600
                       ENVIRONMENT "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
  find_program(EF_OCLGRIND_EXECUTABLE oclgrind)
  if(EF_OCLGRIND_EXECUTABLE)
    add_test(NAME test_amg_oclgrind
             COMMAND sh ${EF_TEST_DATA}/amg/oclgrind_amg.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_amg_host> ${CMAKE_CURRENT_BINARY_DIR}/oclgrind_amg.log)
    set_tests_properties(test_amg_oclgrind PROPERTIES LABELS "opencl" SKIP_RETURN_CODE 77 TIMEOUT 600)
  endif()
endif()

# Matrix files (peers' format), the OpenCL device layer and the device CG.
set(EF_OPENCL_CG_DATA ${EF_TEST_DATA}/opencl_cg)

ef_add_c_test(test_matrix_io SOURCES test_matrix_io.c LABELS "unit;io"
              ARGS ${CMAKE_CURRENT_BINARY_DIR}/matrix_io_work)

if(EF_WITH_OPENCL)
  # Program/tuning caches of these tests live in the build tree, never in ~/.cache.
  set(EF_OPENCL_TEST_CACHE ${CMAKE_CURRENT_BINARY_DIR}/opencl_cache)
  ef_add_c_test(test_opencl_context SOURCES test_opencl_context.c LABELS "opencl;unit"
                ARGS ${CMAKE_CURRENT_BINARY_DIR}/opencl_context_work)
  ef_add_c_test(test_opencl_cg SOURCES test_opencl_cg.c LABELS "opencl;unit"
                ARGS ${EF_OPENCL_TEST_CACHE})
  set_tests_properties(test_opencl_cg PROPERTIES TIMEOUT 900)
  # The tiny SpMV + CG run under oclgrind: fails on data races, invalid or
  # out-of-bounds accesses and uses of uninitialised values.
  find_program(EF_OCLGRIND_EXECUTABLE oclgrind)
  if(EF_OCLGRIND_EXECUTABLE)
    add_test(NAME test_opencl_oclgrind
             COMMAND sh ${EF_OPENCL_CG_DATA}/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_opencl_cg> ${CMAKE_CURRENT_BINARY_DIR}/oclgrind.log)
    set_tests_properties(test_opencl_oclgrind PROPERTIES LABELS "opencl" SKIP_RETURN_CODE 77
                         TIMEOUT 300)
    if(EF_SANITIZE)
      # oclgrind preloads its runtime ahead of ASan's.
      set_property(TEST test_opencl_oclgrind APPEND PROPERTY ENVIRONMENT
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0")
    endif()
  endif()
  # The device solvers by name (ef_linear_solver.h): BiCGStab against the device CG on the
  # pressure systems the OpenCL strategy exports for a 2D and a 3D cavity; its kernels under
  # oclgrind.
  ef_add_c_test(test_opencl_bicgstab SOURCES test_opencl_bicgstab.c LABELS "opencl;unit"
                ARGS ${EF_TEST_DATA}/petsc/cavity2d.json ${EF_TEST_DATA}/petsc/cavity3d.json
                     ${CMAKE_CURRENT_BINARY_DIR}/opencl_bicgstab_work)
  set_tests_properties(test_opencl_bicgstab PROPERTIES TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_WAIT_POLICY=passive;EDGEFLOW_CACHE_DIR=${EF_OPENCL_TEST_CACHE}")
  if(EF_OCLGRIND_EXECUTABLE)
    add_test(NAME test_opencl_bicgstab_oclgrind
             COMMAND sh ${EF_OPENCL_CG_DATA}/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_opencl_bicgstab> ${CMAKE_CURRENT_BINARY_DIR}/oclgrind_bicgstab.log)
    set_tests_properties(test_opencl_bicgstab_oclgrind PROPERTIES LABELS "opencl" SKIP_RETURN_CODE 77 TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
    if(EF_SANITIZE)
      set_property(TEST test_opencl_bicgstab_oclgrind APPEND PROPERTY ENVIRONMENT
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0")
    endif()
  endif()
  # The standalone program on a small file, and the benchmark script's smoke run.
  add_test(NAME test_ef_cl_cg_tool
           COMMAND sh ${EF_OPENCL_CG_DATA}/tool_check.sh $<TARGET_FILE:ef_cl_cg> ${EF_SYSTEM_PYTHON}
                   ${CMAKE_CURRENT_BINARY_DIR}/ef_cl_cg_work ${CMAKE_SOURCE_DIR}/benchmarks)
  set_tests_properties(test_ef_cl_cg_tool PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "EDGEFLOW_CACHE_DIR=${EF_OPENCL_TEST_CACHE}")
endif()

# PETSc as the host reference (owner: petsc): linear solver "petsc", the PETSc bridge,
# the checks of `edgeflow verify` and the command itself on a 2D and a 3D case.
set(EF_PETSC_DATA ${EF_TEST_DATA}/petsc)
set(EF_PETSC_WORK ${CMAKE_CURRENT_BINARY_DIR}/petsc_work)
file(MAKE_DIRECTORY ${EF_PETSC_WORK})

if(NOT EF_HAVE_PETSC)
  # Without PETSc "petsc" and "verify" exist only to say the build has none.
  ef_add_c_test(test_petsc_absent SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_petsc_absent.c LABELS unit)
  return()
endif()

ef_add_c_test(test_petsc_solver SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_petsc_solver.c LABELS "unit;petsc")
ef_add_c_test(test_petsc_verify SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_petsc_verify.c LABELS "unit;petsc"
              ARGS ${EF_PETSC_WORK}/verify_checks)
ef_add_c_test(test_petsc_strategy SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_petsc_strategy.c LABELS "unit;petsc"
              ARGS ${EF_PETSC_DATA}/cavity3d.json ${EF_PETSC_WORK}/strategy)
set(EF_PETSC_TESTS test_petsc_solver test_petsc_verify test_petsc_strategy)

# `edgeflow verify` on the 2D cavity (no fixed pressure: singular system) and the small 3D
# cavity (one fixed pressure), 3 steps each: the OpenMP strategy with the host SpMV, and
# the OpenCL strategy (PoCL in CI) with the device SpMV.
add_executable(test_petsc_verify_cli ${CMAKE_CURRENT_SOURCE_DIR}/test_petsc_verify_cli.c)
target_link_libraries(test_petsc_verify_cli PRIVATE edgeflow_fluid edgeflow_core m)
target_include_directories(test_petsc_verify_cli PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(run IN ITEMS 2d 3d)
  set(case ${EF_PETSC_DATA}/cavity${run}.json)
  add_test(NAME test_petsc_verify_${run}_openmp
           COMMAND test_petsc_verify_cli ${case} ${EF_PETSC_WORK}/verify_${run}_openmp openmp_edge_based host 3)
  set_tests_properties(test_petsc_verify_${run}_openmp PROPERTIES LABELS "petsc" TIMEOUT 120)
  list(APPEND EF_PETSC_TESTS test_petsc_verify_${run}_openmp)
  if(EF_WITH_OPENCL)
    add_test(NAME test_petsc_verify_${run}_opencl
             COMMAND test_petsc_verify_cli ${case} ${EF_PETSC_WORK}/verify_${run}_opencl opencl_edge_based device 3)
    set_tests_properties(test_petsc_verify_${run}_opencl PROPERTIES LABELS "petsc;opencl" TIMEOUT 300
                         SKIP_RETURN_CODE 77)
    list(APPEND EF_PETSC_TESTS test_petsc_verify_${run}_opencl)
  endif()
endforeach()

# The pressure-solver benchmark script end to end on the small 3D cavity (one step, one
# repeat): every solver runs and converges; no timing is asserted.
if(EF_WITH_OPENCL)
  set(EF_BENCH_DEVICE --ef-cl-cg $<TARGET_FILE:ef_cl_cg>)
else()
  set(EF_BENCH_DEVICE --no-device)
endif()
add_test(NAME test_petsc_bench_smoke
         COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_SOURCE_DIR}/benchmarks/pressure_solvers.py --smoke
                 --edgeflow $<TARGET_FILE:edgeflow> ${EF_BENCH_DEVICE} --work ${EF_PETSC_WORK}/bench_smoke)
set_tests_properties(test_petsc_bench_smoke PROPERTIES LABELS "petsc" TIMEOUT 300)
list(APPEND EF_PETSC_TESTS test_petsc_bench_smoke)

# Plugin folder for the tests not made by ef_add_c_test; kernel/tuning caches in the build
# tree; passive OpenMP waiting on the shared 2-core CI machines.
set_property(TEST ${EF_PETSC_TESTS} APPEND PROPERTY ENVIRONMENT
             "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}"
             "EDGEFLOW_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/opencl_cache" "OMP_WAIT_POLICY=passive"
             "OMP_NUM_THREADS=2")
if(EF_SANITIZE)
  # Open MPI (started by PetscInitialize) keeps allocations until exit by design: only
  # its libraries' leaks are suppressed, ours are still reported.
  set_property(TEST ${EF_PETSC_TESTS} APPEND PROPERTY ENVIRONMENT
               "LSAN_OPTIONS=suppressions=${EF_PETSC_DATA}/lsan_mpi.supp:print_suppressions=0:fast_unwind_on_malloc=0")
endif()

# VTK XML output (.vtu / .pvd).  The C tests write files under EF_VTK_TEST_OUT
# and check them with a small independent reader; vtk_roundtrip.py then reads
# every file back with the VTK library and compares bit for bit.
set(EF_VTK_TEST_OUT ${CMAKE_CURRENT_BINARY_DIR}/vtk_output)

add_library(ef_test_vtu_readback STATIC test_vtu_readback.c)
target_link_libraries(ef_test_vtu_readback PUBLIC edgeflow_core)
target_include_directories(ef_test_vtu_readback PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
if(EF_WITH_ZLIB)
  target_link_libraries(ef_test_vtu_readback PUBLIC ZLIB::ZLIB)
  target_compile_definitions(ef_test_vtu_readback PUBLIC TVR_HAVE_ZLIB=1)
endif()

# The ascii formatter: doubles at 1..17 digits and integers, character for character as snprintf.
ef_add_c_test(test_number_format SOURCES test_number_format.c LABELS io unit)

ef_add_c_test(test_vtu_writer SOURCES test_vtu_writer.c LIBS ef_test_vtu_readback
              LABELS io unit ARGS ${EF_VTK_TEST_OUT}/writer)
set_tests_properties(test_vtu_writer PROPERTIES FIXTURES_SETUP ef_vtk_files)

ef_add_c_test(test_vtu_output SOURCES test_vtu_output.c LIBS ef_test_vtu_readback
              LABELS io unit ARGS ${EF_VTK_TEST_OUT}/model_part)
set_tests_properties(test_vtu_output PROPERTIES FIXTURES_SETUP ef_vtk_files)

ef_add_c_test(test_vtu_failures SOURCES test_vtu_failures.c LIBS ef_test_vtu_readback
              LABELS io unit ARGS ${CMAKE_CURRENT_BINARY_DIR}/vtk_failures)

# The partitioned output (docs/mpi.md) with conditions and sub model parts, ranks as threads of one
# process (no MPI, no METIS: every build, the sanitizer one included), against one process.
ef_add_c_test(test_vtk_output_ranks SOURCES test_vtk_output_ranks.c LIBS ef_test_vtu_readback
              LABELS io unit ARGS ${CMAKE_CURRENT_BINARY_DIR}/vtk_output_ranks)
set_tests_properties(test_vtk_output_ranks PROPERTIES TIMEOUT 120)

# VTK's own reader on every file above, bit for bit (skips only when `import vtk` fails).
if(EF_WITH_VTK_TESTS)
  add_test(NAME vtk_roundtrip
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/vtk_roundtrip.py
                   ${EF_VTK_TEST_OUT}/writer ${EF_VTK_TEST_OUT}/model_part)
  # Debian's interpreter with Debian's packages only: empty PYTHON* variables count as unset,
  # so a pyenv or virtualenv in the caller's environment cannot leak in.
  set_tests_properties(vtk_roundtrip PROPERTIES LABELS "io;unit" SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED ef_vtk_files
                       ENVIRONMENT "PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1")
endif()

# A .pvd entry costs O(1): output 10,000 against output 100 (prints the figure).
ef_add_c_test(test_pvd_append SOURCES test_pvd_append.c LIBS ef_test_vtu_readback
              LABELS io unit ARGS ${CMAKE_CURRENT_BINARY_DIR}/pvd_append)

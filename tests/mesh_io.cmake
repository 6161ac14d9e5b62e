# Model part container and mesh readers (mdpa, gmsh).
set(EF_MESH_IO_DATA ${EF_TEST_DATA}/mesh_io)

ef_add_c_test(test_model_part SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_part.c LABELS unit io)
ef_add_c_test(test_mdpa_read SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mdpa_read.c LABELS unit io)
ef_add_c_test(test_mdpa_kratos SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mdpa_kratos.c LABELS unit io)
ef_add_c_test(test_gmsh_read SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gmsh_read.c LABELS unit io
              ARGS ${EF_MESH_IO_DATA} 1)
ef_add_c_test(test_bad_input SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bad_input.c LABELS unit io)

# The same reader test on meshes the installed gmsh makes now (checks invariants only:
# another gmsh version may mesh differently).
if(EF_WITH_GMSH_TESTS)
  find_program(EF_GMSH_EXECUTABLE gmsh)
  if(EF_GMSH_EXECUTABLE)
    set(EF_GMSH_OUT ${CMAKE_CURRENT_BINARY_DIR}/gmsh_generated)
    add_test(NAME gmsh_generate_meshes
             COMMAND ${CMAKE_COMMAND} -DGMSH=${EF_GMSH_EXECUTABLE} -DSRC=${EF_MESH_IO_DATA}
                     -DOUT=${EF_GMSH_OUT} -P ${EF_MESH_IO_DATA}/generate_meshes.cmake)
    set_tests_properties(gmsh_generate_meshes PROPERTIES FIXTURES_SETUP ef_gmsh_meshes LABELS "io")
    add_test(NAME test_gmsh_read_generated COMMAND test_gmsh_read ${EF_GMSH_OUT} 0)
    set_tests_properties(test_gmsh_read_generated PROPERTIES FIXTURES_REQUIRED ef_gmsh_meshes
                         SKIP_RETURN_CODE 77 LABELS "unit;io")
  else()
    message(STATUS "gmsh not found: mesh reader tests use the committed .msh files only")
  endif()
endif()

# Every allocation of a read refused in turn (skips itself under AddressSanitizer).
ef_add_c_test(test_bad_input_alloc SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bad_input_alloc.c LABELS unit io)

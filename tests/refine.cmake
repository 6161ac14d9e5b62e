# Uniform refinement, renumbering and the 3D cavity mesh (owner: refine).
ef_add_c_test(test_refine_rules SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_refine_rules.c LABELS unit)
ef_add_c_test(test_refine_cavity SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_refine_cavity.c LABELS unit io)
ef_add_c_test(test_renumber SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_renumber.c LABELS unit io)
# Every allocation of a refinement / renumbering refused in turn (skips itself under AddressSanitizer).
ef_add_c_test(test_refine_alloc SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_refine_alloc.c LABELS unit)

# The committed cavity mesh is reproducible from its .geo: mesh it again with
# the installed gmsh (about 100 s of CPU) and run the refinement checks on it.
# Counts are not compared: another gmsh version may mesh differently.
if(EF_WITH_GMSH_TESTS)
  find_program(EF_GMSH_EXECUTABLE gmsh)
  if(EF_GMSH_EXECUTABLE)
    set(EF_REFINE_GENERATED ${CMAKE_CURRENT_BINARY_DIR}/refine_cavity3d_generated.msh)
    add_test(NAME refine_mesh_cavity_geo
             COMMAND ${EF_GMSH_EXECUTABLE} -3 ${CMAKE_SOURCE_DIR}/test_examples/cavity3d/cavity3d.geo
                     -o ${EF_REFINE_GENERATED})
    set_tests_properties(refine_mesh_cavity_geo PROPERTIES FIXTURES_SETUP ef_refine_cavity_geo
                         LABELS "slow;io" TIMEOUT 1200)
    add_test(NAME test_refine_cavity_generated COMMAND test_refine_cavity ${EF_REFINE_GENERATED} 1)
    set_tests_properties(test_refine_cavity_generated PROPERTIES FIXTURES_REQUIRED ef_refine_cavity_geo
                         LABELS "slow;io")
  endif()
endif()
# Refinement, mesh check and renumbering give the same bits for 1, 2 and 3 OpenMP threads, and those
# of the serial code (about 1 s; the cavity refined once, three times over).
ef_add_c_test(test_mesh_threads SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mesh_threads.c LABELS unit io)

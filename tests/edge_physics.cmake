# Edge data, per-edge physics (custom_kernels/edge_physics.h) and the OpenMP
# fractional-step executor (custom_utilities/fractional_step.c, host_cg.c).  Owner: edge.
set(EF_EDGE_TESTS test_edge_identities test_fs_signs test_fs_solver test_fs_poiseuille test_fs_threads
                  test_fs_implicit_viscosity test_fs_tau_time_step test_fs_pressure_guess)
foreach(t ${EF_EDGE_TESTS})
  ef_add_c_test(${t} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${t}.c LABELS unit)
endforeach()
# Thread counts: the thread test sets its own (1 and 2); the long runs use one thread and
# the short ones two.  Passive waiting keeps oversubscribed machines (CI, shared hosts)
# from burning time slices in OpenMP barriers.
set_property(TEST ${EF_EDGE_TESTS} APPEND PROPERTY ENVIRONMENT "OMP_WAIT_POLICY=passive")
set_property(TEST test_edge_identities test_fs_signs APPEND PROPERTY ENVIRONMENT "OMP_NUM_THREADS=2")
set_property(TEST test_fs_solver test_fs_poiseuille test_fs_implicit_viscosity test_fs_tau_time_step
             test_fs_pressure_guess APPEND
             PROPERTY ENVIRONMENT "OMP_NUM_THREADS=1")

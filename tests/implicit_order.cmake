# The temporal-order gate of the implicit viscous option (issue 16, docs/implicit_viscosity.md) on the
# start-up channel and Taylor-Green, OpenMP executor; one thread: the meshes are small (2 threads: slower).  Owner: edge.
ef_add_c_test(test_fs_implicit_order SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fs_implicit_order.c LABELS unit)
set_property(TEST test_fs_implicit_order APPEND PROPERTY ENVIRONMENT "OMP_WAIT_POLICY=passive" "OMP_NUM_THREADS=1")

# Linear solvers and preconditioners through the registry (ef_linear_solver.h), on the host:
# CG and BiCGStab on the pressure systems of the 2D and 3D cavities of tests/data/petsc.
ef_add_c_test(test_linear_solvers SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_linear_solvers.c LABELS "unit"
              ARGS ${EF_TEST_DATA}/petsc/cavity2d.json ${EF_TEST_DATA}/petsc/cavity3d.json
                   ${CMAKE_CURRENT_BINARY_DIR}/linear_solvers_work)

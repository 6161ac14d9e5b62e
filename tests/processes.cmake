# Processes (boundary conditions, VTK output), expressions, intervals and nodal normals.
ef_add_c_test(test_expression SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_expression.c LABELS unit)
ef_add_c_test(test_normals SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_normals.c LABELS unit)
ef_add_c_test(test_processes SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_processes.c LABELS unit)
ef_add_c_test(test_process_vtk SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_process_vtk.c LABELS unit io)
ef_add_c_test(test_process_kratos_cases SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_process_kratos_cases.c LABELS unit io)

# Core: parameters, registry, analysis loop.
ef_add_c_test(test_parameters SOURCES test_parameters.c LABELS "unit")

# The two real Kratos cases load with only solver_type changed (and with density/viscosity added).
add_test(NAME kratos_cases_load
         COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/kratos_cases.py $<TARGET_FILE:edgeflow>
                 ${EF_SHARED_DIR} ${CMAKE_CURRENT_BINARY_DIR}/kratos_cases)
set_tests_properties(kratos_cases_load PROPERTIES LABELS "io;unit" SKIP_RETURN_CODE 77)

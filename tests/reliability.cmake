# Reliability review findings (issue 14) through the edgeflow program: duplicate JSON keys,
# non-finite numbers, non-positive viscosity, unwritable output folders, refinement beyond memory,
# singular boundary expressions, and the mesh checks (edgeflow check, the same at load).
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME reliability_findings_cli
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reliability/test_findings_cli.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/reliability_findings)
  set_tests_properties(reliability_findings_cli PROPERTIES LABELS "unit;io" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=1")
endif()

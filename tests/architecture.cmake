# Architecture: the core library (application/core, application/include) includes no plugin,
# OpenCL, PETSc or MPI header, links none of them, and never names the fluid.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME architecture_core_names_no_plugin
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/architecture_check.py ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:edgeflow_core> ${CMAKE_BINARY_DIR}/CMakeFiles/edgeflow_core.dir/link.txt)
  set_tests_properties(architecture_core_names_no_plugin PROPERTIES LABELS "unit")
endif()

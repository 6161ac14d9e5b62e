# What outputs promise, checked through the CLI and the Python workflow (issue 13): the ascii VTK
# warning, and the Python workflow's outputs under a cut fixed time step.  Owner: workflow.
if(EXISTS ${EF_SYSTEM_PYTHON})
  # "file_format": "ascii" warns once, with the ascii/binary size ratio it measured.
  add_test(NAME vtk_ascii_warning
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_vtk_ascii_warning.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/workflow/vtk_ascii_warning)
  set_tests_properties(vtk_ascii_warning PROPERTIES LABELS "unit;io" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
  # A FluidAnalysis run of a fixed time_step above the stability limit writes at the user's times,
  # byte-identical to `edgeflow run`, and output_step counts the user's steps.
  add_test(NAME workflow_python_cut_time_step
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_python_cut_time_step.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/workflow/python_cut_time_step)
  set_tests_properties(workflow_python_cut_time_step PROPERTIES LABELS "unit;io" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1;OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive${EF_PYTHON_SANITIZER_ENV}")
endif()

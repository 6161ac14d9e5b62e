# Output processes (forces, probes) and the end-to-end Python workflow.  Owner: workflow.
set(EF_WORKFLOW_OUT ${CMAKE_CURRENT_BINARY_DIR}/workflow)

# Wall force against the pressure drop of steady plane Poiseuille flow (< 1 s).
ef_add_c_test(test_forces_poiseuille SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_forces_poiseuille.c
              LABELS validation ARGS ${EF_WORKFLOW_OUT}/forces_poiseuille)
set_tests_properties(test_forces_poiseuille PROPERTIES ENVIRONMENT
                     "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")

# Probes: location, interpolation, scheduling and errors on small hand-made meshes.
ef_add_c_test(test_probes SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_probes.c
              LABELS unit io ARGS ${EF_WORKFLOW_OUT}/probes)

# The Python workflow end to end (CLI vs run_analysis.py vs a FluidAnalysis subclass, VTK read-back).
if(EXISTS ${EF_SYSTEM_PYTHON} AND EF_WITH_VTK_TESTS)
  add_test(NAME workflow_python
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_workflow.py
                   --source ${CMAKE_SOURCE_DIR} --cli $<TARGET_FILE:edgeflow> --work ${EF_WORKFLOW_OUT}/python)
  set_tests_properties(workflow_python PROPERTIES LABELS "io;unit" SKIP_RETURN_CODE 77 TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1${EF_PYTHON_SANITIZER_ENV}")
endif()

# time_stepping.CFL_number absent or null: each scheme's default (explicit 1, implicit viscosity 4).
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME cfl_defaults
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_cfl_defaults.py
                   ${CMAKE_SOURCE_DIR} ${EF_WORKFLOW_OUT}/cfl_defaults)
  set_tests_properties(cfl_defaults PROPERTIES LABELS "unit" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive;PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1${EF_PYTHON_SANITIZER_ENV}")
endif()

# solver_settings.pressure_initial_guess: a bad value refused naming the file, on both strategies (issue 12).
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME pressure_guess_settings
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_pressure_guess_settings.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/pressure_guess_settings)
  set_tests_properties(pressure_guess_settings PROPERTIES LABELS "unit" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endif()

# problem_data.steady_state: stops at the first check below the tolerance, off when 0.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME steady_state_stop
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_steady_state.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/steady_state)
  set_tests_properties(steady_state_stop PROPERTIES LABELS "unit" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endif()

# A fixed time_step cut by the stability limit: step-based schedules count the user's time steps.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME time_step_semantics
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_time_step_semantics.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/time_step_semantics)
  set_tests_properties(time_step_semantics PROPERTIES LABELS "unit;io" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endif()

# kill -9 during a run writing a VTK file per solver step: the .pvd parses and lists the files.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME pvd_kill9
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_pvd_kill9.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/pvd_kill9)
  set_tests_properties(pvd_kill9 PROPERTIES LABELS "unit;io" TIMEOUT 180
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=1")
  # The same with the files written by the background writer thread ("asynchronous_write": true).
  add_test(NAME pvd_kill9_async
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_pvd_kill9.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/pvd_kill9_async asynchronous)
  set_tests_properties(pvd_kill9_async PROPERTIES LABELS "unit;io" TIMEOUT 180
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=1")
endif()

# Asynchronous VTK writing (issue 13): byte-identical files to the synchronous writer, on the OpenMP
# strategy (no device hook: the snapshot is a host copy) and on PoCL (the device snapshot and the
# copy queue); a failing background write fails the run naming the file.
if(EXISTS ${EF_SYSTEM_PYTHON})
  foreach(mode identical write_error)
    add_test(NAME vtk_async_${mode}
             COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_async_output.py
                     ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/vtk_async_${mode} ${mode}
                     openmp_edge_based)
    set_tests_properties(vtk_async_${mode} PROPERTIES LABELS "unit;io" TIMEOUT 120
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    if(EF_WITH_OPENCL)
      add_test(NAME vtk_async_${mode}_opencl
               COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_async_output.py
                       ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/vtk_async_${mode}_opencl
                       ${mode} opencl_edge_based)
      set_tests_properties(vtk_async_${mode}_opencl PROPERTIES LABELS "opencl;unit;io" SKIP_RETURN_CODE 77
                           TIMEOUT 180 ENVIRONMENT
                           "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    endif()
  endforeach()
endif()

# --stop-when-steady on the Re 20 cylinder (against recorded full-run figures) and the process form;
# stop_when_steady_full repeats the full run and compares live.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME stop_when_steady
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_stop_when_steady.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/stop_when_steady)
  set_tests_properties(stop_when_steady PROPERTIES LABELS "validation" TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
  add_test(NAME stop_when_steady_full
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_stop_when_steady.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${EF_WORKFLOW_OUT}/stop_when_steady_full --full)
  set_tests_properties(stop_when_steady_full PROPERTIES LABELS "validation;slow" TIMEOUT 600
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endif()

# The Python binding under wrong call orders (EdgeflowError, not a segfault) and views that
# outlive their analysis (they keep it alive).
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME python_call_order
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_call_order.py
                   ${CMAKE_SOURCE_DIR} ${EF_WORKFLOW_OUT}/call_order)
  set_tests_properties(python_call_order PROPERTIES LABELS "unit" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1;OMP_NUM_THREADS=1${EF_PYTHON_SANITIZER_ENV}")
endif()

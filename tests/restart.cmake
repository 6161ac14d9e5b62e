# Restart files, stops on signals and the wall-clock limit, the output manifest
# (application/core/restart.c, run_control.c, the restart block of analysis.c; docs/restart.md).
if(EXISTS ${EF_SYSTEM_PYTHON})
  set(EF_RESTART_ENV "EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=1;OMP_WAIT_POLICY=passive;PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1${EF_PYTHON_SANITIZER_ENV}")
  set(EF_RESTART_TEST ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_restart.py ${CMAKE_SOURCE_DIR}
      $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/restart)
  # 20 steps against 10 + restart + 10 (CLI and Python): byte-identical VTK and CSV.
  add_test(NAME restart_identity_openmp COMMAND ${EF_RESTART_TEST} identity openmp_edge_based)
  set_tests_properties(restart_identity_openmp PROPERTIES LABELS "unit;io" TIMEOUT 300 ENVIRONMENT "${EF_RESTART_ENV}")
  # The same with Kratos' "amgcl" block (AMG-preconditioned flexible CG): the hierarchy must come back.
  add_test(NAME restart_identity_amg_openmp COMMAND ${EF_RESTART_TEST} identity_amg openmp_edge_based)
  set_tests_properties(restart_identity_amg_openmp PROPERTIES LABELS "unit;io" TIMEOUT 300
                       ENVIRONMENT "${EF_RESTART_ENV}")
  # The implicit viscosity at its automatic step: the step's growth limit restarts from the saved step.
  add_test(NAME restart_identity_implicit_openmp COMMAND ${EF_RESTART_TEST} identity_implicit openmp_edge_based)
  set_tests_properties(restart_identity_implicit_openmp PROPERTIES LABELS "unit;io" TIMEOUT 300
                       ENVIRONMENT "${EF_RESTART_ENV}")
  # pressure_initial_guess "linear" (issue 12): the guess's history comes back; "quadratic" with growing steps.
  add_test(NAME restart_identity_linear_openmp COMMAND ${EF_RESTART_TEST} identity_linear openmp_edge_based)
  set_tests_properties(restart_identity_linear_openmp PROPERTIES LABELS "unit;io" TIMEOUT 300
                       ENVIRONMENT "${EF_RESTART_ENV}")
  add_test(NAME restart_identity_quadratic_openmp COMMAND ${EF_RESTART_TEST} identity_quadratic openmp_edge_based)
  set_tests_properties(restart_identity_quadratic_openmp PROPERTIES LABELS "unit;io" TIMEOUT 300
                       ENVIRONMENT "${EF_RESTART_ENV}")
  if(EF_WITH_OPENCL)
    add_test(NAME restart_identity_linear_opencl COMMAND ${EF_RESTART_TEST} identity_linear opencl_edge_based)
    set_tests_properties(restart_identity_linear_opencl PROPERTIES LABELS "opencl;unit;io" TIMEOUT 600
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${EF_RESTART_ENV}")
    add_test(NAME restart_identity_amg_opencl COMMAND ${EF_RESTART_TEST} identity_amg opencl_edge_based)
    set_tests_properties(restart_identity_amg_opencl PROPERTIES LABELS "opencl;unit;io" TIMEOUT 600
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${EF_RESTART_ENV}")
    add_test(NAME restart_identity_opencl COMMAND ${EF_RESTART_TEST} identity opencl_edge_based)
    set_tests_properties(restart_identity_opencl PROPERTIES LABELS "opencl;unit;io" TIMEOUT 600 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${EF_RESTART_ENV}")
    # The implicit viscosity on the device (stages and stage solves; the growth limit's saved step).
    add_test(NAME restart_identity_implicit_opencl COMMAND ${EF_RESTART_TEST} identity_implicit opencl_edge_based)
    set_tests_properties(restart_identity_implicit_opencl PROPERTIES LABELS "opencl;unit;io" TIMEOUT 600
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${EF_RESTART_ENV}")
  endif()
  # Another mesh, a newer format, a damaged file; another run's output folder and --overwrite.
  add_test(NAME restart_refusals COMMAND ${EF_RESTART_TEST} refusals)
  set_tests_properties(restart_refusals PROPERTIES LABELS "unit;io" TIMEOUT 300 ENVIRONMENT "${EF_RESTART_ENV}")
  # SIGTERM to a running case: outputs, restart file, summary "interrupted", exit 143; and the restart.
  add_test(NAME restart_sigterm COMMAND ${EF_RESTART_TEST} signal)
  set_tests_properties(restart_sigterm PROPERTIES LABELS "unit;io" TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${EF_RESTART_ENV}")
  # SIGINT (Ctrl-C): the same stop, exit 130, stop_reason "SIGINT".
  add_test(NAME restart_sigint COMMAND ${EF_RESTART_TEST} signal_int)
  set_tests_properties(restart_sigint PROPERTIES LABELS "unit;io" TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${EF_RESTART_ENV}")
  # problem_data.max_wall_time "00:00:04": the same stop, exit 75.
  add_test(NAME restart_max_wall_time COMMAND ${EF_RESTART_TEST} wall_time)
  set_tests_properties(restart_max_wall_time PROPERTIES LABELS "unit;io" TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${EF_RESTART_ENV}")
endif()
if(EXISTS ${EF_SYSTEM_PYTHON})
  # divergence_velocity_factor x the case's velocity scale; run_summary.json "failed" with the message.
  add_test(NAME run_summary_failed_divergence COMMAND ${EF_RESTART_TEST} divergence)
  set_tests_properties(run_summary_failed_divergence PROPERTIES LABELS "unit;io" TIMEOUT 300
                       ENVIRONMENT "${EF_RESTART_ENV}")
endif()

# The restart file layer: round trip, named errors, damaged/newer files, mesh fingerprints.
ef_add_c_test(test_restart_file SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_restart_file.c LABELS unit io
              ARGS ${CMAKE_CURRENT_BINARY_DIR}/restart/file)

# A restart file is put in place only after every output written before it was synced: an
# LD_PRELOAD shim logs fsync/fdatasync, renames and writes (not under the sanitizers, whose
# runtime must come first in LD_PRELOAD).
if(EXISTS ${EF_SYSTEM_PYTHON} AND NOT EF_SANITIZE)
  add_library(ef_fsync_log MODULE ${CMAKE_CURRENT_SOURCE_DIR}/fsync_log.c)
  target_link_libraries(ef_fsync_log PRIVATE ${CMAKE_DL_LIBS})
  add_test(NAME restart_outputs_durable
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/workflow/test_restart_durable.py ${CMAKE_SOURCE_DIR}
                   $<TARGET_FILE:edgeflow> $<TARGET_FILE:ef_fsync_log> ${CMAKE_CURRENT_BINARY_DIR}/restart/durable)
  set_tests_properties(restart_outputs_durable PROPERTIES LABELS "unit;io" TIMEOUT 120
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=1")
endif()

# Ahmed-body example (test_examples/ahmed_body, issue 6).  Owner: ahmed.
# `edgeflow load` of the case: after the load-time refinement 70k-90k nodes and 350k-450k
# tetrahedra (the paper's ~80k / ~400k) and every sub model part present; then 3 steps on the
# coarse mesh (refinement 0, openmp_edge_based) without divergence, 3 finite force rows.
# About 10 s on 2 cores; the benchmark itself runs on the GPU (scripts/run_ahmed.sh).
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME ahmed_body_case
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_SOURCE_DIR}/python_scripts/ahmed_body.py check
                   --cli $<TARGET_FILE:edgeflow> --work ${CMAKE_CURRENT_BINARY_DIR}/ahmed_body)
  set_tests_properties(ahmed_body_case PROPERTIES LABELS "unit;io" TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endif()

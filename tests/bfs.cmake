# Backward-facing step (test_examples/backward_facing_step, issue 6): lower-wall reattachment
# length against Erturk (2008, expansion ratio 2) within 5% and Armaly et al. (1983, digitised,
# expansion ratio 1.942) within 10%; Gartling's Re 800 set-up reported, not gated.  Owner: bfs.
# Driver: tests/validation/backward_facing_step.py (bounds and their reasons in its docstring).
#   validation_bfs_quick   Re 100 and 300 on the base mesh, 20 step heights long, vs Erturk within 5% (CI).
#   validation_bfs_sweep   Erturk Re 100-400, Armaly's four 2D points, Gartling Re 800 on the
#                          base mesh; about an hour on 2 cores (Re 800 alone ~30 min), slow.
# ef_add_validation_test and the gmsh lookup come from validation.cmake, which the tests/ glob
# includes after this file, so the registration is deferred to the end of the directory.
function(ef_bfs_register_tests)
  if(NOT COMMAND ef_add_validation_test OR NOT EXISTS ${EF_SYSTEM_PYTHON} OR NOT EF_WITH_GMSH_TESTS
     OR NOT EF_GMSH_EXECUTABLE)
    return()
  endif()
  ef_add_validation_test(validation_bfs_quick backward_facing_step 600 GMSH THREADS 1 ARGS --quick)
  ef_add_validation_test(validation_bfs_sweep backward_facing_step 7200 SLOW GMSH ARGS --sweep)
endfunction()
cmake_language(DEFER CALL ef_bfs_register_tests)

# Flow past a cylinder (test_examples/flow_past_obstacle, issue 6): Schaefer & Turek (1996)
# benchmarks 2D-1 and 2D-2 on the committed coarse mesh (no gmsh needed).  Owner: obstacle.
# Driver: tests/validation/flow_past_obstacle.py (bounds and their reasons in its docstring).
#   validation_obstacle_re20   steady Re 20: c_D, L_a, c_L against the reference intervals with
#                              coarse-mesh margins; about a minute on 2 idle cores (CI).
#   validation_obstacle_re100  vortex shedding at Re 100 to t = 8: St, c_D,max, c_L,max; about
#                              4 minutes, labelled slow.
# ef_add_validation_test comes from validation.cmake, which the tests/ glob includes after this
# file, so the registration is deferred to the end of the directory.
function(ef_obstacle_register_tests)
  if(NOT COMMAND ef_add_validation_test OR NOT EXISTS ${EF_SYSTEM_PYTHON})
    return()
  endif()
  ef_add_validation_test(validation_obstacle_re20 flow_past_obstacle 600 THREADS 1 ARGS --case re20)
  ef_add_validation_test(validation_obstacle_re100 flow_past_obstacle 1800 SLOW ARGS --case re100)
endfunction()
cmake_language(DEFER CALL ef_obstacle_register_tests)

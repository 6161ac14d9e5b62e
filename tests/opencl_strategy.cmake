# The OpenCL strategy "opencl_edge_based" (application/fluid/opencl_strategy.c) and its
# device executor (custom_utilities/opencl_fs.c, custom_kernels/fs_kernels.cl).  Owner:
# oclstrategy.  Every test skips (77) without an OpenCL device.
if(EF_WITH_OPENCL)
  set(EF_OCLFS_CACHE ${CMAKE_CURRENT_BINARY_DIR}/opencl_strategy_cache)
  # Each kernel against the OpenMP executor's arithmetic on identical inputs.
  ef_add_c_test(test_ocl_fs_kernels SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ocl_fs_kernels.c
                LABELS "opencl;unit" ARGS ${EF_OCLFS_CACHE})
  # Whole steps: the OpenCL and OpenMP strategies side by side (2D and 3D cavities).
  ef_add_c_test(test_ocl_fs_steps SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ocl_fs_steps.c
                LABELS "opencl;unit" ARGS --cache ${EF_OCLFS_CACHE})
  # The implicit viscosity option (IMEX ARS(3,4,3) with the device stage solves) on both strategies:
  # the same two cavities (3D: slip walls, no-slip walls, lid, a fixed pressure; 2D: a time-dependent
  # lid) at viscosity 0.5, every implicit_viscosity.correction and the projection "converged" (its fields within
  # 1e-11, equal projection PCG iterations), the same bounds (test_ocl_fs_steps.c).
  add_test(NAME strategies_agree_implicit COMMAND test_ocl_fs_steps --implicit --cache ${EF_OCLFS_CACHE})
  set_tests_properties(test_ocl_fs_kernels test_ocl_fs_steps strategies_agree_implicit PROPERTIES TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive;EDGEFLOW_CACHE_DIR=${EF_OCLFS_CACHE}")
  set_tests_properties(strategies_agree_implicit PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77)
  # pressure_initial_guess "quadratic" (issue 12) on both strategies: the host's guess and the device's
  # fs_pressure_guess give the same iterations and fields within the same bounds (2 s).
  add_test(NAME strategies_agree_pressure_guess
           COMMAND test_ocl_fs_steps --pressure-guess quadratic --cache ${EF_OCLFS_CACHE})
  set_tests_properties(strategies_agree_pressure_guess PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive;EDGEFLOW_CACHE_DIR=${EF_OCLFS_CACHE}")
  # Two steps on tiny meshes under oclgrind: no data races, no invalid accesses.
  find_program(EF_OCLGRIND_EXECUTABLE oclgrind)
  if(EF_OCLGRIND_EXECUTABLE)
    add_test(NAME test_ocl_fs_oclgrind
             COMMAND sh ${EF_TEST_DATA}/opencl_strategy/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_ocl_fs_steps> ${CMAKE_CURRENT_BINARY_DIR}/ocl_fs_oclgrind)
    set_tests_properties(test_ocl_fs_oclgrind PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77 TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    # The implicit option's kernels (stages, stage CG, corrections), two steps of each case.
    add_test(NAME test_ocl_fs_oclgrind_implicit
             COMMAND sh ${EF_TEST_DATA}/opencl_strategy/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_ocl_fs_steps> ${CMAKE_CURRENT_BINARY_DIR}/ocl_fs_oclgrind_implicit --implicit)
    set_tests_properties(test_ocl_fs_oclgrind_implicit PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77 TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    # The converged projection's kernels (fs_cp_*, with the correction and assembly they call), two steps of
    # each cavity (its own test: with the cases above it would not fit the 300 s).
    add_test(NAME test_ocl_fs_oclgrind_converged
             COMMAND sh ${EF_TEST_DATA}/opencl_strategy/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_ocl_fs_steps> ${CMAKE_CURRENT_BINARY_DIR}/ocl_fs_oclgrind_converged --implicit
                     --case converged)
    set_tests_properties(test_ocl_fs_oclgrind_converged PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                         TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    # The stage CG with several work-groups in every kernel (8 items a group): each group of fs_visc_update and
    # fs_visc_direction forms the CG state from the previous launch's partial sums and group 0 alone writes it
    # to the other state buffer; oclgrind checks that no group reads what another writes. Those two kernels on 3
    # work-groups (device.stage_cg_groups), each looping over several blocks of 8 nodes. Two steps of each
    # cavity, correction "lumped" (about 30 s).
    add_test(NAME test_ocl_fs_oclgrind_implicit_groups
             COMMAND sh ${EF_TEST_DATA}/opencl_strategy/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_ocl_fs_steps> ${CMAKE_CURRENT_BINARY_DIR}/ocl_fs_oclgrind_implicit_groups
                     --implicit --case lumped --work-group-bits 3 --stage-cg-groups 3)
    set_tests_properties(test_ocl_fs_oclgrind_implicit_groups PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                         TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    # fs_pressure_guess: 3 steps of the tiny cavities with "quadratic" (the guess linear on step 2, quadratic on 3).
    add_test(NAME test_ocl_fs_oclgrind_pressure_guess
             COMMAND sh ${EF_TEST_DATA}/opencl_strategy/oclgrind_check.sh ${EF_OCLGRIND_EXECUTABLE}
                     $<TARGET_FILE:test_ocl_fs_steps> ${CMAKE_CURRENT_BINARY_DIR}/ocl_fs_oclgrind_pressure_guess
                     --pressure-guess quadratic)
    set_tests_properties(test_ocl_fs_oclgrind_pressure_guess PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                         TIMEOUT 300
                         ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
    if(EF_SANITIZE)
      set_property(TEST test_ocl_fs_oclgrind test_ocl_fs_oclgrind_implicit test_ocl_fs_oclgrind_converged
                   test_ocl_fs_oclgrind_implicit_groups test_ocl_fs_oclgrind_pressure_guess APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0")
    endif()
  endif()
endif()
# The cavity benchmark driver on PoCL and the host, levels 0-1, a few steps (smoke test).
if(EF_WITH_OPENCL)
  add_test(NAME test_benchmark_cavity_smoke
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_SOURCE_DIR}/python_scripts/benchmark_cavity.py
                   --edgeflow $<TARGET_FILE:edgeflow> --levels 0,1 --warmup 1 --steps 2
                   --strategies openmp,pocl --budget 240 --fail-on-error
                   --out ${CMAKE_CURRENT_BINARY_DIR}/benchmark_cavity_smoke --tag smoke)
  set_tests_properties(test_benchmark_cavity_smoke PROPERTIES LABELS "opencl;slow" TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_WAIT_POLICY=passive;EDGEFLOW_CACHE_DIR=${EF_OCLFS_CACHE}")
endif()

# Both strategies on a pressure-driven case (prescribed inlet/outlet pressures).
find_program(EF_GMSH_PROGRAM gmsh)
if(EF_WITH_OPENCL AND EF_WITH_VTK_TESTS AND EF_WITH_GMSH_TESTS AND EF_GMSH_PROGRAM)
  add_test(NAME strategies_agree_pressure_driven
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/strategies_agree.py $<TARGET_FILE:edgeflow>
                   ${EF_GMSH_PROGRAM} ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/strategies_agree)
  set_tests_properties(strategies_agree_pressure_driven PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  # The same case with linear_solver_settings solver_type "bicgstab" (tolerance 1e-12: it stops
  # on the unscaled residual; see strategies_agree.py) on both strategies: each converges and
  # agrees with the OpenMP CG run within the same bound.
  add_test(NAME strategies_agree_bicgstab
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/strategies_agree.py $<TARGET_FILE:edgeflow>
                   ${EF_GMSH_PROGRAM} ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/strategies_agree_bicgstab
                   --linear-solver bicgstab 1e-12)
  set_tests_properties(strategies_agree_bicgstab PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  # FCG with the AMG preconditioner (host AMG on OpenMP, device AMG on OpenCL; tolerance 1e-12:
  # it stops on the unscaled residual too) on both strategies, against the same OpenMP CG run.
  add_test(NAME strategies_agree_fcg_amg
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/strategies_agree.py $<TARGET_FILE:edgeflow>
                   ${EF_GMSH_PROGRAM} ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/strategies_agree_fcg_amg
                   --linear-solver fcg 1e-12 --preconditioner amg)
  set_tests_properties(strategies_agree_fcg_amg PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  # Both strategies with the nodes in Morton order against the OpenMP run in RCM order (aligned by NODE_ID).
  add_test(NAME strategies_agree_morton
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/strategies_agree.py $<TARGET_FILE:edgeflow>
                   ${EF_GMSH_PROGRAM} ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/strategies_agree_morton
                   --renumbering morton)
  set_tests_properties(strategies_agree_morton PROPERTIES LABELS "opencl;unit" SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  # The implicit viscosity option through the command line on the same duct, corrections "lumped" and
  # "viscous" (the cavities and the slip channel: strategies_agree_implicit above).
  foreach(correction lumped viscous)
    add_test(NAME strategies_agree_implicit_duct_${correction}
             COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/strategies_agree.py $<TARGET_FILE:edgeflow>
                     ${EF_GMSH_PROGRAM} ${CMAKE_SOURCE_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/strategies_agree_implicit_duct_${correction} --implicit ${correction})
    set_tests_properties(strategies_agree_implicit_duct_${correction} PROPERTIES LABELS "opencl;unit"
                         SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endforeach()
endif()

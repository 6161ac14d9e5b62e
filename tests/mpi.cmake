# MPI domain decomposition (docs/mpi.md).
# The partition invariants, all ranks in one process (METIS when EDGEFLOW_MPI is on, slabs always).
ef_add_c_test(test_partition SOURCES test_partition.c LABELS "unit")
# A piece as a model part: owned-first nodes, elements and conditions with an owned node, sub model
# parts restricted, ids and variables kept (slabs always, METIS when EDGEFLOW_MPI is on).
ef_add_c_test(test_model_part_split SOURCES test_model_part_split.c LABELS "unit")

# problem_data.parallel_type "MPI" without mpirun: a clear error (in a build without MPI: that it has none).
if(EF_HAVE_MPI)
  set(EF_NO_MPIRUN_EXPECT "parallel_type is .MPI. but this process was not started by mpirun")
else()
  set(EF_NO_MPIRUN_EXPECT "parallel_type is .MPI. but this edgeflow was built without MPI")
endif()
add_test(NAME parallel_type_mpi_without_mpirun
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:edgeflow>;load;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d.json;--quiet;--output;${CMAKE_CURRENT_BINARY_DIR}/parallel_type_mpi"
                 "-DEXPECT=${EF_NO_MPIRUN_EXPECT}" -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
set_tests_properties(parallel_type_mpi_without_mpirun PROPERTIES LABELS "unit" TIMEOUT 90
                     ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")

if(EF_HAVE_MPI)
  # Under mpirun: partition, halo exchange, distributed Jacobi CG against the serial CG (ef_mpi_check).
  # Containers and CI run as root and on fewer cores than ranks: --allow-run-as-root only for root,
  # --oversubscribe, one OpenMP thread per rank, no CMA single-copy (blocked in containers), shared
  # memory only and the local launcher (plm=isolated: CI installs no ssh, which the default launcher wants).
  execute_process(COMMAND id -u OUTPUT_VARIABLE EF_UID OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(EF_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe)
  if(EF_UID STREQUAL "0")
    list(APPEND EF_MPIRUN --allow-run-as-root)
  endif()
  set(EF_MPI_ENV "OMP_NUM_THREADS=1;OMP_WAIT_POLICY=passive;OMPI_MCA_btl_vader_single_copy_mechanism=none"
                 "OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_btl=self,vader;OMPI_MCA_plm=isolated;EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
  function(ef_add_mpi_check name np)
    add_test(NAME ${name} COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:ef_mpi_check> ${ARGN})
    set_tests_properties(${name} PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS ${np}
                         PASS_REGULAR_EXPRESSION "ef_mpi_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED|rank [0-9]+ of"
                         ENVIRONMENT "${EF_MPI_ENV}")
  endfunction()
  ef_add_mpi_check(mpi_cg_box2d_np2 2 --box2d 40)
  ef_add_mpi_check(mpi_cg_box2d_np3 3 --box2d 40)
  ef_add_mpi_check(mpi_cg_cavity3d_np2 2 --mesh ${CMAKE_SOURCE_DIR}/test_examples/cavity3d/cavity3d.msh)
  ef_add_mpi_check(mpi_cg_cavity3d_np3 3 --mesh ${CMAKE_SOURCE_DIR}/test_examples/cavity3d/cavity3d.msh)
  # Pure Neumann (the closed cavity's pressure): constant null space, both CGs in 1-perp.
  ef_add_mpi_check(mpi_cg_box2d_neumann_np2 2 --box2d 40 --neumann 1)
  ef_add_mpi_check(mpi_cg_cavity3d_neumann_np3 3 --mesh ${CMAKE_SOURCE_DIR}/test_examples/cavity3d/cavity3d.msh
                   --neumann 1)
  # One rank fails (as with bad input on its piece): mpirun exits non-zero within 60 s with its message.
  add_test(NAME mpi_rank_failure_np3
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};3;$<TARGET_FILE:ef_mpi_check>;--box2d;20;--fail-rank;2"
                   "-DEXPECT=rank 2 of 3: .*injected failure" -DSECONDS=60
                   -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_rank_failure_np3 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 3 ENVIRONMENT "${EF_MPI_ENV}")

  # edgeflow under mpirun (parallel_type "MPI"): every rank reads the mesh, METIS partitions it and each
  # rank keeps its piece as the model part (owned nodes first, then the ghosts); processes see the piece.
  add_test(NAME mpi_load_cavity3d_np3
           COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 3 $<TARGET_FILE:edgeflow> load
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d.json --output ${CMAKE_CURRENT_BINARY_DIR}/mpi_load_cavity3d)
  set_tests_properties(mpi_load_cavity3d_np3 PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS 3 ENVIRONMENT "${EF_MPI_ENV}"
                       PASS_REGULAR_EXPRESSION "rank 2 of 3: piece of [0-9]+ nodes \\([0-9]+ owned"
                       FAIL_REGULAR_EXPRESSION "error|rank [0-9]+ of 3: [^p]")
  # The reverse, as Kratos does not: an "OpenMP" case started on 2 ranks is refused (each rank would
  # run the whole case into the same files), with the fix in the message.
  add_test(NAME mpi_parallel_type_openmp_np2
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;load;${CMAKE_CURRENT_SOURCE_DIR}/data/petsc/cavity2d.json;--quiet;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_parallel_type_openmp"
                   "-DEXPECT=parallel_type is .OpenMP. but mpirun started 2 processes" -DSECONDS=60
                   -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_parallel_type_openmp_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${EF_MPI_ENV}")

  # The OpenMP strategy on 2 and 3 ranks against one process (test_mpi_run.c): 10 steps of the 2D and 3D
  # cavities at pressure tolerance 1e-12, velocity and pressure to 1e-8 relative, CG iterations within 2.
  # The waiting ranks yield (rank 0 also runs the one-process reference while they wait).
  add_executable(test_mpi_run ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_run.c)
  target_link_libraries(test_mpi_run PRIVATE edgeflow_core m)
  target_compile_definitions(test_mpi_run PRIVATE EF_DEFAULT_APPLICATIONS="${EF_DEFAULT_APPLICATIONS}")
  function(ef_add_mpi_run name np case)
    add_test(NAME ${name} COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:test_mpi_run>
                                  ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/${case}.json 10 ${CMAKE_CURRENT_BINARY_DIR}/${name})
    set_tests_properties(${name} PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS ${np}
                         PASS_REGULAR_EXPRESSION "test_mpi_run: PASSED" FAIL_REGULAR_EXPRESSION "FAILED|rank [0-9]+ of"
                         ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1")
  endfunction()
  ef_add_mpi_run(mpi_run_cavity2d_np2 2 cavity2d)
  ef_add_mpi_run(mpi_run_cavity2d_np3 3 cavity2d)
  ef_add_mpi_run(mpi_run_cavity3d_np2 2 cavity3d)
  ef_add_mpi_run(mpi_run_cavity3d_np3 3 cavity3d)
  ef_add_mpi_run(mpi_run_cavity3d_slip_np3 3 cavity3d_slip) # slip walls: faces, edges and corners
  # viscous_time_integration "implicit" (IMEX ARS(3,4,3), the stage solves' distributed CG; docs/mpi.md): the closed
  # 2D cavity and the 3D cavity on 2 and 3 ranks, the slip walls on 3, viscous tolerance 1e-12; also checks that
  # run_summary.json's viscous_solver has the one-process stage solves and CG iterations (within 2 a solve).
  foreach(case_np cavity2d_implicit:2 cavity2d_implicit:3 cavity3d_implicit:2 cavity3d_implicit:3
          cavity3d_slip_implicit:3)
    string(REPLACE ":" ";" case_np ${case_np})
    list(GET case_np 0 ef_case)
    list(GET case_np 1 ef_np)
    ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
  endforeach()
  # What the implicit option does not run on several ranks (correction "viscous", "rotational" and
  # "viscous_unfiltered", pressure "extrapolated", projection "converged") stops every rank with its message.
  add_test(NAME mpi_unsupported_openmp_implicit_correction_np2
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_implicit_viscous.json;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_unsupported_openmp_implicit_correction"
                   "-DEXPECT=rank [01] of 2: error .EF_ERR_UNSUPPORTED.: .*openmp_edge_based on several ranks: viscous_time_integration .implicit. runs with implicit_viscosity.correction .lumped."
                   -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_unsupported_openmp_implicit_correction_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2
                       ENVIRONMENT "${EF_MPI_ENV}")
  # pressure_initial_guess "linear" (issue 12) runs on one rank only: every rank stops with its message.
  add_test(NAME mpi_unsupported_openmp_pressure_guess_np2
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_pressure_guess.json;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_unsupported_openmp_pressure_guess"
                   "-DEXPECT=rank [01] of 2: error .EF_ERR_UNSUPPORTED.: .*openmp_edge_based on several ranks: pressure_initial_guess .linear. and .quadratic. run on one rank only"
                   -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_unsupported_openmp_pressure_guess_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2
                       ENVIRONMENT "${EF_MPI_ENV}")
  # The channel with an obstacle: apply_inlet_process along its automatic_inwards_normal (faces summed over
  # the ranks), an outlet (open boundary), forces, drag and probes on the ranks.
  ef_add_mpi_run(mpi_run_channel_inlet_np3 3 channel_inlet)
  # linear solver "petsc" across ranks (PETSc's MPIAIJ, fractional_step_mpi_solver.c): CG + Jacobi at 1e-12
  # against the one-process petsc run as above (iterations within 2), and CG + GAMG (pc_type "gamg", 1e-12)
  # to 1e-8 with the iterations reported, not checked (GAMG's aggregates follow the partition).
  if(EF_HAVE_PETSC)
    foreach(case_np cavity2d_petsc:2 cavity2d_petsc:3 cavity3d_petsc:2 cavity3d_petsc:3 cavity2d_petsc_gamg:2
            cavity3d_petsc_gamg:3)
      string(REPLACE ":" ";" case_np ${case_np})
      list(GET case_np 0 ef_case)
      list(GET case_np 1 ef_np)
      ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
      if(ef_case MATCHES "gamg")
        set_property(TEST mpi_run_${ef_case}_np${ef_np} APPEND PROPERTY ENVIRONMENT "EF_TEST_MPI_ITERATION_DIFFERENCE=-1")
      endif()
    endforeach()
  else()
    message(STATUS "edgeflow: no PETSc: the mpi_run_*_petsc_* tests (linear solver \"petsc\" across ranks) are left out")
  endif()
  # FCG + AMG across ranks (aggregates inside each rank's rows, the coarsest level gathered on every rank;
  # docs/mpi.md): the closed 2D cavity (constant null space) and the 3D cavity on 2 and 3 ranks, 10 steps at
  # 1e-12 against the one-process FCG + AMG: velocity and pressure to 1e-8, total iterations <= 1.3 x; and CG +
  # AMG (the V-cycle under host_pcg.c's CG across ranks) on the 3D cavity on 2 ranks.
  foreach(case_np cavity2d_amg:2 cavity2d_amg:3 cavity3d_amg:2 cavity3d_amg:3 cavity3d_cg_amg:2)
    string(REPLACE ":" ";" case_np ${case_np})
    list(GET case_np 0 ef_case)
    list(GET case_np 1 ef_np)
    ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
    set_property(TEST mpi_run_${ef_case}_np${ef_np} APPEND PROPERTY ENVIRONMENT
                 "EF_TEST_MPI_ITERATION_DIFFERENCE=-1;EF_TEST_MPI_ITERATION_RATIO=1.3")
  endforeach()
  # What does not run on several ranks yet stops every rank with its message (edgeflow's ef_comm_abort).
  if(EF_WITH_OPENCL) # (without OpenCL the strategy is not registered at all)
    # The OpenCL strategy on PoCL (every rank the CPU device, one PoCL thread a rank): 10 steps against one
    # process of the same strategy, as the OpenMP runs above (opencl_fs_mpi.c).
    # viscous_time_integration "implicit" as the OpenMP runs above (the stage solves' device CG across the ranks, the
    # viscous_solver figures checked too): the closed 2D cavity and the 3D cavity on 2 and 3 ranks, slip walls on 3.
    foreach(case_np cavity2d_opencl:2 cavity2d_opencl:3 cavity3d_opencl:2 cavity3d_opencl:3 cavity2d_opencl_implicit:2
            cavity2d_opencl_implicit:3 cavity3d_opencl_implicit:2 cavity3d_opencl_implicit:3
            cavity3d_slip_opencl_implicit:3)
      string(REPLACE ":" ";" case_np ${case_np})
      list(GET case_np 0 ef_case)
      list(GET case_np 1 ef_np)
      ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
      set_property(TEST mpi_run_${ef_case}_np${ef_np} APPEND PROPERTY ENVIRONMENT "POCL_MAX_PTHREAD_COUNT=1")
    endforeach()
    # The device AMG across ranks (opencl_amg_mpi.c: the hierarchy of the host set-up across ranks on the device,
    # every level's halo, the coarsest level gathered; docs/mpi.md): FCG + AMG on the closed 2D cavity (constant
    # null space) and the 3D cavity on 2 and 3 ranks, CG + AMG (the V-cycle) on the 3D cavity on 2 ranks, 10 steps at
    # 1e-12 against the one-process device FCG / CG + AMG: velocity and pressure to 1e-8, total iterations <= 1.3 x.
    foreach(case_np cavity2d_opencl_amg:2 cavity2d_opencl_amg:3 cavity3d_opencl_amg:2 cavity3d_opencl_amg:3
            cavity3d_opencl_cg_amg:2)
      string(REPLACE ":" ";" case_np ${case_np})
      list(GET case_np 0 ef_case)
      list(GET case_np 1 ef_np)
      ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
      set_property(TEST mpi_run_${ef_case}_np${ef_np} APPEND PROPERTY ENVIRONMENT
                   "POCL_MAX_PTHREAD_COUNT=1;EF_TEST_MPI_ITERATION_DIFFERENCE=-1;EF_TEST_MPI_ITERATION_RATIO=1.3")
    endforeach()
    # The gathered sub-hierarchy (amg_gather_rows 1000, amg_coarse_enough 16: of the 3D cavity's levels 3347, ~420, ~55,
    # ~7 rows, level 1 gathered on every rank and cycled by a one-process device AMG of three levels; docs/mpi.md) under
    # FCG (K-cycle) on 2 and 3 ranks and CG (V-cycle) on 2, the same checks; the profile must count gathered solves.
    foreach(case_np cavity3d_opencl_amg_gather:2 cavity3d_opencl_amg_gather:3 cavity3d_opencl_cg_amg_gather:2)
      string(REPLACE ":" ";" case_np ${case_np})
      list(GET case_np 0 ef_case)
      list(GET case_np 1 ef_np)
      ef_add_mpi_run(mpi_run_${ef_case}_np${ef_np} ${ef_np} ${ef_case})
      set_property(TEST mpi_run_${ef_case}_np${ef_np} APPEND PROPERTY ENVIRONMENT
                   "POCL_MAX_PTHREAD_COUNT=1;EF_TEST_MPI_ITERATION_DIFFERENCE=-1;EF_TEST_MPI_ITERATION_RATIO=1.3"
                   "EDGEFLOW_AMG_MPI_PROFILE=1")
      set_property(TEST mpi_run_${ef_case}_np${ef_np} PROPERTY FAIL_REGULAR_EXPRESSION
                   "FAILED|rank [0-9]+ of|gathered solve [0-9.]+/0;")
    endforeach()
    # The device halo's scatter path (EDGEFLOW_AMG_HALO_SCATTER=1: the received rows through amgm_unpack even where they
    # are one block, as every level's are) on 3 ranks, two peers a rank.
    set_property(TEST mpi_run_cavity3d_opencl_amg_np3 APPEND PROPERTY ENVIRONMENT "EDGEFLOW_AMG_HALO_SCATTER=1")
    # The CG product's halo overlapped with the interior rows (device.mpi_overlap, the default) against the
    # exchange first (false), both on 3 ranks: 1e-8 and CG iterations within 2 (the dot products' order differs).
    add_test(NAME mpi_overlap_cavity3d_opencl_np3
             COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 3 $<TARGET_FILE:test_mpi_run>
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_opencl.json 10
                     ${CMAKE_CURRENT_BINARY_DIR}/mpi_overlap_cavity3d_opencl_np3
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_opencl_no_overlap.json)
    set_tests_properties(mpi_overlap_cavity3d_opencl_np3 PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS 3
                         PASS_REGULAR_EXPRESSION "test_mpi_run: PASSED" FAIL_REGULAR_EXPRESSION "FAILED|rank [0-9]+ of"
                         ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1;POCL_MAX_PTHREAD_COUNT=1")
    # device.mpi_fixed_cg_iterations 7 (the fixed work of benchmarks/mpi_scaling.py, mpi_overlap's companion
    # setting): every pressure solve of 3 steps on 2 ranks runs exactly 7 CG iterations, whatever the residual.
    add_test(NAME mpi_overlap_fixed_cg_opencl_np2
             COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:edgeflow> run
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_opencl_fixed_cg.json --steps 3 --overwrite
                     --output ${CMAKE_CURRENT_BINARY_DIR}/mpi_overlap_fixed_cg_opencl_np2)
    set_tests_properties(mpi_overlap_fixed_cg_opencl_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2
                         PASS_REGULAR_EXPRESSION "step +3 +t = [^\n]*pressure iterations +7 [(]"
                         FAIL_REGULAR_EXPRESSION "error|pressure iterations +([0-68-9]|[0-9][0-9]+) "
                         ENVIRONMENT "${EF_MPI_ENV};POCL_MAX_PTHREAD_COUNT=1")
    # The pressure CG product's other shapes (opencl_fs_mpi.c, docs/mpi.md; the others run the default, 4 work-items
    # a row): 8 work-items a row on 2 work-groups (each group strides over many row blocks: the lane sums' double
    # buffer), and one work-item a row on one group.
    set_property(TEST mpi_run_cavity3d_opencl_np2 APPEND PROPERTY ENVIRONMENT
                 "EDGEFLOW_MPI_CG_LANES=8;EDGEFLOW_MPI_CG_GROUPS=2")
    set_property(TEST mpi_run_cavity2d_opencl_np3 APPEND PROPERTY ENVIRONMENT
                 "EDGEFLOW_MPI_CG_LANES=1;EDGEFLOW_MPI_CG_GROUPS=1")
    # A CG product shape that is not one (EDGEFLOW_MPI_CG_LANES not a power of two) stops every rank with its message.
    add_test(NAME mpi_opencl_cg_lanes_refused_np2
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_opencl.json;--steps;1;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_opencl_cg_lanes_refused"
                     "-DEXPECT=rank [01] of 2: error .EF_ERR_PARAMETER.: .*EDGEFLOW_MPI_CG_LANES='3': expected a power of two from 1 to"
                     -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
    set_tests_properties(mpi_opencl_cg_lanes_refused_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2
                         ENVIRONMENT "${EF_MPI_ENV};POCL_MAX_PTHREAD_COUNT=1;EDGEFLOW_MPI_CG_LANES=3")
    # Refused on several ranks, each with its message: the implicit viscosity's correction "viscous" (as the
    # sub-options other than the defaults), a solver but cg + jacobi.
    add_test(NAME mpi_unsupported_opencl_implicit_correction_np2
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_implicit_viscous.json;--solver-type;opencl_edge_based;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_unsupported_opencl_implicit_correction"
                     "-DEXPECT=rank [01] of 2: error .EF_ERR_UNSUPPORTED.: .*opencl_edge_based on several ranks: viscous_time_integration .implicit. runs with implicit_viscosity.correction .lumped."
                     -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
    add_test(NAME mpi_unsupported_opencl_pressure_guess_np2
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_pressure_guess.json;--solver-type;opencl_edge_based;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_unsupported_opencl_pressure_guess"
                     "-DEXPECT=rank [01] of 2: error .EF_ERR_UNSUPPORTED.: .*opencl_edge_based on several ranks: pressure_initial_guess .linear. and .quadratic. run on one rank only"
                     -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
    add_test(NAME mpi_unsupported_opencl_solver_np2
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_bicgstab.json;--solver-type;opencl_edge_based;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_unsupported_opencl_solver"
                     "-DEXPECT=rank [01] of 2: error .EF_ERR_UNSUPPORTED.: .*opencl_edge_based on several ranks: linear_solver_settings asks for solver_type .bicgstab."
                     -DSECONDS=60 -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
    set_tests_properties(mpi_unsupported_opencl_implicit_correction_np2 mpi_unsupported_opencl_solver_np2
                         mpi_unsupported_opencl_pressure_guess_np2 PROPERTIES LABELS "mpi"
                         TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${EF_MPI_ENV};POCL_MAX_PTHREAD_COUNT=1")
  endif()
  # problem_data.max_wall_time (2 s) on 3 ranks: the ranks' clocks differ, one reduction per step stops them
  # after the same step (exit status 75 as on one process, the restart point and outputs written, no hang).
  add_test(NAME mpi_wall_time_np3
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};3;$<TARGET_FILE:edgeflow>;run;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_wall_time.json;--quiet;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_wall_time"
                   "-DEXPECT=max_wall_time reached: all 3 ranks stopped after step [0-9]+" -DSECONDS=60
                   -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_wall_time_np3 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 3 ENVIRONMENT "${EF_MPI_ENV}")
  # The Python workflow under mpirun: the same analysis through ctypes (5 steps), and a failure that stops
  # every rank with its message (FluidAnalysis._check calls ef_comm_abort on several ranks).
  set(EF_MPI_PYTHON_ENV "${EF_MPI_ENV};EDGEFLOW_LIB_DIR=$<TARGET_FILE_DIR:edgeflow_core>;PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1")
  add_test(NAME mpi_python_cavity2d_np2
           COMMAND ${EF_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 ${EF_SYSTEM_PYTHON} ${CMAKE_SOURCE_DIR}/python_scripts/run_analysis.py
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d.json --steps 5 --overwrite
                   --output ${CMAKE_CURRENT_BINARY_DIR}/mpi_python_cavity2d)
  set_tests_properties(mpi_python_cavity2d_np2 PROPERTIES LABELS "mpi" TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "${EF_MPI_PYTHON_ENV}"
                       PASS_REGULAR_EXPRESSION "step +5 +t = .*pressure iterations" FAIL_REGULAR_EXPRESSION "error|Traceback")
  add_test(NAME mpi_python_failure_np2
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${EF_MPIRUN};${MPIEXEC_NUMPROC_FLAG};2;${EF_SYSTEM_PYTHON};${CMAKE_SOURCE_DIR}/python_scripts/run_analysis.py;${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d_bicgstab.json;--steps;5;--overwrite;--output;${CMAKE_CURRENT_BINARY_DIR}/mpi_python_failure"
                   "-DEXPECT=rank [01] of 2: error: Initialize: .*solver_type .bicgstab. .*only .cg. with .jacobi. runs across ranks" -DSECONDS=60
                   -P ${CMAKE_SOURCE_DIR}/cmake/expect_failure.cmake)
  set_tests_properties(mpi_python_failure_np2 PROPERTIES LABELS "mpi" TIMEOUT 90 PROCESSORS 2 ENVIRONMENT "${EF_MPI_PYTHON_ENV}")
  # Restart points with the same rank count (tests/mpi_restart_check.py): 20 steps against 10 + restart + 10
  # on 2 and 3 ranks (byte-identical .pvd/.pvtu/.vtu and CSV files, max_files_to_keep per point); another rank
  # count, one process, a damaged and a missing piece refused on every rank within 60 s; max_wall_time on 2
  # ranks writes a point and the continuation ends where the uninterrupted run ends; so does SIGTERM to one
  # of 2 ranks (as a batch system signals the job's processes; mpirun itself kills its ranks on SIGTERM).
  foreach(mode_np identity:2 identity:3 refusal:2 wall_time:2 sigterm:2)
    string(REPLACE ":" ";" mn ${mode_np})
    list(GET mn 0 mode)
    list(GET mn 1 np)
    add_test(NAME mpi_restart_${mode}_np${np}
             COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity2d.json ${mode} ${np}
                     ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_${mode}_np${np} -- ${EF_MPIRUN})
    set_tests_properties(mpi_restart_${mode}_np${np} PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS ${np}
                         PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                         ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
  # The same identity with FCG + AMG on the 3D cavity on 2 ranks: each rank saves its owned rows' aggregate maps
  # and builds the hierarchy from them after the restart (without them the aggregates follow the values at the
  # restart and lid_forces.csv differs: checked by hand).
  add_test(NAME mpi_restart_identity_amg_np2
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_amg.json identity 2
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_identity_amg_np2 -- ${EF_MPIRUN})
  set_tests_properties(mpi_restart_identity_amg_np2 PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS 2
                       PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                       ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1")
  # Restart points of the OpenCL strategy on several ranks (PoCL, one thread a rank): the identity on the 2D cavity
  # (the OpenMP tests' case with --solver-type) on 2 ranks and on the 3D cavity on 3 ranks, and SIGTERM to one of 2
  # ranks (600 steps: a PoCL step took 7 ms on the loaded 2-core VM; even at 2 ms the signal at step 50 lands over a
  # second before the end); density
  # 1.2, so the strategy's own kinematic pressure record is needed (the model part's rho p divided by rho differs in
  # the last bits: without the record, lid_forces.csv differs, checked by hand).
  if(EF_WITH_OPENCL)
    foreach(mcn identity:cavity2d:2 identity:cavity3d_opencl:3 sigterm:cavity2d:2)
      string(REPLACE ":" ";" mcn ${mcn})
      list(GET mcn 0 mode)
      list(GET mcn 1 case)
      list(GET mcn 2 np)
      add_test(NAME mpi_restart_${mode}_opencl_np${np}
               COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                       ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/${case}.json ${mode} ${np}
                       ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_${mode}_opencl_np${np} --solver-type opencl_edge_based
                       --density 1.2 --sigterm-steps 600 -- ${EF_MPIRUN})
      set_tests_properties(mpi_restart_${mode}_opencl_np${np} PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS ${np}
                           PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                           ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1;POCL_MAX_PTHREAD_COUNT=1")
    endforeach()
    # The identity with the device AMG across ranks (FCG + AMG, the 3D cavity on 2 ranks): the owned rows' aggregate
    # maps in each piece, the device hierarchy rebuilt from them after the restart.
    add_test(NAME mpi_restart_identity_opencl_amg_np2
             COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_opencl_amg.json identity 2
                     ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_identity_opencl_amg_np2 -- ${EF_MPIRUN})
    set_tests_properties(mpi_restart_identity_opencl_amg_np2 PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS 2
                         PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                         ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1;POCL_MAX_PTHREAD_COUNT=1")
    # The same with the gathered sub-hierarchy (cavity3d_opencl_amg_gather.json): its one-process AMG is built from
    # the gathered aggregate maps of the distributed levels (those of the restart file after it), not a new aggregation.
    add_test(NAME mpi_restart_identity_opencl_amg_gather_np2
             COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_opencl_amg_gather.json identity 2
                     ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_identity_opencl_amg_gather_np2 -- ${EF_MPIRUN})
    set_tests_properties(mpi_restart_identity_opencl_amg_gather_np2 PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS 2
                         PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                         ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1;POCL_MAX_PTHREAD_COUNT=1")
  endif()
  # The same identity with viscous_time_integration "implicit" (the time step's growth limit continues from the
  # restart's dt_previous) on the slip walls of the 3D cavity on 3 ranks, density 1.2 as the OpenCL ones.
  add_test(NAME mpi_restart_identity_implicit_np3
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_restart_check.py $<TARGET_FILE:edgeflow>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/cavity3d_slip_implicit.json identity 3
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi_restart_identity_implicit_np3 --density 1.2 -- ${EF_MPIRUN})
  set_tests_properties(mpi_restart_identity_implicit_np3 PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS 3
                       PASS_REGULAR_EXPRESSION "mpi_restart_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                       ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1")
  # The partitioned VTK output: `mpirun -n P edgeflow run` against `edgeflow run` of the same case, the last
  # step read back with the VTK library (.pvtu through vtkXMLPUnstructuredGridReader), field by NODE_ID.
  execute_process(COMMAND ${EF_SYSTEM_PYTHON} -c "import vtk" RESULT_VARIABLE EF_NO_PYTHON_VTK OUTPUT_QUIET ERROR_QUIET)
  if(EF_NO_PYTHON_VTK)
    message(STATUS "edgeflow: no python3-vtk9 for ${EF_SYSTEM_PYTHON}: the mpi_vtk_* tests are left out")
  else()
    set(ef_vtk_cases cavity2d:2 cavity3d:3 cavity2d:3 cavity3d:2) # conditions and sub model parts on 2 and 3 ranks, 2D and 3D
    if(EF_WITH_OPENCL) # the OpenCL strategy's pieces too (PoCL, one thread a rank)
      list(APPEND ef_vtk_cases cavity2d_opencl:2 cavity3d_opencl:3)
    endif()
    foreach(case_np ${ef_vtk_cases})
      string(REPLACE ":" ";" cn ${case_np})
      list(GET cn 0 case)
      list(GET cn 1 np)
      add_test(NAME mpi_vtk_${case}_np${np}
               COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_vtk_check.py $<TARGET_FILE:edgeflow>
                       ${CMAKE_CURRENT_SOURCE_DIR}/data/mpi/${case}.json ${np} ${CMAKE_CURRENT_BINARY_DIR}/mpi_vtk_${case}_np${np}
                       -- ${EF_MPIRUN})
      set_tests_properties(mpi_vtk_${case}_np${np} PROPERTIES LABELS "mpi" TIMEOUT 180 PROCESSORS ${np}
                           PASS_REGULAR_EXPRESSION "mpi_vtk_check: PASSED" FAIL_REGULAR_EXPRESSION "FAILED"
                           ENVIRONMENT "${EF_MPI_ENV};OMPI_MCA_mpi_yield_when_idle=1;POCL_MAX_PTHREAD_COUNT=1")
    endforeach()
  endif()
endif()

# Figures and pictures (python_scripts/render_vtk.py, make_figures.py).  Owner: figures.
# figures_render: a 2-step run of the 3D cavity, a slice and a surface rendered offscreen at a
# requested size, each PNG checked for its size and for not being one colour, and
# make_figures.py --help.  A few seconds; skipped (77) when offscreen rendering is impossible
# (no DISPLAY, a VTK without EGL/OSMesa and no xvfb-run: scripts/setup_debian.sh --figures).
if(EXISTS ${EF_SYSTEM_PYTHON} AND EF_WITH_VTK_TESTS)
  add_test(NAME figures_render
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/figures/test_render.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/figures)
  set_tests_properties(figures_render PROPERTIES LABELS "io" SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive;PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1")
endif()

# figures_cavity3d_job: the README main job's run (level 0 to its steady state, openmp_edge_based) and
# its centreline plot (plot_cavity.py job): steady, extrema as documented, PNG written.  About 10 s.
if(EXISTS ${EF_SYSTEM_PYTHON})
  add_test(NAME figures_cavity3d_job
           COMMAND ${EF_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/figures/test_cavity3d_job.py
                   ${CMAKE_SOURCE_DIR} $<TARGET_FILE:edgeflow> ${CMAKE_CURRENT_BINARY_DIR}/figures)
  set_tests_properties(figures_cavity3d_job PROPERTIES LABELS "io;validation" TIMEOUT 300
                       ENVIRONMENT "EDGEFLOW_PLUGIN_DIR=${CMAKE_LIBRARY_OUTPUT_DIRECTORY};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive;PYTHONPATH=;PYTHONHOME=;PYTHONNOUSERSITE=1")
endif()

# Mesh the reader-test geometries with the installed gmsh in the three encodings
# the reader supports.  Run as: cmake -DGMSH=<gmsh> -DSRC=<this dir> -DOUT=<dir> -P generate_meshes.cmake
file(MAKE_DIRECTORY ${OUT})

function(ef_gmsh geo dim out)
  execute_process(COMMAND ${GMSH} -${dim} ${SRC}/${geo}.geo ${ARGN} -o ${OUT}/${out}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/${out})
    message(FATAL_ERROR "gmsh failed on ${geo}.geo (${out}):\n${log}")
  endif()
endfunction()

foreach(geo square box)
  if(geo STREQUAL "box")
    set(dim 3)
  else()
    set(dim 2)
  endif()
  ef_gmsh(${geo} ${dim} ${geo}_41.msh -format msh41)
  ef_gmsh(${geo} ${dim} ${geo}_41_bin.msh -format msh41 -bin)
  ef_gmsh(${geo} ${dim} ${geo}_22.msh -format msh22)
endforeach()
ef_gmsh(square_nophys 2 square_nophys_41.msh -format msh41)

/* petsc_solver.h -- PETSc in the plugin: the host linear solver "petsc" (petsc_solver.c) and the
 * command `edgeflow pressure-bench` (petsc_bench.c).  In a build without PETSc, petsc_absent.c
 * registers a "petsc" that fails saying so, and no pressure-bench. */
#ifndef EF_PETSC_SOLVER_H
#define EF_PETSC_SOLVER_H

int ef_register_petsc_solver(void);
int ef_register_petsc_bench(void);

#endif

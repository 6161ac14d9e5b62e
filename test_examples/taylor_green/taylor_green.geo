// taylor_green.geo -- the square [0, 2] x [0, 2] of the 2D Taylor-Green test (k = pi: 2 x 2
// vortex cells), triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "boundary"   all four sides: exact, time-dependent velocity (Dirichlet)
//   surface "fluid"
// No pressure is fixed: the exact normal velocity integrates to zero over the boundary (and so
// does its interpolant on these symmetric boundary nodes), and the solver removes the constant.
// Structured n x n cells (default 8, h = 0.25), alternating diagonals; the validation refines
// it uniformly (refinement_levels 0, 1, 2) with the time step halved at each level.
//   gmsh -2 taylor_green.geo -o taylor_green.msh
If (!Exists(n))
  n = 8;
EndIf

Point(1) = {0, 0, 0};
Point(2) = {2, 0, 0};
Point(3) = {2, 2, 0};
Point(4) = {0, 2, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 2, 3, 4} = n + 1;
Transfinite Surface {1} Alternate;

Physical Curve("boundary") = {1, 2, 3, 4};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

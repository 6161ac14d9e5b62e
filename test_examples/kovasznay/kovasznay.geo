// kovasznay.geo -- the rectangle [-0.5, 1] x [-0.5, 1.5] of the Kovasznay (1948) test, triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "boundary"            all four sides: exact velocity (Dirichlet)
//   point "pressure_reference"  the corner (1, -0.5): exact pressure, which fixes the constant
//   surface "fluid"
// Structured nx x ny cells (default 12 x 16, h = 0.125), alternating diagonals; the validation
// refines it uniformly (refinement_levels 0, 1, 2) for the convergence study.
//   gmsh -2 kovasznay.geo -o kovasznay.msh
If (!Exists(nx))
  nx = 12;
EndIf
If (!Exists(ny))
  ny = 16;
EndIf

Point(1) = {-0.5, -0.5, 0};
Point(2) = {1.0, -0.5, 0};
Point(3) = {1.0, 1.5, 0};
Point(4) = {-0.5, 1.5, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 3} = nx + 1;
Transfinite Curve {2, 4} = ny + 1;
Transfinite Surface {1} Alternate;

Physical Curve("boundary") = {1, 2, 3, 4};
Physical Point("pressure_reference") = {2};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

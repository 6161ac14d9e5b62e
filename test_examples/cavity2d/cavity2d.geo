// cavity2d.geo -- lid-driven cavity in the unit square [0,1]^2, triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "lid"     y = 1, moving with u = (1, 0) (ProjectParameters*.json)
//   curve "walls"   x = 0, x = 1, y = 0: no slip
//   surface "fluid"
// The lid corners belong to both groups; the walls are listed after the lid in the cases, so
// the two corner nodes do not move (lid velocity 1 on the open lid, not regularised, as in
// Ghia, Ghia & Shin 1982).  Letting the corners move with the lid instead makes the corner
// elements leak fluid through the side walls and weakens the vortex: at Re 400 on the 64 x 64
// mesh max |u - u_Ghia| is 0.025 that way against 0.005 this way.
// Structured n x n cells, graded towards all four walls (Bump: the cells at the walls are
// `bump` times the size of those in the middle, roughly), each cell split into two
// triangles with alternating diagonals.  The validation refines it uniformly
// (refinement_levels) for the finer meshes, which keeps the grading.
//   gmsh -2 cavity2d.geo -o cavity2d.msh
If (!Exists(n))
  n = 32;
EndIf
If (!Exists(bump))
  bump = 0.4;
EndIf

Point(1) = {0, 0, 0};
Point(2) = {1, 0, 0};
Point(3) = {1, 1, 0};
Point(4) = {0, 1, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 2, 3, 4} = n + 1 Using Bump bump;
Transfinite Surface {1} Alternate;

Physical Curve("lid") = {3};
Physical Curve("walls") = {1, 2, 4};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

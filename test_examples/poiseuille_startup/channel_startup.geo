// channel_startup.geo -- plane channel [0, L] x [-h, h] for the start-up test, triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "inlet"    x = 0: p = G L (velocity free)
//   curve "outlet"   x = L: p = 0 (velocity free)
//   curve "walls"    y = -h, y = h: no slip
//   surface "fluid"
// The flow does not depend on x (pressure ends, no entrance length), so the channel is short.
// Structured nx x ny cells, alternating diagonals.
//   gmsh -2 channel_startup.geo -o channel_startup.msh
If (!Exists(L))
  L = 1.0;
EndIf
If (!Exists(h))
  h = 0.5;
EndIf
If (!Exists(nx))
  nx = 5;
EndIf
If (!Exists(ny))
  ny = 20;
EndIf

Point(1) = {0, -h, 0};
Point(2) = {L, -h, 0};
Point(3) = {L, h, 0};
Point(4) = {0, h, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 3} = nx + 1;
Transfinite Curve {2, 4} = ny + 1;
Transfinite Surface {1} Alternate;

Physical Curve("inlet") = {4};
Physical Curve("outlet") = {2};
Physical Curve("walls") = {1, 3};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

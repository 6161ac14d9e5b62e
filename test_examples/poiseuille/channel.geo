// channel.geo -- 2D plane channel [0, L] x [0, H] for the steady Poiseuille test, triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "inlet"   x = 0        parabolic velocity u = 6 U y (H - y) / H^2
//   curve "outlet"  x = L        p = 0
//   curve "walls"   y = 0, y = H no slip
//   surface "fluid"
// Structured: nx x ny cells, each split into two triangles with alternating diagonals
// (no preferred direction).  Mesh: gmsh -2 channel.geo -o channel.msh
If (!Exists(L))
  L = 4.0;
EndIf
If (!Exists(H))
  H = 1.0;
EndIf
If (!Exists(nx))
  nx = 32;
EndIf
If (!Exists(ny))
  ny = 16;
EndIf

Point(1) = {0, 0, 0};
Point(2) = {L, 0, 0};
Point(3) = {L, H, 0};
Point(4) = {0, H, 0};
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

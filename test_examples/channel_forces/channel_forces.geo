// channel_forces.geo -- 2D plane channel [0, L] x [0, H] for the wall-force check, triangles.
//
// Physical groups (sub model parts of the same names):
//   curve "inlet"          x = 0        parabolic velocity u = 6 U y (H - y) / H^2
//   curve "outlet"         x = L        p = 0
//   curve "walls"          y = 0, y = H no slip (all of it)
//   curve "walls_measured" y = 0, y = H without the first cell (x >= L/nx): the part whose
//                          force is written.  The two inlet corner nodes are left out
//                          because their reaction also holds the inlet pressure on half an
//                          inlet cell (see README.md).
//   surface "fluid"
// Structured: nx x ny cells, each split into two triangles with alternating diagonals.
// Mesh: gmsh -2 channel_forces.geo -o channel_forces.msh
If (!Exists(L))
  L = 2.0;
EndIf
If (!Exists(H))
  H = 1.0;
EndIf
If (!Exists(nx))
  nx = 20;
EndIf
If (!Exists(ny))
  ny = 10;
EndIf
h = L / nx;

Point(1) = {0, 0, 0};
Point(2) = {h, 0, 0};
Point(3) = {L, 0, 0};
Point(4) = {L, H, 0};
Point(5) = {h, H, 0};
Point(6) = {0, H, 0};
Line(1) = {1, 2};  // bottom wall, first cell
Line(2) = {2, 3};  // bottom wall, measured
Line(3) = {3, 4};  // outlet
Line(4) = {4, 5};  // top wall, measured
Line(5) = {5, 6};  // top wall, first cell
Line(6) = {6, 1};  // inlet
Curve Loop(1) = {1, 2, 3, 4, 5, 6};
Plane Surface(1) = {1};
Transfinite Curve {1, 5} = 2;
Transfinite Curve {2, 4} = nx;
Transfinite Curve {3, 6} = ny + 1;
Transfinite Surface {1} = {1, 3, 4, 6} Alternate;

Physical Curve("inlet") = {6};
Physical Curve("outlet") = {3};
Physical Curve("walls") = {1, 2, 4, 5};
Physical Curve("walls_measured") = {2, 4};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

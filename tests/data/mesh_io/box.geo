// Unit cube for the mesh reader tests: 3D, a physical volume, boundary
// surfaces, a physical curve (node-only in 3D) and a physical point.
lc = 0.6;
Point(1) = {0, 0, 0, lc};
Point(2) = {1, 0, 0, lc};
Point(3) = {1, 1, 0, lc};
Point(4) = {0, 1, 0, lc};
Point(9) = {3, 3, 3, lc}; // construction only
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
out[] = Extrude {0, 0, 1} { Surface{1}; };
// out[0]: top, out[1]: volume, out[2..5]: sides on lines 1..4
Physical Volume("Fluid") = {out[1]};
Physical Surface("Inlet") = {out[5]};
Physical Surface("Outlet") = {out[3]};
Physical Surface("Walls") = {1, out[0], out[2], out[4]};
Physical Curve("BottomEdge") = {1};
Physical Point("PressureRef") = {3};

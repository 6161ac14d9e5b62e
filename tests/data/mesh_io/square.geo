// Unit square for the mesh reader tests: 2D, named and unnamed physical
// groups, a physical point (pressure reference) and a construction point that
// must not become a node.
lc = 0.5;
Point(1) = {0, 0, 0, lc};
Point(2) = {1, 0, 0, lc};
Point(3) = {1, 1, 0, lc};
Point(4) = {0, 1, 0, lc};
Point(5) = {2, 2, 0, lc}; // construction only
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Surface("Fluid") = {1};
Physical Curve("Inlet") = {4};
Physical Curve("Walls") = {1, 3};
Physical Curve(7) = {2}; // unnamed: becomes Physical_1_7
Physical Point("PressureRef") = {3};

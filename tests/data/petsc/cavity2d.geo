// cavity2d.geo -- small lid-driven cavity in the unit square, triangles, for the
// `edgeflow verify` tests (a few hundred nodes: each verify run takes seconds).
// Physical groups: curve "lid" (y = 1), curve "walls" (x = 0, x = 1, y = 0),
// surface "fluid".  No pressure is fixed anywhere: the pressure system is singular
// with the constant null space, the case that path of the solvers handles.
// Regenerate: gmsh -2 cavity2d.geo -o cavity2d.msh
lc = 0.06;
Point(1) = {0, 0, 0, lc};
Point(2) = {1, 0, 0, lc};
Point(3) = {1, 1, 0, lc};
Point(4) = {0, 1, 0, lc};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Curve("lid") = {3};
Physical Curve("walls") = {1, 2, 4};
Physical Surface("fluid") = {1};
Mesh.RandomSeed = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

// square_duct.geo -- straight duct of square cross-section, [0, L] x [-a, a] x [-a, a], tetrahedra.
//
// Physical groups (sub model parts of the same names):
//   surface "inlet"    x = 0: fixed pressure G L (velocity free)
//   surface "outlet"   x = L: p = 0 (velocity free)
//   surface "walls"    y = +-a, z = +-a: no slip
//   volume  "fluid"
// With pressures fixed at both ends the fully developed flow is the exact solution everywhere
// (no entrance length): the solver applies the traction -p n of the prescribed pressure on the
// open ends, and du/dn = 0 there.
// Structured: the n x n triangulated inlet face extruded in nx layers, each prism split into
// three tetrahedra.
//   gmsh -3 square_duct.geo -o square_duct.msh
If (!Exists(L))
  L = 1.0;
EndIf
If (!Exists(a))
  a = 0.5;
EndIf
If (!Exists(nx))
  nx = 4;
EndIf
If (!Exists(n))
  n = 16;
EndIf

Point(1) = {0, -a, -a};
Point(2) = {0, a, -a};
Point(3) = {0, a, a};
Point(4) = {0, -a, a};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 2, 3, 4} = n + 1;
Transfinite Surface {1};
out[] = Extrude {L, 0, 0} { Surface{1}; Layers{nx}; };
// out[0]: the outlet face, out[1]: the volume, out[2..5]: the side walls.
Transfinite Volume {out[1]};

Physical Surface("inlet") = {1};
Physical Surface("outlet") = {out[0]};
Physical Surface("walls") = {out[2], out[3], out[4], out[5]};
Physical Volume("fluid") = {out[1]};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

// ahmed_body.geo -- half Ahmed body (25 deg slant) on stilts in a wind-tunnel box, tetrahedra.
//
// Units: metres.  x streamwise (nose at x = 0), y spanwise (symmetry plane y = 0, body on
// y >= 0), z up (tunnel floor z = 0).  Dimensions from ../../../shared/reference/ahmed_body.csv:
// L 1044, H 288, W 389 mm, front edges rounded with R 100 mm, ground clearance 50 mm, rear
// slant 222 mm long measured ALONG the slanted face (horizontal projection 222 cos 25 deg =
// 201.2 mm, drop 93.8 mm), 4 stilts of diameter 30 mm (2 in the half model).  The stilt
// positions are our choice (not taken from Ahmed's drawing): centres 163 mm and 633 mm
// behind the nose, 119.5 mm off the symmetry plane.
//
// Physical groups (sub model parts of the same names):
//   surface "inlet"     x = -up      uniform velocity (ramped)
//   surface "outlet"    x = L + down p = 0
//   surface "floor"     z = 0        slip (stands in for a moving ground; see README.md)
//   surface "walls"     y = Wt, z = Ht (tunnel side and roof) slip
//   surface "symmetry"  y = 0        slip
//   surface "body"      the body and its stilts: no slip, forces
//   volume  "fluid"
// Mesh (the committed coarse mesh): gmsh -3 ahmed_body.geo -o ahmed_body.msh
// The case file refines it once at load time (model_import_settings.refinement_levels: 1).
SetFactory("OpenCASCADE");

If (!Exists(stilts))
  stilts = 1;           // 0: the body floats 50 mm above the floor (no legs)
EndIf
If (!Exists(h_body))
  h_body = 0.0205;      // element size on the body
EndIf
If (!Exists(h_stilt))
  h_stilt = 0.012;      // on the stilts (30 mm diameter: ~8 elements around)
EndIf
If (!Exists(h_wake))
  h_wake = 0.05;        // in the near wake box
EndIf
If (!Exists(h_far))
  h_far = 0.2;          // far field
EndIf

L = 1.044;  H = 0.288;  W = 0.389;  R = 0.100;  clr = 0.050;
slant_len = 0.222;  phi = 25 * Pi / 180;
sx = slant_len * Cos(phi);  sz = slant_len * Sin(phi);
d_stilt = 0.030;

up = 1.0 * L;           // tunnel inlet one body length ahead of the nose
down = 3.0 * L;         // outlet three body lengths behind the tail
Wt = 0.9;               // half width of the tunnel (blockage of the full body 5.3 %)
Ht = 1.2;               // tunnel height

eps = 1e-6;

// Body: box, rounded front edges, slant cut at the rear top.
Box(1) = {0, -W / 2, clr, L, W, H};
front() = Curve In BoundingBox {-eps, -W / 2 - eps, clr - eps, eps, W / 2 + eps, clr + H + eps};
fb() = Fillet{1}{front()}{R};
Point(1001) = {L - sx, -W, clr + H};
Point(1002) = {L + 0.01, -W, clr + H};
Point(1003) = {L + 0.01, -W, clr + H + 0.01};
Point(1004) = {L - sx - 0.01 * Cos(phi) / Sin(phi), -W, clr + H + 0.01};
Point(1005) = {L, -W, clr + H - sz};
Point(1006) = {L + 0.01, -W, clr + H - sz - 0.01 * Sin(phi) / Cos(phi)};
// Wedge above the slanted plane through (L - sx, clr + H) and (L, clr + H - sz).
Line(1001) = {1004, 1003};
Line(1002) = {1003, 1006};
Line(1003) = {1006, 1004};
Curve Loop(1001) = {1001, 1002, 1003};
Plane Surface(1001) = {1001};
wedge[] = Extrude {0, 2 * W, 0} { Surface{1001}; };
Recursive Delete { Point{1001, 1002, 1005}; }
body() = BooleanDifference{ Volume{fb(0)}; Delete; }{ Volume{wedge[1]}; Delete; };

If (stilts)
  xs[] = {0.163, 0.633};
  For i In {0 : 1}
    For s In {-1 : 1 : 2}
      c = newv;
      Cylinder(c) = {xs[i], s * 0.1195, -0.01, 0, 0, clr + 0.02, d_stilt / 2};
      body() = BooleanUnion{ Volume{body()}; Delete; }{ Volume{c}; Delete; };
    EndFor
  EndFor
EndIf

// Half model: keep y >= 0.
half = newv;
Box(half) = {-1, 0, -1, 3, 1, 3};
body() = BooleanIntersection{ Volume{body()}; Delete; }{ Volume{half}; Delete; };

tunnel = newv;
Box(tunnel) = {-up, 0, 0, up + L + down, Wt, Ht};
fluid() = BooleanDifference{ Volume{tunnel}; Delete; }{ Volume{body()}; Delete; };

inlet() = Surface In BoundingBox {-up - eps, -eps, -eps, -up + eps, Wt + eps, Ht + eps};
outlet() = Surface In BoundingBox {L + down - eps, -eps, -eps, L + down + eps, Wt + eps, Ht + eps};
floor() = Surface In BoundingBox {-up - eps, -eps, -eps, L + down + eps, Wt + eps, eps};
sym() = Surface In BoundingBox {-up - eps, -eps, -eps, L + down + eps, eps, Ht + eps};
side() = Surface In BoundingBox {-up - eps, Wt - eps, -eps, L + down + eps, Wt + eps, Ht + eps};
roof() = Surface In BoundingBox {-up - eps, -eps, Ht - eps, L + down + eps, Wt + eps, Ht + eps};
body_s() = Abs(Boundary{ Volume{fluid()}; });
body_s() -= {inlet(), outlet(), floor(), sym(), side(), roof()};
stilt_s() = Surface In BoundingBox {-eps, -eps, -eps, L + eps, Wt, clr - eps};
stilt_s() -= {floor()};

Physical Surface("inlet") = {inlet()};
Physical Surface("outlet") = {outlet()};
Physical Surface("floor") = {floor()};
Physical Surface("walls") = {side(), roof()};
Physical Surface("symmetry") = {sym()};
Physical Surface("body") = {body_s()};
Physical Volume("fluid") = {fluid()};

// Sizes: fine on the body, graded into a near-wake box, coarse far away.
Field[1] = Distance;
Field[1].SurfacesList = {body_s()};
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = h_body;
Field[2].SizeMax = h_far;
Field[2].DistMin = 0.02;
Field[2].DistMax = 0.9;
Field[3] = Box;
Field[3].VIn = h_wake;
Field[3].VOut = h_far;
Field[3].XMin = -0.1;  Field[3].XMax = L + 1.0;
Field[3].YMin = 0;     Field[3].YMax = W / 2 + 0.15;
Field[3].ZMin = 0;     Field[3].ZMax = clr + H + 0.15;
Field[3].Thickness = 0.4;
Field[4] = Distance;
Field[4].SurfacesList = {stilt_s()};
Field[5] = Threshold;
Field[5].InField = 4;
Field[5].SizeMin = h_stilt;
Field[5].SizeMax = h_far;
Field[5].DistMin = 0.005;
Field[5].DistMax = 0.12;
Field[6] = Min;
Field[6].FieldsList = {2, 3, 5};
Background Field = 6;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.Algorithm = 6;
Mesh.Algorithm3D = 1;
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 1;

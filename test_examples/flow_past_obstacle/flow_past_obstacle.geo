// flow_past_obstacle.geo -- Schaefer & Turek (1996) DFG benchmark channel with a circular
// cylinder (cases 2D-1, Re 20, and 2D-2, Re 100), unstructured triangles.
//
// Channel [0, 2.2] x [0, 0.41], cylinder of diameter D = 0.1 centred at (0.2, 0.2): the
// cylinder sits 0.005 below the channel's mid-line, as in the benchmark, which breaks the
// symmetry and lets shedding start without an artificial perturbation.
//
// Physical groups (sub model parts of the same names):
//   curve "inlet"     x = 0      parabolic u = 4 Um y (H - y) / H^2
//   curve "outlet"    x = 2.2    p = 0
//   curve "walls"     y = 0, y = H, no slip
//   curve "cylinder"  the circle, no slip; its force is written (compute_forces_process)
//   surface "fluid"
// The four channel corners belong to two groups each; the cases list the walls after the
// inlet, so the corner nodes are no-slip (the parabola is 0 there anyway).  The cylinder
// touches nothing else, so its reaction is the force on the cylinder alone.
//
// Sizes (all scaled by s; s = 1 is the committed coarse mesh flow_past_obstacle.msh):
//   h_cyl  = pi D / nc on the circle (nc = 48 segments at s = 1)
//   h_near grows from h_cyl with the distance from the circle to
//   h_wake in the wake box [0.1, 1.1] x [0.1, 0.31]  (the vortex street)
//   h_far  elsewhere.
//   gmsh -2 flow_past_obstacle.geo -o flow_past_obstacle.msh                 (s = 1)
//   gmsh -2 -setnumber s 0.5 flow_past_obstacle.geo -o flow_past_obstacle_s05.msh
If (!Exists(s))
  s = 1.0;
EndIf
L = 2.2;
H = 0.41;
D = 0.1;
xc = 0.2;
yc = 0.2;
r = D / 2;
nc = Round(48 / s);
h_cyl = Pi * D / nc;
h_wake = 0.016 * s;
h_far = 0.032 * s;

Point(1) = {0, 0, 0, h_far};
Point(2) = {L, 0, 0, h_far};
Point(3) = {L, H, 0, h_far};
Point(4) = {0, H, 0, h_far};
Line(1) = {1, 2};  // bottom wall
Line(2) = {2, 3};  // outlet
Line(3) = {3, 4};  // top wall
Line(4) = {4, 1};  // inlet

Point(5) = {xc, yc, 0, h_cyl};
Point(6) = {xc + r, yc, 0, h_cyl};
Point(7) = {xc, yc + r, 0, h_cyl};
Point(8) = {xc - r, yc, 0, h_cyl};
Point(9) = {xc, yc - r, 0, h_cyl};
Circle(5) = {6, 5, 7};
Circle(6) = {7, 5, 8};
Circle(7) = {8, 5, 9};
Circle(8) = {9, 5, 6};
Transfinite Curve {5, 6, 7, 8} = nc / 4 + 1;

Curve Loop(1) = {1, 2, 3, 4};
Curve Loop(2) = {5, 6, 7, 8};
Plane Surface(1) = {1, 2};

// Size: grows linearly from h_cyl at the circle to h_wake at 3 D from its centre...
Field[1] = Distance;
Field[1].CurvesList = {5, 6, 7, 8};
Field[1].NumPointsPerCurve = 200;
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = h_cyl;
Field[2].SizeMax = h_far;
Field[2].DistMin = 0.0;
Field[2].DistMax = 0.25;
// ... and is at most h_wake in the wake, which the vortices cross.
Field[3] = Box;
Field[3].VIn = h_wake;
Field[3].VOut = h_far;
Field[3].XMin = 0.1;
Field[3].XMax = 1.1;
Field[3].YMin = 0.1;
Field[3].YMax = 0.31;
Field[3].Thickness = 0.2;
Field[4] = Min;
Field[4].FieldsList = {2, 3};
Background Field = 4;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.Algorithm = 6;

Physical Curve("inlet") = {4};
Physical Curve("outlet") = {2};
Physical Curve("walls") = {1, 3};
Physical Curve("cylinder") = {5, 6, 7, 8};
Physical Surface("fluid") = {1};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

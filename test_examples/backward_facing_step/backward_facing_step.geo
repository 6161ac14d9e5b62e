// backward_facing_step.geo -- 2D channel expansion behind a backward-facing step, triangles.
//
// Lengths in units of the inlet channel height h_in (= 1).  The step face is x = 0,
// 0 <= y <= S; the inlet channel x in [-Lin, 0], S <= y <= S + 1, carries the fully developed
// parabolic profile imposed at x = -Lin (Lin = 0: imposed at the step); the outlet is x = L.
//   S     step height                     (Erturk: 1, expansion ratio 2;
//                                          Armaly: 4.9/5.2, ratio 10.1/5.2 = 1.942;
//                                          Gartling: 1 with L = 60, i.e. 30 channel heights)
//   L     channel length behind the step
//   Lf    length of the fine zone x in [0, Lf] (holds the recirculation bubbles)
//   dx    cell length at x = Lf; the cells shrink towards the step corner by the factor
//         `corner` (geometric progression over the fine zone) and grow geometrically from
//         dx over [Lf, L] to fill it with nx2 cells
//   ny    cells across each of the two layers (0..S and S..S+1), graded towards both of
//         their sides (Bump): the walls and the shear layer leaving the step corner
//   Lin   length of the inlet channel upstream of the step (default 5: the Erturk and Armaly
//         set-up; 0: none, Gartling's set-up).  Its cells grow upstream from corner*dx at
//         the step (the first cell behind it) by at most 10 % per cell; nin > 0 sets their number
// Structured quadrilaterals split into two triangles each (alternating diagonals).
// Physical groups (sub model parts): "inlet", "walls" (step face, lower and upper walls),
// "lower_wall" (y = 0), "upper_wall" (y = S + 1), "outlet", surface "fluid".
//   gmsh -2 backward_facing_step.geo -o backward_facing_step.msh
//   gmsh -2 -setnumber S 0.9423 -setnumber L 40 backward_facing_step.geo -o armaly.msh
//   gmsh -2 -setnumber Lin 0 -setnumber L 60 -setnumber Lf 24 backward_facing_step.geo -o gartling.msh
If (!Exists(S))
  S = 1.0;
EndIf
If (!Exists(L))
  L = 40.0;
EndIf
If (!Exists(Lf))
  Lf = 12.0;
EndIf
If (!Exists(dx))
  dx = 0.125;
EndIf
If (!Exists(ny))
  ny = 8;
EndIf
If (!Exists(corner))
  corner = 0.5;
EndIf
If (!Exists(nx2))
  nx2 = 24;
EndIf
If (!Exists(Lin))
  Lin = 5.0;
EndIf
If (!Exists(nin))
  nin = 0;
EndIf
If (!Exists(bump))
  bump = 0.5;
EndIf
H = S + 1.0;

// Fine zone: n1 cells whose lengths shrink geometrically from dx (at Lf) to corner*dx (at 0):
// mean cell length about dx*(1 + corner)/2.
n1 = Ceil(2.0 * Lf / (dx * (1.0 + corner)));
g1 = corner^(-1.0 / (n1 - 1));
// Outer zone: nx2 cells starting at dx and growing by r: dx (r^nx2 - 1)/(r - 1) = L - Lf,
// solved by fixed-point iteration r = (1 + (L - Lf)(r - 1)/dx)^(1/nx2) (a contraction for r > 1).
r = 1.1;
For it In {1:200}
  r = (1.0 + (L - Lf) * (r - 1.0) / dx)^(1.0 / nx2);
EndFor
If ((L - Lf) <= nx2 * dx)
  r = 1.0;
EndIf

Point(1) = {0, 0, 0};
Point(2) = {Lf, 0, 0};
Point(3) = {L, 0, 0};
Point(4) = {0, S, 0};
Point(5) = {Lf, S, 0};
Point(6) = {L, S, 0};
Point(7) = {0, H, 0};
Point(8) = {Lf, H, 0};
Point(9) = {L, H, 0};

// Horizontal lines, all left to right so that one progression fits all three rows.
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {4, 5};
Line(4) = {5, 6};
Line(5) = {7, 8};
Line(6) = {8, 9};
// Vertical lines, bottom to top.
Line(7) = {1, 4};
Line(8) = {2, 5};
Line(9) = {3, 6};
Line(10) = {4, 7};
Line(11) = {5, 8};
Line(12) = {6, 9};

Curve Loop(1) = {1, 8, -3, -7};
Plane Surface(1) = {1};
Curve Loop(2) = {2, 9, -4, -8};
Plane Surface(2) = {2};
Curve Loop(3) = {3, 11, -5, -10};
Plane Surface(3) = {3};
Curve Loop(4) = {4, 12, -6, -11};
Plane Surface(4) = {4};

Transfinite Curve {1, 3, 5} = n1 + 1 Using Progression g1;
Transfinite Curve {2, 4, 6} = nx2 + 1 Using Progression r;
Transfinite Curve {7, 8, 9, 10, 11, 12} = ny + 1 Using Bump bump;
Transfinite Surface {1, 2, 3, 4} Alternate;

If (Lin > 0)
  // Optional inlet channel x in [-Lin, 0], S <= y <= S + 1 (uniform cells in x), inlet at x = -Lin.
  Point(10) = {-Lin, S, 0};
  Point(11) = {-Lin, H, 0};
  Line(13) = {10, 4};
  Line(14) = {11, 7};
  Line(15) = {10, 11};
  Curve Loop(5) = {13, 10, -14, -15};
  Plane Surface(5) = {5};
  // Cells from corner*dx at the step growing by q upstream: corner*dx (q^nin - 1)/(q - 1) = Lin,
  // q solved by the same fixed-point iteration as r (nin from q = 1.1 unless given).
  h0 = corner * dx;
  If (nin <= 0)
    nin = Ceil(Log(1.0 + Lin * 0.1 / h0) / Log(1.1));
  EndIf
  q = 1.1;
  For it In {1:200}
    q = (1.0 + Lin * (q - 1.0) / h0)^(1.0 / nin);
  EndFor
  If (Lin <= nin * h0)
    q = 1.0;
  EndIf
  // Lines 13 and 14 run from x = -Lin to the step: the cells shrink by 1/q along them.
  Transfinite Curve {13, 14} = nin + 1 Using Progression 1.0 / q;
  Transfinite Curve {15} = ny + 1 Using Bump bump;
  Transfinite Surface {5} Alternate;
  Physical Curve("inlet") = {15};
  Physical Curve("walls") = {7, 1, 2, 5, 6, 13, 14};
  Physical Surface("fluid") = {1, 2, 3, 4, 5};
Else
  Physical Curve("inlet") = {10};
  Physical Curve("walls") = {7, 1, 2, 5, 6};
  Physical Surface("fluid") = {1, 2, 3, 4};
EndIf
Physical Curve("lower_wall") = {1, 2};
Physical Curve("upper_wall") = {5, 6};
Physical Curve("outlet") = {9, 12};
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;

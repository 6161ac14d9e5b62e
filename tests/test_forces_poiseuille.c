/* test_forces_poiseuille.c -- compute_forces_process against the momentum balance of steady
 * plane Poiseuille flow (test_examples/channel_forces, openmp_edge_based).
 *
 * In steady fully developed channel flow the shear force of the fluid on the two walls
 * between two sections equals the pressure drop between them times the channel height
 * (per unit depth): F_x = (p_a - p_b) H.  The measured wall part starts at the first wall
 * node after the inlet corner, whose control volume begins half a cell, x_a = h/2, from
 * the inlet (README.md of the case says why the corner is left out); the outlet section is
 * x_b = L.  p_a, p_b are the means over the sections of the P1 pressure, from the probe
 * CSV the run writes (41 points, so the trapezoidal rule integrates the piecewise linear
 * trace exactly: its kinks lie at multiples of H/20).
 *
 * Checks (argv[1] = output folder):
 *  - F_x within 1% of (p_a - p_b) H (the bound; measured 0.03%),
 *  - F_x within 1% of the exact 12 nu U (L - h/2) / H (same physics from the exact solution),
 *  - |F_y| < 1e-6 |F_x| (symmetry: the two walls' normal forces cancel to round-off),
 *  - the force history is steady: the last two rows agree to 1e-7 relative,
 *  - one force row per step (200), Cd = F_x / (0.5 rho U^2 A) = 2 F_x to 1e-9 relative
 *    (printed with 13 digits), and Kratos' compute_body_fitted_drag_process wrote the same
 *    F_x to the printed precision. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_error.h"

#include "ef_test.h"

#define L_CH 2.0
#define H_CH 1.0
#define NX 20
#define NU 0.1
#define U_MEAN 1.0
#define N_SECTION 41

/* Read the numeric rows of a CSV (header skipped) into a malloc'ed array of ncol doubles each. */
static int read_csv(const char *path, int ncol, double **out, int *nrow) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  char line[4096];
  int cap = 256, n = 0;
  double *v = malloc((size_t)cap * ncol * sizeof *v);
  if (!v || !fgets(line, sizeof line, f)) {
    fclose(f);
    free(v);
    return 1;
  }
  while (fgets(line, sizeof line, f)) {
    if (n == cap) {
      cap *= 2;
      double *g = realloc(v, (size_t)cap * ncol * sizeof *v);
      if (!g) {
        free(v);
        fclose(f);
        return 1;
      }
      v = g;
    }
    char *p = line;
    for (int c = 0; c < ncol; c++) {
      char *end;
      v[(size_t)n * ncol + c] = strtod(p, &end);
      if (end == p) {
        fprintf(stderr, "%s: row %d has fewer than %d columns\n", path, n + 2, ncol);
        free(v);
        fclose(f);
        return 1;
      }
      p = *end == ',' ? end + 1 : end;
    }
    n++;
  }
  fclose(f);
  *out = v;
  *nrow = n;
  return 0;
}

/* Mean pressure over section s (probes s*N_SECTION ...) of the last sample: trapezoidal rule in y. */
static double section_mean(const double *rows, int nrow, int s) {
  const int ncol = 9; /* time, probe, x, y, z, vx, vy, vz, p */
  const double *first = rows + (size_t)(nrow - 2 * N_SECTION + s * N_SECTION) * ncol;
  double sum = 0.0;
  for (int k = 0; k + 1 < N_SECTION; k++) {
    const double *a = first + (size_t)k * ncol, *b = a + ncol;
    sum += 0.5 * (a[8] + b[8]) * (b[3] - a[3]);
  }
  return sum / H_CH;
}

/* Run the case and compare the wall force with the pressure drop. */
int main(int argc, char **argv) {
  const char *out = argc > 1 ? argv[1] : "test_forces_poiseuille_output";
  ef_analysis_options o;
  ef_analysis_options_default(&o);
  o.applications = EF_DEFAULT_APPLICATIONS;
  o.output_folder = out;
  o.quiet = 1;
  ef_analysis a = NULL;
  int err = ef_analysis_create(EF_SOURCE_DIR "/test_examples/channel_forces/ProjectParameters.json", &o, &a);
  if (!err) err = ef_analysis_run(a);
  if (err) {
    fprintf(stderr, "run failed (%s): %s\n", ef_error_name(err), ef_error_message());
    ef_analysis_destroy(&a);
    return 1;
  }
  long steps = ef_analysis_step(a);
  ef_analysis_destroy(&a);

  char path[4096];
  double *forces = NULL, *drag = NULL, *probes = NULL;
  int nf = 0, nd = 0, np = 0;
  snprintf(path, sizeof path, "%s/wall_forces.csv", out);
  if (read_csv(path, 6, &forces, &nf)) return 1;
  snprintf(path, sizeof path, "%s/walls_measured_drag.csv", out);
  if (read_csv(path, 4, &drag, &nd)) return 1;
  snprintf(path, sizeof path, "%s/sections.csv", out);
  if (read_csv(path, 9, &probes, &np)) return 1;

  EXPECT(steps == 200 && nf == steps && nd == steps, "steps %ld, force rows %d, drag rows %d (expected 200 each)",
         steps, nf, nd);
  EXPECT(np == 2 * N_SECTION, "probe rows %d, expected %d (one sample at t = 1.6)", np, 2 * N_SECTION);
  if (nf >= 2 && np >= 2 * N_SECTION && nd >= 1) {
    const double *last = forces + (size_t)(nf - 1) * 6, *prev = last - 6;
    double fx = last[1], fy = last[2];
    double pa = section_mean(probes, np, 0), pb = section_mean(probes, np, 1);
    double xa = probes[(size_t)(np - 2 * N_SECTION) * 9 + 2], xb = probes[(size_t)(np - N_SECTION) * 9 + 2];
    double h = L_CH / NX;
    EXPECT(fabs(xa - 0.5 * h) < 1e-12 && fabs(xb - L_CH) < 1e-12, "sections at x = %g, %g; expected %g, %g", xa, xb,
           0.5 * h, L_CH);
    double balance = (pa - pb) * H_CH;
    EXPECT(fabs(fx / balance - 1.0) < 0.01, "F_x = %.9g vs (p_a - p_b) H = %.9g: relative error %.3g > 1%%", fx,
           balance, fx / balance - 1.0);
    double exact = 12.0 * NU * U_MEAN / (H_CH * H_CH) * (L_CH - 0.5 * h) * H_CH;
    EXPECT(fabs(fx / exact - 1.0) < 0.01, "F_x = %.9g vs exact %.9g: relative error %.3g > 1%%", fx, exact,
           fx / exact - 1.0);
    EXPECT(fabs(fy) < 1e-6 * fabs(fx), "F_y = %.3g is not ~0 (F_x = %.6g)", fy, fx);
    EXPECT(fabs(last[1] - prev[1]) < 1e-7 * fabs(fx), "force not steady: %.12g then %.12g", prev[1], last[1]);
    EXPECT(fabs(last[4] - 2.0 * fx) < 1e-9 * fabs(fx), "Cd = %.12g, expected 2 F_x = %.12g", last[4], 2.0 * fx);
    EXPECT(fabs(last[5] - 2.0 * fy) < 1e-9 * fabs(fx), "Cl = %.12g, expected 2 F_y = %.12g", last[5], 2.0 * fy);
    const double *dl = drag + (size_t)(nd - 1) * 4;
    EXPECT(dl[0] == last[0] && dl[1] == fx, "Kratos drag file: t = %.12g F_x = %.12g vs %.12g %.12g", dl[0], dl[1],
           last[0], fx);
  }
  free(forces);
  free(drag);
  free(probes);
  return failures ? 1 : 0;
}

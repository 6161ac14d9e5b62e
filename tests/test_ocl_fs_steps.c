/* test_ocl_fs_steps.c -- whole steps: the strategies "opencl_edge_based" and
 * "openmp_edge_based" side by side through their ef_strategy_ops, on
 *  - 2D: a jittered lid-driven cavity whose lid speeds up in time (time-dependent boundary
 *    values through the fixed-values callback), no fixed pressure (the null-space path),
 *    density 1.3 (pressure and reaction scaling);
 *  - 3D: a jittered cavity with a constant lid, two slip walls, gravity and one fixed
 *    pressure, its last pressure system exported at finalize.
 * The driver plays the analysis: time step from each strategy (they must agree), boundary
 * values written to the host at t + dt when the host copy is current (as the processes do),
 * an output-style read-back half-way (the device hook, then an upload of the host's
 * values), 20 steps with CG relative tolerance 1e-10 and check_every 1.
 * Checks: per step the time steps agree to 1e-12 (relative; a min over nodes of a norm and
 * two divisions), CG iterations within +-1; after 20 steps velocity, pressure and reaction
 * agree to a relative max-norm difference of 1e-7 (both CGs stop at 1e-10 from the same
 * start, so their iterates differ by rounding amplified by the conditioning, far below
 * this); the copied pressure system is consistent (rows sum to zero before elimination to
 * 64 eps of the row's absolute sum, fixed rows are identity rows, symmetric to 1e-13,
 * ||b - A x|| / ||b|| < 1e-6 for the solution); the exported file matches it; the run
 * summary has the device, SpMV, phase and solver blocks; bad device settings are refused.
 * --implicit: the same cases with viscous_time_integration "implicit" (IMEX ARS(3,4,3), the device stage
 * solves; docs/implicit_viscosity.md) at viscosity 0.5, so that nu dt / h_min^2 is 2-20 (the stiff range the
 * option is for): implicit_viscosity.correction "lumped" and "viscous" on both cavities (the 3D one with its
 * slip walls, no-slip walls, lid and fixed pressure; the 2D one with its time-dependent lid, i.e. prescribed
 * values at the stage times, and the null-space path), "viscous_unfiltered" and "rotational" on the 2D one;
 * the same checks and bounds, plus the run summary's viscous_solver block (stage CG iterations > 0); and
 * test (d) of test_fs_implicit_viscosity.c on both strategies (not with --tiny): the 2D channel rotated
 * by 30 deg, no-slip bottom, slip (face) top, pressure 0 at the ends, body force f along it, run to its
 * steady state (max |du/dt| <= 1e-10 on the OpenMP run) at the implicit automatic step, with its gates on
 * the OpenCL result: |u.n| <= 1e-12 on the slip wall, profile within 1 % of f/nu (y H - y^2/2), bottom
 * reaction within 3 % of f L H; and the two strategies within the bound above.  "converged" in the case
 * lists stands for correction "lumped" with implicit_viscosity.projection "converged" (fix (c): the PCG on
 * the consistent projection, its preconditioner the pressure solve) on both cavities (the 3D one with its
 * slip walls): the same checks, the fields within CONVERGED_BOUND, and the run summaries' projection PCG
 * iterations equal and > 0.
 * --tiny: 2 steps on the smallest meshes (for oclgrind; with --implicit "lumped" and "viscous").  --case C
 * (with --implicit): only the cavities' case C (e.g. "converged"), no slip channel.  --cache DIR: program cache.
 * --work-group-bits B: the OpenCL strategy's device.work_group_bits (work-groups of 2^B items; with --tiny, several
 * work-groups in every kernel, so that oclgrind sees the stage CG's groups hand its state on between launches).
 * --stage-cg-groups G: the OpenCL strategy's device.stage_cg_groups (the stage CG's vector kernels on G work-groups,
 * each looping over several blocks of nodes).
 * --implicit without --tiny and --case also checks that the stage CG's grid changes no bit (grid_identity).
 * --pressure-guess G: solver_settings.pressure_initial_guess G on both strategies (issue 12: the host's and the
 * device's guess, fs_pressure_guess, the same arithmetic, so the same checks and bounds hold); with --tiny, 3 steps
 * (a "quadratic" guess first runs on the third).
 * --verbose: print iterations and differences.
 * Skips (77) without an OpenCL device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_strategy.h"
#include "matrix_io.h"
#include "opencl_context.h"
#include "ef_test.h"
#include "ef_test_mesh.h"

static int verbose = 0; /* --verbose: print the differences */
static const char *pressure_guess = "previous"; /* --pressure-guess */
static int work_group_bits = 0; /* --work-group-bits: device.work_group_bits of the OpenCL strategy (0: automatic) */
static long long stage_cg_groups = 0; /* --stage-cg-groups: device.stage_cg_groups (0: automatic) */
/* The fields' bound with the projection "converged" (relative max norm after 20 steps): its PCG runs the
 * pressure solve to 1e-10 four to five times a step on each side; measured on PoCL at most 5.5e-13 (the 3D
 * cavity's reaction; velocity 1.5e-14, pressure 6.5e-14). */
#define CONVERGED_BOUND 1e-11
static const char *implicit_correction = NULL; /* --implicit: the correction of the case being run */
/* The slip channel of test (d) (test_fs_implicit_viscosity.c) instead of a cavity: rotation angle, length,
 * height, body force, viscosity. */
static int slip_channel = 0;
/* The case runs the projection "converged" (with the correction "lumped"). */
static int converged(void) { return implicit_correction && !strcmp(implicit_correction, "converged"); }
static const double ch_angle = 3.14159265358979323846 / 6.0, ch_L = 2.0, ch_H = 1.0, ch_f = 0.1, ch_nu = 0.1;

typedef struct {
  int dim;
  int64_t n;
  uint8_t *lid; /* 1 on lid nodes (velocity prescribed by the lid law) */
  uint8_t *wall; /* 1 on no-slip nodes */
  int64_t pressure_node; /* -1: none */
  int time_dependent;
} bc_spec;

/* Lid speed: constant 1 (3D) or 1 - exp(-t/0.02), which changes within every step (2D). */
static double lid_speed(const bc_spec *b, double t) {
  return b->time_dependent ? 1.0 - exp(-t / 0.02) : 1.0;
}

/* ef_fixed_values_fn: walls 0, lid (U(t), 0, 0), the reference pressure 0 (physical). */
static int fixed_values(void *ctx, double t, double *velocity, double *pressure) {
  const bc_spec *b = ctx;
  const double U = lid_speed(b, t);
  for (int64_t i = 0; i < b->n; ++i) {
    if (b->wall[i])
      for (int c = 0; c < 3; ++c)
        velocity[3 * i + c] = 0.0;
    else if (b->lid[i]) {
      velocity[3 * i] = U;
      velocity[3 * i + 1] = velocity[3 * i + 2] = 0.0;
    }
  }
  if (b->pressure_node >= 0 && pressure)
    pressure[b->pressure_node] = 0.0;
  return EF_SUCCESS;
}

typedef struct {
  ef_model_part mp;
  ef_parameters settings, summary;
  ef_strategy_config config;
  const ef_strategy_ops *ops;
  void *data;
} run;

/* Destroy a strategy run and what it owns. */
static void run_free(run *r) {
  if (r->ops && r->data)
    r->ops->destroy(&r->data);
  ef_model_part_destroy(&r->mp);
  ef_parameters_destroy(&r->settings);
  ef_parameters_destroy(&r->summary);
}

/* A model part of the mesh with the cavity's boundary conditions. */
static int make_model_part(const ef_test_mesh *m, bc_spec *b, ef_model_part *out) {
  ef_model_part mp;
  const int dim = m->dim;
  const int64_t n = m->n_nodes;
  ASSERT_OK(ef_model_part_create("FluidModelPart", dim, &mp));
  *out = mp;
  ASSERT_OK(ef_model_part_alloc_nodes(mp, n));
  memcpy(mp->coords, m->coords, 3 * (size_t)n * sizeof(double));
  ASSERT_OK(ef_model_part_alloc_elements(mp, m->n_elements, dim + 1));
  memcpy(mp->elements, m->elements, (size_t)m->n_elements * (dim + 1) * sizeof(int32_t));
  const char *names[] = {"VELOCITY", "PRESSURE", "BODY_FORCE", "REACTION", "NORMAL", "IS_SLIP", "SLIP_TANGENT"};
  const int comps[] = {3, 1, 3, 3, 3, 1, 3};
  for (int v = 0; v < 7; ++v)
    ASSERT_OK(ef_model_part_add_variable(mp, names[v], comps[v]));
  ef_variable *vel = ef_model_part_find_variable(mp, "VELOCITY"), *p = ef_model_part_find_variable(mp, "PRESSURE");
  ef_variable *bf = ef_model_part_find_variable(mp, "BODY_FORCE"), *slip = ef_model_part_find_variable(mp, "IS_SLIP");
  ef_variable *nrm = ef_model_part_find_variable(mp, "NORMAL");
  if (slip_channel) {
    /* No-slip bottom, slip top, p = 0 at the ends (not on the bottom wall), body force along the channel. */
    const double ca = cos(ch_angle), sa = sin(ch_angle);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t s = m->boundary[i];
      if (b->wall[i])
        vel->fixed[3 * i] = vel->fixed[3 * i + 1] = 1;
      else if (s & EF_TM_YMAX) {
        slip->values[i] = 1.0;
        nrm->values[3 * i] = -sa;
        nrm->values[3 * i + 1] = ca;
      }
      if ((s & (EF_TM_XMIN | EF_TM_XMAX)) && !b->wall[i])
        p->fixed[i] = 1;
      bf->values[3 * i] = ch_f * ca;
      bf->values[3 * i + 1] = ch_f * sa;
    }
    return 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (b->wall[i] || b->lid[i])
      for (int c = 0; c < 3; ++c)
        vel->fixed[3 * i + c] = 1;
    if (dim == 3) {
      bf->values[3 * i + 2] = -1.0;
      const uint8_t s = m->boundary[i];
      if (!b->wall[i] && !b->lid[i] && (s == EF_TM_YMIN || s == EF_TM_YMAX)) {
        slip->values[i] = 1.0;
        nrm->values[3 * i + 1] = s == EF_TM_YMIN ? -1.0 : 1.0;
      }
    }
    /* A non-trivial initial pressure, so p_n enters the first step. */
    p->values[i] = 0.1 * mp->coords[3 * i + 1];
  }
  if (b->pressure_node >= 0) {
    p->fixed[b->pressure_node] = 1;
    p->values[b->pressure_node] = 0.0;
  }
  /* The initial boundary values (the analysis applies them before initialize). */
  ASSERT_OK(fixed_values(b, 0.0, vel->values, p->values));
  return 0;
}

/* Create and initialize one strategy on its own copy of the model part. */
static int start(run *r, const char *name, const ef_test_mesh *m, bc_spec *b, double density, const char *export_path,
                 int tiny) {
  memset(r, 0, sizeof *r);
  if (make_model_part(m, b, &r->mp))
    return 1;
  char json[2048];
  snprintf(json, sizeof json,
           "{\"solver_type\": \"%s\", \"time_stepping\": {\"automatic_time_step\": true, \"CFL_number\": 0.8,"
           " \"time_step\": 0.0, \"minimum_delta_time\": 1e-12, \"maximum_delta_time\": 1e30},"
           " \"stabilization\": {\"tau_c1\": 1.0, \"tau_c2\": 4.0, \"tau_c3\": 2.0, \"use_oss\": true},"
           " \"divergence_velocity_bound\": 1e6, \"viscous_time_integration\": \"%s\","
           " \"pressure_initial_guess\": \"%s\","
           " \"implicit_viscosity\": {\"tolerance\": 1e-10, \"max_iteration\": 10000,"
           " \"maximum_viscous_number\": 100.0, \"correction\": \"%s\", \"projection\": \"%s\","
           " \"check_every\": %d},"
           " \"linear_solver_settings\": {\"solver_type\": \"cg\", \"tolerance\": 1e-10, \"max_iteration\": 5000,"
           " \"check_every\": 1, \"cg_variant\": \"standard\", \"autotune\": %s, \"export_pressure_system\": \"%s\"},"
           " \"device\": {\"verbose\": 0, \"work_group_bits\": %d, \"stage_cg_groups\": %lld}}",
           name, implicit_correction ? "implicit" : "explicit", pressure_guess,
           implicit_correction && strcmp(implicit_correction, "converged") ? implicit_correction : "lumped",
           converged() ? "converged" : "single", tiny ? 1 : 4, tiny ? "false" : "true", export_path ? export_path : "",
           work_group_bits, stage_cg_groups);
  ASSERT_OK(ef_parameters_parse(json, "test solver_settings", &r->settings));
  ASSERT_OK(ef_parameters_parse("{}", "test summary", &r->summary));
  ASSERT_OK(ef_registry_find_strategy(name, &r->ops));
  r->config.model_part = r->mp;
  r->config.settings = r->settings;
  r->config.density = density;
  r->config.kinematic_viscosity = slip_channel ? ch_nu : implicit_correction ? 0.5 : 0.01;
  r->config.fixed_values = fixed_values;
  r->config.fixed_values_context = b;
  r->config.time_dependent_bcs = b->time_dependent;
  r->config.summary = r->summary;
  ASSERT_OK(r->ops->create(&r->config, &r->data));
  ASSERT_OK(r->ops->initialize(r->data));
  return 0;
}

/* The processes' part before a step: prescribed values of t + dt on the host copy, when it is current. */
static int before_step(run *r, bc_spec *b, double t) {
  if (r->mp->device_newer)
    return 0;
  ef_variable *vel = ef_model_part_find_variable(r->mp, "VELOCITY"),
              *p = ef_model_part_find_variable(r->mp, "PRESSURE");
  ASSERT_OK(fixed_values(b, t, vel->values, p->values));
  if (b->time_dependent)
    ASSERT_OK(ef_model_part_mark_modified(r->mp, "VELOCITY"));
  return 0;
}

/* max |a - b| / max |b| over count values. */
static double rel_diff(const double *a, const double *b, int64_t count) {
  double d = 0.0, s = 0.0;
  for (int64_t q = 0; q < count; ++q) {
    d = fmax(d, fabs(a[q] - b[q]));
    s = fmax(s, fabs(b[q]));
  }
  return s > 0.0 ? d / s : d;
}

/* The consistency of a copied pressure system; solved = 0: the solution was changed after the solve (the
 * implicit option's "rotational" correction), its residual is not checked. */
static int check_system(const ef_pressure_system *ps, int64_t n, int solved) {
  ASSERT(ps->n == n && ps->row_ptr && ps->col && ps->values && ps->values_full && ps->rhs && ps->solution &&
             ps->initial_guess && ps->fixed,
         "incomplete pressure system copy (n %lld)", (long long)ps->n);
  /* (The slip channel ends at its steady state, where the warm start may already be converged.) */
  ASSERT(ps->tolerance == 1e-10 && (ps->iterations > 0 || slip_channel), "tolerance %g, iterations %d", ps->tolerance,
         ps->iterations);
  double rr = 0.0, bb = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0.0, abs_sum = 0.0, ax = 0.0;
    for (int64_t k = ps->row_ptr[i]; k < ps->row_ptr[i + 1]; ++k) {
      const int64_t j = ps->col[k];
      sum += ps->values_full[k];
      abs_sum += fabs(ps->values_full[k]);
      ax += ps->values[k] * ps->solution[j];
      if (ps->fixed[i]) {
        ASSERT(ps->values[k] == (j == i ? 1.0 : 0.0), "fixed row %lld is not an identity row", (long long)i);
      } else {
        /* Symmetry: find the transposed entry. */
        double t = NAN;
        for (int64_t q = ps->row_ptr[j]; q < ps->row_ptr[j + 1]; ++q)
          if (ps->col[q] == i)
            t = ps->values[q];
        ASSERT(ps->fixed[j] ? ps->values[k] == 0.0 : fabs(t - ps->values[k]) <= 1e-13 * fabs(ps->values[k]),
               "H(%lld,%lld) = %.17g, H(%lld,%lld) = %.17g", (long long)i, (long long)j, ps->values[k], (long long)j,
               (long long)i, t);
      }
    }
    ASSERT(fabs(sum) <= 64.0 * DBL_EPSILON * abs_sum, "row %lld of H before elimination sums to %g (|row| %g)",
           (long long)i, sum, abs_sum);
    rr += (ps->rhs[i] - ax) * (ps->rhs[i] - ax);
    bb += ps->rhs[i] * ps->rhs[i];
    if (ps->fixed[i])
      ASSERT(ps->initial_guess[i] == ps->rhs[i] && ps->solution[i] == ps->rhs[i],
             "fixed row %lld: rhs %g, warm start %g, solution %g", (long long)i, ps->rhs[i], ps->initial_guess[i],
             ps->solution[i]);
  }
  ASSERT(!solved || sqrt(rr) <= 1e-6 * sqrt(bb), "||b - A x|| / ||b|| = %g", sqrt(rr / bb));
  return 0;
}

/* Run both strategies for `steps` steps on one mesh and compare. */
static int compare_case(const char *label, const ef_test_mesh *m, bc_spec *b, double density, int steps,
                        const char *export_path, int tiny) {
  run cl, mp;
  if (start(&mp, "openmp_edge_based", m, b, density, NULL, tiny))
    return 1;
  int rc = start(&cl, "opencl_edge_based", m, b, density, export_path, tiny);
  if (rc) {
    run_free(&mp);
    return rc;
  }
  const int64_t n = m->n_nodes;
  double t = 0.0;
  double *uold = malloc(3 * (size_t)n * sizeof *uold);
  ASSERT(uold, "out of memory");
  for (int step = 1; step <= steps; ++step) {
    const double *ump = ef_model_part_find_variable(mp.mp, "VELOCITY")->values;
    memcpy(uold, ump, 3 * (size_t)n * sizeof *uold);
    double dt_cl, dt_mp;
    ASSERT_OK(cl.ops->compute_time_step(cl.data, &dt_cl));
    ASSERT_OK(mp.ops->compute_time_step(mp.data, &dt_mp));
    /* The channel's hundreds of steps accumulate the stage solves' differences (each stops at 1e-10) into the
     * velocity the convective step follows: there the fields' bound. */
    ASSERT(fabs(dt_cl - dt_mp) <= (slip_channel ? 1e-7 : 1e-12) * dt_mp,
           "%s step %d: time step %.17g (OpenCL) vs %.17g (OpenMP)", label,
           step, dt_cl, dt_mp);
    if (before_step(&cl, b, t + dt_mp) || before_step(&mp, b, t + dt_mp))
      return 1;
    ef_step_info icl, imp;
    memset(&icl, 0, sizeof icl);
    memset(&imp, 0, sizeof imp);
    ASSERT_OK(cl.ops->solve_step(cl.data, t, dt_mp, &icl));
    ASSERT_OK(mp.ops->solve_step(mp.data, t, dt_mp, &imp));
    if (verbose)
      printf("%s step %d: dt %.6g, CG iterations %d / %d\n", label, step, dt_mp, icl.pressure_iterations,
             imp.pressure_iterations);
    /* (Not in the channel: near its steady state the warm-started solves take a handful of iterations, as
     * many as rounding decides.) */
    ASSERT(slip_channel || (abs(icl.pressure_iterations - imp.pressure_iterations) <= 1 && icl.pressure_iterations > 0),
           "%s step %d: CG iterations %d (OpenCL) vs %d (OpenMP)", label, step, icl.pressure_iterations,
           imp.pressure_iterations);
    ASSERT(cl.mp->device_newer == 1, "%s: the device copy is not marked newer", label);
    t += dt_mp;
    if (step == steps / 2)
      ASSERT_OK(ef_model_part_sync_to_host(cl.mp)); /* an output step */
    if (slip_channel) {
      /* Steady state of the OpenMP run (the host arrays are its state): max |du/dt| <= 1e-10. */
      double change = 0.0;
      for (int64_t q = 0; q < 3 * n; ++q)
        change = fmax(change, fabs(ump[q] - uold[q]) / dt_mp);
      if (change <= 1e-10) {
        if (verbose)
          printf("%s: steady after %d steps (t = %.4g, dt %.4g)\n", label, step, t, dt_mp);
        break;
      }
      ASSERT(step < steps, "%s: not steady after %d steps (change %.3e)", label, steps, change);
    }
  }
  free(uold);
  ASSERT_OK(ef_model_part_sync_to_host(cl.mp));
  ASSERT_OK(ef_model_part_sync_to_host(mp.mp));
  const char *vars[] = {"VELOCITY", "PRESSURE", "REACTION"};
  const int comps[] = {3, 1, 3};
  for (int v = 0; v < 3; ++v) {
    const double d = rel_diff(ef_model_part_find_variable(cl.mp, vars[v])->values,
                              ef_model_part_find_variable(mp.mp, vars[v])->values, comps[v] * n);
    if (verbose)
      printf("%s: %s relative max-norm difference %.3e\n", label, vars[v], d);
    const double bound = converged() ? CONVERGED_BOUND : 1e-7;
    ASSERT(d <= bound, "%s after %d steps: %s differs by %.3e (relative max norm, bound %.0e)", label, steps, vars[v],
           d, bound);
  }
  double umax = 0.0;
  for (int64_t q = 0; q < 3 * n; ++q)
    umax = fmax(umax, fabs(ef_model_part_find_variable(cl.mp, "VELOCITY")->values[q]));
  ASSERT(umax > 0.1, "%s: the flow did not start (max |u| %g)", label, umax);
  if (slip_channel) {
    /* Test (d)'s gates on the OpenCL state. */
    const double *u = ef_model_part_find_variable(cl.mp, "VELOCITY")->values;
    const double *rc = ef_model_part_find_variable(cl.mp, "REACTION")->values;
    const double *nrm = ef_model_part_find_variable(cl.mp, "NORMAL")->values;
    const double *isl = ef_model_part_find_variable(cl.mp, "IS_SLIP")->values;
    const double e0 = cos(ch_angle), e1 = sin(ch_angle), peak = ch_f * ch_H * ch_H / (2.0 * ch_nu);
    double un = 0.0, perr = 0.0, rx = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double x = cl.mp->coords[3 * i], y = -e1 * x + e0 * cl.mp->coords[3 * i + 1];
      const double ue = ch_f / ch_nu * (ch_H * y - 0.5 * y * y), ut = u[3 * i] * e0 + u[3 * i + 1] * e1;
      perr = fmax(perr, fabs(ut - ue) / peak);
      if (isl[i] > 0.5)
        un = fmax(un, fabs(u[3 * i] * nrm[3 * i] + u[3 * i + 1] * nrm[3 * i + 1]));
      if (b->wall[i]) /* REACTION is the force the wall exerts on the fluid: minus the executor's */
        rx -= rc[3 * i] * e0 + rc[3 * i + 1] * e1;
    }
    if (verbose)
      printf("%s: max |u.n| %.2e, profile error %.3e of u_max, bottom reaction %.5g vs f L H %.5g\n", label, un,
             perr, rx, ch_f * ch_L * ch_H);
    ASSERT(un <= 1e-12, "%s: |u.n| = %.3e on the slip wall", label, un);
    ASSERT(perr <= 0.01, "%s: profile error %.4f of u_max", label, perr);
    ASSERT(fabs(rx - ch_f * ch_L * ch_H) <= 0.03 * ch_f * ch_L * ch_H, "%s: bottom-wall reaction %.6g, expected %.6g",
           label, rx, ch_f * ch_L * ch_H);
  }

  ef_pressure_system ps;
  ASSERT(cl.ops->copy_pressure_system, "no copy_pressure_system");
  ASSERT_OK(cl.ops->copy_pressure_system(cl.data, &ps));
  if (check_system(&ps, n, !(implicit_correction && !strcmp(implicit_correction, "rotational")) && !converged()))
    return 1;
  ASSERT_OK(cl.ops->finalize(cl.data));
  ASSERT_OK(mp.ops->finalize(mp.data));
  const char *keys[] = {"device", "spmv", "phases", "pressure_solver"};
  for (int k = 0; k < 4; ++k)
    ASSERT(ef_parameters_has(cl.summary, keys[k]), "run summary lacks '%s'", keys[k]);
  if (implicit_correction) {
    long its[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      ef_parameters vs;
      ASSERT_OK(ef_parameters_get(k ? mp.summary : cl.summary, "viscous_solver", &vs));
      ASSERT_OK(ef_parameters_get_int(vs, "cg_iterations", &its[k]));
    }
    if (verbose)
      printf("%s: viscous CG iterations %ld (OpenCL) / %ld (OpenMP)\n", label, its[0], its[1]);
    ASSERT(its[0] > 0 && its[1] > 0, "%s: viscous CG iterations %ld (OpenCL) / %ld (OpenMP)", label, its[0], its[1]);
    long pits[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      ef_parameters vs;
      ASSERT_OK(ef_parameters_get(k ? mp.summary : cl.summary, "viscous_solver", &vs));
      ASSERT(ef_parameters_has(vs, "projection_iterations") == converged(), "%s: projection_iterations %s", label,
             converged() ? "missing" : "reported without the converged projection");
      if (converged())
        ASSERT_OK(ef_parameters_get_int(vs, "projection_iterations", &pits[k]));
    }
    if (verbose && converged())
      printf("%s: projection PCG iterations %ld (OpenCL) / %ld (OpenMP)\n", label, pits[0], pits[1]);
    ASSERT(!converged() || (pits[0] == pits[1] && pits[0] > 0),
           "%s: projection PCG iterations %ld (OpenCL) / %ld (OpenMP)", label, pits[0], pits[1]);
  }
  if (export_path) {
    ef_linear_system *sys = NULL;
    ASSERT_OK(ef_linear_system_read(export_path, &sys));
    ef_csr_matrix A = ef_linear_system_matrix(sys);
    ASSERT(A.n == ps.n && A.nnz == ps.nnz, "exported system has n %lld, nnz %lld", (long long)A.n, (long long)A.nnz);
    for (int64_t k = 0; k < A.nnz; ++k)
      ASSERT(A.values[k] == ps.values[k], "exported value %lld differs", (long long)k);
    ef_linear_system_destroy(&sys);
  }
  ef_pressure_system_free(&ps);
  run_free(&cl);
  run_free(&mp);
  return 0;
}

/* Boundary sets of the cavities: lid = top face without its rim, walls = the other boundary
 * nodes (2D: all; 3D: all but the slip faces y = 0, 1). */
static int make_bc(const ef_test_mesh *m, bc_spec *b) {
  const int dim = m->dim;
  const int64_t n = m->n_nodes;
  const uint8_t top = dim == 3 ? EF_TM_ZMAX : EF_TM_YMAX;
  memset(b, 0, sizeof *b);
  b->dim = dim;
  b->n = n;
  b->lid = calloc((size_t)n, 1);
  b->wall = calloc((size_t)n, 1);
  if (!b->lid || !b->wall)
    return 1;
  b->pressure_node = -1;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t s = m->boundary[i];
    if (s == top)
      b->lid[i] = 1;
    else if (s && (dim == 2 || (s != EF_TM_YMIN && s != EF_TM_YMAX)))
      b->wall[i] = 1;
  }
  return 0;
}

/* The stage CG's grid changes no bit: the 3D cavity (slip walls, lid, a fixed pressure), implicit, correction
 * "lumped", 3 steps of the OpenCL strategy with 8-item work-groups (43 blocks of 8 nodes) and device.stage_cg_groups
 * 1e9 (one work-group a block, as before the grid), 1 (one work-group loops over all blocks) and 5 (uneven
 * shares): velocity, pressure and reaction equal bit for bit, the stage CG iterations equal. */
static int grid_identity(void) {
  ef_test_mesh m;
  ASSERT(ef_test_mesh_3d(6, 6, 6, 1.0, 1.0, 1.0, 0.2, 9, &m) == 0, "mesh generation failed");
  bc_spec b;
  ASSERT(make_bc(&m, &b) == 0, "out of memory");
  for (int64_t i = 0; i < m.n_nodes; ++i)
    if (m.boundary[i] == (EF_TM_XMAX | EF_TM_YMIN | EF_TM_ZMIN))
      b.pressure_node = i;
  const int64_t n = m.n_nodes;
  ASSERT(n > 5 * 8 * 2, "%lld nodes: too few blocks for the grids", (long long)n);
  const long long grids[3] = {1000000000LL, 1, 5};
  const char *vars[] = {"VELOCITY", "PRESSURE", "REACTION"};
  const int comps[] = {3, 1, 3};
  double *ref[3];
  for (int v = 0; v < 3; ++v) {
    ref[v] = malloc((size_t)(comps[v] * n) * sizeof *ref[v]);
    ASSERT(ref[v], "out of memory");
  }
  long ref_its = 0;
  const int saved_bits = work_group_bits;
  const char *saved_correction = implicit_correction;
  work_group_bits = 3;
  implicit_correction = "lumped";
  for (int g = 0; g < 3; ++g) {
    stage_cg_groups = grids[g];
    run cl;
    if (start(&cl, "opencl_edge_based", &m, &b, 1.0, NULL, 0))
      return 1;
    double t = 0.0;
    for (int step = 1; step <= 3; ++step) {
      double dt;
      ASSERT_OK(cl.ops->compute_time_step(cl.data, &dt));
      if (before_step(&cl, &b, t + dt))
        return 1;
      ef_step_info info;
      memset(&info, 0, sizeof info);
      ASSERT_OK(cl.ops->solve_step(cl.data, t, dt, &info));
      t += dt;
    }
    ASSERT_OK(ef_model_part_sync_to_host(cl.mp));
    ASSERT_OK(cl.ops->finalize(cl.data));
    ef_parameters vs;
    long its = 0;
    ASSERT_OK(ef_parameters_get(cl.summary, "viscous_solver", &vs));
    ASSERT_OK(ef_parameters_get_int(vs, "cg_iterations", &its));
    if (verbose)
      printf("stage CG grid %lld: %ld stage CG iterations\n", grids[g], its);
    for (int v = 0; v < 3; ++v) {
      const double *x = ef_model_part_find_variable(cl.mp, vars[v])->values;
      if (g == 0)
        memcpy(ref[v], x, (size_t)(comps[v] * n) * sizeof *x);
      else
        ASSERT(!memcmp(ref[v], x, (size_t)(comps[v] * n) * sizeof *x),
               "stage CG on %lld work-groups: %s differs from one work-group a block (max %.3e relative)", grids[g],
               vars[v], rel_diff(x, ref[v], comps[v] * n));
    }
    ASSERT(its > 0 && (g == 0 || its == ref_its), "stage CG on %lld work-groups: %ld iterations, one a block: %ld",
           grids[g], its, ref_its);
    if (g == 0)
      ref_its = its;
    run_free(&cl);
  }
  work_group_bits = saved_bits;
  implicit_correction = saved_correction;
  stage_cg_groups = 0;
  for (int v = 0; v < 3; ++v)
    free(ref[v]);
  free(b.lid);
  free(b.wall);
  ef_test_mesh_free(&m);
  return 0;
}

int main(int argc, char **argv) {
  int tiny = 0;
  const char *cache = NULL, *only_case = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--tiny"))
      tiny = 1;
    else if (!strcmp(argv[i], "--case") && i + 1 < argc)
      only_case = argv[++i];
    else if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (!strcmp(argv[i], "--implicit"))
      implicit_correction = "lumped";
    else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
      cache = argv[++i];
    else if (!strcmp(argv[i], "--work-group-bits") && i + 1 < argc)
      work_group_bits = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--stage-cg-groups") && i + 1 < argc)
      stage_cg_groups = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--pressure-guess") && i + 1 < argc)
      pressure_guess = argv[++i];
  }
  if (cache)
    setenv("EDGEFLOW_CACHE_DIR", cache, 1);
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) {
    fprintf(stderr, "no OpenCL device: skipping\n");
    return EF_TEST_SKIP;
  }
  ASSERT_OK(ef_registry_load_application("fluid"));

  /* Bad device settings are refused with the path in the message; so are the implicit option's check_every
   * out of range, its pressure "extrapolated" (fix (b): OpenMP only) and the projection "converged" with a
   * correction other than "lumped" (as on OpenMP). */
  static const struct {
    const char *vti, *iv, *device;
    int err;
    const char *needle;
  } bad[] = {
      {"explicit", "", "{\"type\": \"fpga\"}", EF_ERR_PARAMETER, "fpga"},
      {"explicit", "", "{\"stage_cg_groups\": -1}", EF_ERR_PARAMETER, "stage_cg_groups"},
      {"implicit", ", \"check_every\": 0", "{}", EF_ERR_PARAMETER, "check_every"},
      {"implicit", ", \"pressure\": \"extrapolated\"", "{}", EF_ERR_UNSUPPORTED, "extrapolated"},
      {"implicit", ", \"projection\": \"converged\", \"correction\": \"viscous\"", "{}", EF_ERR_PARAMETER,
       "needs correction \"lumped\""},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    ef_model_part mp = NULL;
    ef_parameters st = NULL, sum = NULL;
    char json[1024];
    snprintf(json, sizeof json,
             "{\"time_stepping\": {\"automatic_time_step\": true, \"CFL_number\": 1.0,"
             " \"time_step\": 0.0, \"minimum_delta_time\": 1e-9, \"maximum_delta_time\": 1.0},"
             " \"stabilization\": {\"tau_c1\": 1.0, \"tau_c2\": 4.0, \"tau_c3\": 2.0,"
             " \"use_oss\": true}, \"divergence_velocity_bound\": 1e6,"
             " \"viscous_time_integration\": \"%s\", \"implicit_viscosity\": {\"tolerance\": 1e-10,"
             " \"max_iteration\": 10000, \"maximum_viscous_number\": 100.0%s},"
             " \"linear_solver_settings\": {}, \"device\": %s}",
             bad[k].vti, bad[k].iv, bad[k].device);
    ASSERT_OK(ef_parameters_parse(json, "bad", &st));
    ASSERT_OK(ef_parameters_parse("{}", "summary", &sum));
    ASSERT_OK(ef_model_part_create("FluidModelPart", 2, &mp));
    const char *names[] = {"VELOCITY", "PRESSURE", "REACTION"};
    const int comps[] = {3, 1, 3};
    for (int v = 0; v < 3; ++v)
      ASSERT_OK(ef_model_part_add_variable(mp, names[v], comps[v]));
    const ef_strategy_ops *ops;
    ASSERT_OK(ef_registry_find_strategy("opencl_edge_based", &ops));
    ef_strategy_config c;
    memset(&c, 0, sizeof c);
    c.model_part = mp;
    c.settings = st;
    c.density = 1.0;
    c.kinematic_viscosity = 0.01;
    c.summary = sum;
    void *data = NULL;
    const int err = ops->create(&c, &data);
    ASSERT(err == bad[k].err && strstr(ef_error_message(), bad[k].needle) && !data, "refusal %zu ('%s'): %d '%s'", k,
           bad[k].needle, err, ef_error_message());
    ef_error_clear();
    ef_model_part_destroy(&mp);
    ef_parameters_destroy(&st);
    ef_parameters_destroy(&sum);
  }

  char export_path[1024];
  snprintf(export_path, sizeof export_path, "%s/ocl_fs_steps_pressure.bin", cache ? cache : ".");
  if (cache)
    mkdir(cache, 0755);
  const int steps = tiny ? (strcmp(pressure_guess, "previous") ? 3 : 2) : 20;
  /* The corrections of each dimension (explicit: one pass). */
  /* ("converged": the correction "lumped" with the projection "converged".) */
  const char *corrections[2][5] = {{"lumped", "converged", "viscous", "viscous_unfiltered", "rotational"},
                                   {"lumped", "converged", "viscous"}};
  const int n_corrections[2] = {implicit_correction ? (tiny ? 3 : 5) : 1, implicit_correction ? 3 : 1};
  for (int pass = 0; pass < 2 * 5; ++pass) {
    const int dim = 2 + pass / 5, ci = pass % 5;
    if (ci >= n_corrections[dim - 2])
      continue;
    /* --case: that case only; --tiny without it leaves "converged" to its own oclgrind run (time). */
    if (implicit_correction && (only_case ? strcmp(corrections[dim - 2][ci], only_case) != 0
                                          : tiny && !strcmp(corrections[dim - 2][ci], "converged")))
      continue;
    if (implicit_correction)
      implicit_correction = corrections[dim - 2][ci];
    char label[128];
    snprintf(label, sizeof label, "%s cavity%s%s", dim == 2 ? "2D" : "3D", implicit_correction ? ", implicit, " : "",
             implicit_correction ? implicit_correction : "");
    ef_test_mesh m;
    int rc = dim == 2 ? ef_test_mesh_2d(tiny ? 4 : 14, tiny ? 4 : 14, 1.0, 1.0, 0.2, 7, &m)
                      : ef_test_mesh_3d(tiny ? 3 : 6, tiny ? 3 : 6, tiny ? 3 : 6, 1.0, 1.0, 1.0, 0.2, 9, &m);
    ASSERT(rc == 0, "mesh generation failed");
    bc_spec b;
    ASSERT(make_bc(&m, &b) == 0, "out of memory");
    b.time_dependent = dim == 2;
    if (dim == 3)
      for (int64_t i = 0; i < m.n_nodes; ++i)
        if (m.boundary[i] == (EF_TM_XMAX | EF_TM_YMIN | EF_TM_ZMIN))
          b.pressure_node = i;
    rc = compare_case(label, &m, &b, dim == 2 ? 1.3 : 1.0, steps,
                      dim == 3 ? export_path : NULL, tiny);
    free(b.lid);
    free(b.wall);
    ef_test_mesh_free(&m);
    if (rc)
      return rc;
  }
  if (implicit_correction && !tiny && !only_case && grid_identity())
    return 1;
  if (implicit_correction && !tiny && !only_case) {
    /* Test (d) of test_fs_implicit_viscosity.c: the 30 deg slip channel, "lumped" and "viscous". */
    slip_channel = 1;
    for (int k = 0; k < 2; ++k) {
      implicit_correction = k ? "viscous" : "lumped";
      ef_test_mesh m;
      ASSERT(ef_test_mesh_2d(20, 10, ch_L, ch_H, 0.0, 1, &m) == 0, "mesh generation failed");
      const double ca = cos(ch_angle), sa = sin(ch_angle);
      for (int64_t i = 0; i < m.n_nodes; ++i) {
        const double x = m.coords[3 * i], y = m.coords[3 * i + 1];
        m.coords[3 * i] = ca * x - sa * y;
        m.coords[3 * i + 1] = sa * x + ca * y;
      }
      bc_spec b;
      memset(&b, 0, sizeof b);
      b.dim = 2;
      b.n = m.n_nodes;
      b.pressure_node = -1;
      b.lid = calloc((size_t)m.n_nodes, 1);
      b.wall = calloc((size_t)m.n_nodes, 1);
      ASSERT(b.lid && b.wall, "out of memory");
      for (int64_t i = 0; i < m.n_nodes; ++i)
        b.wall[i] = (m.boundary[i] & EF_TM_YMIN) != 0;
      char label[128];
      snprintf(label, sizeof label, "30 deg slip channel, implicit, %s", implicit_correction);
      const int rc = compare_case(label, &m, &b, 1.0, 3000, NULL, 0);
      free(b.lid);
      free(b.wall);
      ef_test_mesh_free(&m);
      if (rc)
        return rc;
    }
  }
  remove(export_path);
  return 0;
}

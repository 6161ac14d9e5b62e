#!/usr/bin/env python3
"""The OpenMP strategy's pressure solvers on the 3D cavity (issue 12's OpenMP gate): time per step
of the whole step and of the pressure solve, with the host Jacobi-CG, the AMG-preconditioned CG and
flexible CG (a few amg_* variants) and PETSc (CG + GAMG, CG + Jacobi) side by side.

The case is test_examples/cavity3d at --refine (default 1: 24,321 nodes) on openmp_edge_based with
OMP_NUM_THREADS=--threads, in a temporary copy of ProjectParameters.json: a fixed time step (--dt,
automatic_time_step false, so every solver gets the same systems), end_time = steps x dt, no output
processes, the case's tolerance (1e-6) and max_iteration.  Each configuration runs --repeats times,
the configurations alternating within each round (load drifts hit all of them alike); the table
shows medians.  Per step: the loop (run.seconds_per_step), the pressure solve ("2 pressure CG"
event: the set-up of the preconditioner and the Krylov solve; the AMG hierarchy is built at the
first step and is inside that figure, its own time is the column "AMG build"), iterations per step.

Stopping tests differ by solver, as each solver defines them: host Jacobi-CG
||D^-1/2 r|| / ||D^-1/2 b||, host (F)CG + AMG ||r|| / ||b||, PETSc CG its natural norm r^T M r.

  benchmarks/amg_openmp_cavity.py --edgeflow build/bin/edgeflow --out benchmarks/results/amg_openmp_X
  benchmarks/amg_openmp_cavity.py --configs jacobi_cg,fcg_amg --repeats 1 --steps 5   # quick look

Writes OUT/results.json (every run, the medians, the load average before and after each run, the
machine) and prints a Markdown table.  Standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASE = os.path.join(ROOT, "test_examples", "cavity3d")

# name -> linear_solver_settings (tolerance and max_iteration: the case's, added below)
CONFIGS = {
    "jacobi_cg": {"solver_type": "cg"},
    "cg_amg": {"solver_type": "cg", "preconditioner_type": "amg"},
    "fcg_amg": {"solver_type": "fcg", "preconditioner_type": "amg"},
    "fcg_amg_sweeps2": {"solver_type": "fcg", "preconditioner_type": "amg", "amg_sweeps": 2},
    "cg_amg_sweeps2": {"solver_type": "cg", "preconditioner_type": "amg", "amg_sweeps": 2},
    "fcg_amg_V": {"solver_type": "fcg", "preconditioner_type": "amg", "amg_cycle": "V"},
    "fcg_amg_k1": {"solver_type": "fcg", "preconditioner_type": "amg", "amg_kcycle_levels": 1},
    "fcg_amg_pass2": {"solver_type": "fcg", "preconditioner_type": "amg", "amg_aggregation_passes": 2},
    "cg_amg_over1.5": {"solver_type": "cg", "preconditioner_type": "amg", "amg_over_correction": 1.5},
    "petsc_gamg": {"solver_type": "petsc", "ksp_type": "cg", "petsc_options": "-pc_type gamg"},
    "petsc_gamg_reuse": {"solver_type": "petsc", "ksp_type": "cg",
                         "petsc_options": "-pc_type gamg -pc_gamg_reuse_interpolation true"},
    "petsc_jacobi": {"solver_type": "petsc", "ksp_type": "cg", "pc_type": "jacobi"},
}
DEFAULT = ("jacobi_cg,cg_amg,fcg_amg,fcg_amg_sweeps2,cg_amg_sweeps2,fcg_amg_V,fcg_amg_k1,fcg_amg_pass2,cg_amg_over1.5,"
           "petsc_gamg,petsc_jacobi")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_ticks():
    """(busy, steal, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    steal = v[7] if len(v) > 7 else 0
    return sum(v) - idle, steal, sum(v)


def make_case(work, name, settings, dt, steps):
    """A copy of the case's parameters for one configuration; returns its path."""
    p = json.load(open(os.path.join(CASE, "ProjectParameters.json")))
    ss = p["solver_settings"]
    ss["solver_type"] = "openmp_edge_based"
    mis = ss["model_import_settings"]
    mis["input_filename"] = os.path.join(CASE, mis["input_filename"])
    ss["time_stepping"] = {"automatic_time_step": False, "time_step": dt}
    lss = dict(ss["linear_solver_settings"])
    lss.pop("solver_type", None)
    lss.update(settings)
    ss["linear_solver_settings"] = lss
    p["problem_data"]["end_time"] = steps * dt
    p["output_processes"] = {}
    path = os.path.join(work, name + ".json")
    json.dump(p, open(path, "w"), indent=1)
    return path


def one_run(edgeflow, case, out, refine, threads):
    """Run once; return the figures of run_summary.json."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    l0 = loadavg()
    c0 = cpu_ticks()
    cmd = [edgeflow, "run", case, "--refine", str(refine), "--output", out, "--overwrite", "--quiet"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    l1 = loadavg()
    c1 = cpu_ticks()
    dt_total = max(c1[2] - c0[2], 1)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout)[-2000:], "load_before": l0, "load_after": l1}
    s = json.load(open(os.path.join(out, "run_summary.json")))
    steps = s["run"]["steps"]
    ev = s["events"]["step"]
    ps = s["strategy"].get("pressure_solver", {})
    pc = ps.get("view", {}).get("preconditioner", {})
    return {
        "steps": steps,
        "nodes": s["mesh"]["nodes"],
        "ms_per_step": 1e3 * s["run"]["seconds_per_step"],
        "ms_pressure_solve_per_step": 1e3 * ev["2 pressure CG"]["seconds"] / steps,
        "ms_outside_solve_per_step": 1e3 * (s["run"]["seconds_per_step"] - ev["2 pressure CG"]["seconds"] / steps),
        "iterations_per_step": s["pressure_solver_iterations"]["mean_per_step"],
        "iterations_max": s["pressure_solver_iterations"]["max_per_step"],
        "amg_build_ms": 1e3 * pc["host_setup_seconds"] if "host_setup_seconds" in pc else None,
        "amg_refresh_ms": 1e3 * pc["refresh_seconds"] if "refresh_seconds" in pc else None,
        "amg_levels": pc.get("levels"),
        "amg_coarsest_rows": pc.get("coarsest_rows"),
        "amg_operator_complexity": pc.get("operator_complexity"),
        "load_before": l0,
        "load_after": l1,
        "cpu_busy_fraction": (c1[0] - c0[0]) / dt_total,
        "cpu_steal_fraction": (c1[1] - c0[1]) / dt_total,
    }


def median(runs, key):
    v = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(v) if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edgeflow", default=os.path.join(ROOT, "build", "bin", "edgeflow"),
                    help="the program, or LABEL=PATH,LABEL=PATH,... to compare builds (rows LABEL:config, "
                         "all alternating; the Jacobi row of each build is that build's baseline)")
    ap.add_argument("--refine", type=int, default=1)
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", default=DEFAULT, help="comma-separated, from: " + ", ".join(CONFIGS))
    ap.add_argument("--out", default=None, help="folder for results.json (default: none written)")
    ap.add_argument("--note", default="", help="free text stored in the JSON (the commit, the change)")
    a = ap.parse_args()
    names = a.configs.split(",")
    for n in names:
        if n not in CONFIGS:
            sys.exit(f"unknown configuration '{n}' (known: {', '.join(CONFIGS)})")
    builds = []
    for item in a.edgeflow.split(","):
        label, _, path = item.rpartition("=")
        builds.append((label, os.path.abspath(path)))
    rows = [(f"{b[0]}:{n}" if b[0] else n, b[1], n) for b in builds for n in names]
    runs = {row: [] for row, _, _ in rows}
    with tempfile.TemporaryDirectory(prefix="amg_openmp_") as work:
        cases = {n: make_case(work, n, CONFIGS[n], a.dt, a.steps) for n in names}
        for rep in range(a.repeats):
            for n, edgeflow, conf in rows:
                r = one_run(edgeflow, cases[conf], os.path.join(work, "out"), a.refine, a.threads)
                runs[n].append(r)
                if "error" in r:
                    print(f"# {n} round {rep + 1}: FAILED: {r['error'].strip().splitlines()[-1:]}", file=sys.stderr)
                else:
                    print(f"# {n} round {rep + 1}: {r['ms_per_step']:.1f} ms/step, solve {r['ms_pressure_solve_per_step']:.1f} ms,"
                          f" {r['iterations_per_step']:.1f} it, load {r['load_before']:.2f}->{r['load_after']:.2f},"
                          f" steal {100 * r['cpu_steal_fraction']:.1f} %",
                          file=sys.stderr)
    keys = ["ms_per_step", "ms_pressure_solve_per_step", "ms_outside_solve_per_step", "iterations_per_step",
            "iterations_max", "amg_build_ms", "amg_refresh_ms", "amg_levels", "amg_coarsest_rows",
            "amg_operator_complexity", "load_before", "load_after", "cpu_busy_fraction", "cpu_steal_fraction"]
    med = {row: {k: median(runs[row], k) for k in keys} for row, _, _ in rows}
    print(f"\ncavity3d level {a.refine}, openmp_edge_based, {a.threads} threads, dt {a.dt:g} fixed, {a.steps} steps,"
          f" medians of {a.repeats}\n")
    print("| solver | ms/step | speed-up/step vs Jacobi | pressure solve ms/step | speed-up/solve | iterations/step |"
          " AMG build ms | AMG refresh ms | load (median before) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, _, _ in rows:
        m = med[n]
        base = med.get(n.rpartition(":")[0] + ":jacobi_cg" if ":" in n else "jacobi_cg", {})
        if m["ms_per_step"] is None:
            print(f"| {n} | failed | | | | | | | |")
            continue
        su = base.get("ms_per_step") / m["ms_per_step"] if base.get("ms_per_step") else float("nan")
        ss = (base.get("ms_pressure_solve_per_step") / m["ms_pressure_solve_per_step"]
              if base.get("ms_pressure_solve_per_step") else float("nan"))
        f = lambda v, fmt: (fmt % v) if v is not None else "-"  # noqa: E731
        print(f"| {n} | {m['ms_per_step']:.1f} | {su:.2f} | {m['ms_pressure_solve_per_step']:.1f} | {ss:.2f} |"
              f" {m['iterations_per_step']:.1f} | {f(m['amg_build_ms'], '%.1f')} | {f(m['amg_refresh_ms'], '%.2f')} |"
              f" {m['load_before']:.2f} |")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        doc = {
            "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"node": platform.node(), "cpus": os.cpu_count(), "processor": platform.processor()},
            "command": " ".join(sys.argv),
            "note": a.note,
            "case": {"refine": a.refine, "dt": a.dt, "steps": a.steps, "threads": a.threads,
                     "strategy": "openmp_edge_based"},
            "configs": {n: CONFIGS[n] for n in names},
            "builds": dict(builds),
            "environment": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_"))},
            "medians": med,
            "runs": runs,
        }
        path = os.path.join(a.out, "results.json")
        json.dump(doc, open(path, "w"), indent=1)
        print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()

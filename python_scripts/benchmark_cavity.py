#!/usr/bin/env python3
"""Time per step of the 3D lid-driven cavity (Re = 100) with the OpenMP strategy on all host
cores, the OpenCL strategy on the NVIDIA GPU and the OpenCL strategy on PoCL, at refinement
levels 0..3 (4 where it fits), through the `edgeflow` command-line program.

    benchmark_cavity.py [--edgeflow PATH] [--levels 0,1,2,3] [--warmup 10] [--steps 50]
                        [--strategies openmp,gpu,pocl] [--budget 540] [--dt DT] [--check-every 8]
                        [--work-group-bits 0] [--out benchmarks/results] [--tag NAME]

Method.  Every run uses a temporary copy of test_examples/cavity3d/ProjectParameters.json
with a fixed time step (automatic_time_step false) that is stable on the finest level, so
all strategies and levels advance with the same dt, and without output processes.  dt is
half the CFL-1 step of the finest level (a one-step probe with the first strategy listed;
the lid speed 1 bounds the velocity of this flow); a strategy that still has to cut it
prints a warning, which is recorded.  The device CG reads its convergence state back every
--check-every iterations (8 by default; the iterate and the count do not depend on it, the
host CG ignores it); --work-group-bits sets the OpenCL edge kernels' work-group size.  Each combination runs twice, with W and with W + M steps; the difference of the
two runs (loop wall time, CG iterations and seconds, the OpenCL strategy's phase times)
gives the figures of M steps after W warm-up steps, and the set-up time (mesh, refinement,
edge data, device, SpMV tuning) is the longer run's initialisation, reported separately.
Devices are chosen with EDGEFLOW_OPENCL_DEVICE ("NVIDIA" for the GPU, "Portable" for PoCL);
OpenMP runs with OMP_NUM_THREADS = all host cores.

A difference that is not positive (run-to-run noise larger than the measured steps, on
the smallest meshes) is reported as "n/a (below noise)" rather than as a figure.

Budget.  The whole call stays within --budget seconds (default 540, for a 10-minute limit):
before each run the time is predicted from the previous level (x 8 nodes, x 2 CG
iterations per refinement) and the combination is skipped (and reported as skipped) when it
would not fit.  A run that fails (no such device, not enough device memory) is reported
with the first line of its error.

Output: JSON and a Markdown table in --out (default benchmarks/results/), named
cavity_<tag>.json / .md; the Markdown also goes to stdout.  Standard library only.
Smoke test (any machine with PoCL, about half a minute):
    benchmark_cavity.py --levels 0,1 --warmup 1 --steps 2 --strategies openmp,pocl --out /tmp/b
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASE = os.path.join(ROOT, "test_examples", "cavity3d", "ProjectParameters.json")

STRATEGIES = {
    "openmp": {"solver": "openmp_edge_based", "device": None, "label": "OpenMP (host cores)"},
    "gpu": {"solver": "opencl_edge_based", "device": "NVIDIA", "label": "OpenCL GPU"},
    "pocl": {"solver": "opencl_edge_based", "device": "Portable", "label": "OpenCL PoCL"},
}
THREADS = 0  # --threads: OpenMP threads of the host strategy (0: all host cores)
PHASES = ["cpu_to_gpu", "step1", "step2", "step2_assembly", "step2_cg", "step3", "gpu_to_cpu"]


def find_edgeflow(given):
    """The edgeflow program: --edgeflow, else a build folder of the checkout, else PATH."""
    if given:
        return os.path.abspath(given)
    candidates = []
    for name in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, name, "bin", "edgeflow")
        if name.startswith("build") and os.access(path, os.X_OK):
            candidates.append((os.path.getmtime(path), path))
    if candidates:
        return max(candidates)[1]
    found = shutil.which("edgeflow")
    if not found:
        sys.exit("benchmark_cavity: no edgeflow program found; pass --edgeflow")
    return found


def make_case(workdir, dt, automatic=False, check_every=1, wg_bits=0):
    """A copy of the cavity case with a fixed dt (or automatic CFL 1), no output, far end time."""
    with open(CASE) as f:
        p = json.load(f)
    p = copy.deepcopy(p)
    p["problem_data"]["end_time"] = 1.0e9
    p["problem_data"]["progress_interval"] = 1000000
    s = p["solver_settings"]
    s["model_import_settings"]["input_filename"] = os.path.join(os.path.dirname(CASE),
                                                                s["model_import_settings"]["input_filename"])
    s["time_stepping"] = ({"automatic_time_step": True, "CFL_number": 1.0} if automatic else
                          {"automatic_time_step": False, "time_step": dt})
    s.setdefault("linear_solver_settings", {})["check_every"] = check_every
    s.setdefault("device", {})["work_group_bits"] = wg_bits
    p["output_processes"] = {}
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "ProjectParameters.json")
    with open(path, "w") as f:
        json.dump(p, f, indent=2)
    return path


def run_once(exe, params, strategy, level, steps, outdir, timeout):
    """One `edgeflow run`; returns (summary dict or None, wall seconds, error text, warnings)."""
    st = STRATEGIES[strategy]
    env = dict(os.environ)
    if st["device"]:
        env["EDGEFLOW_OPENCL_DEVICE"] = st["device"]
    else:
        env["OMP_NUM_THREADS"] = str(THREADS or os.cpu_count() or 1)
        env.setdefault("OMP_PROC_BIND", "close")
    os.makedirs(outdir, exist_ok=True)
    cmd = [exe, "run", params, "--solver-type", st["solver"], "--refine", str(level), "--steps", str(steps),
           "--output", outdir, "--quiet", "--overwrite"]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=max(timeout, 1.0))
    except subprocess.TimeoutExpired:
        return None, time.time() - t0, "timed out after %.0f s" % timeout, []
    wall = time.time() - t0
    with open(os.path.join(outdir, "log.txt"), "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    warnings = [l.strip() for l in proc.stderr.splitlines() if "stability limit" in l]
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        return None, wall, (lines[0] if lines else "exit %d" % proc.returncode)[:300], warnings
    try:
        with open(os.path.join(outdir, "run_summary.json")) as f:
            return json.load(f), wall, None, warnings
    except (OSError, ValueError) as e:
        return None, wall, "no run summary: %s" % e, warnings


def get(d, *keys, default=0.0):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def figures(short, long_, m):
    """Per-step figures of the m steps the long run has beyond the short one."""
    r = {"nodes": get(long_, "mesh", "nodes", default=0)}
    r["seconds_per_step"] = (get(long_, "run", "wall_seconds_loop") - get(short, "run", "wall_seconds_loop")) / m
    if r["seconds_per_step"] <= 0.0:
        # The two runs' difference drowned in run-to-run noise (tiny meshes): no figure.
        r["below_noise"] = r.pop("seconds_per_step")
    r["setup_seconds"] = get(long_, "run", "wall_seconds_total") - get(long_, "run", "wall_seconds_loop")
    its = get(long_, "pressure_solver_iterations", "total") - get(short, "pressure_solver_iterations", "total")
    cg_s = (get(long_, "strategy", "pressure_solver", "cg_seconds") -
            get(short, "strategy", "pressure_solver", "cg_seconds"))
    r["cg_iterations_per_step"] = its / m
    r["cg_us_per_iteration"] = 1e6 * cg_s / its if its > 0 else None
    r["cg_seconds_per_step"] = cg_s / m
    if get(long_, "strategy", "phases", default=None):
        r["phases_per_step"] = {k: (get(long_, "strategy", "phases", "total_seconds", k) -
                                    get(short, "strategy", "phases", "total_seconds", k)) / m for k in PHASES}
        r["bytes_per_step"] = get(long_, "strategy", "phases", "bytes_per_step")
    dev = get(long_, "strategy", "device", default=None)
    if dev:
        r["device"] = {k: dev.get(k) for k in ("name", "driver", "compute_units", "edge_blocks")}
        r["spmv"] = get(long_, "strategy", "spmv", default=None)
    host = get(long_, "strategy", "host", default=None)
    if host:
        r["threads"] = host.get("threads")
    kernels = get(long_, "events", "kernel", default=None)
    if kernels:
        r["kernels_total"] = kernels
    return r


def probe_dt(exe, workdir, strategies, level, timeout):
    """The first CFL-1 step of the resting cavity on the given level."""
    params = make_case(os.path.join(workdir, "probe"), 0.0, automatic=True)
    err = None
    for s in strategies + ["openmp"]:
        summary, _, err, _ = run_once(exe, params, s, level, 1, os.path.join(workdir, "probe", s), timeout)
        if summary:
            return get(summary, "run", "simulated_time")
    sys.exit("benchmark_cavity: the level-%d probe failed: %s" % (level, err))


def markdown(result):
    lines = []
    a = result["settings"]
    lines.append("# 3D lid-driven cavity, Re = 100: time per step\n")
    lines.append("dt = %.4g (fixed, all runs), %d warm-up + %d measured steps, CG check every %d; host: %d cores; "
                 "edgeflow: `%s`\n" % (a["dt"], a["warmup"], a["steps"], a["check_every"], a["host_cores"],
                                       a["edgeflow"]))
    names = [s for s in a["strategies"]]
    head = "| level | nodes | " + " | ".join("%s ms/step" % STRATEGIES[s]["label"] for s in names)
    others = [o for o in ("openmp", "pocl") if o in names] if "gpu" in names else []
    for o in others:
        head += " | %s / GPU" % ("OpenMP" if o == "openmp" else "PoCL")
    lines.append(head + " |")
    lines.append("|" + "---|" * (head.count("|")))
    for lv in a["levels"]:
        row = result["runs"].get(str(lv), {})
        nodes = next((r["nodes"] for r in row.values() if isinstance(r, dict) and "nodes" in r), "")
        cells = []
        for s in names:
            r = row.get(s, {})
            if "below_noise" in r:
                cells.append("n/a (below noise)")
            elif "seconds_per_step" in r:
                cells.append("%.2f" % (1e3 * r["seconds_per_step"]))
            elif "EF_ERR_NOT_FOUND" in r.get("error", ""):
                cells.append("no such device")
            elif "EF_ERR_UNSUPPORTED" in r.get("error", ""):
                cells.append("does not fit the device")
            else:
                cells.append(r.get("skipped", r.get("error", "-"))[:40])
        line = "| %d | %s | %s" % (lv, nodes, " | ".join(cells))
        g = row.get("gpu", {}).get("seconds_per_step")
        for other in others:
            o = row.get(other, {}).get("seconds_per_step")
            line += " | %s" % ("%.1fx" % (o / g) if o and g else "-")
        lines.append(line + " |")
    lines.append("")
    lines.append("CG: iterations per step and us per iteration\n")
    lines.append("| level | " + " | ".join("%s it/step | us/it" % STRATEGIES[s]["label"] for s in names) + " |")
    lines.append("|---|" + "---|---|" * len(names))
    for lv in a["levels"]:
        row = result["runs"].get(str(lv), {})
        cells = []
        for s in names:
            r = row.get(s, {})
            if "cg_iterations_per_step" in r:
                us = r.get("cg_us_per_iteration")
                cells.append("%.1f | %s" % (r["cg_iterations_per_step"], "%.1f" % us if us else "-"))
            else:
                cells.append("- | -")
        lines.append("| %d | %s |" % (lv, " | ".join(cells)))
    fin = result.get("table5")
    if fin:
        lines.append("")
        lines.append("Table 5 breakdown, %s on level %d (%s nodes), ms per step\n"
                     % (STRATEGIES[fin["strategy"]]["label"], fin["level"], fin["nodes"]))
        lines.append("| CPU->GPU | Step 1 | Step 2 (assembly + CG) | of which CG | Step 3 | GPU->CPU | CG it/step |")
        lines.append("|---|---|---|---|---|---|---|")
        p = fin["phases_per_step"]
        lines.append("| %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f |" % (
            1e3 * p["cpu_to_gpu"], 1e3 * p["step1"], 1e3 * p["step2"], 1e3 * p["step2_cg"], 1e3 * p["step3"],
            1e3 * p["gpu_to_cpu"], fin["cg_iterations_per_step"]))
    setup = []
    for lv in a["levels"]:
        for s in names:
            r = result["runs"].get(str(lv), {}).get(s, {})
            if "setup_seconds" in r:
                setup.append("L%d %s %.2f s" % (lv, s, r["setup_seconds"]))
    if setup:
        lines.append("")
        lines.append("Set-up (mesh, refinement, edge data, device, tuning): " + ", ".join(setup))
    if result.get("warnings"):
        lines.append("")
        lines.append("Warnings: " + "; ".join(result["warnings"][:5]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edgeflow", help="the edgeflow program (default: newest build*/bin/edgeflow)")
    ap.add_argument("--levels", default="0,1,2,3", help="comma-separated refinement levels")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=50, help="measured steps")
    ap.add_argument("--strategies", default="openmp,gpu,pocl")
    ap.add_argument("--budget", type=float, default=540.0, help="seconds for the whole call")
    ap.add_argument("--dt", type=float, default=0.0, help="fixed time step (default: from a probe)")
    ap.add_argument("--check-every", type=int, default=8, help="device CG convergence read-back period")
    ap.add_argument("--work-group-bits", type=int, default=0, help="OpenCL edge kernels (0: automatic)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--tag", default=time.strftime("%Y%m%d-%H%M%S"))
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads (default: all host cores)")
    ap.add_argument("--keep", action="store_true", help="keep the run folders (logs, summaries)")
    ap.add_argument("--fail-on-error", action="store_true", help="exit 1 when a run failed (smoke tests)")
    a = ap.parse_args()
    t_start = time.time()
    exe = find_edgeflow(a.edgeflow)
    levels = [int(x) for x in a.levels.split(",") if x.strip()]
    strategies = [s for s in a.strategies.split(",") if s.strip()]
    for s in strategies:
        if s not in STRATEGIES:
            sys.exit("benchmark_cavity: unknown strategy '%s' (use %s)" % (s, ", ".join(STRATEGIES)))
    W, M = a.warmup, a.steps
    global THREADS
    THREADS = a.threads
    if W < 1 or M < 1:
        sys.exit("benchmark_cavity: --warmup and --steps must be >= 1")
    work = tempfile.mkdtemp(prefix="ef_cavity_bench_")

    def left():
        return a.budget - (time.time() - t_start)

    dt = a.dt if a.dt > 0 else 0.5 * probe_dt(exe, work, strategies, max(levels), left())
    params = make_case(work, dt, check_every=a.check_every, wg_bits=a.work_group_bits)
    result = {"settings": {"edgeflow": exe, "levels": levels, "strategies": strategies, "warmup": W, "steps": M,
                           "dt": dt, "check_every": a.check_every, "work_group_bits": a.work_group_bits,
                           "host_cores": os.cpu_count(), "openmp_threads": a.threads or os.cpu_count(),
                           "budget_seconds": a.budget},
              "runs": {}, "warnings": []}
    last = {}  # strategy -> (level, seconds per step, setup seconds)
    for lv in levels:
        row = result["runs"].setdefault(str(lv), {})
        for s in strategies:
            if s in last:
                plv, pstep, psetup = last[s]
                grow = 16.0 ** (lv - plv)
                predicted = (psetup * 8.0 ** (lv - plv)) * 2 + pstep * grow * (2 * W + M)
                if predicted > left() - 5.0:
                    row[s] = {"skipped": "skipped: ~%.0f s predicted, %.0f s left" % (predicted, left())}
                    continue
            elif left() < 10.0:
                row[s] = {"skipped": "skipped: budget spent"}
                continue
            base = os.path.join(work, "L%d_%s" % (lv, s))
            short, _, err, warn1 = run_once(exe, params, s, lv, W, base + "_w", left())
            long_, _, err2, warn2 = (None, 0.0, None, []) if err else \
                run_once(exe, params, s, lv, W + M, base + "_m", left())
            for w in warn1 + warn2:
                result["warnings"].append("L%d %s: %s" % (lv, s, w))
            if err or err2:
                row[s] = {"error": "failed: " + (err or err2)}
                continue
            r = figures(short, long_, M)
            row[s] = r
            last[s] = (lv, max(r.get("seconds_per_step", 0.0), 1e-6), r["setup_seconds"])
            print("level %d %-7s %8d nodes  %9.3f ms/step  %7.1f CG it/step  setup %.1f s" % (
                lv, s, r["nodes"], 1e3 * r.get("seconds_per_step", float("nan")), r["cg_iterations_per_step"],
                r["setup_seconds"]),
                file=sys.stderr)
    # Table 5 on the finest level the GPU (else the first OpenCL device) completed.
    for s in ("gpu", "pocl"):
        done = [lv for lv in levels if "phases_per_step" in result["runs"].get(str(lv), {}).get(s, {})]
        if done:
            r = result["runs"][str(max(done))][s]
            result["table5"] = {"strategy": s, "level": max(done), "nodes": r["nodes"],
                                "phases_per_step": r["phases_per_step"],
                                "cg_iterations_per_step": r["cg_iterations_per_step"],
                                "cg_us_per_iteration": r["cg_us_per_iteration"],
                                "bytes_per_step": r.get("bytes_per_step")}
            break
    result["wall_seconds"] = time.time() - t_start
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "cavity_%s" % a.tag)
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    md = markdown(result)
    with open(stem + ".md", "w") as f:
        f.write(md)
    sys.stdout.write(md)
    print("benchmark_cavity: wrote %s.json and %s.md (%.0f s)" % (stem, stem, result["wall_seconds"]),
          file=sys.stderr)
    if a.keep:
        print("benchmark_cavity: run folders kept in %s" % work, file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    failed = [(lv, s) for lv, row in result["runs"].items() for s, r in row.items() if "error" in r]
    if a.fail_on_error and failed:
        print("benchmark_cavity: failed runs: %s" % failed, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

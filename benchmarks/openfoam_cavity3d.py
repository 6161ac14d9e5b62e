#!/usr/bin/env python3
"""The 3D cavity at Re 100, t = 0 -> 1: OpenFOAM's icoFoam beside edgeflow's OpenMP strategy (issue 16).

Run with /usr/bin/python3 (numpy) from anywhere; OpenFOAM (icoFoam, blockMesh, decomposePar; v1912 tested)
and, for --np > 1, mpirun must be on PATH.  CI does not run this: it is a benchmark, not a test.

    openfoam_cavity3d.py foam   --out DIR [--n 10 12 16 20 28 40 57 80] [--np 2] [--co 0.5] [--t-end 1]
                                [--p-solver gamg|pcg] [--ddt backward|Euler] [--mpirun-args A] [--keep]
    openfoam_cavity3d.py ours   --build B --out DIR [--implicit-levels 1 2] [--explicit-levels 2] [--threads 2]
                                [--cfl-implicit 4] [--cfl-explicit 1] [--explicit-t-end 1] [--known-steps D]
    openfoam_cavity3d.py report --out DIR --reference REF.json [--extra RUN.json ...] [--no-foam-reference]
    openfoam_cavity3d.py all    --build B --out DIR --reference REF.json   (foam, ours, report with defaults)

foam: a copy of the case benchmarks/openfoam_cavity3d/ (README there and docs/implicit_viscosity.md, "OpenFOAM
comparison") per N in DIR/icofoam_N<N>_np<np>/: N^3 hexahedra, fixed dt = Co / N, blockMesh and
decomposePar timed apart from the solve, then icoFoam (mpirun -np NP icoFoam -parallel, or icoFoam alone for
--np 1).  Its log is read as it is written: "loop_s" runs from the first "Time =" line to "End" (all
steps, the final write and the sampling), "solve_wall_s" is the whole icoFoam process (start-up, reading
the mesh, MPI start).  Writes DIR/icofoam_N<N>_np<np>.json.
ours: benchmarks/implicit_cavity3d.py run with --strategy openmp_edge_based and OMP_NUM_THREADS=--threads
at each level and scheme, then DIR/edgeflow_<scheme>_cfl<C>_L<L>.json.  With --explicit-t-end below 1
the explicit runs stop early and their seconds per simulated second are EXTRAPOLATED: measured loop
seconds per step times the step count of a full t = 0 -> 1 run of the same strategy, scheme, CFL and
level found in --known-steps (default benchmarks/results/implicit_tts_H100_20261127), and their profiles
(for the error) are that full run's; the JSON says so under "extrapolated".
report: for each run JSON in DIR (and --extra ones: raw implicit_cavity3d.py JSONs, e.g. GPU runs) the
largest |difference| to the reference on the centrelines (u_x(0.5, 0.5, z) and u_z(x, 0.5, 0.5), 101
points; the older profiles of implicit_cavity3d.py only when one side lacks these), seconds per simulated
second, and for each edgeflow run icoFoam's seconds per simulated second at the same error, interpolated
log-log in (error, time) between the two icoFoam meshes whose errors bracket it (extrapolated from the
nearest two, and marked, outside them; not at all more than 3x outside, or where icoFoam's error falls slower
than N^-0.5).  With 3 or more icoFoam meshes in DIR a second table does the same against the finest of them:
a reference not made by the method under test (our P1 solution converges more slowly than icoFoam's, so
against our own fine run icoFoam's error levels off at the reference's own error).  Writes DIR/report.md
(Markdown tables) and DIR/report.json.
"""
import argparse
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
CASE = HERE / "openfoam_cavity3d"
S = np.linspace(0.0, 1.0, 101)
PRIMARY = ("ux_centreline_z", "uz_centreline_x")
SECONDARY = ("ux_vertical", "uy_horizontal")
# (line file of the case's function object, velocity component, boundary values at s = 0 and s = 1)
FOAM_PROFILES = {"ux_centreline_z": ("zLine", 0, (0.0, 1.0)), "uz_centreline_x": ("xLine", 2, (0.0, 0.0)),
                 "ux_vertical": ("yLine", 0, (0.0, 0.0)), "uy_horizontal": ("xLine", 1, (0.0, 0.0))}
LINE_AXIS = {"zLine": 2, "xLine": 0, "yLine": 1}


def die(msg):
    sys.exit(f"openfoam_cavity3d.py: error: {msg}")


def foam_env():
    env = dict(os.environ)
    if "WM_PROJECT_DIR" not in env:  # the Debian package's etc/ (controlDict, cellModels) is all it needs
        for d in ("/usr/share/openfoam", "/usr/lib/openfoam/openfoam1912"):
            if (pathlib.Path(d) / "etc" / "controlDict").exists():
                env["WM_PROJECT_DIR"] = d
                break
    return env


def need(exe):
    if shutil.which(exe) is None:
        die(f"'{exe}' is not on PATH (install OpenFOAM, e.g. Debian's 'openfoam' package, and Open MPI)")


def run_logged(cmd, log, env, cwd):
    """Run cmd with stdout+stderr into log; returns (wall seconds, time of the first 'Time =' line, time of 'End')."""
    t0 = time.perf_counter()
    first = end = None
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, text=True,
                             bufsize=1)
        for line in p.stdout:
            now = time.perf_counter()
            f.write(line)
            if first is None and line.startswith("Time = "):
                first = now
            elif line.strip() == "End":
                end = now
        rc = p.wait()
    wall = time.perf_counter() - t0
    if rc != 0:
        tail = pathlib.Path(log).read_text().splitlines()[-25:]
        die(f"{' '.join(cmd)} failed (exit {rc}); log {log}:\n" + "\n".join(tail))
    return wall, first, end


def read_profiles(samples_dir):
    """The four profiles at s = 0, 0.01, .., 1 from the function object's raw files (points on a processor
    boundary come once per side: averaged), with the boundary values at the two wall end points."""
    out = {}
    for key, (line, comp, ends) in FOAM_PROFILES.items():
        f = samples_dir / f"{line}_U.xy"
        if not f.exists():
            die(f"no sample file {f}")
        a = np.loadtxt(f, ndmin=2)
        s = np.round(a[:, LINE_AXIS[line]], 6)
        prof = np.full(S.size, np.nan)
        prof[0], prof[-1] = ends
        for k in range(1, S.size - 1):
            m = np.abs(s - S[k]) < 1e-6
            if not m.any():
                die(f"{f}: no sample at s = {S[k]:.2f}")
            prof[k] = float(np.mean(a[m, 3 + comp]))
        out[key] = prof.tolist()
    return out


def foam_one(a, n, env):
    name = f"icofoam_N{n}_np{a.np}"
    work = pathlib.Path(a.out).resolve() / name
    case = work / "case"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(CASE, case)
    dt = a.co / n
    (case / "system" / "caseParameters").write_text(
        "FoamFile { version 2.0; format ascii; class dictionary; object caseParameters; }\n"
        f"// written by benchmarks/openfoam_cavity3d.py: N = {n}, deltaT = Co / N with Co = {a.co:g}\n"
        f"N {n};\ndeltaT {dt!r};\nendTime {a.t_end!r};\n")
    fvs = case / "system" / "fvSolution"
    fvs.write_text(fvs.read_text().replace("$pGAMG;", "$pPCG;" if a.p_solver == "pcg" else "$pGAMG;"))
    fsc = case / "system" / "fvSchemes"
    fsc.write_text(fsc.read_text().replace("default         backward;", f"default         {a.ddt};"))
    t0 = time.perf_counter()
    run_logged(["blockMesh", "-case", str(case)], work / "log.blockMesh", env, work)
    mesh_s = time.perf_counter() - t0
    decompose_s = 0.0
    mpi = []
    if a.np > 1:
        (case / "system" / "decomposeParDict").write_text(
            (case / "system" / "decomposeParDict").read_text()
            .replace("numberOfSubdomains 2;", f"numberOfSubdomains {a.np};")
            .replace("n               (1 2 1);", f"n               (1 {a.np} 1);"))
        t0 = time.perf_counter()
        run_logged(["decomposePar", "-case", str(case)], work / "log.decomposePar", env, work)
        decompose_s = time.perf_counter() - t0
        mpi = ["mpirun"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) + a.mpirun_args.split() + \
            ["-np", str(a.np)]
    cmd = mpi + ["icoFoam", "-case", str(case)] + (["-parallel"] if a.np > 1 else [])
    wall, first, end = run_logged(cmd, work / "log.icoFoam", env, work)
    log = (work / "log.icoFoam").read_text()
    steps = len(re.findall(r"^Time = ", log, re.M))
    times = [float(x) for x in re.findall(r"^Time = (\S+)", log, re.M)]
    exe = re.findall(r"ExecutionTime = (\S+) s\s+ClockTime = (\S+) s", log)
    if first is None or end is None or not times:
        die(f"{work / 'log.icoFoam'}: no time loop found")
    t_end = times[-1]
    if abs(t_end - a.t_end) > 1e-6 * max(1.0, a.t_end):
        die(f"icoFoam stopped at t = {t_end}, not {a.t_end}")
    sdirs = sorted((case / "postProcessing" / "centrelines").iterdir(), key=lambda p: float(p.name))
    prof = read_profiles(sdirs[-1])
    loop = end - first
    res = {"code": "icoFoam", "openfoam": log_version(log), "case": "cavity3d Re 100", "N": n, "cells": n ** 3,
           "np": a.np, "co": a.co, "dt": dt, "steps": steps, "t_end": t_end, "ddt": a.ddt,
           "p_solver": "GAMG (GaussSeidel)" if a.p_solver == "gamg" else "PCG (DIC)",
           "piso": {"nCorrectors": 2, "momentumPredictor": True},
           "mesh_s": mesh_s, "decompose_s": decompose_s, "solve_wall_s": wall, "loop_s": loop,
           "s_per_step": loop / steps, "s_per_simulated_s": loop / t_end, "s_per_simulated_s_whole": wall / t_end,
           "execution_time_s": float(exe[-1][0]) if exe else None, "centreline_s": S.tolist(), **prof}
    out = pathlib.Path(a.out).resolve() / f"{name}.json"
    out.write_text(json.dumps(res, indent=1))
    if not a.keep:
        shutil.rmtree(case)
    print(f"{name}: {n ** 3} cells, {steps} steps of {dt:.4g}, mesh {mesh_s:.1f} s, decompose {decompose_s:.1f} s, "
          f"icoFoam {wall:.1f} s (loop {loop:.1f} s, {loop / steps:.3f} s/step), {loop / t_end:.1f} s per simulated s",
          flush=True)
    return res


def log_version(log):
    m = re.search(r"^Build\s*:\s*(.*)$", log, re.M)
    return m.group(1).strip() if m else None


def foam(a):
    for exe in ("blockMesh", "icoFoam") + (("decomposePar", "mpirun") if a.np > 1 else ()):
        need(exe)
    if a.np < 1:
        die("--np must be at least 1")
    if min(a.n) < 2 or a.co <= 0 or a.t_end <= 0:
        die(f"need every N >= 2, --co > 0 and --t-end > 0 (got N {a.n}, co {a.co:g}, t_end {a.t_end:g})")
    for n in a.n:  # icoFoam would shorten or stretch the last step: no run at an end time off the step grid
        steps = a.t_end * n / a.co
        if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
            die(f"--t-end {a.t_end:g} is not a whole number of steps of dt = {a.co:g} / {n} ({steps:.6g} steps)")
    pathlib.Path(a.out).mkdir(parents=True, exist_ok=True)
    env = foam_env()
    for n in a.n:
        foam_one(a, n, env)


def known_full_run(a, scheme, cfl, level):
    for strat in ("openmp_edge_based", "opencl_edge_based"):
        f = pathlib.Path(a.known_steps) / f"{strat}_{scheme}_cfl{cfl:g}_L{level}.json"
        if f.exists():
            r = json.loads(f.read_text())
            if abs(r["t_end"] - 1.0) < 1e-9:
                return f, r
    return None, None


def ours_plan(a):
    """(scheme, cfl, level, t_end, full-run file, full run) of each run; checked before anything runs."""
    if not (pathlib.Path(a.build) / "lib").is_dir():
        die(f"{a.build}/lib does not exist (give --build a built edgeflow build directory)")
    if a.threads < 1:
        die("--threads must be at least 1")
    if not 0.0 < a.explicit_t_end <= 1.0:
        die(f"--explicit-t-end must be in (0, 1], got {a.explicit_t_end:g}")
    plan = []
    for scheme, cfl, levels, t_end in (("implicit", a.cfl_implicit, a.implicit_levels, 1.0),
                                       ("explicit", a.cfl_explicit, a.explicit_levels, a.explicit_t_end)):
        for level in levels:
            known_f, known = (None, None)
            if t_end < 1.0:
                known_f, known = known_full_run(a, scheme, cfl, level)
                if known is None:
                    die(f"--explicit-t-end {t_end:g} < 1 needs a full t = 0 -> 1 run of {scheme} CFL {cfl:g} level "
                        f"{level} in {a.known_steps} for its step count")
            plan.append((scheme, cfl, level, t_end, known_f, known))
    return plan


def ours(a):
    build = pathlib.Path(a.build).resolve()
    out = pathlib.Path(a.out).resolve()
    raw = out / "edgeflow_raw"
    raw.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    for scheme, cfl, level, t_end, known_f, known in ours_plan(a):
        rdir = raw if t_end >= 1.0 else raw / f"t_end_{t_end:g}"  # never over a full run's raw JSON
        subprocess.run([sys.executable, str(HERE / "implicit_cavity3d.py"), "run", "--build", str(build),
                        "--out", str(rdir), "--level", str(level), "--strategy", "openmp_edge_based",
                        "--scheme", scheme, "--cfl", f"{cfl:g}", "--t-end", f"{t_end!r}"], env=env, check=True)
        name = f"openmp_edge_based_{scheme}_cfl{cfl:g}_L{level}"
        r = json.loads((rdir / f"{name}.json").read_text())
        r["code"] = "edgeflow"
        r["omp_threads"] = str(a.threads)
        if known is None:
            r["s_per_step"] = r["loop_s"] / r["steps"]
            r["s_per_simulated_s"] = r["loop_s"] / r["t_end"]
            r["s_per_simulated_s_whole"] = r["total_s"] / r["t_end"]
        else:
            per_step = r["loop_s"] / r["steps"]
            r["extrapolated"] = {
                "why": f"run stopped at t = {r['t_end']:g} (--explicit-t-end); time to t = 1 = measured loop s "
                       "per step "
                       f"x the step count of the full run {known_f.name}; profiles at t = 1 and their error taken "
                       "from that full run",
                "measured_steps": r["steps"], "measured_loop_s": r["loop_s"], "measured_t_end": r["t_end"],
                "full_run": str(known_f), "full_run_steps": known["steps"]}
            r["s_per_step"] = per_step
            r["s_per_simulated_s"] = per_step * known["steps"]
            r["s_per_simulated_s_whole"] = r["initialize_s"] + per_step * known["steps"]
            for k in PRIMARY + SECONDARY:
                if k in known:
                    r[k] = known[k]
                else:
                    r.pop(k, None)
        (out / f"edgeflow_{scheme}_cfl{cfl:g}_L{level}.json").write_text(json.dumps(r, indent=1))
        print(f"edgeflow {scheme} L{level}: {r['s_per_simulated_s']:.1f} s per simulated s"
              + (" (extrapolated)" if known is not None else ""), flush=True)


def centreline_error(run, ref):
    keys = [k for k in PRIMARY if k in run and k in ref]
    if len(keys) < len(PRIMARY):
        keys = [k for k in SECONDARY if k in run and k in ref]
        if not keys:
            return None, {}, []
    per = {k: float(np.max(np.abs(np.asarray(run[k]) - np.asarray(ref[k])))) for k in keys}
    return max(per.values()), per, keys


def equal_accuracy(err, foam_pts):
    """icoFoam's seconds per simulated second at error err: log-log between the consecutive meshes (in N)
    whose errors bracket err; outside the series, from its two coarsest / finest meshes, at most 3x beyond
    the series' error range and only where its error falls at least as N^-0.5 there."""
    pts = sorted((r["N"], r["error"], r["s_per_simulated_s"]) for r in foam_pts
                 if r["error"] is not None and r["error"] > 0)
    if err is None or err <= 0:
        return None, "this run's error is zero (the reference itself?)"
    if len(pts) < 2:
        return None, "needs two icoFoam meshes with a nonzero error"
    pair, how = None, "interpolated"
    for (n1, e1, t1), (n2, e2, t2) in zip(pts, pts[1:]):
        if min(e1, e2) <= err <= max(e1, e2) and e1 != e2:
            pair = (n1, e1, t1), (n2, e2, t2)
            break
    if pair is None:
        errs = [e for _, e, _ in pts]
        if err > max(errs):
            pair, edge = (pts[0], pts[1]), max(errs)
        else:
            pair, edge = (pts[-2], pts[-1]), min(errs)
        (n1, e1, _), (n2, e2, _) = pair
        order = math.log(e1 / e2) / math.log(n2 / n1) if e2 > 0 and e1 > 0 else 0.0
        if order < 0.5:
            return None, (f"outside the icoFoam series, whose error falls slower than N^-0.5 (order {order:.2f}) "
                          f"from N = {n1} to {n2}: no extrapolation")
        if max(err / edge, edge / err) > 3.0:
            return None, f"more than 3x outside the icoFoam series' errors ({min(errs):.3g} .. {max(errs):.3g}): add N"
        how = "extrapolated"
    (n1, e1, t1), (n2, e2, t2) = pair
    w = (math.log(err) - math.log(e1)) / (math.log(e2) - math.log(e1))
    return math.exp(math.log(t1) + w * (math.log(t2) - math.log(t1))), f"{how}, N = {n1} and {n2}"


def load_run(f):
    r = json.loads(pathlib.Path(f).read_text())
    if "code" not in r:  # a raw implicit_cavity3d.py JSON (e.g. a GPU run)
        if "strategy" not in r:
            die(f"{f}: neither an openfoam_cavity3d.py nor an implicit_cavity3d.py result")
        r["code"] = "edgeflow"
        r["s_per_step"] = r["loop_s"] / r["steps"]
        r["s_per_simulated_s"] = r["loop_s"] / r["t_end"]
        r["s_per_simulated_s_whole"] = r["total_s"] / r["t_end"]
    if abs(r["t_end"] - 1.0) > 1e-6 and "extrapolated" not in r:
        print(f"warning: {f} ends at t = {r['t_end']:g}, not 1: its error is not at t = 1", file=sys.stderr)
    r["file"] = str(f)
    return r


def ref_label(ref):
    if ref.get("code") == "icoFoam":
        return f"icoFoam N = {ref['N']}, {ref['cells']:,} hexahedra"
    return (f"{ref.get('strategy', '?')} {ref.get('scheme', '?')} level {ref.get('level', '?')}, "
            f"{ref.get('nodes', '?')} nodes")


def report_table(runs, ref, ref_file):
    """The Markdown table and the rows of every run against one reference."""
    for r in runs:
        r["error"], r["error_per_profile"], r["error_profiles"] = centreline_error(r, ref)
    foam_runs = [r for r in runs if r["code"] == "icoFoam"]
    nps = sorted({r["np"] for r in foam_runs})
    rows, table = [], []
    hdr = ("| run | mesh | steps (Δt) | s / step | s per simulated s (loop) | whole run "
           "| max centreline abs(Δu) vs ref | "
           + " | ".join(f"icoFoam np {p} at equal error | ratio" for p in nps) + " |")
    table += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    for r in runs:
        if r["code"] == "icoFoam":
            label = f"icoFoam np {r['np']}, {r['ddt']}, p {r['p_solver'].split()[0]}"
            mesh = f"{r['N']}³ = {r['cells']:,} hexahedra"
            steps = f"{r['steps']} ({r['dt']:.4g})"
        else:
            ext = r.get("extrapolated")
            thr = r.get("omp_threads")
            label = f"edgeflow {r['strategy']} {r['scheme']} CFL {r['cfl']:g}" + (f", {thr} threads" if thr else "")
            mesh = f"level {r['level']}, {r['nodes']:,} nodes"
            steps = (f"{ext['full_run_steps']} (from {pathlib.Path(ext['full_run']).name}; {ext['measured_steps']} "
                     f"measured to t = {ext['measured_t_end']:g})" if ext else
                     f"{r['steps']} ({r['dt_min']:.3g} .. {r['dt_max']:.3g})")
        err = r["error"]
        eq = {}
        for p in nps:
            if r["code"] == "icoFoam":
                eq[p] = (None, "")
                continue
            t, how = equal_accuracy(err, [f for f in foam_runs if f["np"] == p])
            eq[p] = (t, how)
        row = {"file": r["file"], "label": label, "mesh": mesh, "steps": steps, "s_per_step": r["s_per_step"],
               "s_per_simulated_s": r["s_per_simulated_s"], "s_per_simulated_s_whole": r["s_per_simulated_s_whole"],
               "extrapolated": bool(r.get("extrapolated")), "error": err, "error_per_profile": r["error_per_profile"],
               "icofoam_equal_error": {str(p): {"s_per_simulated_s": eq[p][0], "how": eq[p][1],
                                                "ratio_edgeflow_to_icofoam":
                                                    r["s_per_simulated_s"] / eq[p][0] if eq[p][0] else None}
                                       for p in nps}}
        rows.append(row)
        star = " (extrapolated)" if row["extrapolated"] else ""
        cells = [label, mesh, steps, f"{r['s_per_step']:.4g}", f"{r['s_per_simulated_s']:.4g}{star}",
                 f"{r['s_per_simulated_s_whole']:.4g}",
                 "n/a" if err is None else f"{err:.4g}" + ("" if tuple(r["error_profiles"]) == PRIMARY else
                                                           f" (on {', '.join(r['error_profiles'])} only)")]
        for p in nps:
            t, how = eq[p]
            cells += ([f"{t:.4g} ({how})", f"{r['s_per_simulated_s'] / t:.2f}×"] if t else
                      ["—" if r["code"] == "icoFoam" else f"n/a ({how})", "—"])
        table.append("| " + " | ".join(cells) + " |")
    profs = sorted({k for r in runs for k in r["error_profiles"]})
    note = (f"Error: the largest |u - u_ref| over the profiles {', '.join(profs) or 'none'} (101 points each, units "
            "of the lid speed). Seconds per simulated second: the time loop only (edgeflow: after Initialize; "
            "icoFoam: first time step to 'End'); 'whole run' adds edgeflow's Initialize and icoFoam's start-up "
            "(mesh reading, MPI start), not blockMesh / decomposePar. Ratio: edgeflow / icoFoam at equal error "
            "(< 1: edgeflow faster).")
    md = f"## Against {ref_label(ref)} ({ref_file})\n\n" + "\n".join(table) + "\n\n" + note + "\n"
    return md, {"reference": str(ref_file), "reference_label": ref_label(ref), "profiles": profs, "rows": rows}


def report(a):
    out = pathlib.Path(a.out).resolve()
    files = sorted(out.glob("icofoam_N*_np*.json"), key=lambda p: int(re.search(r"_N(\d+)_", p.name).group(1)))
    files += sorted(out.glob("edgeflow_*.json")) + [pathlib.Path(f) for f in a.extra]
    if not files:
        die(f"no run JSON in {out}")
    runs = [load_run(f) for f in files]
    refs = [pathlib.Path(a.reference)]
    foam_runs = [r for r in runs if r["code"] == "icoFoam"]
    if not a.no_foam_reference and len({r["N"] for r in foam_runs}) >= 3:
        # the finest icoFoam run as a second reference: one not made by the method under test
        refs.append(pathlib.Path(max(foam_runs, key=lambda r: (r["N"], -r["np"]))["file"]))
    parts, tables = [], []
    for rf in refs:
        ref = json.loads(rf.read_text())
        if not any(k in ref for k in PRIMARY + SECONDARY):
            die(f"{rf}: no centreline profiles")
        md, tab = report_table(runs, ref, rf)
        parts.append(md)
        tables.append(tab)
    md = "\n".join(parts)
    (out / "report.md").write_text(md)
    (out / "report.json").write_text(json.dumps({"tables": tables}, indent=1))
    print(md, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="mode", required=True)

    def foam_args(p):
        p.add_argument("--n", type=int, nargs="+", default=[10, 12, 16, 20, 28, 40, 57, 80],
                       help="cells per cube edge, one run each")
        p.add_argument("--np", type=int, default=2, help="MPI processes (1: icoFoam without mpirun)")
        p.add_argument("--co", type=float, default=0.5, help="Courant number at the lid speed: dt = co / N")
        p.add_argument("--t-end", type=float, default=1.0)
        p.add_argument("--p-solver", choices=["gamg", "pcg"], default="gamg")
        p.add_argument("--ddt", choices=["backward", "Euler"], default="backward")
        p.add_argument("--mpirun-args", default="", help="extra mpirun arguments, e.g. '--oversubscribe'")
        p.add_argument("--keep", action="store_true", help="keep the case folders (fields, processor*)")

    def ours_args(p):
        p.add_argument("--build", required=True)
        p.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS")
        p.add_argument("--implicit-levels", type=int, nargs="*", default=[1, 2])
        p.add_argument("--explicit-levels", type=int, nargs="*", default=[2])
        p.add_argument("--cfl-implicit", type=float, default=4.0)
        p.add_argument("--cfl-explicit", type=float, default=1.0)
        p.add_argument("--explicit-t-end", type=float, default=1.0,
                       help="< 1: stop early and extrapolate (see above)")
        p.add_argument("--known-steps", default=str(HERE / "results" / "implicit_tts_H100_20261127"))

    def report_args(p):
        p.add_argument("--reference", required=True, help="a fine run's JSON (implicit_cavity3d.py format)")
        p.add_argument("--extra", nargs="*", default=[], help="more run JSONs for the table (e.g. GPU runs)")
        p.add_argument("--no-foam-reference", action="store_true",
                       help="no second table against the finest icoFoam run (made when DIR has 3 or more N)")

    for name, adders in (("foam", [foam_args]), ("ours", [ours_args]), ("report", [report_args]),
                         ("all", [foam_args, ours_args, report_args])):
        p = sp.add_parser(name)
        p.add_argument("--out", required=True)
        for f in adders:
            f(p)
    a = ap.parse_args()
    if a.mode in ("report", "all") and not pathlib.Path(a.reference).is_file():
        die(f"--reference {a.reference}: no such file")
    if a.mode in ("ours", "all"):
        ours_plan(a)  # fail before hours of runs, not after
    if a.mode in ("foam", "all"):
        foam(a)
    if a.mode in ("ours", "all"):
        ours(a)
    if a.mode in ("report", "all"):
        report(a)


if __name__ == "__main__":
    main()

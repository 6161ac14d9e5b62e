#!/usr/bin/python3
"""Make every PNG of docs/figures/ with one command.

    /usr/bin/python3 python_scripts/make_figures.py [--quick] [--skip-runs] [--results DIR] [--out DIR]

What it does, reusing anything already in the results folder (default out/figures/):
  cavity2d_centerlines.png   the 2D lid-driven cavity at Re 100, 400 and 1000 run to steady state
                             (max |du/dt| over 10 steps < 1e-4) on the 64 x 64 graded mesh of
                             test_examples/cavity2d (CFL 1, openmp_edge_based), u(0.5, y) and
                             v(x, 0.5) against Ghia, Ghia & Shin (1982); measured 1.7, 3.2 and 5.8
                             minutes on 2 cores shared with other jobs;
  cavity3d_centerlines.png   the 3D cavity's steady variant (test_examples/cavity3d/
                             ProjectParameters_steady.json) run by `edgeflow run` at refinement
                             level 1 (24321 nodes, 2400 steps; 7 to 25 minutes on 2 busy cores),
                             centrelines;
  cavity3d_slice.png         |u| on its mid-plane y = 0.5, rendered offscreen (render_vtk.py);
  kovasznay_convergence.png  L2 error vs h from validation_kovasznay.json (build*/validation_results,
                             else the validation driver is run: about 2 minutes);
  and the other examples' figures through their own plot commands when their scripts and results
  exist (backward_facing_step.py plot, flow_past_obstacle.py plot, ahmed_body.py plot --forces CSV,
  and render_vtk.py surface for the Ahmed body's symmetry plane with --ahmed-vtu).
--quick: 32 x 32 cavity meshes (16 x 16 refined once) with tolerance 1e-3 and the 3D cavity at
level 0 (3347 nodes), a few minutes in all. --skip-runs: only plot what the results folder (and the
other examples' folders) already hold. Runs use OMP_NUM_THREADS (default 2 here).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable or "/usr/bin/python3"


def other_example(script, args, problems):
    """Run another example's plot command when its script exists; a failure is reported, not fatal."""
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        print(f"make_figures: {script} not present: its figures skipped")
        return
    cmd = [PY, path] + args
    print("make_figures: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout[-1500:])
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"make_figures: {script} {args[0]} did not make its figures (exit {p.returncode}): {msg}")
        problems.append(f"{script}: {msg}")


def render(args, problems):
    """render_vtk.py in a subprocess (it may re-run itself under xvfb-run)."""
    cmd = [PY, os.path.join(HERE, "render_vtk.py")] + args
    print("make_figures: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout[-800:])
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"make_figures: picture not made (exit {p.returncode}): {msg}")
        problems.append(f"render_vtk.py {args[0]}: {msg}")


def newest(pattern):
    files = glob.glob(pattern, recursive=True)
    return max(files, key=os.path.getmtime) if files else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "out", "figures"),
                    help="folder of the runs' results (reused when present)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"), help="where the PNGs go")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"),
                    help="the shared/ folder with reference/ (Ghia's tables)")
    ap.add_argument("--quick", action="store_true", help="coarse meshes and loose tolerances: a few minutes")
    ap.add_argument("--skip-runs", action="store_true", help="run nothing; plot what exists")
    ap.add_argument("--level3d", type=int, default=None, help="3D cavity refinement level (default 1; --quick 0)")
    ap.add_argument("--ahmed-forces", default=None, help="the Ahmed body's force CSV (default: newest under out/)")
    ap.add_argument("--ahmed-vtu", default=None,
                    help="the Ahmed body's symmetry-plane .vtu/.pvd (default: newest under out/ahmed*/)")
    ap.add_argument("--gmsh", default="gmsh")
    a = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    sys.path.insert(0, HERE)
    import plot_cavity  # noqa: PLC0415
    import plot_kovasznay  # noqa: PLC0415

    t0 = time.time()
    results = os.path.abspath(a.results)
    os.makedirs(results, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    problems = []

    # (a) cavities.
    n2d, rate2d = (16, 1e-3) if a.quick else (32, 1e-4)
    for re_number in (100, 400, 1000):
        if os.path.exists(os.path.join(results, f"cavity2d_Re{re_number}.json")):
            print(f"make_figures: cavity2d Re {re_number}: reusing {results}/cavity2d_Re{re_number}.json")
        elif a.skip_runs:
            print(f"make_figures: cavity2d Re {re_number}: no result and --skip-runs")
        elif not shutil.which(a.gmsh):
            problems.append(f"cavity2d Re {re_number}: gmsh ({a.gmsh}) not found")
        else:
            print(f"make_figures: cavity2d Re {re_number}: running ({2 * n2d}^2 graded, rate {rate2d:g})", flush=True)
            plot_cavity.run2d(re_number, results, n=n2d, level=1, rate=rate2d, gmsh=a.gmsh)
    plot_cavity.plot2d(results, a.shared, os.path.join(a.out, "cavity2d_centerlines.png"))

    level = a.level3d if a.level3d is not None else (0 if a.quick else 1)
    j3 = os.path.join(results, f"cavity3d_level{level}.json")
    run_dir = os.path.join(results, f"cavity3d_steady_level{level}")
    if os.path.exists(j3):
        print(f"make_figures: cavity3d level {level}: reusing {j3}")
    elif os.path.exists(os.path.join(run_dir, "run_summary.json")):
        plot_cavity.collect3d(results, level)
    elif a.skip_runs:
        print(f"make_figures: cavity3d level {level}: no result and --skip-runs")
    else:
        plot_cavity.run3d(results, level)
    # Other levels' steady runs in the results folder are drawn too.
    for d in sorted(glob.glob(os.path.join(results, "cavity3d_steady_level*"))):
        lev = int(d.rsplit("level", 1)[1])
        if not os.path.exists(os.path.join(results, f"cavity3d_level{lev}.json")) and \
                os.path.exists(os.path.join(d, "run_summary.json")):
            plot_cavity.collect3d(results, lev)
    plot_cavity.plot3d(results, os.path.join(a.out, "cavity3d_centerlines.png"), a.shared)

    # (b) Kovasznay.
    kj = os.path.join(results, "validation_kovasznay.json")
    if not os.path.exists(kj):
        kj = plot_kovasznay.find_results()
    if not kj and not a.skip_runs:
        kj = os.path.join(results, "validation_kovasznay.json")
        lib = os.path.dirname(plot_cavity.find_program("libedgeflow_core.so", "lib"))
        cmd = [PY, os.path.join(ROOT, "tests", "validation", "kovasznay.py"), "--source", ROOT, "--shared", a.shared,
               "--lib", lib, "--work", os.path.join(results, "kovasznay_work"), "--gmsh", a.gmsh, "--results", kj]
        if a.quick:
            cmd += ["--levels", "0,1"]
        print("make_figures: running", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if not os.path.exists(kj):
            problems.append(f"kovasznay driver: exit {p.returncode}: {p.stdout[-400:]}{p.stderr[-400:]}")
            kj = None
    if kj:
        plot_kovasznay.plot(kj, os.path.join(a.out, "kovasznay_convergence.png"))
    else:
        print("make_figures: no Kovasznay results: kovasznay_convergence.png not made")

    # (c) the other examples, when their scripts exist (their own results folders).
    other_example("backward_facing_step.py", ["plot", "--out", a.out], problems)
    other_example("flow_past_obstacle.py", ["plot", "--out", a.out], problems)
    forces = a.ahmed_forces or newest(os.path.join(ROOT, "out", "ahmed*", "**", "*forces*.csv"))
    if forces:
        other_example("ahmed_body.py", ["plot", "--forces", forces, "--out", a.out], problems)
    else:
        print("make_figures: no Ahmed body force CSV under out/ahmed*/ (or --ahmed-forces): ahmed figures skipped")

    # (d) pictures.
    vtu3d = None
    if os.path.exists(j3):
        import json  # noqa: PLC0415
        with open(j3) as f:
            vtu3d = json.load(f).get("vtu")
    if not vtu3d or not os.path.exists(vtu3d):
        vtu3d = newest(os.path.join(ROOT, "out", "cavity3d", "vtk", "FluidModelPart_*.vtu"))
    if vtu3d:
        render(["cavity3d", "--vtu", vtu3d, "--out", os.path.join(a.out, "cavity3d_slice.png")], problems)
    else:
        print("make_figures: no 3D cavity .vtu: cavity3d_slice.png not made")
    avtu = a.ahmed_vtu or newest(os.path.join(ROOT, "out", "ahmed*", "**", "*symmetry*.vtu"))
    if avtu:
        render(["surface", "--vtu", avtu, "--out", os.path.join(a.out, "ahmed_body_symmetry_plane.png"),
                "--title", "Ahmed body (25° slant): |u| on the symmetry plane", "--bar-title", "|u| (m/s)",
                "--range", "0", "100", "--size", "1400", "620", "--box", "-0.35", "2.3", "-1", "1", "0", "0.75",
                "--zoom", "1.3"], problems)
    else:
        print("make_figures: no Ahmed body symmetry-plane .vtu (--ahmed-vtu): its picture skipped")

    print(f"make_figures: done in {time.time() - t0:.0f} s; figures in {a.out}:")
    for p in sorted(glob.glob(os.path.join(a.out, "*.png"))):
        print(f"  {os.path.basename(p)}  {os.path.getsize(p) // 1024} kB  {time.ctime(os.path.getmtime(p))}")
    if problems:
        print("make_figures: problems:\n  " + "\n  ".join(problems))
    return 1 if any(not p.startswith(("backward", "flow_past", "ahmed")) for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""case_checksums.py -- run the committed example cases for a few steps on both strategies and
print a SHA-256 of every .vtu / .pvd / .csv they write, so a refactoring can show that it
changed no result bit (compare the output of two builds with diff).

    python3 tools/case_checksums.py BUILD_DIR WORK_DIR [--steps N] [--strategies a,b] [--implicit [CORRECTION]]

--implicit runs every case with viscous_time_integration "implicit" and implicit_viscosity.correction
CORRECTION (default "lumped"), for changes to the implicit option's stage solves and corrections.

The OpenCL runs pin the SpMV configuration (a tuned one may differ between runs and change the
rounding of the pressure solve); run_summary.json is left out (it holds timings)."""
import argparse, hashlib, json, os, pathlib, shutil, subprocess, sys

CASES = [  # (name, ProjectParameters.json relative to the source tree, extra settings)
    ("cavity3d", "test_examples/cavity3d/ProjectParameters.json"),
    ("obstacle_re100", "test_examples/flow_past_obstacle/ProjectParameters.json"),
    ("obstacle_re20", "test_examples/flow_past_obstacle/ProjectParameters_Re20.json"),
    ("channel_forces", "test_examples/channel_forces/ProjectParameters.json"),
    ("backward_facing_step", "test_examples/backward_facing_step/ProjectParameters.json"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("work")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--strategies", default="openmp_edge_based,opencl_edge_based")
    ap.add_argument("--implicit", nargs="?", const="lumped", default=None, metavar="CORRECTION")
    a = ap.parse_args()
    src = pathlib.Path(__file__).resolve().parent.parent
    exe = pathlib.Path(a.build).resolve() / "bin" / "edgeflow"
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    for name, rel in CASES:
        case = src / rel
        p = json.loads(case.read_text())
        ss = p["solver_settings"]
        mis = ss["model_import_settings"]
        mis["input_filename"] = str((case.parent / mis["input_filename"]).resolve())
        for strategy in a.strategies.split(","):
            q = json.loads(json.dumps(p))
            q["solver_settings"]["solver_type"] = strategy
            if a.implicit:
                q["solver_settings"]["viscous_time_integration"] = "implicit"
                q["solver_settings"].setdefault("implicit_viscosity", {})["correction"] = a.implicit
            ls = q["solver_settings"].setdefault("linear_solver_settings", {})
            if strategy.startswith("opencl"):
                ls["workgroup_size_bits"] = 6
                ls["rows_per_workgroup_bits"] = 4
                q["solver_settings"].setdefault("device", {})["verbose"] = 0
            out = work / f"{name}_{strategy}"
            out.mkdir(parents=True)
            for ob in q.get("output_processes", {}).values():
                for blk in ob:
                    par = blk.get("Parameters", {})
                    if "output_interval" in par:  # every step, whatever the case's schedule
                        par["output_control_type"] = "step"
                        par["output_interval"] = 1
            f = out / "ProjectParameters.json"
            f.write_text(json.dumps(q, indent=1))
            r = subprocess.run([str(exe), "run", str(f), "--steps", str(a.steps), "--output", str(out / "run"),
                                "--quiet"], capture_output=True, text=True, cwd=out)
            if r.returncode:
                print(f"{name} {strategy}: exit {r.returncode}\n{r.stdout}\n{r.stderr}", file=sys.stderr)
                sys.exit(1)
            for path in sorted(out.rglob("*")):
                if path.suffix in (".vtu", ".pvd", ".csv", ".dat"):
                    h = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
                    print(f"{h}  {path.relative_to(work)}")


if __name__ == "__main__":
    main()

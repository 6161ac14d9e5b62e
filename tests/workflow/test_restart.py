#!/usr/bin/env python3
"""Restart files (docs/restart.md), one behaviour per check:

  restart_identity STRATEGY: 20 steps in one run, and 10 + restart + 10 into the same folder, with a
      force process, a probe, a steady-state check, a time-dependent inlet and density 1.3 (so the
      kinematic pressure p / rho is not the stored rho p / rho) active: the last .vtu, the .pvd and every
      .csv are byte-identical (identity_amg: the same with Kratos' "amgcl" block, i.e. the
      AMG-preconditioned flexible CG, and its one warning; identity_implicit: the implicit viscosity
      at its automatic step, whose growth limit needs the previous step back; identity_linear: with
      solver_settings.pressure_initial_guess "linear", whose history p_{n-1} and dt_{n-1} must come back, and
      identity_quadratic: "quadratic" with the implicit viscosity's growing steps, two levels and their steps); a later output of the first run's longer continuation is cut (CSV rows,
      .pvd entries, .vtu files); max_files_to_keep holds; the Python workflow continues the same way.
  refusals: a restart file of another mesh, of a newer format version, or damaged is refused with a
      message naming the cause; a fresh run into another run's folder is refused, --overwrite removes
      only that run's files.
  signal: SIGTERM during a run finishes the step, writes outputs, a restart file and run_summary.json
      marked interrupted, exits 143; the restart from it ends where an uninterrupted run ends.
  signal_int: the same with SIGINT (Ctrl-C): exit 130, stop_reason "SIGINT".
  wall_time: problem_data.max_wall_time stops the same way (exit 75).
  divergence: the velocity bound relative to the case's velocity scale stops an unstable run early;
      run_summary.json says "failed" with the message, also when initialization fails.

    test_restart.py SOURCE CLI WORK CHECK [STRATEGY]

Exit 77 (skip) when STRATEGY is opencl_edge_based and no OpenCL device can run it."""
import filecmp
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


def case(source, strategy, end_time=0.8, amg=False, implicit=False, guess=None):
    folder = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(folder, "ProjectParameters.json")) as f:
        p = json.load(f)
    ss = p["solver_settings"]
    ss["solver_type"] = strategy
    ss["density"] = 1.3
    ss["model_import_settings"]["input_filename"] = os.path.join(folder, "channel_forces.msh")
    if strategy.startswith("opencl"):
        ss["device"] = {"verbose": 0}
    if amg:  # Kratos' AMGCL block: the AMG-preconditioned flexible CG (K-cycle), one warning
        ss["linear_solver_settings"] = {"solver_type": "amgcl", "smoother_type": "ilu0", "krylov_type": "gmres",
                                        "coarsening_type": "aggregation", "max_iteration": 500,
                                        "coarse_enough": 20,  # a real hierarchy on this small mesh
                                        "tolerance": 1e-8, "verbosity": 0}
    if implicit:  # steps growing by at most 1.2x from the explicit rule's: the previous step is state
        ss["viscous_time_integration"] = "implicit"
        ss["time_stepping"] = {"automatic_time_step": True, "CFL_number": 0.5}
    if guess:
        ss["pressure_initial_guess"] = guess
    p["problem_data"]["end_time"] = end_time
    p["problem_data"]["steady_state"] = {"velocity_rate_tolerance": 1e-12, "check_interval": 4}
    # A time-dependent inlet: boundary values are evaluated at stage times inside the step.
    for blk in p["processes"]["boundary_conditions_process_list"]:
        par = blk["Parameters"]
        if blk["python_module"] == "assign_vector_variable_process" and "inlet" in par.get("model_part_name", ""):
            v = par["value"]
            if isinstance(v[0], str):
                v[0] = "(" + v[0] + ") * (1 - exp(-20 * t))"
    op = p["output_processes"]
    op["probes"][0]["Parameters"].pop("output_times", None)
    op["probes"][0]["Parameters"].update({"output_control_type": "step", "output_interval": 3})
    op["vtk"] = [{"python_module": "vtk_output_process", "Parameters": {
        "model_part_name": "FluidModelPart", "output_control_type": "step", "output_interval": 4,
        "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE", "REACTION"]}}]
    op["restart"] = [{"python_module": "save_restart_process", "kratos_module": "KratosMultiphysics",
                      "process_name": "SaveRestartProcess", "Parameters": {
                          "model_part_name": "FluidModelPart", "restart_control_type": "step",
                          "restart_save_frequency": 5, "max_files_to_keep": 2}}]
    return p


def write(work, name, p):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(p, f, indent=1)
    return path


def run(cli, args, **kw):
    return subprocess.run([cli, "run", *args, "--quiet"], capture_output=True, text=True, **kw)


def outputs(folder):
    names = []
    for root, _, files in os.walk(folder):
        for n in files:
            if n.endswith((".vtu", ".pvd", ".csv")):
                names.append(os.path.relpath(os.path.join(root, n), folder))
    return sorted(names)


def same_outputs(a, b, what):
    na, nb = outputs(a), outputs(b)
    expect(na == nb, f"{what}: different output files:\n  {na}\n  {nb}")
    for n in set(na) & set(nb):
        expect(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False), f"{what}: {n} differs")


def summary_renumbering(folder):
    with open(os.path.join(folder, "run_summary.json")) as f:
        return json.load(f)["mesh"].get("renumbering")


def rest_files(folder):
    d = os.path.join(folder, "FluidModelPart__restart_files")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def no_device(cli):
    r = subprocess.run([cli, "devices"], capture_output=True, text=True)
    return r.returncode != 0 or "fp64 yes" not in r.stdout


def check_identity(source, cli, work, strategy, amg=False, implicit=False, guess=None):
    if strategy.startswith("opencl") and no_device(cli):
        return 77
    p = case(source, strategy, amg=amg, implicit=implicit, guess=guess)
    path = write(work, "case", p)
    ref, split = os.path.join(work, "ref"), os.path.join(work, "split")
    r = run(cli, [path, "--steps", "20", "--output", ref])
    expect(r.returncode == 0, f"reference run failed: {r.stderr}")
    if amg:
        expect(r.stderr.count("solver_type \"amgcl\" runs AMG-preconditioned flexible CG") == 1
               and "smoother_type 'ilu0' -> l1-Jacobi" in r.stderr, f"amgcl warning missing or repeated: {r.stderr}")
        with open(os.path.join(ref, "run_summary.json")) as f:
            ps = json.load(f).get("strategy", {}).get("pressure_solver", {})
        its = ps.get("iterations_per_step", ps.get("cg_iterations", 0) / max(ps.get("steps", 1), 1))
        expect(1 < its < 40, f"amgcl: {its} pressure iterations per step (a one-level hierarchy takes 1)")
    # The first half runs on to step 14, so the restart must cut later rows, entries and files.
    r = run(cli, [path, "--steps", "14", "--output", split])
    expect(r.returncode == 0, f"first half failed: {r.stderr}")
    expect(rest_files(split) == ["FluidModelPart_10.rest", "FluidModelPart_14.rest"],
           f"max_files_to_keep 2 kept {rest_files(split)}")
    expect(os.path.exists(os.path.join(split, "vtk", "FluidModelPart_12.vtu")), "no output at step 12")
    rest = os.path.join(split, "FluidModelPart__restart_files", "FluidModelPart_10.rest")
    r = run(cli, [path, "--restart", rest, "--steps", "10", "--output", split])
    expect(r.returncode == 0, f"restarted run failed: {r.stderr}")
    same_outputs(ref, split, f"{strategy}: 20 steps vs 10 + restart + 10")
    with open(os.path.join(split, "run_summary.json")) as f:
        s = json.load(f)
    expect(s.get("status") == "completed" and s["run"]["steps"] == 20,
           f"restarted summary: status {s.get('status')}, steps {s['run']['steps']}")
    expect(s.get("restart", {}).get("restarted_from") == rest, "summary does not name the restart file")

    # The Python workflow continues the same way.
    env = dict(os.environ, PYTHONPATH=os.path.join(source, "python_scripts"))
    py = os.path.join(work, "python")
    r = run(cli, [path, "--steps", "10", "--output", py])
    code = ("import sys; from edgeflow import FluidAnalysis; "
            "FluidAnalysis(sys.argv[1], output_folder=sys.argv[2], max_steps=10, quiet=True, restart_file=sys.argv[3]).Run()")
    r = subprocess.run([sys.executable, "-c", code, path, py,
                        os.path.join(py, "FluidModelPart__restart_files", "FluidModelPart_10.rest")],
                       capture_output=True, text=True, env=env)
    expect(r.returncode == 0, f"Python restart failed: {r.stderr}")
    same_outputs(ref, py, f"{strategy}: 20 steps vs 10 + Python restart + 10")

    # Another strategy continues, and says the last bits will differ.
    other = "openmp_edge_based" if strategy.startswith("opencl") and not amg else None
    if other:
        cross = os.path.join(work, "cross")
        r = run(cli, [path, "--steps", "10", "--output", cross])
        rest = os.path.join(cross, "FluidModelPart__restart_files", "FluidModelPart_10.rest")
        expect(summary_renumbering(cross) == "morton", f"{strategy}: \"auto\" renumbering gave "
               f"{summary_renumbering(cross)!r}, expected \"morton\"")
        r = run(cli, [path, "--restart", rest, "--steps", "10", "--output", cross, "--solver-type", other])
        expect(r.returncode == 0 and "differ in the last bits" in r.stderr,
               f"restart on another strategy: exit {r.returncode}, {r.stderr}")
        expect(summary_renumbering(cross) == "morton", f"{other} continuing a morton file: ordering "
               f"{summary_renumbering(cross)!r}, expected the file's \"morton\"")
        # And back: the device continues the host's file in the host's ordering.
        back = os.path.join(work, "back")
        r = run(cli, [path, "--steps", "10", "--output", back, "--solver-type", other])
        rest = os.path.join(back, "FluidModelPart__restart_files", "FluidModelPart_10.rest")
        r = run(cli, [path, "--restart", rest, "--steps", "10", "--output", back])
        expect(r.returncode == 0 and "differ in the last bits" in r.stderr and summary_renumbering(back) == "rcm",
               f"{strategy} continuing an {other} file: exit {r.returncode}, ordering "
               f"{summary_renumbering(back)!r}, {r.stderr}")
    return 0


def check_refusals(source, cli, work):
    strategy = "openmp_edge_based"
    p = case(source, strategy)
    path = write(work, "case", p)
    out = os.path.join(work, "a")
    r = run(cli, [path, "--steps", "5", "--output", out])
    expect(r.returncode == 0, f"run failed: {r.stderr}")
    rest = os.path.join(out, "FluidModelPart__restart_files", "FluidModelPart_5.rest")
    expect(os.path.exists(rest), "no restart file at the end of a run with save_restart_process")
    expect(summary_renumbering(out) == "rcm", f"run_summary mesh.renumbering {summary_renumbering(out)!r}, "
           "expected \"rcm\" (\"auto\" on openmp_edge_based)")

    # Another mesh (one refinement level more).
    r = run(cli, [path, "--restart", rest, "--refine", "1", "--output", out])
    expect(r.returncode != 0 and "another mesh" in r.stderr and rest in r.stderr,
           f"restart on another mesh not refused clearly: {r.stderr}")
    # The node ordering: "auto" (the default) is the strategy's own ("rcm" here) and is recorded in the file; a
    # case that asks for another ordering explicitly meets another mesh, and is told which orderings differ.
    pm = case(source, strategy)
    pm["solver_settings"]["model_import_settings"]["renumbering"] = "morton"
    morton = write(work, "case_morton", pm)
    r = run(cli, [morton, "--restart", rest, "--output", out])
    expect(r.returncode != 0 and "another mesh" in r.stderr and
           'written with renumbering "rcm", this run used "morton"' in r.stderr,
           f"restart in another node ordering not refused clearly: {r.stderr}")
    # "auto" continues a file in the ordering that wrote it, whatever the strategy's own.
    out_m = os.path.join(work, "m")
    r = run(cli, [morton, "--steps", "5", "--output", out_m])
    expect(r.returncode == 0 and summary_renumbering(out_m) == "morton", f"morton run: {r.stderr}")
    rest_m = os.path.join(out_m, "FluidModelPart__restart_files", "FluidModelPart_5.rest")
    r = run(cli, [path, "--restart", rest_m, "--steps", "3", "--output", out_m])
    expect(r.returncode == 0 and summary_renumbering(out_m) == "morton",
           f"\"auto\" restart of a morton file: exit {r.returncode}, ordering {summary_renumbering(out_m)!r}, "
           f"{r.stderr}")
    # A newer format version.
    with open(rest, "rb") as f:
        data = bytearray(f.read())
    newer = os.path.join(work, "newer.rest")
    data[8:12] = struct.pack("<I", 99)
    with open(newer, "wb") as f:
        f.write(data)
    r = run(cli, [path, "--restart", newer, "--output", out])
    expect(r.returncode != 0 and "format version 99" in r.stderr and "newer" in r.stderr,
           f"newer format not refused clearly: {r.stderr}")
    # A damaged file.
    with open(rest, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF
    damaged = os.path.join(work, "damaged.rest")
    with open(damaged, "wb") as f:
        f.write(data)
    r = run(cli, [path, "--restart", damaged, "--output", out])
    expect(r.returncode != 0 and "damaged" in r.stderr, f"damaged file not refused clearly: {r.stderr}")

    # A fresh run into the folder of another run: refused; --overwrite removes only its files.
    mine = os.path.join(out, "notes.txt")
    with open(mine, "w") as f:
        f.write("the user's own file\n")
    r = run(cli, [path, "--steps", "2", "--output", out])
    expect(r.returncode != 0 and "--overwrite" in r.stderr, f"fresh run into another run's folder: {r.stderr}")
    expect(os.path.exists(os.path.join(out, "vtk", "FluidModelPart_4.vtu")), "a refused run removed outputs")
    r = run(cli, [path, "--steps", "2", "--output", out, "--overwrite"])
    expect(r.returncode == 0, f"--overwrite run failed: {r.stderr}")
    expect(os.path.exists(mine), "--overwrite removed a file the run did not create")
    expect(not os.path.exists(os.path.join(out, "vtk", "FluidModelPart_4.vtu")),
           "--overwrite left the previous run's step-4 output")
    with open(os.path.join(out, "edgeflow_manifest.txt")) as f:
        listed = f.read()
    expect("notes.txt" not in listed and "run_summary.json" in listed, f"manifest content:\n{listed}")
    return 0


def check_signal(source, cli, work, wall, sig=signal.SIGTERM):
    p = case(source, "openmp_edge_based", end_time=400.0)
    p["problem_data"]["steady_state"] = {"velocity_rate_tolerance": 0.0, "check_interval": 4}
    p["solver_settings"]["model_import_settings"]["refinement_levels"] = 1
    if wall:
        p["problem_data"]["max_wall_time"] = "00:00:04"
    path = write(work, "long", p)
    out = os.path.join(work, "stopped")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([cli, "run", path, "--output", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    if not wall:
        # Wait for the run to be in its loop (the first restart file), then ask it to stop.
        deadline = time.time() + 60
        while time.time() < deadline and not rest_files(out) and proc.poll() is None:
            time.sleep(0.1)
        proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    name = signal.Signals(sig).name  # "SIGTERM", "SIGINT"
    expect(proc.returncode == (75 if wall else 128 + int(sig)), f"exit {proc.returncode} after the stop: {stderr}")
    with open(os.path.join(out, "run_summary.json")) as f:
        s = json.load(f)
    expect(s.get("status") == "interrupted", f"summary status {s.get('status')}")
    expect(s.get("stop_reason") == ("max_wall_time" if wall else name), f"stop_reason {s.get('stop_reason')}")
    steps = s["run"]["steps"]
    # Outputs and "step" restart files are numbered by the steps the processes count: the user's time
    # steps when the stability limit cut the fixed step (it does here: refinement level 1); a stop
    # between two of them whose name a scheduled file already has adds the solver step.
    output_step = s.get("time_step", {}).get("output_steps", steps)
    last = s.get("restart", {}).get("last_file", "")
    expect(last.endswith((f"FluidModelPart_{output_step}.rest", f"FluidModelPart_{output_step}_s{steps}.rest"))
           and os.path.exists(last), f"no restart file of the stop step {steps} (user step {output_step}): '{last}'")
    expect(os.path.exists(os.path.join(out, "vtk", f"FluidModelPart_{output_step}.vtu")),
           f"the stop step's VTK (FluidModelPart_{output_step}.vtu) is missing")
    expect("--restart" in stderr, f"the stop message does not say how to continue: {stderr}")
    if not wall:
        expect(f"edgeflow: {name}: stopped after step {steps} " in stderr,
               f"the stop message does not name {name}: {stderr}")
    if wall:
        expect(abs(s["run"]["wall_seconds_total"] - 4.0) < 3.0,
               f"stopped after {s['run']['wall_seconds_total']} s with a 4 s limit")
        return 0
    # Continue a few steps, and compare with an uninterrupted run to the same step.
    r = run(cli, [path, "--restart", last, "--steps", "3", "--output", out], env=env)
    expect(r.returncode == 0, f"restart after {name} failed: {r.stderr}")
    ref = os.path.join(work, "uninterrupted")
    r = run(cli, [path, "--steps", str(steps + 3), "--output", ref], env=env)
    expect(r.returncode == 0, f"uninterrupted run failed: {r.stderr}")
    for csv in ("wall_forces.csv", "sections.csv"):
        expect(filecmp.cmp(os.path.join(ref, csv), os.path.join(out, csv), shallow=False),
               f"{csv} after {name} + restart differs from the uninterrupted run")
    return 0


def check_divergence(source, cli, work):
    """A run made unstable (CFL 8) stops at the first step whose velocity exceeds 100 x the case's
    velocity scale (1.5, the inlet's peak), long before the absolute bound 1e6, and the summary says
    failed, when and where."""
    p = case(source, "openmp_edge_based", end_time=5.0)
    p["output_processes"].pop("restart")
    p["solver_settings"]["time_stepping"] = {"automatic_time_step": True, "CFL_number": 8.0}
    path = write(work, "unstable", p)
    out = os.path.join(work, "out")
    r = run(cli, [path, "--output", out])
    expect(r.returncode == 1 and "diverged" in r.stderr, f"unstable run: exit {r.returncode}, {r.stderr}")
    expect("divergence_velocity_factor 100 x the case's velocity scale 1.5" in r.stderr,
           f"the error does not explain the relative bound: {r.stderr}")
    expect("step 2 " in r.stderr and "mesh node id" in r.stderr, f"the error does not say when and where: {r.stderr}")
    with open(os.path.join(out, "run_summary.json")) as f:
        s = json.load(f)
    expect(s.get("status") == "failed" and "diverged" in s.get("error", ""),
           f"summary status {s.get('status')}, error {s.get('error')}")
    # A failure before the loop (an unknown key) leaves a summary too.
    p["problem_data"]["end_tme"] = 1.0
    path = write(work, "bad", p)
    bad = os.path.join(work, "bad_out")
    r = run(cli, [path, "--output", bad])
    expect(r.returncode == 1, f"a bad key was accepted: {r.stderr}")
    try:
        with open(os.path.join(bad, "run_summary.json")) as f:
            s = json.load(f)
        expect(s.get("status") == "failed" and "end_tme" in s.get("error", ""), f"failure summary: {s}")
    except OSError as e:
        expect(False, f"no run_summary.json after a failed initialization: {e}")
    return 0


def main():
    source, cli, work, check = sys.argv[1:5]
    strategy = sys.argv[5] if len(sys.argv) > 5 else "openmp_edge_based"
    work = os.path.join(work, check + ("_" + strategy if check.startswith("identity") else ""))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if check in ("identity", "identity_amg", "identity_implicit", "identity_linear", "identity_quadratic"):
        rc = check_identity(source, cli, work, strategy, amg=check == "identity_amg",
                            implicit=check in ("identity_implicit", "identity_quadratic"),
                            guess={"identity_linear": "linear", "identity_quadratic": "quadratic"}.get(check))
    elif check == "refusals":
        rc = check_refusals(source, cli, work)
    elif check == "divergence":
        rc = check_divergence(source, cli, work)
    elif check in ("signal", "wall_time"):
        rc = check_signal(source, cli, work, check == "wall_time")
    elif check == "signal_int":
        rc = check_signal(source, cli, work, False, signal.SIGINT)
    else:
        print(f"unknown check {check}", file=sys.stderr)
        return 2
    if rc == 77:
        print("skipped: no OpenCL device")
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

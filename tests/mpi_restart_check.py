#!/usr/bin/env python3
"""Restart points under mpirun with the same rank count (issue 15; docs/restart.md, docs/mpi.md).

    python3 mpi_restart_check.py EDGEFLOW CASE.json MODE NP WORK [--solver-type S] [--density RHO]
                                 [--sigterm-steps N] -- MPIRUN...

--solver-type S runs every edgeflow command with `--solver-type S` (the same case on another strategy);
--density RHO writes solver_settings.density RHO into the case (a density other than 1 makes the model part's
rho p differ from the strategy's kinematic pressure in the last bits, so a restart that loses the strategy's
own pressure record shows in the outputs); --sigterm-steps N: the length of the sigterm mode's run (default 1200,
for the OpenMP strategy's 1 ms steps; the signal is sent at step 50).

MODE identity: 20 steps in one `mpirun -n NP` run against 10 + restart + 10 with the same NP (the first
  half runs to step 14, so the restart cuts later rows, entries and files): byte-identical .pvd, .pvtu,
  .vtu pieces and CSV files (forces on the lid every step, probes every 5 steps), max_files_to_keep 2
  kept exactly the points of steps 10 and 14 with their NP pieces each.
MODE refusal: the point of step 10 written on NP ranks, continued on NP + 1 ranks: every rank stops with
  "written on NP ranks, this run has NP+1", mpirun exits non-zero within 60 s; a damaged piece (one byte
  changed) is refused naming that piece; a point continued on one process is refused.
MODE wall_time: max_wall_time stops the NP-rank run (exit 75) with a restart point; the continuation ends
  where the uninterrupted run ends (the same last step and byte-identical outputs).
MODE sigterm: SIGTERM to one rank stops every rank after the same step with a restart point; the
  continuation ends where the uninterrupted run ends, byte-identical."""
import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import time

BASE = "FluidModelPart"


def fail(msg):
    sys.exit(f"mpi_restart_check: FAILED: {msg}")


def write_case(src, dst, wall_time=None, parallel_type="MPI", every=1, density=None):
    """every: the output and restart intervals are multiplied by it (the long wall-time runs)."""
    p = json.load(open(src))
    if density is not None:
        p["solver_settings"]["density"] = density
    case_dir = os.path.dirname(os.path.abspath(src))
    mis = p["solver_settings"]["model_import_settings"]
    mis["input_filename"] = os.path.normpath(os.path.join(case_dir, mis["input_filename"]))
    p["problem_data"]["parallel_type"] = parallel_type
    if wall_time is not None:
        p["problem_data"]["max_wall_time"] = wall_time
    mp = p["solver_settings"]["model_part_name"]
    p["output_processes"] = {
        "vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
            "model_part_name": mp, "output_control_type": "step", "output_interval": 2 * every, "file_format": "binary",
            "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE"]}}],
        "forces": [{"python_module": "compute_forces_process", "Parameters": {
            "model_part_name": mp + ".lid", "output_file_name": "lid_forces.csv", "output_control_type": "step",
            "output_interval": every}}],
        "probes": [{"python_module": "probes_output_process", "Parameters": {
            "model_part_name": mp, "output_file_name": "probes.csv",
            "lines": [{"start": [0.05, 0.5, 0.0], "end": [0.95, 0.5, 0.0], "n_points": 9}],
            "output_control_type": "step", "output_interval": 5 * every}}],
        "restart": [{"python_module": "save_restart_process", "Parameters": {
            "model_part_name": mp, "restart_control_type": "step", "restart_save_frequency": 5 * every,
            "max_files_to_keep": 2}}]}
    json.dump(p, open(dst, "w"), indent=1)


def outputs(folder):
    names = []
    for root, _, files in os.walk(folder):
        for n in files:
            if n.endswith((".vtu", ".pvtu", ".pvd", ".csv")):
                names.append(os.path.relpath(os.path.join(root, n), folder))
    return sorted(names)


def same_outputs(a, b, what):
    na, nb = outputs(a), outputs(b)
    if na != nb:
        fail(f"{what}: different output files:\n  {na}\n  {nb}")
    for n in na:
        if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False):
            fail(f"{what}: {n} differs")
    return len(na)


def rest_files(folder):
    d = os.path.join(folder, BASE + "__restart_files")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def main():
    sep = sys.argv.index("--")
    exe, case, mode, np_, work = sys.argv[1:6]
    options, extra, density, sigterm_steps = sys.argv[6:sep], [], None, 1200
    while options:
        if len(options) < 2 or options[0] not in ("--solver-type", "--density", "--sigterm-steps"):
            fail(f"unknown or incomplete option {options[0]} (expected --solver-type S, --density RHO or "
                 "--sigterm-steps N)")
        if options[0] == "--solver-type":
            extra += ["--solver-type", options[1]]
        elif options[0] == "--density":
            density = float(options[1])
        else:
            sigterm_steps = int(options[1])
            if sigterm_steps < 200:
                fail(f"--sigterm-steps {sigterm_steps}: at least 200 (the signal is sent at step 50)")
        options = options[2:]
    mpirun, np_ = sys.argv[sep + 1:], int(np_)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    path = os.path.join(work, "case.json")

    def case_file(dst, **kw):
        write_case(case, dst, density=density, **kw)

    case_file(path)

    def run(n, out, *args, timeout=300, case_path=path):
        cmd = (mpirun + ["-n", str(n)] if n else []) + [exe, "run", case_path, "--output", out, "--quiet", *extra,
                                                        *args]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r, time.time() - t0

    def point(out, step):
        return os.path.join(out, BASE + "__restart_files", f"{BASE}_{step}.rest")

    ref, split = os.path.join(work, "ref"), os.path.join(work, "split")
    if mode in ("identity", "refusal"):
        r, _ = run(np_, split, "--steps", "14" if mode == "identity" else "10")
        if r.returncode:
            fail(f"first half exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    if mode == "identity":
        expect = sorted([f"{BASE}_{s}.rest" for s in (10, 14)] +
                        [f"{BASE}_{s}.rank{k}.rest" for s in (10, 14) for k in range(np_)])
        if rest_files(split) != expect:
            fail(f"max_files_to_keep 2 kept {rest_files(split)}, expected {expect}")
        if not os.path.exists(os.path.join(split, "vtk", f"{BASE}_12.pvtu")):
            fail("no output at step 12")
        r, _ = run(np_, ref, "--steps", "20")
        if r.returncode:
            fail(f"reference run exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        r, _ = run(np_, split, "--steps", "10", "--restart", point(split, 10))
        if r.returncode:
            fail(f"restarted run exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        n = same_outputs(ref, split, f"{np_} ranks: 20 steps vs 10 + restart + 10")
        s = json.load(open(os.path.join(split, "run_summary.json")))
        if s.get("status") != "completed" or s["run"]["steps"] != 20:
            fail(f"restarted summary: status {s.get('status')}, steps {s['run']['steps']}")
        print(f"mpi_restart_check: {np_} ranks: 20 steps vs 10 + restart + 10: {n} output files byte-identical")
    elif mode == "refusal":
        r, sec = run(np_ + 1, split, "--steps", "10", "--restart", point(split, 10), timeout=120)
        want = f"written on {np_} ranks, this run has {np_ + 1}"
        if r.returncode == 0 or want not in r.stderr or sec > 60:
            fail(f"restart on {np_ + 1} ranks: exit {r.returncode} after {sec:.1f} s, expected '{want}':\n{r.stderr}")
        print(f"mpi_restart_check: {np_ + 1} ranks refused in {sec:.1f} s: {want}")
        one = os.path.join(work, "one_process.json")
        case_file(one, parallel_type="OpenMP")
        r, sec = run(0, split, "--steps", "10", "--restart", point(split, 10), timeout=120, case_path=one)
        want = f"written on {np_} ranks, this run is one process"
        if r.returncode == 0 or want not in r.stderr:
            fail(f"restart on one process: exit {r.returncode}, expected '{want}':\n{r.stderr}")
        piece = os.path.join(split, BASE + "__restart_files", f"{BASE}_10.rank{np_ - 1}.rest")
        data = bytearray(open(piece, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(piece, "wb").write(bytes(data))
        r, sec = run(np_, split, "--steps", "10", "--restart", point(split, 10), timeout=120)
        want = f"{BASE}_10.rank{np_ - 1}.rest"
        if r.returncode == 0 or want not in r.stderr or "damaged" not in r.stderr or sec > 60:
            fail(f"damaged piece: exit {r.returncode} after {sec:.1f} s, expected '{want}' damaged:\n{r.stderr}")
        os.remove(piece)
        r, sec = run(np_, split, "--steps", "10", "--restart", point(split, 10), timeout=120)
        if r.returncode == 0 or "is missing" not in r.stderr or want not in r.stderr or sec > 60:
            fail(f"missing piece: exit {r.returncode} after {sec:.1f} s:\n{r.stderr}")
        print(f"mpi_restart_check: damaged and missing piece of rank {np_ - 1} refused ({sec:.1f} s)")
    elif mode == "wall_time":
        # A short limit stops the run part-way with a restart point; the continuation runs to the end.  The
        # run is long (3000 steps, outputs every 50x as many steps) so that the limit falls inside it on a
        # fast idle machine too: a step of this case takes about 1 ms there, 400 steps less than the limit.
        steps, wall = 3000, 0.6
        wpath, rpath = os.path.join(work, "wall.json"), os.path.join(work, "wall_ref.json")
        case_file(wpath, wall_time=wall, every=50)
        case_file(rpath, every=50)
        r, _ = run(np_, split, "--steps", str(steps), case_path=wpath)
        if r.returncode != 75 or "restart point" not in r.stderr:
            fail(f"max_wall_time run: exit {r.returncode} (expected 75), no restart point:\n{r.stderr}")
        s = json.load(open(os.path.join(split, "run_summary.json")))
        last = s.get("restart", {}).get("last_file", "")
        stopped = s["run"]["steps"]
        if s.get("status") != "interrupted" or not last or not os.path.exists(last) or stopped >= steps:
            fail(f"max_wall_time summary: status {s.get('status')}, last_file '{last}', steps {stopped}")
        r, _ = run(np_, ref, "--steps", str(steps), case_path=rpath)
        if r.returncode:
            fail(f"reference run exited {r.returncode}:\n{r.stderr}")
        r, _ = run(np_, split, "--steps", str(steps - stopped), "--restart", last, case_path=rpath)
        if r.returncode:
            fail(f"continuation exited {r.returncode}:\n{r.stderr}")
        s = json.load(open(os.path.join(split, "run_summary.json")))
        if s["run"]["steps"] != steps or s.get("status") != "completed":
            fail(f"continuation ended at step {s['run']['steps']}, status {s.get('status')}")
        n = same_outputs(ref, split, f"{np_} ranks: max_wall_time stop at step {stopped} + restart")
        print(f"mpi_restart_check: max_wall_time stopped {np_} ranks after step {stopped}; continued to step {steps}, "
              f"{n} output files byte-identical")
    elif mode == "sigterm":
        # SIGTERM to one rank (as a batch system signals a job's processes): every rank stops after the same
        # step with a restart point (mpirun's exit status is its own); the continuation ends at the last step.
        # Long enough (1200 steps, outputs every 10x as many steps) that the signal, sent once the first point
        # (step 50) exists, lands inside the run on a fast idle machine too (about 1 ms a step there).
        steps = sigterm_steps
        lpath = os.path.join(work, "long.json")
        case_file(lpath, every=10)
        cmd = mpirun + ["-n", str(np_), exe, "run", lpath, "--output", split, "--quiet", *extra, "--steps", str(steps)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.time()
        while not os.path.exists(point(split, 50)) and time.time() - t0 < 60 and proc.poll() is None:
            time.sleep(0.05)
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if proc.poll() is not None or not ranks:
            fail(f"the run ended before the signal (exit {proc.poll()}), ranks {ranks}")
        os.kill(int(ranks[-1]), signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        s = json.load(open(os.path.join(split, "run_summary.json")))
        last, stopped = s.get("restart", {}).get("last_file", ""), s["run"]["steps"]
        if (s.get("status") != "interrupted" or s.get("stop_reason") != "SIGTERM" or not os.path.exists(last) or
                f"SIGTERM: all {np_} ranks stopped after step {stopped}" not in err or stopped >= steps):
            fail(f"SIGTERM: status {s.get('status')}, reason {s.get('stop_reason')}, last_file '{last}':\n{err}")
        r, _ = run(np_, ref, "--steps", str(steps), case_path=lpath)
        if r.returncode:
            fail(f"reference run exited {r.returncode}:\n{r.stderr}")
        r, _ = run(np_, split, "--steps", str(steps - stopped), "--restart", last, case_path=lpath)
        if r.returncode:
            fail(f"continuation exited {r.returncode}:\n{r.stderr}")
        n = same_outputs(ref, split, f"{np_} ranks: SIGTERM at step {stopped} + restart")
        print(f"mpi_restart_check: SIGTERM to one rank stopped {np_} ranks after step {stopped}; continued to step "
              f"{steps}, {n} output files byte-identical")
    else:
        fail(f"unknown mode {mode}")
    print("mpi_restart_check: PASSED")


if __name__ == "__main__":
    main()

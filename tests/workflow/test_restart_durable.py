#!/usr/bin/env python3
"""Every output is durable when a restart file is written (docs/restart.md).

The channel_forces case (test_restart.py's: forces and probe CSV files, a .vtu every 4 steps, a
restart file every 5 steps; sync_each_file and sync_each_row off, the defaults) runs 20 steps
under an LD_PRELOAD shim (tests/fsync_log.c) that logs, in order, every fsync/fdatasync, rename,
write and pwrite with the file's path.  Replaying the log, an output file (.vtu, .pvd, .csv) is
dirty from a write to it, or from being renamed into place from a temporary file that was not
synced, until it is synced; the folder of a renamed output is dirty until the folder is synced.
At each rename that puts a restart file (.rest) in place, no output and no such folder may be
dirty.  Deterministic: it counts events, not time.  Also checked, so the test cannot pass
vacuously: 4 restart files were put in place (steps 5, 10, 15, 20), outputs were dirty before
the first of them (the .vtu of step 4, rows of both CSV files), and the shim saw the writes.

    test_restart_durable.py SOURCE CLI SHIM WORK
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_restart  # noqa: E402  (the case of the restart tests)

failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)


def is_output(path):
    return path.endswith((".vtu", ".pvd", ".csv"))


def main():
    source, cli, shim, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    work = os.path.realpath(work)
    p = test_restart.case(source, "openmp_edge_based")
    path = test_restart.write(work, "case", p)
    out = os.path.join(work, "out")
    log = os.path.join(work, "fsync.log")
    env = dict(os.environ, LD_PRELOAD=shim, EF_FSYNC_LOG=log)
    r = subprocess.run([cli, "run", path, "--steps", "20", "--output", out, "--quiet"], capture_output=True,
                       text=True, env=env, cwd=work)
    expect(r.returncode == 0, f"run failed: {r.stderr}")
    with open(log) as f:
        events = [line.rstrip("\n").split("\t") for line in f if line.strip()]

    def norm(p):
        return os.path.realpath(os.path.join(work, p))

    dirty, dirty_folders, synced_temps = {}, set(), set()
    restarts, dirty_before_first, writes = [], None, 0
    for e in events:
        kind = e[0]
        if kind == "write":
            writes += 1
            path = norm(e[1])
            if is_output(path):
                dirty[path] = True
            else:
                synced_temps.discard(path)
        elif kind == "sync":
            path = norm(e[1])
            dirty_folders.discard(path)
            if is_output(path):
                dirty[path] = False
            else:
                synced_temps.add(path)
        elif kind == "rename":
            old, new = norm(e[1]), norm(e[2])
            if new.endswith(".rest"):
                now = sorted(os.path.relpath(q, out) for q, d in dirty.items() if d)
                folders = sorted(os.path.relpath(q, out) for q in dirty_folders)
                if dirty_before_first is None:
                    dirty_before_first = len([q for q in dirty if q.endswith((".vtu", ".csv"))])
                restarts.append(os.path.basename(new))
                expect(not now and not folders,
                       f"restart file {os.path.basename(new)} put in place while outputs were not synced: "
                       f"files {now}, folders {folders}")
            elif is_output(new):
                dirty[new] = old not in synced_temps
                dirty_folders.add(os.path.dirname(new))
            synced_temps.discard(old)
    expect(restarts == [f"FluidModelPart_{k}.rest" for k in (5, 10, 15, 20)],
           f"restart files put in place: {restarts}")
    expect(writes > 20, f"the shim saw {writes} writes: is it loaded?")
    # Before the first restart: FluidModelPart_4.vtu, its .pvd's entries, and rows of both CSV files.
    expect(dirty_before_first is not None and dirty_before_first >= 3,
           f"only {dirty_before_first} outputs written before the first restart file")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Load the two real Kratos cases as a Kratos user brings them.

Only solver_type is changed to ours (plus, in the second variant, density and
viscosity added to solver_settings); the mdpa stays where it is and is named by
an absolute path.  The remeshing (mmg_process) and GiD output blocks must be an
error naming the module unless --skip-unsupported is given.

usage: kratos_cases.py EDGEFLOW_BINARY SHARED_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

SKIP = 77


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def main():
    edgeflow, shared, work = sys.argv[1:4]
    cases = os.path.join(shared, "kratos_cases")
    if not os.path.isdir(cases):
        print("no shared/kratos_cases: skipped")
        return SKIP
    os.makedirs(work, exist_ok=True)
    failures = []
    expected = {  # counted from the mdpa files with awk over their Nodes/Elements blocks
        "channel_sphere2D": ("2D_sphere_remeshed_channel_test", 2),
        "channel_sphere3D": ("3D_sphere_remeshed_channel_test", 3),
    }
    for case, (mesh, dim) in expected.items():
        src = os.path.join(cases, case)
        with open(os.path.join(src, "ProjectParameters.json")) as f:
            original = json.load(f)
        mdpa = os.path.join(src, mesh)
        for variant in ("solver_type_only", "with_fluid_properties"):
            params = json.loads(json.dumps(original))
            s = params["solver_settings"]
            s["solver_type"] = "openmp_edge_based"
            s["model_import_settings"]["input_filename"] = mdpa
            if variant == "with_fluid_properties":
                s["density"] = 1.0
                s["viscosity"] = 1.0e-3
            path = os.path.join(work, f"{case}_{variant}.json")
            with open(path, "w") as f:
                json.dump(params, f, indent=2)

            # Without the switch: an error naming the unsupported module.
            rc, out = run([edgeflow, "load", path, "--output", os.path.join(work, case)])
            if rc == 0 or "mmg_process" not in out or "skip_unsupported_processes" not in out:
                failures.append(f"{case}/{variant}: expected an error naming mmg_process, got rc={rc}:\n{out}")

            rc, out = run([edgeflow, "load", path, "--skip-unsupported", "--output", os.path.join(work, case)])
            if rc != 0:
                failures.append(f"{case}/{variant}: load failed rc={rc}:\n{out}")
                continue
            print(out)
            for needle in ("mmg_process", "gid_output_process", "time_order"):
                if needle not in out:
                    failures.append(f"{case}/{variant}: output does not mention '{needle}'")
            source = "solver_settings" if variant == "with_fluid_properties" else "mesh Properties"
            if f"(from {source})" not in out:
                failures.append(f"{case}/{variant}: fluid properties not taken from {source}")
            if f"{dim}D" not in out and f"dimension {dim}" not in out:
                failures.append(f"{case}/{variant}: summary does not state dimension {dim}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

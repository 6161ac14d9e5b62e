#!/usr/bin/env python3
"""mpi_scaling.py -- strong and weak scaling of the OpenCL strategy on several ranks (issue 15, docs/mpi.md).

    python3 benchmarks/mpi_scaling.py --build BUILD --ranks 1,2,4 [--strong-levels 3,4] [--weak]
                                      [--overlap on|off|both] [--out FILE.json]

Strong scaling: the 3D cavity (test_examples/cavity3d) at refinement_levels 3 (1.46M nodes) and 4 (11.6M),
parallel_type "MPI", opencl_edge_based, Jacobi CG at a tolerance (the distributed CG takes the one-process CG's
iteration counts: the counts are printed per rank count and a difference is flagged), a few steps, no output.
Weak scaling: a box of (P n) x n x n cubes (6 Kuhn tetrahedra each), P the rank count, written here as a Gmsh 2.2
file and refined --weak-levels times by the reader (the piece per rank is about (2^L n)^3 nodes: 5.5M at the
defaults n 44, L 2), the lid z = 1 moving in x, walls elsewhere, the pressure fixed at (P/2, 0, 0); on P > 1
ranks every pressure solve runs exactly --fixed-iterations CG iterations (device.mpi_fixed_cg_iterations), so a
step is the same work per rank at every P.  One rank runs the one-process path (its CG stops at the tolerance;
its step at the fixed count is modelled as the step without the CG plus the fixed count times its measured
time per iteration, the "step_fixed_seconds" of each row).

Per rank count it prints the time per step, per CG iteration, the share of the loop in halo exchanges and
reductions (the largest over the ranks of run_summary.json's strategy.mpi.exchange_seconds over the loop's wall
time) and the efficiencies (strong: t1 / (P tP) against the fewest ranks run; weak: t1 / tP), and writes every
run's figures to --out (JSON, rewritten after each run so a cut-off session keeps what ran; --resume then runs
only what is missing).

Ranks and devices: each rank gets EDGEFLOW_OPENCL_DEVICE from --device, "{local_rank}" replaced by the rank's
local rank (default "gpu:{local_rank}": one GPU a rank); mpirun gets --mpirun-args (default
"-x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none": Open MPI drops NVIDIA's ICD entry
otherwise, docs/mpi.md; --allow-run-as-root is added as root).  On a machine without GPUs: --device cpu
--mpirun-args="--oversubscribe" (with "=": the value starts with a dash).
Needs Python 3 and numpy (the box writer); no VTK.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CAVITY = os.path.join(ROOT, "test_examples", "cavity3d")
LOCAL_RANK = "${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}"


def write_box_msh(path, nx, ny, nz, lx, ly, lz):
    """A Gmsh 2.2 ASCII box [0,lx]x[0,ly]x[0,lz] of nx ny nz cubes, each the six Kuhn tetrahedra along its
    000-111 diagonal (conforming); boundary triangles split along the same diagonals: physical 1 "lid" (z = lz),
    2 "walls" (the other faces), 3 "fluid" (the tetrahedra), 4 "pressure_reference" (the node at (nx/2, 0, 0))."""
    import numpy as np

    def nid(i, j, k):
        return (k * (ny + 1) + j) * (nx + 1) + i + 1

    i, j, k = np.meshgrid(np.arange(nx + 1), np.arange(ny + 1), np.arange(nz + 1), indexing="ij")
    i, j, k = (a.transpose(2, 1, 0).ravel() for a in (i, j, k))  # node order: i fastest, then j, then k
    nodes = np.column_stack([nid(i, j, k), lx * i / nx, ly * j / ny, lz * k / nz])
    ci, cj, ck = (a.transpose(2, 1, 0).ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz),
                                                                   indexing="ij"))
    tets = []
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        v = [ci.copy(), cj.copy(), ck.copy()]
        t = [nid(*v)]
        for axis in perm:
            v[axis] = v[axis] + 1
            t.append(nid(*v))
        tets.append(np.column_stack(t))
    tets = np.vstack(tets)

    def face(fixed_axis, value, n1, n2):
        # triangles of the plane axis = value; (a, b) the other two axes with n1, n2 cells: low-high diagonal
        a, b = np.meshgrid(np.arange(n1), np.arange(n2), indexing="ij")
        a, b = a.ravel(), b.ravel()
        axes = [ax for ax in range(3) if ax != fixed_axis]

        def node(da, db):
            c = [None, None, None]
            c[fixed_axis] = np.full_like(a, value)
            c[axes[0]] = a + da
            c[axes[1]] = b + db
            return nid(*c)

        return np.vstack([np.column_stack([node(0, 0), node(1, 0), node(1, 1)]),
                          np.column_stack([node(0, 0), node(1, 1), node(0, 1)])])

    lid = face(2, nz, nx, ny)
    walls = np.vstack([face(2, 0, nx, ny), face(0, 0, ny, nz), face(0, nx, ny, nz), face(1, 0, nx, nz),
                       face(1, ny, nx, nz)])
    ref = nid(nx // 2, 0, 0)
    with open(path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n0 4 \"pressure_reference\"\n"
                "2 1 \"lid\"\n2 2 \"walls\"\n3 3 \"fluid\"\n$EndPhysicalNames\n")
        f.write("$Nodes\n%d\n" % len(nodes))
        np.savetxt(f, nodes, fmt=["%d", "%.17g", "%.17g", "%.17g"])
        f.write("$EndNodes\n$Elements\n%d\n" % (1 + len(lid) + len(walls) + len(tets)))
        f.write("1 15 2 4 4 %d\n" % ref)
        eid = 2
        for tris, phys in ((lid, 1), (walls, 2)):
            ids = np.arange(eid, eid + len(tris))
            np.savetxt(f, np.column_stack([ids, np.full(len(tris), 2), np.full(len(tris), 2), np.full(len(tris), phys),
                                           np.full(len(tris), phys), tris]), fmt="%d")
            eid += len(tris)
        ids = np.arange(eid, eid + len(tets))
        np.savetxt(f, np.column_stack([ids, np.full(len(tets), 4), np.full(len(tets), 2), np.full(len(tets), 3),
                                       np.full(len(tets), 3), tets]), fmt="%d")
        f.write("$EndElements\n")
    return len(nodes), len(tets)


def case_json(mesh, levels, ranks, tolerance, max_iteration, fixed, overlap, solver=None):
    """The cavity's case file on mesh: no output, the device chosen by the environment; solver: keys merged into
    linear_solver_settings (--linear-solver)."""
    with open(os.path.join(CAVITY, "ProjectParameters.json")) as f:
        case = json.load(f)
    case["problem_data"]["parallel_type"] = "MPI" if ranks > 1 else "OpenMP"
    case["problem_data"]["end_time"] = 1.0e6
    case["problem_data"]["progress_interval"] = 1
    s = case["solver_settings"]
    s["model_import_settings"]["input_filename"] = mesh
    s["model_import_settings"]["refinement_levels"] = levels
    s["linear_solver_settings"] = {"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": tolerance,
                                   "max_iteration": max_iteration}
    s["linear_solver_settings"].update(solver or {})
    s["device"] = {"mpi_overlap": overlap, "mpi_fixed_cg_iterations": fixed if ranks > 1 else 0}
    case["output_processes"] = {}
    return case


def run_one(args, name, case, ranks, log):
    """mpirun -n ranks edgeflow run; the run summary of rank 0 (None on failure)."""
    folder = os.path.join(args.workdir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "case.json")
    with open(path, "w") as f:
        json.dump(case, f, indent=1)
    edgeflow = os.path.join(os.path.abspath(args.build), "bin", "edgeflow")
    device = args.device.replace("{local_rank}", LOCAL_RANK)
    wrapper = 'export EDGEFLOW_OPENCL_DEVICE="%s"; exec "$@"' % device
    root = ["--allow-run-as-root"] if os.geteuid() == 0 and "--allow-run-as-root" not in args.mpirun_args else []
    cmd = ([args.mpirun, "-n", str(ranks)] + root + shlex.split(args.mpirun_args) +
           ["sh", "-c", wrapper, "sh", edgeflow, "run", path, "--steps", str(args.steps), "--overwrite", "--output",
            os.path.join(folder, "out")])
    log.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
    log.flush()
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
    wall = time.time() - t0
    log.write(p.stdout)
    log.flush()
    summary = os.path.join(folder, "out", "run_summary.json")
    if p.returncode != 0 or not os.path.exists(summary):
        tail = "\n".join(p.stdout.splitlines()[-8:])
        print("  %s on %d ranks FAILED (exit %d):\n%s" % (name, ranks, p.returncode, tail), flush=True)
        return None, wall
    with open(summary) as f:
        return json.load(f), wall


def figures(summary, steps, fixed):
    """Per-step, per-iteration and exchange figures of one run summary."""
    run = summary["run"]
    st = summary["strategy"]
    ps = st.get("pressure_solver", {})
    its = ps.get("cg_iterations", summary.get("pressure_solver_iterations", {}).get("total", 0))
    cg = ps.get("cg_seconds", 0.0)
    loop = run["wall_seconds_loop"]
    n = run["steps"]
    exch = st.get("mpi", {}).get("exchange_seconds", [0.0])
    t_iter = cg / its if its else float("nan")
    # the pressure solver's first set-up (an AMG hierarchy: host aggregation, upload, program builds on a cold
    # cache) is a one-off inside the first step: left out of the time per step, reported apart
    first = summary.get("events", {}).get("setup", {}).get("pressure solver set-up (first step)", {}).get("seconds", 0.0)
    t_step = (loop - first) / n
    row = {"steps": n, "seconds_per_step": t_step, "first_setup_seconds": first, "cg_iterations": its,
           "cg_iterations_per_step": its / n,
           "cg_seconds": cg, "seconds_per_cg_iteration": t_iter, "loop_seconds": loop,
           "exchange_seconds": exch, "exchange_share": max(exch) / loop if loop > 0 else 0.0,
           "mpi_overlap": st.get("mpi_overlap"), "device": st.get("device", {}).get("name"),
           "rank0_nodes": summary.get("mesh", {}).get("nodes")}
    # the step at the fixed CG count: measured where the count was fixed, else the step without the CG + the count
    row["step_fixed_seconds"] = (t_step - cg / n + fixed * t_iter) if fixed else t_step
    return row


def report(rows, kind):
    """Efficiencies against the row of the fewest ranks (per overlap setting)."""
    for overlap in sorted({r["overlap"] for r in rows}):
        group = sorted([r for r in rows if r["overlap"] == overlap or r["ranks"] == 1], key=lambda r: r["ranks"])
        if not group:
            continue
        base = group[0]
        for r in group:
            p = r["ranks"] / base["ranks"]
            if kind == "strong":
                r["efficiency_step"] = base["seconds_per_step"] / (p * r["seconds_per_step"])
                r["efficiency_cg_iteration"] = base["seconds_per_cg_iteration"] / (p * r["seconds_per_cg_iteration"])
            else:
                r["efficiency_step"] = base["step_fixed_seconds"] / r["step_fixed_seconds"]
                r["efficiency_cg_iteration"] = base["seconds_per_cg_iteration"] / r["seconds_per_cg_iteration"]


def table(rows, title):
    print("\n%s" % title)
    print("%5s %7s %12s %12s %14s %10s %9s %9s %9s" % ("ranks", "overlap", "s/step", "s/step@N", "us/CG iter",
                                                       "CG it/step", "exchange", "eff step", "eff iter"))
    for r in sorted(rows, key=lambda r: (r["ranks"] > 1 and not r["overlap"], r["ranks"])):
        print("%5d %7s %12.5f %12.5f %14.2f %10.1f %8.1f%% %8.1f%% %8.1f%%" % (
            r["ranks"], "on" if r["overlap"] else "off", r["seconds_per_step"], r["step_fixed_seconds"],
            1e6 * r["seconds_per_cg_iteration"], r["cg_iterations_per_step"], 100 * r["exchange_share"],
            100 * r.get("efficiency_step", float("nan")), 100 * r.get("efficiency_cg_iteration", float("nan"))))
    its = {r["cg_iterations"] for r in rows if r["ranks"] > 0}
    if title.startswith("strong") and len(its) > 1:
        print("  note: CG iterations differ between rank counts: %s (efficiency per step compares different work)"
              % sorted(its))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build folder with bin/edgeflow (EDGEFLOW_MPI on)")
    ap.add_argument("--ranks", default="1,2,4", help="rank counts, comma-separated")
    ap.add_argument("--strong-levels", default="3,4", help="cavity refinement levels for strong scaling ('' none)")
    ap.add_argument("--weak", action="store_true", help="run the weak scaling too")
    ap.add_argument("--weak-only", action="store_true", help="only the weak scaling")
    ap.add_argument("--weak-cells", type=int, default=44, help="coarse cubes per unit length of the box (n)")
    ap.add_argument("--weak-levels", type=int, default=2, help="refinement levels of the box")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=1e-6, help="pressure CG tolerance")
    ap.add_argument("--linear-solver", default="",
                    help="strong scaling: JSON merged into linear_solver_settings, e.g. "
                         "'{\"solver_type\": \"fcg\", \"preconditioner_type\": \"amg\"}' (the device AMG across "
                         "ranks; its iteration counts may differ by rank count, so compare the time per step); the run "
                         "names get --tag")
    ap.add_argument("--tag", default="", help="suffix of the run names (with --linear-solver)")
    ap.add_argument("--max-iteration", type=int, default=20000)
    ap.add_argument("--fixed-iterations", type=int, default=200, help="weak scaling: CG iterations per solve, P > 1")
    ap.add_argument("--overlap", choices=("on", "off", "both"), default="on", help="device.mpi_overlap on P > 1")
    ap.add_argument("--device", default="gpu:{local_rank}", help="EDGEFLOW_OPENCL_DEVICE of each rank")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpirun-args", default="-x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none",
                    help='extra mpirun arguments, one string (write --mpirun-args="..." when it starts with a dash)')
    ap.add_argument("--workdir", default="mpi_scaling_work")
    ap.add_argument("--out", default="mpi_scaling.json")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds for one mpirun")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in --out (same name: level or box, ranks, overlap) and run the rest")
    args = ap.parse_args()
    ranks = [int(x) for x in args.ranks.split(",") if x]
    if not ranks or min(ranks) < 1:
        ap.error("--ranks: positive integers, e.g. 1,2,4")
    levels = [int(x) for x in args.strong_levels.split(",") if x] if not args.weak_only else []
    if not os.path.exists(os.path.join(args.build, "bin", "edgeflow")):
        ap.error("no %s/bin/edgeflow" % args.build)
    os.makedirs(args.workdir, exist_ok=True)
    overlaps = {"on": [True], "off": [False], "both": [True, False]}[args.overlap]
    solver = json.loads(args.linear_solver) if args.linear_solver else None
    result = {"commands": [" ".join(shlex.quote(a) for a in sys.argv)], "steps": args.steps,
              "tolerance": args.tolerance, "fixed_iterations": args.fixed_iterations, "strong": {}, "weak": []}
    previous = {}
    if args.resume and os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
        result["commands"] = old.get("commands", []) + result["commands"]
        for rows in list(old.get("strong", {}).values()) + [old.get("weak", [])]:
            previous.update({r["name"]: r for r in rows if "name" in r})
    log = open(os.path.join(args.workdir, "runs.log"), "a")

    def save():
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)

    mesh = os.path.join(CAVITY, "cavity3d.msh")
    for level in levels:
        rows = []
        for p in ranks:
            for overlap in (overlaps if p > 1 else [True]):
                name = "strong_L%d_np%d_%s%s" % (level, p, "on" if overlap else "off", args.tag)
                if name in previous:
                    rows.append(previous[name])
                    continue
                print("strong L%d, %d ranks, overlap %s ..." % (level, p, overlap), flush=True)
                s, wall = run_one(args, name, case_json(mesh, level, p, args.tolerance, args.max_iteration, 0, overlap,
                                                        solver), p, log)
                if s:
                    row = figures(s, args.steps, 0)
                    row.update(name=name, ranks=p, overlap=overlap, level=level, wall_seconds=wall)
                    rows.append(row)
                report(rows, "strong")
                result["strong"]["L%d" % level] = rows
                save()
        table(rows, "strong scaling: cavity3d level %d" % level)
    if args.weak or args.weak_only:
        rows = []
        n = args.weak_cells
        for p in ranks:
            box = os.path.join(os.path.abspath(args.workdir), "box_np%d.msh" % p)
            names = ["weak_np%d_%s" % (p, "on" if o else "off") for o in (overlaps if p > 1 else [True])]
            if all(name in previous for name in names):
                rows += [previous[name] for name in names]
                continue
            if not os.path.exists(box):
                print("writing %s (%d x %d x %d cubes) ..." % (box, p * n, n, n), flush=True)
                write_box_msh(box + ".tmp", p * n, n, n, float(p), 1.0, 1.0)
                os.replace(box + ".tmp", box)
            f = 2 ** args.weak_levels
            nodes = (f * p * n + 1) * (f * n + 1) ** 2
            for overlap in (overlaps if p > 1 else [True]):
                name = "weak_np%d_%s" % (p, "on" if overlap else "off")
                if name in previous:
                    rows.append(previous[name])
                    continue
                print("weak, %d ranks, %d nodes, overlap %s ..." % (p, nodes, overlap), flush=True)
                case = case_json(box, args.weak_levels, p, args.tolerance, args.max_iteration, args.fixed_iterations,
                                 overlap)
                s, wall = run_one(args, name, case, p, log)
                if s:
                    row = figures(s, args.steps, args.fixed_iterations)
                    row.update(name=name, ranks=p, overlap=overlap, nodes=nodes, nodes_per_rank=nodes / p,
                               wall_seconds=wall)
                    rows.append(row)
                report(rows, "weak")
                result["weak"] = rows
                save()
        table(rows, "weak scaling: box, about %.2fM nodes a rank, %d CG iterations a solve on P > 1"
              % ((2 ** args.weak_levels * n) ** 3 / 1e6, args.fixed_iterations))
    save()
    print("\nwritten: %s (runs logged in %s)" % (args.out, os.path.join(args.workdir, "runs.log")))


if __name__ == "__main__":
    main()

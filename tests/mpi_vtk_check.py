"""mpi_vtk_check.py -- the partitioned VTK output of a run under mpirun against one process (docs/mpi.md).

    python3 mpi_vtk_check.py EDGEFLOW CASE.json NP WORK -- MPIRUN...

Writes two copies of CASE.json (parallel_type "MPI" and "OpenMP") with a binary vtk_output_process every
10 steps (NODE_ID written), runs 10 steps of each (`MPIRUN -n NP EDGEFLOW run` and `EDGEFLOW run`), then
reads the last step back with the VTK library: the .pvtu with vtkXMLPUnstructuredGridReader and the
serial .vtu with vtkXMLUnstructuredGridReader.  Passes when the .pvd names the .pvtu files, the .pvtu
names NP pieces, the pieces hold every element once (as many cells as the serial file) with PARTITION
0..NP-1, every node is there, and VELOCITY and PRESSURE of every point (ghost copies included) equal the
serial field at its NODE_ID to 1e-8 relative (max norm), the lid's compute_forces_process rows (every step,
summed over the ranks once, written by rank 0) equal the serial ones to 1e-8 relative to the largest
component, the probes_output_process rows (38 points on two lines, every 5 steps, each answered by one rank)
equal the serial ones to 1e-8 relative, so does the last rate of a stop_when_steady_process (a tolerance
never met); run_summary.json reports NP ranks and NP exchange times, and with opencl_edge_based NP devices
(strategy.mpi.devices: this host and the device name of strategy.device, as every rank runs PoCL's CPU device
here).  Prints the figures."""
import collections
import json
import os
import shutil
import socket
import subprocess
import sys

import vtk
from vtk.util.numpy_support import vtk_to_numpy

TOL = 1e-8
STEPS = 10


def write_case(src, dst, parallel_type):
    p = json.load(open(src))
    case_dir = os.path.dirname(os.path.abspath(src))
    mis = p["solver_settings"]["model_import_settings"]
    mis["input_filename"] = os.path.normpath(os.path.join(case_dir, mis["input_filename"]))
    p["problem_data"]["parallel_type"] = parallel_type
    # stop_when_steady_process at a tolerance never met: its last rate (maxima reduced over the ranks) compared.
    p["problem_data"]["steady_state"] = {"relative_tolerance": 1e-12, "check_interval": 2}
    p["output_processes"] = {"vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
        "model_part_name": p["solver_settings"]["model_part_name"], "output_control_type": "step",
        "output_interval": STEPS, "file_format": "binary", "output_path": "vtk", "write_ids": True,
        "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE"]}},
        # Conditions as cells of the main file and every sub model part in its own files (the cavities'
        # fluid: elements; lid, walls: conditions; the 3D pressure_reference: a node as a vertex).
        {"python_module": "vtk_output_process", "Parameters": {
            "model_part_name": p["solver_settings"]["model_part_name"], "output_control_type": "step",
            "output_interval": STEPS, "file_format": "binary", "output_path": "vtk_parts", "write_ids": True,
            "entity_type": "condition", "output_sub_model_parts": True,
            "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE"]}},
        # A sub model part's own files (model_part_name names it).
        {"python_module": "vtk_output_process", "Parameters": {
            "model_part_name": p["solver_settings"]["model_part_name"] + ".lid", "output_control_type": "step",
            "output_interval": STEPS, "file_format": "binary", "output_path": "vtk_lid", "write_ids": True,
            "nodal_solution_step_data_variables": ["PRESSURE"]}}],
        "forces": [{"python_module": "compute_forces_process", "Parameters": {
            "model_part_name": p["solver_settings"]["model_part_name"] + ".lid", "output_file_name": "lid_forces.csv",
            "output_control_type": "step", "output_interval": 1}}],
        "probes": [{"python_module": "probes_output_process", "Parameters": {
            "model_part_name": p["solver_settings"]["model_part_name"], "output_file_name": "probes.csv",
            "lines": [{"start": [0.05, 0.5, 0.5], "end": [0.95, 0.5, 0.5], "n_points": 19},
                      {"start": [0.5, 0.05, 0.5], "end": [0.5, 0.95, 0.5], "n_points": 19}],
            "output_control_type": "step", "output_interval": 5}}]}
    if p["solver_settings"].get("domain_size", 3) == 2:
        for line in p["output_processes"]["probes"][0]["Parameters"]["lines"]:
            line["start"][2] = line["end"][2] = 0.0
    json.dump(p, open(dst, "w"), indent=1)


def csv_rows(folder, name):
    for root, _, files in os.walk(folder):
        if name in files:
            rows = open(os.path.join(root, name)).read().split("\n")[1:]
            return [[float(x) for x in r.split(",")] for r in rows if r.strip()]
    return None


def forces(folder):
    for root, _, files in os.walk(folder):
        if "lid_forces.csv" in files:
            rows = open(os.path.join(root, "lid_forces.csv")).read().split("\n")[1:]
            return [[float(x) for x in r.split(",")] for r in rows if r.strip()]
    return None


def read(reader_class, path):
    r = reader_class()
    r.SetFileName(path)
    r.Update()
    return r.GetOutput()


def field(grid, name):
    return vtk_to_numpy(grid.GetPointData().GetArray(name))


def cells(grid):
    """Every cell as (VTK cell type, NODE_IDs of its points in order) -> its row of cell data."""
    ids = field(grid, "NODE_ID")
    data = grid.GetCellData()
    names = sorted(data.GetArrayName(k) for k in range(data.GetNumberOfArrays()) if data.GetArrayName(k) != "PARTITION")
    arrays = [vtk_to_numpy(data.GetArray(n)) for n in names]
    out = []
    for c in range(grid.GetNumberOfCells()):
        pts = grid.GetCell(c).GetPointIds()
        key = (grid.GetCellType(c), tuple(int(ids[pts.GetId(k)]) for k in range(pts.GetNumberOfIds())))
        out.append((key, tuple(a[c].tolist() if a.ndim > 1 else a[c].item() for a in arrays)))
    return names, out


def compare_part(vtk_serial, vtk_mpi, tag, np_):
    """The files of one part (<tag>_STEPS.vtu of one process against <tag>_STEPS.pvtu over NP pieces): the
    .pvd names the .pvtu, the .pvtu names the NP pieces (each there), the pieces' cells (type and NODE_IDs, as
    a multiset: each cell exactly once) and their cell data equal the serial file's, PARTITION within 0..NP-1,
    every node there, the point data at each point equal to the serial value at its NODE_ID to TOL relative.
    Returns (problems, cells, partitions seen, point-data difference)."""
    problems = []
    pvd = open(os.path.join(vtk_mpi, tag + ".pvd")).read()
    if f'file="{tag}_{STEPS}.pvtu"' not in pvd:
        problems.append(f"{tag}.pvd does not name {tag}_{STEPS}.pvtu")
    pvtu = os.path.join(vtk_mpi, f"{tag}_{STEPS}.pvtu")
    sources = [line.split('"')[1] for line in open(pvtu).read().split("\n") if "<Piece Source=" in line]
    want = [f"{tag}_{STEPS}_{r}.vtu" for r in range(np_)]
    if sources != want or not all(os.path.exists(os.path.join(vtk_mpi, f)) for f in want):
        problems.append(f"{tag}_{STEPS}.pvtu names {sources}, expected {want}, each present")
    s = read(vtk.vtkXMLUnstructuredGridReader, os.path.join(vtk_serial, f"{tag}_{STEPS}.vtu"))
    m = read(vtk.vtkXMLPUnstructuredGridReader, pvtu)
    s_names, s_cells = cells(s)
    m_names, m_cells = cells(m)
    if s_names != m_names:
        problems.append(f"{tag}: cell arrays {m_names} (besides PARTITION), {s_names} on one process")
    if sorted(s_cells) != sorted(m_cells):
        ks, km = collections.Counter(k for k, _ in s_cells), collections.Counter(k for k, _ in m_cells)
        twice = sum((km - ks).values())
        missed = sum((ks - km).values())
        problems.append(f"{tag}: {len(m_cells)} cells in the pieces, {len(s_cells)} on one process: {twice} extra "
                        f"(e.g. written on two ranks), {missed} missing, "
                        f"{sum(1 for c in set(m_cells) - set(s_cells) if c[0] in ks)} with other cell data")
    part = m.GetCellData().GetArray("PARTITION")
    seen = sorted(set(vtk_to_numpy(part).tolist())) if part else None
    if seen is None or not set(seen) <= set(range(np_)):
        problems.append(f"{tag}: PARTITION values {seen}, expected within 0..{np_ - 1}")
    sid = {int(i): k for k, i in enumerate(field(s, "NODE_ID"))}
    mid = field(m, "NODE_ID")
    if set(int(i) for i in mid) != set(sid):
        problems.append(f"{tag}: the pieces do not hold the nodes of the serial file")
    pd = s.GetPointData()
    worst = 0.0
    for name in (pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays())):
        if name == "NODE_ID":
            continue
        a, b = field(s, name), field(m, name)
        d = max((float(abs(b[k] - a[sid[int(i)]]).max()) for k, i in enumerate(mid) if int(i) in sid), default=0.0)
        worst = max(worst, d / max(float(abs(a).max()), 1e-300))
    if not worst <= TOL:
        problems.append(f"{tag}: point data differ by {worst:.3e} relative (bound {TOL})")
    return problems, len(m_cells), seen, worst


def main():
    sep = sys.argv.index("--")
    exe, case, np_, work = sys.argv[1:sep]
    mpirun = sys.argv[sep + 1:]
    np_ = int(np_)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    runs = {}
    for kind, ptype in (("serial", "OpenMP"), ("mpi", "MPI")):
        path = os.path.join(work, kind + ".json")
        write_case(case, path, ptype)
        out = os.path.join(work, kind)
        cmd = ([] if kind == "serial" else mpirun + ["-n", str(np_)]) + [exe, "run", path, "--steps", str(STEPS),
                                                                          "--output", out, "--quiet"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode:
            sys.exit(f"mpi_vtk_check: FAILED: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        runs[kind] = out
    base = "FluidModelPart"
    vtk_serial = os.path.join(runs["serial"], "vtk")
    vtk_mpi = os.path.join(runs["mpi"], "vtk")
    pvd = open(os.path.join(vtk_mpi, base + ".pvd")).read()
    problems = []
    if f'file="{base}_{STEPS}.pvtu"' not in pvd:
        problems.append(f"the .pvd does not name {base}_{STEPS}.pvtu:\n{pvd}")
    pieces = sorted(f for f in os.listdir(vtk_mpi) if f.startswith(f"{base}_{STEPS}_") and f.endswith(".vtu"))
    if len(pieces) != np_:
        problems.append(f"{len(pieces)} pieces of step {STEPS} ({pieces}), expected {np_}")
    s = read(vtk.vtkXMLUnstructuredGridReader, os.path.join(vtk_serial, f"{base}_{STEPS}.vtu"))
    m = read(vtk.vtkXMLPUnstructuredGridReader, os.path.join(vtk_mpi, f"{base}_{STEPS}.pvtu"))
    if m.GetNumberOfCells() != s.GetNumberOfCells():
        problems.append(f"{m.GetNumberOfCells()} cells in the pieces, {s.GetNumberOfCells()} in the serial file")
    part = vtk_to_numpy(m.GetCellData().GetArray("PARTITION"))
    if sorted(set(part.tolist())) != list(range(np_)):
        problems.append(f"PARTITION values {sorted(set(part.tolist()))}, expected 0..{np_ - 1}")
    sid = {int(i): k for k, i in enumerate(field(s, "NODE_ID"))}
    mid = field(m, "NODE_ID")
    if set(int(i) for i in mid) != set(sid):
        problems.append("the pieces do not hold every node of the serial file")
    su, sp, mu, mp = field(s, "VELOCITY"), field(s, "PRESSURE"), field(m, "VELOCITY"), field(m, "PRESSURE")
    du = dp = 0.0
    for k, i in enumerate(mid):
        j = sid.get(int(i))
        if j is None:
            continue
        du = max(du, float(abs(mu[k] - su[j]).max()))
        dp = max(dp, abs(float(mp[k]) - float(sp[j])))
    ru = du / max(float(abs(su).max()), 1e-300)
    rp = dp / max(float(abs(sp).max()), 1e-300)
    if not (ru <= TOL and rp <= TOL):
        problems.append(f"fields differ: velocity {ru:.3e}, pressure {rp:.3e} relative (bound {TOL})")
    fs, fm = forces(runs["serial"]), forces(runs["mpi"])
    df = -1.0
    if not fs or not fm or len(fs) != len(fm) or len(fs) != STEPS:
        problems.append(f"lid_forces.csv: {len(fs or [])} rows on one process, {len(fm or [])} on {np_} ranks")
    else:
        scale = max(abs(x) for r in fs for x in r[1:]) or 1.0
        df = max(abs(a - b) for r, q in zip(fs, fm) for a, b in zip(r, q)) / scale
        if not df <= TOL:
            problems.append(f"lid forces differ by {df:.3e} relative (bound {TOL})")
    ps, pm = csv_rows(runs["serial"], "probes.csv"), csv_rows(runs["mpi"], "probes.csv")
    dprobe = -1.0
    if not ps or not pm or len(ps) != len(pm):
        problems.append(f"probes.csv: {len(ps or [])} rows on one process, {len(pm or [])} on {np_} ranks")
    else:
        scale = max(abs(x) for r in ps for x in r[5:]) or 1.0
        dprobe = max(abs(a - b) for r, q in zip(ps, pm) for a, b in zip(r, q)) / scale
        if not dprobe <= TOL:
            problems.append(f"probe values differ by {dprobe:.3e} relative (bound {TOL})")
    # Conditions and sub model parts: every file of one process against its pieces.
    parts = []
    for folder in ("vtk_parts", "vtk_lid"):
        serial_dir, mpi_dir = os.path.join(runs["serial"], folder), os.path.join(runs["mpi"], folder)
        tags = sorted(f[:-len(f"_{STEPS}.vtu")] for f in os.listdir(serial_dir) if f.endswith(f"_{STEPS}.vtu"))
        if not tags:
            problems.append(f"{folder}: no file of step {STEPS} on one process")
        for tag in tags:
            if not os.path.exists(os.path.join(mpi_dir, f"{tag}_{STEPS}.pvtu")):
                problems.append(f"{folder}: no {tag}_{STEPS}.pvtu on {np_} ranks")
                continue
            found, n_cells, seen, worst = compare_part(serial_dir, mpi_dir, tag, np_)
            problems += [f"{folder}: {p}" for p in found]
            parts.append(f"{tag} {n_cells} cells (PARTITION {seen}, {worst:.1e})")
    summary = json.load(open(os.path.join(runs["mpi"], "run_summary.json")))
    rates = [json.load(open(os.path.join(runs[k], "run_summary.json"))).get("steady_state_relative", {})
             .get("last_relative_rate") for k in ("serial", "mpi")]
    drate = abs(rates[0] - rates[1]) / abs(rates[0]) if None not in rates and rates[0] else -1.0
    if not 0.0 <= drate <= TOL:
        problems.append(f"stop_when_steady_process rates {rates} (one process, {np_} ranks)")
    ex = summary.get("strategy", {}).get("mpi", {}).get("exchange_seconds", [])
    if summary.get("parallel", {}).get("ranks") != np_ or len(ex) != np_:
        problems.append(f"run_summary.json: parallel {summary.get('parallel')}, exchange_seconds {ex}")
    strategy = summary.get("strategy", {})
    if strategy.get("name") == "opencl_edge_based":
        devices = strategy.get("mpi", {}).get("devices", [])
        want = {"host": socket.gethostname()[:64], "name": strategy.get("device", {}).get("name")}
        if len(devices) != np_ or not want["name"] or any(
                {k: d.get(k) for k in want} != want or not isinstance(d.get("device_index"), (int, float))
                for d in devices):
            problems.append(f"run_summary.json: strategy.mpi.devices {devices}, expected {np_} x {want}")
        else:
            print(f"mpi_vtk_check: devices: {np_} x {want}")
    print(f"mpi_vtk_check: {case} on {np_} ranks: {len(pieces)} pieces, {m.GetNumberOfPoints()} points "
          f"({s.GetNumberOfPoints()} nodes), {m.GetNumberOfCells()} cells; velocity {ru:.3e}, pressure {rp:.3e} "
          f"relative; lid force {df:.3e} relative over {STEPS} rows; probes {dprobe:.3e} relative over "
          f"{len(pm or [])} rows; steady-state rate {drate:.3e} relative; exchange seconds per rank {ex}")
    print(f"mpi_vtk_check: conditions and sub model parts: {'; '.join(parts)}")
    if problems:
        print("mpi_vtk_check: FAILED\n  " + "\n  ".join(problems))
        return 1
    print("mpi_vtk_check: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())

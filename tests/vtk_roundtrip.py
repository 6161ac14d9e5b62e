#!/usr/bin/python3
"""Read every .vtu the C tests wrote back with VTK and compare it bit for bit.

Usage: vtk_roundtrip.py FOLDER...

Each FOLDER (searched recursively) holds .vtu files written by edgeflow, each
with a sidecar <file>.expect (written by the C test, see
tests/test_vtu_readback.h) holding the exact arrays it meant to write.  Every
file is read with vtkXMLUnstructuredGridReader; points, connectivity, offsets,
cell types and every point/cell data array must match in type, shape and
every bit (doubles are compared as their 64-bit patterns, so -0.0, NaN
payloads and subnormals count).  VTK must report no error or warning.  Every
.pvd is parsed as XML: each DataSet's file must exist and, where the C test
left <file>.pvd.expect ("time file" per line), times (compared exactly) and
files must be those, in that order.

Exit codes: 0 pass, 1 fail, 77 skip (only when `import vtk` fails).
"""
import os
import struct
import sys
import xml.etree.ElementTree as ET

try:
    import vtk
except ImportError as exc:  # CI installs python3-vtk9; elsewhere this is a skip
    print(f"SKIP: cannot import vtk ({exc})")
    sys.exit(77)

import numpy as np
from vtk.util.numpy_support import vtk_to_numpy

DTYPES = {b"d": np.float64, b"q": np.int64, b"i": np.int32, b"B": np.uint8}


def read_expect(path):
    """{(section, name): (array, n_components)} from a sidecar file."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"EFVTKEXP1\n"):
        raise ValueError(f"{path}: not an expectation file")
    pos, out = 10, {}

    def take(n):
        nonlocal pos
        if pos + n > len(data):
            raise ValueError(f"{path}: truncated")
        chunk = data[pos:pos + n]
        pos += n
        return chunk

    while pos < len(data):
        section = take(struct.unpack("<I", take(4))[0]).decode()
        name = take(struct.unpack("<I", take(4))[0]).decode()
        dtype = DTYPES[take(1)]
        n_comp, n_values = struct.unpack("<IQ", take(12))
        values = np.frombuffer(take(n_values * np.dtype(dtype).itemsize), dtype=np.dtype(dtype).newbyteorder("<"))
        out[(section, name)] = (values.astype(dtype), n_comp)
    return out


def same_bits(got, want):
    """Equal type, length and bytes."""
    got = np.ascontiguousarray(got).reshape(-1)
    want = np.ascontiguousarray(want).reshape(-1)
    return got.dtype == want.dtype and got.size == want.size and got.tobytes() == want.tobytes()


class Log:
    """Collects VTK's errors and warnings instead of printing them."""

    def __init__(self):
        self.window = vtk.vtkStringOutputWindow()
        vtk.vtkOutputWindow.SetInstance(self.window)
        self.seen = 0

    def take(self):
        """What VTK reported since the last call."""
        text = self.window.GetOutput()
        new, self.seen = text[self.seen:], len(text)
        return new.strip()


def check_vtu(path, log):
    """List of problems with one .vtu (empty when it reads back exactly)."""
    problems = []
    expect = read_expect(path + ".expect")
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    messages = log.take()
    if messages:
        problems.append(f"VTK reported: {messages}")
    grid = reader.GetOutput()

    points, _ = expect[("Points", "")]
    n_points = points.size // 3
    if grid.GetNumberOfPoints() != n_points:
        problems.append(f"{grid.GetNumberOfPoints()} points instead of {n_points}")
    elif n_points:
        got = vtk_to_numpy(grid.GetPoints().GetData())
        if not same_bits(got, points):
            problems.append("point coordinates differ")

    conn, _ = expect[("Cells", "connectivity")]
    offsets, _ = expect[("Cells", "offsets")]
    types, _ = expect[("Cells", "types")]
    n_cells = types.size
    if grid.GetNumberOfCells() != n_cells:
        problems.append(f"{grid.GetNumberOfCells()} cells instead of {n_cells}")
    elif n_cells:
        cells = grid.GetCells()
        got_conn = vtk_to_numpy(cells.GetConnectivityArray()).astype(np.int64)
        got_off = vtk_to_numpy(cells.GetOffsetsArray()).astype(np.int64)
        got_types = vtk_to_numpy(grid.GetCellTypesArray())
        if not np.array_equal(got_conn, conn.astype(np.int64)):
            problems.append("connectivity differs")
        if got_off.size != n_cells + 1 or got_off[0] != 0 or not np.array_equal(got_off[1:], offsets):
            problems.append("offsets differ")
        if not same_bits(got_types, types):
            problems.append("cell types differ")

    for section, data in (("PointData", grid.GetPointData()), ("CellData", grid.GetCellData())):
        wanted = {name: v for (s, name), v in expect.items() if s == section}
        got_names = {data.GetArrayName(i) for i in range(data.GetNumberOfArrays())}
        if got_names != set(wanted):
            problems.append(f"{section} arrays {sorted(got_names)} instead of {sorted(wanted)}")
        for name, (values, n_comp) in wanted.items():
            array = data.GetAbstractArray(name)
            if array is None:
                continue
            if array.GetNumberOfComponents() != n_comp:
                problems.append(f"{section} '{name}' has {array.GetNumberOfComponents()} components, not {n_comp}")
            elif not same_bits(vtk_to_numpy(array), values):
                got = vtk_to_numpy(array)
                problems.append(f"{section} '{name}' differs ({got.dtype} {got.size} vs {values.dtype} {values.size})")
    return problems


def check_pvd(path, vtu_files):
    """List of problems with one .pvd collection."""
    problems = []
    folder = os.path.dirname(path)
    root = ET.parse(path).getroot()
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        return ["not a VTKFile of type Collection"]
    datasets = root.findall("./Collection/DataSet")
    entries = [(ds.get("timestep"), ds.get("file")) for ds in datasets]
    for _, name in entries:
        full = os.path.normpath(os.path.join(folder, name))
        if not os.path.isfile(full):
            problems.append(f"DataSet file {name} does not exist")
        elif full not in vtu_files:
            problems.append(f"DataSet file {name} is not one of the checked .vtu files")
    expect_path = path + ".expect"
    if os.path.exists(expect_path):
        with open(expect_path) as f:
            wanted = [line.split(None, 1) for line in f.read().splitlines() if line.strip()]
        got = [(float(t), f) for t, f in entries]
        want = [(float(t), f.strip()) for t, f in wanted]
        # Times were written with 17 significant digits: equal floats mean an exact round trip.
        if got != want:
            problems.append(f"DataSets {got} instead of {want}")
    else:
        problems.append("no .pvd.expect beside it")
    return problems


def main(folders):
    if not folders:
        print(__doc__)
        return 1
    log = Log()
    failures, n_vtu, n_pvd = [], 0, 0
    for top in folders:
        vtus, pvds = [], []
        for base, _, names in os.walk(top):
            for name in names:
                full = os.path.normpath(os.path.join(base, name))
                if name.startswith("."):
                    failures.append(f"{full}: left-over temporary file")
                elif name.endswith(".vtu"):
                    vtus.append(full)
                elif name.endswith(".pvd"):
                    pvds.append(full)
        if not vtus:
            failures.append(f"{top}: no .vtu files (did the C test run?)")
        for path in sorted(vtus):
            if not os.path.exists(path + ".expect"):
                failures.append(f"{path}: no .expect sidecar, so it cannot be checked")
                continue
            failures += [f"{path}: {p}" for p in check_vtu(path, log)]
            n_vtu += 1
        for path in sorted(pvds):
            failures += [f"{path}: {p}" for p in check_pvd(path, set(vtus))]
            n_pvd += 1
    for f in failures:
        print("FAIL", f)
    if failures:
        print(f"{len(failures)} problems in {n_vtu} .vtu and {n_pvd} .pvd files")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""CTest figures_render: the offscreen pictures and the figure command's help.

    test_render.py SOURCE_DIR EDGEFLOW_PROGRAM WORK_DIR

Runs the 3D cavity (committed coarse mesh, openmp_edge_based) for 2 steps with its VTK output,
renders a slice and a surface of the last .vtu with python_scripts/render_vtk.py at a requested
size, and checks that each PNG exists, has exactly that size and is not uniform (the variance of
its pixel values is > 0: a picture of one colour means nothing was drawn), then that
make_figures.py --help exits 0.  Exit 77 (skip) with the reason when offscreen rendering is
impossible on this machine (render_vtk.py check).
"""
import os
import shutil
import subprocess
import sys

SKIP = 77
PY = sys.executable


def fail(msg):
    print(f"figures_render: FAILED: {msg}")
    sys.exit(1)


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{what} exited {p.returncode}: {' '.join(cmd)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p


def check_png(path, size):
    """The PNG at path has size (w, h) and more than one pixel value."""
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
    if not os.path.exists(path):
        fail(f"{path} was not written")
    r = vtk.vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    dims = img.GetDimensions()
    if (dims[0], dims[1]) != tuple(size):
        fail(f"{path} is {dims[0]} x {dims[1]}, asked for {size[0]} x {size[1]}")
    px = vtk_to_numpy(img.GetPointData().GetScalars()).astype(float)
    if not px.var() > 0.0:
        fail(f"{path} is uniform (pixel variance {px.var()})")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    src, cli, work = sys.argv[1:]
    scripts = os.path.join(src, "python_scripts")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    p = subprocess.run([PY, os.path.join(scripts, "render_vtk.py"), "check"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode == SKIP:
        print(f"figures_render: skipped: {p.stderr.strip()}")
        return SKIP
    if p.returncode != 0:
        fail(f"render_vtk.py check exited {p.returncode}: {p.stdout}{p.stderr}")

    run([cli, "run", os.path.join(src, "test_examples", "cavity3d", "ProjectParameters.json"), "--solver-type",
         "openmp_edge_based", "--steps", "2", "--output", os.path.join(work, "run"), "--quiet"], "edgeflow run")
    pvd = os.path.join(work, "run", "vtk", "FluidModelPart.pvd")
    if not os.path.exists(pvd):
        fail(f"the 2-step run wrote no {pvd}")

    # Sizes unlike the default 1200 x 900 and not 4:3, so a size ignored or swapped is caught.
    png = os.path.join(work, "slice.png")
    run([PY, os.path.join(scripts, "render_vtk.py"), "slice", "--vtu", pvd, "--origin", "0.5", "0.5", "0.5",
         "--normal", "0", "1", "0", "--arrows", "8", "--size", "320", "240", "--title", "test", "--out", png],
        "render_vtk.py slice")
    check_png(png, (320, 240))
    png = os.path.join(work, "surface.png")
    run([PY, os.path.join(scripts, "render_vtk.py"), "surface", "--vtu", pvd, "--array", "PRESSURE", "--size", "300",
         "200", "--out", png], "render_vtk.py surface")
    check_png(png, (300, 200))

    p = run([PY, os.path.join(scripts, "make_figures.py"), "--help"], "make_figures.py --help")
    if "--skip-runs" not in p.stdout or "--quick" not in p.stdout:
        fail("make_figures.py --help does not list --quick and --skip-runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

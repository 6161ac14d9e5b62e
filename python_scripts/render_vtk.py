#!/usr/bin/python3
"""Pictures of edgeflow results rendered offscreen with the VTK library (PNG).

    render_vtk.py cavity3d --vtu FILE [--out docs/figures/cavity3d_slice.png]
        |u| on the mid-plane y = 0.5 of the 3D lid-driven cavity, in-plane velocity arrows,
        the cube's outline, a colour bar and a title (1200 x 900).
    render_vtk.py slice --vtu FILE --origin X Y Z --normal NX NY NZ --out PNG
        any plane through a 3D result, seen along its normal.
    render_vtk.py surface --vtu FILE --out PNG [--box X0 X1 Y0 Y1 Z0 Z1]
        the outer surface of a result (or a surface .vtu, e.g. a symmetry plane written as a sub
        model part), seen along its normal when it is flat, else from an oblique direction;
        --box keeps only the cells inside a box.
    render_vtk.py check
        exit 0 when offscreen rendering works here, 77 (with the reason) when it cannot.

FILE is a .vtu, or a .pvd (its last dataset is taken). Common options: --array NAME (default
VELOCITY; a vector is shown as its magnitude), --range LO HI, --title TEXT, --size W H,
--arrows N (in-plane velocity arrows on an N x N grid of the slice; 0: none).

Offscreen rendering: Debian's python3-vtk9 (9.1) is built for X only (vtkXOpenGLRenderWindow,
neither EGL nor OSMesa), so SetOffScreenRendering(1) still needs an X server: without DISPLAY
VTK aborts the process. This script therefore re-runs itself under `xvfb-run -a` (package xvfb,
installed by `scripts/setup_debian.sh --figures`) when it finds no DISPLAY and a VTK that cannot
render without one; when neither is available it exits with 77 and says why. A VTK built with
EGL or OSMesa renders directly.
"""
import argparse
import os
import shutil
import sys

CANNOT_RENDER = 77
_UNDER_XVFB = "EDGEFLOW_RENDER_UNDER_XVFB"
_HEADLESS_WINDOWS = ("vtkEGLRenderWindow", "vtkOSOpenGLRenderWindow")


def offscreen_problem():
    """Why offscreen rendering cannot work in this process (None when it can, as far as we can
    tell without rendering: an X window class needs DISPLAY, EGL/OSMesa ones do not)."""
    try:
        import vtk  # noqa: PLC0415
    except ImportError as e:
        return f"the VTK Python module cannot be imported ({e}); install python3-vtk9"
    name = vtk.vtkRenderWindow().GetClassName()
    if name in _HEADLESS_WINDOWS or os.environ.get("DISPLAY"):
        return None
    return f"VTK {vtk.vtkVersion.GetVTKVersion()} renders through {name}, which needs an X display, and DISPLAY is unset"


def ensure_renderable(argv):
    """Re-executes this script under xvfb-run when only a virtual X server can make rendering work;
    exits with 77 and the reason when that is impossible too.  Returns when rendering can go on."""
    problem = offscreen_problem()
    if problem is None:
        return
    if os.environ.get(_UNDER_XVFB) or not shutil.which("xvfb-run"):
        why = "even under xvfb-run" if os.environ.get(_UNDER_XVFB) else "and xvfb-run is not installed " \
              "(apt-get install xvfb xauth, or scripts/setup_debian.sh --figures)"
        print(f"render_vtk: offscreen rendering impossible: {problem} {why}", file=sys.stderr)
        sys.exit(CANNOT_RENDER)
    os.environ[_UNDER_XVFB] = "1"
    sys.stdout.flush()
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24", sys.executable, os.path.abspath(__file__)] + argv
    os.execvp("xvfb-run", cmd)


def resolve_vtu(path):
    """A .vtu as given; for a .pvd the file of its last DataSet entry."""
    if not path.endswith(".pvd"):
        return path
    import xml.etree.ElementTree as ET  # noqa: PLC0415
    sets = ET.parse(path).getroot().findall(".//DataSet")
    if not sets:
        raise SystemExit(f"render_vtk: {path} lists no DataSet")
    last = max(sets, key=lambda d: float(d.get("timestep", "0")))
    return os.path.join(os.path.dirname(path), last.get("file"))


def read_grid(path, array):
    """The unstructured grid of `path` with a scalar point array "<array>" (magnitude for vectors)
    made active; returns (grid, name of the shown scalar)."""
    import vtk  # noqa: PLC0415
    from vtk.util.numpy_support import numpy_to_vtk, vtk_to_numpy  # noqa: PLC0415

    if not os.path.exists(path):
        raise SystemExit(f"render_vtk: {path}: no such file")
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    if g.GetNumberOfPoints() == 0:
        raise SystemExit(f"render_vtk: {path}: no points (not a .vtu written by edgeflow?)")
    a = g.GetPointData().GetArray(array)
    if a is None:
        names = [g.GetPointData().GetArrayName(i) for i in range(g.GetPointData().GetNumberOfArrays())]
        raise SystemExit(f"render_vtk: {path} has no point array {array} (it has {', '.join(names) or 'none'})")
    v = vtk_to_numpy(a).astype(float)
    shown = array
    if v.ndim == 2:
        v = (v ** 2).sum(axis=1) ** 0.5
        shown = f"|{array}|"
    s = numpy_to_vtk(v.copy(), deep=1)
    s.SetName(shown)
    g.GetPointData().AddArray(s)
    g.GetPointData().SetActiveScalars(shown)
    return g, shown


def lookup_table(lo, hi):
    """Viridis-like colour map (perceptually ordered, readable in grey) sampled from matplotlib;
    VTK's default rainbow when matplotlib is absent."""
    import vtk  # noqa: PLC0415
    lut = vtk.vtkLookupTable()
    lut.SetRange(lo, hi)
    try:
        from matplotlib import colormaps  # noqa: PLC0415
        cmap = colormaps["viridis"]
        lut.SetNumberOfTableValues(256)
        for i in range(256):
            c = cmap(i / 255.0)
            lut.SetTableValue(i, c[0], c[1], c[2], 1.0)
    except ImportError:
        lut.SetHueRange(0.667, 0.0)
    lut.Build()
    return lut


def _unit(v):
    n = sum(x * x for x in v) ** 0.5
    if n == 0:
        raise SystemExit("render_vtk: the normal must not be zero")
    return [x / n for x in v]


def _view_up(normal):
    """The coordinate axis most perpendicular to `normal`, preferring z then y: pictures keep
    gravity's or the lid's direction up."""
    for axis in ([0, 0, 1], [0, 1, 0], [1, 0, 0]):
        if abs(sum(a * b for a, b in zip(axis, normal))) < 0.9:
            return axis
    return [0, 0, 1]


class Scene:
    """Renderer, window, colour bar and title of one picture."""

    def __init__(self, size, title, bar_title, lut):
        import vtk  # noqa: PLC0415
        self.vtk = vtk
        self.ren = vtk.vtkRenderer()
        self.ren.SetBackground(1.0, 1.0, 1.0)
        self.win = vtk.vtkRenderWindow()
        self.win.SetOffScreenRendering(1)
        self.win.AddRenderer(self.ren)
        self.win.SetSize(*size)
        self.win.SetMultiSamples(0)
        bar = vtk.vtkScalarBarActor()
        bar.SetLookupTable(lut)
        bar.SetTitle(bar_title)
        bar.SetNumberOfLabels(6)
        bar.SetLabelFormat("%.3g")
        bar.SetOrientationToVertical()
        bar.SetPosition(0.87, 0.12)
        bar.SetWidth(0.08)
        bar.SetHeight(0.72)
        bar.UnconstrainedFontSizeOn()
        # Font sizes in pixels, scaled from the 900-pixel-high default picture.
        k = size[1] / 900.0
        for tp, fs in ((bar.GetTitleTextProperty(), 22), (bar.GetLabelTextProperty(), 18)):
            fs = max(8, int(round(fs * k)))
            tp.SetColor(0.1, 0.1, 0.1)
            tp.SetFontSize(fs)
            tp.ShadowOff()
            tp.ItalicOff()
        self.ren.AddViewProp(bar)
        if title:
            t = vtk.vtkTextActor()
            t.SetInput(title)
            t.GetTextProperty().SetFontSize(max(9, int(round(26 * k))))
            t.GetTextProperty().SetColor(0.1, 0.1, 0.1)
            t.GetTextProperty().SetJustificationToCentered()
            t.GetTextProperty().SetVerticalJustificationToTop()
            t.SetTextScaleModeToNone()
            t.GetPositionCoordinate().SetCoordinateSystemToNormalizedViewport()
            t.GetPositionCoordinate().SetValue(0.5, 0.97)
            self.ren.AddViewProp(t)

    def add(self, source_port_or_data, lut=None, color=None, width=None, scalars=True):
        vtk = self.vtk
        m = vtk.vtkDataSetMapper()
        if isinstance(source_port_or_data, vtk.vtkDataObject):
            m.SetInputData(source_port_or_data)
        else:
            m.SetInputConnection(source_port_or_data)
        if lut is not None and scalars:
            m.SetLookupTable(lut)
            m.SetScalarRange(lut.GetRange())
            m.SetScalarModeToUsePointData()
            m.ScalarVisibilityOn()
        else:
            m.ScalarVisibilityOff()
        a = vtk.vtkActor()
        a.SetMapper(m)
        if color:
            a.GetProperty().SetColor(*color)
        if width:
            a.GetProperty().SetLineWidth(width)
        self.ren.AddActor(a)
        return a

    def camera(self, focal, direction, up, bounds, zoom=1.0):
        """Parallel projection along `direction` (from the camera to the focal point) fitted to
        `bounds` (the renderer's reset), then zoomed, leaving room on the right for the bar."""
        cam = self.ren.GetActiveCamera()
        cam.ParallelProjectionOn()
        cam.SetFocalPoint(*focal)
        cam.SetPosition(*[f - d for f, d in zip(focal, direction)])
        cam.SetViewUp(*up)
        self.ren.ResetCamera(bounds)
        cam.Zoom(zoom)
        # Shift the picture left of the colour bar (right 15 %) and below the title.
        cam.SetWindowCenter(0.12, 0.07)

    def write(self, out):
        vtk = self.vtk
        self.win.Render()
        w2i = vtk.vtkWindowToImageFilter()
        w2i.SetInput(self.win)
        w2i.ReadFrontBufferOff()
        w2i.Update()
        d = os.path.dirname(os.path.abspath(out))
        os.makedirs(d, exist_ok=True)
        png = vtk.vtkPNGWriter()
        png.SetFileName(out)
        png.SetInputConnection(w2i.GetOutputPort())
        png.Write()


def _range(opts, data_range):
    return (opts.range[0], opts.range[1]) if opts.range else data_range


def render_slice(opts):
    """The scalar on the plane (origin, normal) through a 3D grid, with the domain outline and,
    with --arrows N, the velocity projected on the plane sampled on an N x N grid."""
    import vtk  # noqa: PLC0415
    grid, shown = read_grid(resolve_vtu(opts.vtu), opts.array)
    normal = _unit(opts.normal)
    plane = vtk.vtkPlane()
    plane.SetOrigin(*opts.origin)
    plane.SetNormal(*normal)
    cut = vtk.vtkCutter()
    cut.SetCutFunction(plane)
    cut.SetInputData(grid)
    cut.Update()
    sl = cut.GetOutput()
    if sl.GetNumberOfPoints() == 0:
        raise SystemExit(f"render_vtk: the plane through {opts.origin} with normal {opts.normal} misses the mesh")
    lo, hi = _range(opts, sl.GetPointData().GetArray(shown).GetRange())
    lut = lookup_table(lo, hi)
    sc = Scene(opts.size, opts.title, opts.bar_title or shown, lut)
    sc.add(sl, lut)
    outline = vtk.vtkOutlineFilter()
    outline.SetInputData(grid)
    sc.add(outline.GetOutputPort(), color=(0.2, 0.2, 0.2), width=2)
    if opts.arrows > 0:
        _add_arrows(sc, grid, sl, normal, opts)
    b = sl.GetBounds()
    c = [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]
    sc.camera(c, normal, _view_up(normal), b, zoom=opts.zoom)
    sc.write(opts.out)
    return sl


def _add_arrows(sc, grid, sl, normal, opts):
    """Black arrows of the in-plane velocity (u - (u.n) n) on an N x N grid spanning the slice,
    lengths proportional to speed, the largest half a grid spacing plus a bit."""
    import numpy as np  # noqa: PLC0415
    import vtk  # noqa: PLC0415
    from vtk.util.numpy_support import numpy_to_vtk, vtk_to_numpy  # noqa: PLC0415
    if grid.GetPointData().GetArray(opts.arrow_array) is None:
        return
    b = sl.GetBounds()
    n = np.array(normal)
    up = np.array(_view_up(normal), dtype=float)
    up -= up.dot(n) * n
    up /= np.linalg.norm(up)
    right = np.cross(up, n)
    corners = np.array([[b[i], b[2 + j], b[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    centre = corners.mean(axis=0)
    rs, us = (corners - centre) @ right, (corners - centre) @ up
    k = opts.arrows
    # Cell centres of a k x k grid, so no arrow sits on the boundary (where u is the wall's).
    fr = (np.arange(k) + 0.5) / k
    pts = [centre + (rs.min() + a * (rs.max() - rs.min())) * right + (us.min() + c * (us.max() - us.min())) * up
           for a in fr for c in fr]
    pd = vtk.vtkPolyData()
    vp = vtk.vtkPoints()
    vp.SetData(numpy_to_vtk(np.array(pts), deep=1))
    pd.SetPoints(vp)
    probe = vtk.vtkProbeFilter()
    probe.SetInputData(pd)
    probe.SetSourceData(grid)
    probe.Update()
    out = probe.GetOutput()
    u = vtk_to_numpy(out.GetPointData().GetArray(opts.arrow_array)).astype(float)
    valid = vtk_to_numpy(out.GetPointData().GetArray(probe.GetValidPointMaskArrayName())).astype(bool)
    u = u - np.outer(u @ n, n)
    u[~valid] = 0.0
    speed = np.linalg.norm(u, axis=1)
    if speed.max() <= 0:
        return
    spacing = min(rs.max() - rs.min(), us.max() - us.min()) / k
    # A square-root scale keeps the slow corner eddies visible next to the fast lid region.
    scale = np.sqrt(speed / speed.max())
    vec = np.where(speed[:, None] > 0, u / np.maximum(speed, 1e-300)[:, None], 0.0) * scale[:, None]
    # Lift the arrows a little towards the camera so the slice does not hide them.
    lifted = np.array(pts) - 0.01 * spacing * k * n
    pd2 = vtk.vtkPolyData()
    vp2 = vtk.vtkPoints()
    vp2.SetData(numpy_to_vtk(lifted, deep=1))
    pd2.SetPoints(vp2)
    va = numpy_to_vtk(vec.copy(), deep=1)
    va.SetName("arrows")
    pd2.GetPointData().SetVectors(va)
    arrow = vtk.vtkArrowSource()
    arrow.SetTipLength(0.38)
    arrow.SetTipRadius(0.16)
    arrow.SetShaftRadius(0.05)
    gl = vtk.vtkGlyph3D()
    gl.SetInputData(pd2)
    gl.SetSourceConnection(arrow.GetOutputPort())
    gl.SetVectorModeToUseVector()
    gl.SetScaleModeToScaleByVector()
    gl.OrientOn()
    gl.SetScaleFactor(1.1 * spacing)
    sc.add(gl.GetOutputPort(), color=(1.0, 1.0, 1.0), scalars=False)


def render_surface(opts):
    """The outer surface of the grid (or the grid itself when it is a surface) coloured by the
    scalar; flat data is seen along its normal, anything else obliquely."""
    import vtk  # noqa: PLC0415
    grid, shown = read_grid(resolve_vtu(opts.vtu), opts.array)
    if opts.box:
        # Clip the cells to the box (straight edges; the field interpolated on the cut).
        box = vtk.vtkBox()
        box.SetBounds(*opts.box)
        crop = vtk.vtkTableBasedClipDataSet()
        crop.SetInputData(grid)
        crop.SetClipFunction(box)
        crop.InsideOutOn()
        crop.Update()
        grid = crop.GetOutput()
        if grid.GetNumberOfPoints() == 0:
            raise SystemExit(f"render_vtk: no cell of {opts.vtu} inside --box {opts.box}")
    surf = vtk.vtkDataSetSurfaceFilter()
    surf.SetInputData(grid)
    surf.Update()
    s = surf.GetOutput()
    lo, hi = _range(opts, s.GetPointData().GetArray(shown).GetRange())
    lut = lookup_table(lo, hi)
    sc = Scene(opts.size, opts.title, opts.bar_title or shown, lut)
    sc.add(s, lut)
    if opts.edges:
        e = vtk.vtkExtractEdges()
        e.SetInputData(s)
        sc.add(e.GetOutputPort(), color=(0.3, 0.3, 0.3), width=1)
    b = s.GetBounds()
    ext = [b[1] - b[0], b[3] - b[2], b[5] - b[4]]
    c = [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]
    view = opts.view
    if view == "auto":
        thin = min(range(3), key=lambda i: ext[i])
        view = "xyz"[thin] if ext[thin] <= 1e-6 * max(ext) else "iso"
    direction = {"x": [-1, 0, 0], "y": [0, 1, 0], "z": [0, 0, -1], "iso": [-1, 1, -0.7]}[view]
    direction = _unit(direction)
    sc.camera(c, direction, _view_up(direction), b, zoom=opts.zoom)
    sc.write(opts.out)


def _common(p, out_default=None):
    p.add_argument("--vtu", required=True, help=".vtu file, or a .pvd (its last dataset)")
    p.add_argument("--out", default=out_default, required=out_default is None, help="PNG file to write")
    p.add_argument("--array", default="VELOCITY", help="point array to colour by (vectors: magnitude)")
    p.add_argument("--range", type=float, nargs=2, metavar=("LO", "HI"), help="colour range (default: data)")
    p.add_argument("--title", default=None)
    p.add_argument("--bar-title", default=None, help="colour bar title (default: the array shown)")
    p.add_argument("--size", type=int, nargs=2, default=[1200, 900], metavar=("W", "H"))
    p.add_argument("--zoom", type=float, default=1.12)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    c = sub.add_parser("cavity3d", help="|u| on the mid-plane y = 0.5 of the 3D cavity")
    _common(c, os.path.join(root, "docs", "figures", "cavity3d_slice.png"))
    c.add_argument("--arrows", type=int, default=17)
    c.add_argument("--arrow-array", default="VELOCITY")
    s = sub.add_parser("slice", help="a plane through a 3D result")
    _common(s)
    s.add_argument("--origin", type=float, nargs=3, required=True, metavar=("X", "Y", "Z"))
    s.add_argument("--normal", type=float, nargs=3, required=True, metavar=("NX", "NY", "NZ"))
    s.add_argument("--arrows", type=int, default=0, help="in-plane velocity arrows on an N x N grid (0: none)")
    s.add_argument("--arrow-array", default="VELOCITY")
    f = sub.add_parser("surface", help="the outer surface, or a surface .vtu")
    _common(f)
    f.add_argument("--view", choices=["auto", "x", "y", "z", "iso"], default="auto",
                   help="looking along -x, +y, -z or obliquely; auto: along the normal of flat data")
    f.add_argument("--edges", action="store_true", help="draw the mesh edges")
    f.add_argument("--box", type=float, nargs=6, metavar=("X0", "X1", "Y0", "Y1", "Z0", "Z1"),
                   help="show only the cells inside this box (e.g. the region around a body)")
    sub.add_parser("check", help="exit 0 when offscreen rendering works, 77 when not")
    return ap.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = parse(argv)
    ensure_renderable(argv)
    if opts.mode == "check":
        import tempfile  # noqa: PLC0415
        import vtk  # noqa: PLC0415
        sc = Scene((64, 48), "", "", lookup_table(0, 1))
        with tempfile.TemporaryDirectory() as d:
            sc.write(os.path.join(d, "check.png"))
        print(f"render_vtk: offscreen rendering works ({vtk.vtkRenderWindow().GetClassName()}"
              + (", under xvfb-run)" if os.environ.get(_UNDER_XVFB) else ")"))
        return 0
    if opts.mode == "cavity3d":
        opts.origin, opts.normal = [0.5, 0.5, 0.5], [0.0, 1.0, 0.0]
        if opts.title is None:
            opts.title = "3D lid-driven cavity, Re = 100: |u| on the mid-plane y = 0.5 (lid z = 1 moving in +x)"
        opts.bar_title = opts.bar_title or "|u|"
        render_slice(opts)
    elif opts.mode == "slice":
        render_slice(opts)
    else:
        render_surface(opts)
    print(f"render_vtk: wrote {opts.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

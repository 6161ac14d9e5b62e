"""edgeflow_post: post-processing helpers shared by the validation drivers and plotting scripts.

Everything works on plain NumPy arrays, so it serves a live analysis (model_part.coordinates(),
model_part.elements(), model_part.values("VELOCITY")) as well as data read back from a .vtu
(read_vtu).  Linear simplices only (3-node triangles, 4-node tetrahedra), as the solver uses.

  locate_points / interpolate     P1 interpolation of nodal fields at arbitrary points
  simplex_quadrature              collapsed-coordinate Gauss rules on the reference simplex
  l2_norm / l2_error              L2 norms of (u_h - u_exact) by quadrature on every element
  read_table / read_ghia          reference tables of ../shared/reference (comment lines skipped)
  kovasznay, taylor_green_2d,     exact solutions (formulas in ../shared/reference)
  square_duct_velocity,
  plane_startup_centreline
  read_vtu                        points, cells and point data of a .vtu written by vtk_output_process

Needs NumPy; read_vtu needs the vtk module (Debian python3-vtk9).
"""
import csv
import math

import numpy as np

# ---------------------------------------------------------------------------
# Geometry: barycentric coordinates and point location.


def _split(coords, elements):
    """Vertex coordinates per element, (ne, dim + 1, dim), dim from the element size."""
    dim = elements.shape[1] - 1
    return np.asarray(coords, dtype=float)[:, :dim][elements], dim


def _bucket_grid(lo, hi, n_target):
    """Uniform grid over the union of the boxes [lo, hi] with about n_target cells: (origin, cell size, shape)."""
    dim = lo.shape[1]
    origin = lo.min(axis=0)
    extent = np.maximum(hi.max(axis=0) - origin, 1e-300)
    size = (float(np.prod(extent)) / max(n_target, 1)) ** (1.0 / dim)
    shape = np.maximum(1, np.ceil(extent / size).astype(np.int64))
    return origin, extent / shape, shape


def locate_points(coords, elements, points, tol=1e-10):
    """Element containing each point and its barycentric coordinates lambda (sum 1, all >= -tol).

    Returns (element index (m,), lambda (m, dim + 1)); raises ValueError naming the first point
    that lies in no element.  Points on shared faces get one of the elements (values agree there
    for continuous P1 fields).  Elements are binned by bounding box on a uniform grid of about
    one cell per element, so each point tests only the few elements of its cell."""
    points = np.atleast_2d(np.asarray(points, dtype=float))
    X, dim = _split(coords, elements)
    points = points[:, :dim]
    x0 = X[:, 0, :]
    T = np.transpose(X[:, 1:, :] - x0[:, None, :], (0, 2, 1))  # columns x_k - x_0
    Tinv = np.linalg.inv(T)
    pad = 1e-9 * max(1.0, float(np.abs(X).max()))
    lo = X.min(axis=1) - pad
    hi = X.max(axis=1) + pad
    origin, cell, shape = _bucket_grid(lo, hi, len(X))
    c0 = np.clip(((lo - origin) / cell).astype(np.int64), 0, shape - 1)
    c1 = np.clip(((hi - origin) / cell).astype(np.int64), 0, shape - 1)
    strides = np.cumprod(np.concatenate([[1], shape[:-1]]))
    # (cell id, element) pairs for every cell an element's box touches.
    pairs_cell, pairs_elem = [], []
    span = c1 - c0 + 1
    for offset in np.ndindex(*[int(s) for s in span.max(axis=0)]):
        off = np.array(offset)
        ok = np.all(off < span, axis=1)
        if not ok.any():
            continue
        ids = ((c0[ok] + off) * strides).sum(axis=1)
        pairs_cell.append(ids)
        pairs_elem.append(np.nonzero(ok)[0])
    pc = np.concatenate(pairs_cell)
    pe = np.concatenate(pairs_elem)
    order = np.argsort(pc, kind="stable")
    pc, pe = pc[order], pe[order]
    n_cells = int(np.prod(shape))
    start = np.searchsorted(pc, np.arange(n_cells + 1))
    m = points.shape[0]
    found = np.full(m, -1, dtype=np.int64)
    lam = np.zeros((m, dim + 1))
    pcell = np.clip(((points - origin) / cell).astype(np.int64), 0, shape - 1)
    pid = (pcell * strides).sum(axis=1)
    for k in range(m):
        cand = pe[start[pid[k]]:start[pid[k] + 1]]
        if cand.size == 0:
            continue
        p = points[k]
        l = np.einsum("eij,ej->ei", Tinv[cand], p[None, :] - x0[cand])
        full = np.concatenate([1.0 - l.sum(axis=1, keepdims=True), l], axis=1)
        worst = full.min(axis=1)
        best = int(np.argmax(worst))
        if worst[best] >= -tol:
            found[k] = cand[best]
            lam[k] = full[best]
    missing = np.nonzero(found < 0)[0]
    if missing.size:
        raise ValueError(f"point {points[missing[0]].tolist()} lies in no element "
                         f"({missing.size} of {m} points outside the mesh)")
    return found, lam


def interpolate(coords, elements, values, points, tol=1e-10):
    """P1 interpolant of nodal `values` ((n,) or (n, k)) at `points` ((m, >= dim)): sum_a lambda_a v_a."""
    e, lam = locate_points(coords, elements, points, tol)
    v = np.asarray(values, dtype=float)[elements[e]]  # (m, dim + 1[, k])
    if v.ndim == 2:
        return np.einsum("ma,ma->m", lam, v)
    return np.einsum("ma,mak->mk", lam, v)


# ---------------------------------------------------------------------------
# Quadrature on simplices.


def simplex_quadrature(dim, n=4):
    """Points (barycentric, (q, dim + 1)) and weights (summing to 1/dim!) on the reference simplex.

    Collapsed (Duffy) coordinates: an n-point Gauss-Legendre rule per direction on the unit
    cube mapped to the simplex with the Jacobian (1 - s)^(d-k) folded into the weights.  Exact
    for polynomials of degree 2n - 1 - (dim - 1); n = 4 integrates degree 5 (2D) and 4 (3D)."""
    g, w = np.polynomial.legendre.leggauss(n)
    g = 0.5 * (g + 1.0)
    w = 0.5 * w
    if dim == 2:
        a, b = np.meshgrid(g, g, indexing="ij")
        wa, wb = np.meshgrid(w, w, indexing="ij")
        x = a.ravel()
        y = (b * (1.0 - a)).ravel()
        wt = (wa * wb * (1.0 - a)).ravel()
        lam = np.stack([1.0 - x - y, x, y], axis=1)
    elif dim == 3:
        a, b, c = np.meshgrid(g, g, g, indexing="ij")
        wa, wb, wc = np.meshgrid(w, w, w, indexing="ij")
        x = a
        y = b * (1.0 - a)
        z = c * (1.0 - a) * (1.0 - b)
        wt = (wa * wb * wc * (1.0 - a) ** 2 * (1.0 - b)).ravel()
        x, y, z = x.ravel(), y.ravel(), z.ravel()
        lam = np.stack([1.0 - x - y - z, x, y, z], axis=1)
    else:
        raise ValueError(f"dimension {dim}: expected 2 or 3")
    return lam, wt


def quadrature_points(coords, elements, n=4):
    """Physical quadrature points (ne, q, dim), weights (ne, q) including |det J|, and the
    barycentric coordinates (q, dim + 1) of the reference rule."""
    X, dim = _split(coords, elements)
    lam, w = simplex_quadrature(dim, n)
    pts = np.einsum("qa,ead->eqd", lam, X)
    J = X[:, 1:, :] - X[:, :1, :]
    det = np.abs(np.linalg.det(J))
    return pts, det[:, None] * w[None, :], lam


def l2_norm(coords, elements, func, n=4):
    """(int |f|^2)^(1/2) of a function of the point array (ne*q, dim) returning (ne*q,) or (ne*q, k)."""
    pts, W, _ = quadrature_points(coords, elements, n)
    ne, q, dim = pts.shape
    f = np.asarray(func(pts.reshape(-1, dim)), dtype=float).reshape(ne * q, -1)
    return math.sqrt(float(np.sum(W.reshape(-1) * np.sum(f * f, axis=1))))


def l2_error(coords, elements, values, exact, n=4, relative=False, components=None):
    """||u_h - u||_L2 over the mesh: u_h the P1 field of nodal `values` ((n,) or (n, k)), `exact` a
    function of the points (N, dim) returning (N,) or (N, k).  `components` selects columns of a
    vector field (e.g. [0, 1] for the in-plane velocity).  relative: divided by ||u||_L2."""
    pts, W, lam = quadrature_points(coords, elements, n)
    ne, q, dim = pts.shape
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    if components is not None:
        v = v[:, components]
    uh = np.einsum("qa,eak->eqk", lam, v[elements]).reshape(ne * q, -1)
    ue = np.asarray(exact(pts.reshape(-1, dim)), dtype=float).reshape(ne * q, -1)
    if ue.shape[1] != uh.shape[1]:
        raise ValueError(f"exact solution has {ue.shape[1]} components, the field {uh.shape[1]}")
    w = W.reshape(-1)
    err = math.sqrt(float(np.sum(w * np.sum((uh - ue) ** 2, axis=1))))
    if relative:
        return err / math.sqrt(float(np.sum(w * np.sum(ue * ue, axis=1))))
    return err


def mesh_size(coords, elements):
    """Largest element edge length (the h of the error plots)."""
    X, dim = _split(coords, elements)
    h = 0.0
    for a in range(dim + 1):
        for b in range(a + 1, dim + 1):
            h = max(h, float(np.max(np.linalg.norm(X[:, a] - X[:, b], axis=1))))
    return h


def observed_order(h, err):
    """log(e_coarse / e_fine) / log(h_coarse / h_fine) between consecutive entries."""
    return [math.log(err[i] / err[i + 1]) / math.log(h[i] / h[i + 1]) for i in range(len(h) - 1)]


# ---------------------------------------------------------------------------
# Reference files.


def read_table(path):
    """CSV table of ../shared/reference: '#' lines skipped, first other line the header.
    Returns a list of dicts (strings); use float() on the numeric columns."""
    with open(path, newline="") as f:
        rows = [line for line in f if line.strip() and not line.lstrip().startswith("#")]
    return list(csv.DictReader(rows))


def read_ghia(shared_dir, re_number):
    """Ghia, Ghia & Shin (1982) Tables I and II at Re: (y, u(0.5, y)), (x, v(x, 0.5), flags) arrays.

    flags[k] is the table's note ('' for none), e.g. the suspected misprint at Re 400, x = 0.9063."""
    col = f"Re{int(re_number)}"
    tu = read_table(f"{shared_dir}/reference/ghia1982_u_vertical_centerline.csv")
    tv = read_table(f"{shared_dir}/reference/ghia1982_v_horizontal_centerline.csv")
    y = np.array([float(r["y"]) for r in tu])
    u = np.array([float(r["u_" + col]) for r in tu])
    x = np.array([float(r["x"]) for r in tv])
    v = np.array([float(r["v_" + col]) for r in tv])
    flags = [r.get("flag", "") or "" for r in tv]
    return (y, u), (x, v, flags)


def read_constants(shared_dir):
    """analytic_constants.csv as {name: float}."""
    return {r["name"]: float(r["value"]) for r in read_table(f"{shared_dir}/reference/analytic_constants.csv")}


# ---------------------------------------------------------------------------
# Exact solutions (formulas as written in ../shared/reference).


def kovasznay_lambda(re_number):
    """lambda = Re/2 - sqrt(Re^2/4 + 4 pi^2) (kovasznay.txt)."""
    return re_number / 2.0 - math.sqrt(re_number ** 2 / 4.0 + 4.0 * math.pi ** 2)


def kovasznay(points, re_number):
    """Kovasznay (1948) velocity (N, 2) and pressure (N,) with p = (1 - exp(2 lambda x))/2."""
    lam = kovasznay_lambda(re_number)
    x, y = points[:, 0], points[:, 1]
    e = np.exp(lam * x)
    u = 1.0 - e * np.cos(2.0 * math.pi * y)
    v = lam / (2.0 * math.pi) * e * np.sin(2.0 * math.pi * y)
    p = 0.5 * (1.0 - np.exp(2.0 * lam * x))
    return np.stack([u, v], axis=1), p


def taylor_green_2d(points, t, k, nu):
    """Decaying Taylor-Green vortex (taylor_green_2d.txt): velocity (N, 2), kinematic pressure (N,)."""
    x, y = points[:, 0], points[:, 1]
    f = math.exp(-2.0 * nu * k * k * t)
    u = -np.cos(k * x) * np.sin(k * y) * f
    v = np.sin(k * x) * np.cos(k * y) * f
    p = -0.25 * (np.cos(2.0 * k * x) + np.cos(2.0 * k * y)) * f * f
    return np.stack([u, v], axis=1), p


def square_duct_velocity(y, z, a, b, G, mu, terms=60):
    """Rectangular duct -a<=y<=a, -b<=z<=b, axial velocity (White, Eq. 3-48), G = -dp/dx."""
    y = np.asarray(y, dtype=float)
    z = np.asarray(z, dtype=float)
    s = np.zeros(np.broadcast(y, z).shape)
    for m in range(terms):
        i = 2 * m + 1
        # cosh ratio written with exponentials so that large i pi b / 2a cannot overflow.
        r = (np.exp(i * math.pi * (z - b) / (2 * a)) + np.exp(-i * math.pi * (z + b) / (2 * a))) / \
            (1.0 + math.exp(-i * math.pi * b / a))
        s += (-1) ** m * (1.0 - r) * np.cos(i * math.pi * y / (2 * a)) / i ** 3
    return 16.0 * a * a * G / (mu * math.pi ** 3) * s


def plane_startup_centreline(t, G, h, nu, terms=200):
    """Centreline velocity of the start-up of plane Poiseuille flow between y = -h and h
    (poiseuille_startup_plane.txt): G h^2/(2 nu) - sum 16 G h^2/(nu pi^3 (2n+1)^3) (-1)^n e^{...}."""
    s = 0.0
    for n in range(terms):
        k = 2 * n + 1
        s += (-1) ** n / k ** 3 * math.exp(-k * k * math.pi ** 2 * nu * t / (4.0 * h * h))
    return G * h * h / (2.0 * nu) - 16.0 * G * h * h / (nu * math.pi ** 3) * s


# ---------------------------------------------------------------------------
# Reading results back.


def read_vtu(path):
    """Points (n, 3), cells (ne, k) and point data {name: array} of an unstructured-grid .vtu
    with one cell type (the solver's triangles or tetrahedra)."""
    import vtk  # noqa: PLC0415 (optional dependency)
    from vtk.util.numpy_support import vtk_to_numpy  # noqa: PLC0415

    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    pts = vtk_to_numpy(g.GetPoints().GetData()).astype(float)
    conn = vtk_to_numpy(g.GetCells().GetConnectivityArray())
    off = vtk_to_numpy(g.GetCells().GetOffsetsArray())
    k = int(off[1] - off[0]) if off.size > 1 else 0
    cells = conn.reshape(-1, k) if k else np.zeros((0, 0), dtype=np.int64)
    pd = g.GetPointData()
    data = {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)).astype(float) for i in range(pd.GetNumberOfArrays())}
    return pts, cells, data

#!/usr/bin/env python3
"""Helpers of benchmarks/cg_peers.sh (the pressure-solver comparison with the peers).

    cg_peers.py gen N FILE        anchor-like matrix without CuPy: the P1 Laplacian of a
                                  jittered Kuhn tetrahedral mesh of the unit cube (N^3 nodes,
                                  6 tetrahedra per cell), x = 0 face fixed as identity rows,
                                  random right-hand side; NumPy only (the peers' generator
                                  needs CuPy).  Same mesh and format, other random jitter.
    cg_peers.py report DIR        parse the logs cg_peers.sh left in DIR, write DIR/results.json
                                  and print a Markdown table.

File format (little-endian): int64 n, int64 nnz, int32 row_ptr[n+1], int32 col[nnz],
float64 values[nnz], float64 rhs[n].
"""
import glob
import itertools
import json
import os
import re
import sys

KUHN_STEPS = (4, 2, 1)  # bit of the corner index that changes along x, y, z


def gen(n, path, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    h = 1.0 / (n - 1)
    grid = np.indices((n, n, n)).reshape(3, -1).T  # node (i, j, k) -> index (i n + j) n + k
    coords = grid.astype(np.float64) * h
    inner = np.all((grid > 0) & (grid < n - 1), axis=1)
    coords[inner] += (rng.random((int(inner.sum()), 3)) - 0.5) * 0.3 * h

    cells = np.indices((n - 1, n - 1, n - 1)).reshape(3, -1).T
    base = (cells[:, 0] * n + cells[:, 1]) * n + cells[:, 2]
    offset = [((q >> 2) & 1) * n * n + ((q >> 1) & 1) * n + (q & 1) for q in range(8)]
    tets = []
    for order in itertools.permutations(KUHN_STEPS):
        corners, q = [0], 0
        for bit in order:  # walk from corner 0 to corner 7, one axis at a time
            q |= bit
            corners.append(q)
        tets.append(np.stack([base + offset[c] for c in corners], axis=1))
    tets = np.concatenate(tets)

    # P1 stiffness: K_ab = |T| grad(l_a).grad(l_b); the gradients of the barycentric
    # coordinates l_1..l_3 are the rows of E^-1 with E's columns the edges p_a - p_0.
    p = coords[tets]
    edges = np.transpose(p[:, 1:, :] - p[:, :1, :], (0, 2, 1))
    inv = np.linalg.inv(edges)
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
    volume = np.abs(np.linalg.det(edges)) / 6.0
    local = np.einsum("eak,ebk->eab", grads, grads) * volume[:, None, None]

    nn = n ** 3
    rows = np.repeat(tets, 4, axis=1).ravel()
    cols = np.tile(tets, (1, 4)).ravel()
    vals = local.ravel()
    fixed = grid[:, 0] == 0
    keep = ~(fixed[rows] | fixed[cols])  # symmetric elimination of the fixed nodes
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    fixed_ids = np.nonzero(fixed)[0]
    rows = np.concatenate([rows, fixed_ids])
    cols = np.concatenate([cols, fixed_ids])
    vals = np.concatenate([vals, np.ones(len(fixed_ids))])
    key = rows.astype(np.int64) * nn + cols
    uniq, where = np.unique(key, return_inverse=True)
    summed = np.bincount(where.ravel(), weights=vals, minlength=len(uniq))
    r, c = uniq // nn, (uniq % nn).astype(np.int32)
    row_ptr = np.zeros(nn + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=nn), out=row_ptr[1:])
    b = rng.random(nn) * (~fixed)
    with open(path, "wb") as f:
        np.array([nn, len(uniq)], np.int64).tofile(f)
        row_ptr.astype(np.int32).tofile(f)
        c.tofile(f)
        summed.astype(np.float64).tofile(f)
        b.astype(np.float64).tofile(f)
    print(f"n={nn} nnz={len(uniq)} nnz/row={len(uniq) / nn:.2f} (NumPy generator)")


def fields(line):
    """key=value pairs of one result line."""
    return {k: v.strip('"') for k, v in re.findall(r'(\S+?)=("[^"]*"|\S+)', line)}


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def report(out):
    runs = []
    for gen_log in sorted(glob.glob(os.path.join(out, "N*_gen.log"))):
        size = os.path.basename(gen_log).split("_")[0][1:]
        entry = {"N": int(size)}
        m = re.search(r"n=(\d+) nnz=(\d+)", read(gen_log))
        if m:
            entry["rows"], entry["nnz"] = int(m.group(1)), int(m.group(2))
        for variant in ("standard", "three-term"):
            for line in read(os.path.join(out, f"N{size}_ef_{variant}.log")).splitlines():
                if line.startswith('{"program": "ef_cl_cg"'):
                    entry["ef_" + variant] = json.loads(line)
        for line in read(os.path.join(out, f"N{size}_cupy.log")).splitlines():
            if line.startswith("cupy_cg "):
                entry["cupy"] = {k: number(v) for k, v in fields(line).items()}
            elif line.startswith("cupy_copy_TBps="):
                entry["cupy_copy_TBps"] = number(line.split("=", 1)[1])
        for line in read(os.path.join(out, f"N{size}_vcl.log")).splitlines():
            m = re.match(r"vcl_cg (\w+) (.*)", line)
            if m:
                entry["vcl_" + m.group(1)] = {k: number(v) for k, v in fields(m.group(2)).items()}
            elif line.startswith("vcl device:"):
                entry["vcl_device"] = line.split(":", 1)[1].strip()
        runs.append(entry)
    clpeak = read(os.path.join(out, "clpeak.log"))
    bw = [float(x) for x in re.findall(r":\s*([0-9.]+)\s*$", clpeak, re.M)] if clpeak else []
    result = {
        "machine": read(os.path.join(out, "machine.txt")).strip(),
        "clpeak_global_bandwidth_GBps": max(bw) if bw else None,
        "runs": runs,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)

    def us(d, key="us_per_iter"):
        return d.get(key) if isinstance(d, dict) else None

    def fmt(v, spec=".1f"):
        return "-" if v is None else format(v, spec)

    def ratio(a, b):
        return "-" if a is None or b is None or a <= 0 else f"{b / a:.2f}x"

    print("| N | rows | nnz | ours std µs/it | ours 3-term µs/it | CuPy Jacobi µs/it | VCL pipelined µs/it"
          " | VCL Jacobi µs/it | vs CuPy | vs VCL pipelined | ours iters / s to 1e-8 | CuPy iters / s"
          " | ours GB/s (model) | config |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in runs:
        std, tt = e.get("ef_standard", {}), e.get("ef_three-term", {})
        cands = [v for v in (us(std), us(tt)) if v is not None]
        best = min(cands) if cands else None
        cupy, vp, vj = e.get("cupy", {}), e.get("vcl_pipelined", {}), e.get("vcl_jacobi", {})
        ours_solve = (f"{std.get('iters_to_rtol')} / {std.get('solve_s'):.3f}"
                      if std.get("solve_s") is not None else "-")
        cupy_solve = (f"{int(cupy['iters_to_1e-8'])} / {cupy['solve_s']:.3f}"
                      if cupy.get("solve_s") is not None and cupy.get("iters_to_1e-8") is not None else "-")
        config = (f"w{std['wgs_bits']} r{std['rows_bits']} g{std['groups']}" if "wgs_bits" in std else "-")
        print(f"| {e['N']} | {e.get('rows', '-')} | {e.get('nnz', '-')} | {fmt(us(std))} | {fmt(us(tt))}"
              f" | {fmt(us(cupy))} | {fmt(us(vp))} | {fmt(us(vj))} | {ratio(best, us(cupy))}"
              f" | {ratio(best, us(vp))} | {ours_solve} | {cupy_solve} | {fmt(std.get('model_GBps'), '.0f')}"
              f" | {config} |")
    copy = next((e["cupy_copy_TBps"] for e in runs if e.get("cupy_copy_TBps")), None)
    print("\nProfile of our iteration (OpenCL profiling events) and the share of the copy bandwidth"
          " (bytes: the off-diagonal matrix once plus every vector read or written; 'full' counts the"
          " matrix's diagonal too, as given in the file):\n")
    print("| N | variant | µs/it (wall) | matrix kernel µs | vector kernel µs | bytes/it | GB/s | of copy BW"
          " | of copy BW (full) | true rel. residual at 1e-8 stop | config |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for e in runs:
        for name in ("standard", "three-term"):
            d = e.get("ef_" + name)
            if not d or d.get("us_per_iter") is None:
                continue
            w = d["us_per_iter"] * 1e-6
            gbs = d["bytes_per_iter"] / w / 1e9
            frac = f"{gbs / (copy * 1e3):.0%}" if copy else "-"
            full = d.get("full_matrix_bytes_per_iter")
            frac_full = f"{full / w / 1e9 / (copy * 1e3):.0%}" if copy and full else "-"
            print(f"| {e['N']} | {name} | {d['us_per_iter']:.1f} | {fmt(d.get('matrix_kernel_us_per_iter'))}"
                  f" | {fmt(d.get('vector_kernel_us_per_iter'))} | {d['bytes_per_iter']:.3g} | {gbs:.0f} | {frac}"
                  f" | {frac_full} | {fmt(d.get('relres'), '.2e')} | w{d.get('wgs_bits')} r{d.get('rows_bits')}"
                  f" g{d.get('groups')} |")
    if result["clpeak_global_bandwidth_GBps"]:
        print(f"\nclpeak global memory bandwidth: {result['clpeak_global_bandwidth_GBps']:.0f} GB/s")
    for e in runs:
        if e.get("cupy_copy_TBps"):
            print(f"CuPy copy bandwidth: {e['cupy_copy_TBps']:.2f} TB/s")
            break
    print(f"\nFull figures: {os.path.join(out, 'results.json')}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__)

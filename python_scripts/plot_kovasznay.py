#!/usr/bin/python3
"""Kovasznay flow (Re = 40): velocity L2 error against mesh size, with the observed orders.

    plot_kovasznay.py [--results FILE.json] [--out docs/figures/kovasznay_convergence.png]

FILE.json is the result file of the validation driver tests/validation/kovasznay.py (CTest
validation_kovasznay writes <build>/validation_results/validation_kovasznay.json); without
--results the newest such file under build*/validation_results/ or benchmarks/results/ is used.
make_figures.py runs the driver when none exists.
"""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_KEY = re.compile(r"level (\d+) \(h = ([0-9.eE+-]+)\): velocity L2 error")


def find_results():
    """The newest validation_kovasznay.json of the checkout (None when there is none)."""
    cands = glob.glob(os.path.join(ROOT, "build*", "validation_results", "validation_kovasznay.json"))
    cands += glob.glob(os.path.join(ROOT, "benchmarks", "results", "validation_kovasznay*.json"))
    return max(cands, key=os.path.getmtime) if cands else None


def read(path):
    """(levels, h, L2 errors, nodes) sorted coarse to fine, from the driver's result JSON."""
    with open(path) as f:
        d = json.load(f)
    rows = []
    for k, v in d.get("data", {}).items():
        m = _KEY.fullmatch(k)
        if m:
            lev, h = int(m.group(1)), float(m.group(2))
            nodes = d["data"].get(f"level {lev} (h = {m.group(2)}): nodes")
            rows.append((lev, h, float(v), nodes))
    if len(rows) < 2:
        raise SystemExit(f"plot_kovasznay: {path} holds fewer than two levels' errors")
    rows.sort()
    lev, h, e, n = zip(*rows)
    return list(lev), np.array(h), np.array(e), list(n), d


def plot(path, out_png):
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    lev, h, e, nodes, d = read(path)
    orders = np.log(e[:-1] / e[1:]) / np.log(h[:-1] / h[1:])
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.loglog(h, e, "o-", color="tab:blue", lw=1.6, ms=6, label="edgeflow, openmp_edge_based")
    for hi, ei, ni in zip(h, e, nodes):
        ax.annotate(f"{ni} nodes", (hi, ei), textcoords="offset points", xytext=(8, -12), fontsize=8)
    for k, o in enumerate(orders):
        hm, em = np.sqrt(h[k] * h[k + 1]), np.sqrt(e[k] * e[k + 1])
        ax.annotate(f"order {o:.2f}", (hm, em), textcoords="offset points", xytext=(-70, 6), fontsize=9,
                    color="tab:blue")
    # A slope-2 guide through the finest point: P1 velocity is second order in L2.
    ref = e[-1] * (h / h[-1]) ** 2
    ax.loglog(h, ref * 0.6, "--", color="0.5", lw=1.0, label="slope 2")
    ax.set_xlabel("mesh size h (longest element edge)")
    ax.set_ylabel(r"velocity error $\|u_h - u\|_{L^2}$")
    ax.set_title("Kovasznay flow, Re = 40: convergence under uniform refinement", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left")
    fig.text(0.99, 0.01, f"{os.path.basename(path)}, {d.get('date', '')}", ha="right", fontsize=6, color="0.5")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_png)), exist_ok=True)
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    print(f"plot_kovasznay: wrote {out_png} (errors {', '.join(f'{x:.3g}' for x in e)}; orders "
          f"{', '.join(f'{o:.2f}' for o in orders)})")
    return orders


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures", "kovasznay_convergence.png"))
    a = ap.parse_args()
    path = a.results or find_results()
    if not path or not os.path.exists(path):
        print("plot_kovasznay: no validation_kovasznay.json found (run ctest -R validation_kovasznay)",
              file=sys.stderr)
        return 1
    plot(path, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# ef_cl_cg on a small generated anchor-like matrix (both variants, solution written
# and read back), then the benchmark script's smoke run without peers' GPUs.
# usage: tool_check.sh PROGRAM PYTHON WORK SCRIPT_DIR
program=$1
python=$2
work=$3
bench=$4
set -u
rm -rf "$work"
mkdir -p "$work"
fail() { echo "tool_check: $*"; exit 1; }
"$python" -c "import numpy" 2>/dev/null || { echo "no NumPy: skipping"; exit 77; }
"$python" "$bench/cg_peers.py" gen 8 "$work/lap8.bin" || fail "generator failed"
"$program" "$work/lap8.bin" 20 --quiet --check-every 1 --write-solution "$work/lap8_sol.bin" > "$work/std.out" 2>&1
rc=$?
cat "$work/std.out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "ef_cl_cg failed ($rc)"
"$program" "$work/lap8.bin" 20 --quiet --variant three-term --no-tune > "$work/tt.out" 2>&1 ||
  { cat "$work/tt.out"; fail "three-term run failed"; }
cat "$work/tt.out"
# The JSON lines parse; both converge to 1e-8 with a true residual below 1e-7 (a
# factor 10 for the difference between the scaled norm of the stop and this one);
# the solution block round-trips.
"$python" - "$work" <<'PY' || fail "output check failed"
import json, sys, struct
work = sys.argv[1]
for name in ("std.out", "tt.out"):
    lines = [l for l in open(f"{work}/{name}") if l.startswith('{"program": "ef_cl_cg"')]
    assert len(lines) == 1, name
    r = json.loads(lines[0])
    assert r["n"] == 512 and r["converged"] and r["relres"] < 1e-7, r
    assert r["us_per_iter"] > 0 and r["iters_to_rtol"] > 0, r
data = open(f"{work}/lap8_sol.bin", "rb").read()
n, nnz = struct.unpack("<qq", data[:16])
assert len(data) == 16 + 4 * (n + 1) + 12 * nnz + 16 * n, "no solution block"
PY
# Smoke run of the benchmark script: ours only (no CuPy or NVIDIA here), N = 6.
bash "$bench/cg_peers.sh" --sizes 6 --iters 10 --out "$work/bench" --ef-cl-cg "$program" \
  --python "$python" > "$work/bench.out" 2>&1 || { cat "$work/bench.out"; fail "cg_peers.sh failed"; }
grep -q "^| 6 | 216 |" "$work/bench.out" || { cat "$work/bench.out"; fail "no table row"; }
[ -s "$work/bench/results.json" ] || fail "no results.json"
exit 0

"""Shared machinery of the validation drivers (tests/validation/*.py).

Every driver is run by CTest (tests/validation.cmake) as
    /usr/bin/python3 DRIVER --source SRC --shared SHARED --lib LIBDIR --work WORKDIR [--gmsh GMSH]
                            [--results FILE.json] [driver options]
It meshes the case's .geo with gmsh into WORKDIR, writes the case's ProjectParameters.json
there with the edits the variant needs (stated in the driver), runs the analysis through the
Python workflow (edgeflow.FluidAnalysis), prints every measured figure next to its bound,
writes the figures as JSON (--results) and exits 1 when a bound is missed.

EDGEFLOW_VALIDATION_LINEAR_SOLVER (environment; unset or empty: the cases as committed) runs every
driver with another pressure solver: a JSON object merged key by key into
solver_settings.linear_solver_settings of every case a driver writes (its keys win, the case's
other keys, tolerance included, stay), e.g.
    EDGEFLOW_VALIDATION_LINEAR_SOLVER='{"solver_type": "fcg", "preconditioner_type": "amg"}'
The drivers that write their cases through python_scripts/ (backward_facing_step.py,
flow_past_obstacle.py) get it through linear_solver_hook.  Every driver prints the object and
the results JSON records it as "linear_solver_override".

EDGEFLOW_VALIDATION_SOLVER_SETTINGS does the same for solver_settings itself, merged recursively
(objects key by key, anything else replaced), e.g. the implicit viscosity of issue 16 at its own
automatic step:
    EDGEFLOW_VALIDATION_SOLVER_SETTINGS='{"viscous_time_integration": "implicit"}'
recorded as "solver_settings_override"; the drivers that step through Monitor also record the time
steps they took ("time_step": first, smallest, largest, last).
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

SKIP = 77
LINEAR_SOLVER_ENV = "EDGEFLOW_VALIDATION_LINEAR_SOLVER"
SOLVER_SETTINGS_ENV = "EDGEFLOW_VALIDATION_SOLVER_SETTINGS"
STEPS = {}  # the time steps Monitor took: first, min, max, last


def _env_object(name):
    """The JSON object of environment variable `name`, or None when it is unset or empty."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a JSON object, got {text!r}")
    return value


def linear_solver_override():
    """The JSON object of EDGEFLOW_VALIDATION_LINEAR_SOLVER, or None when it is unset or empty."""
    return _env_object(LINEAR_SOLVER_ENV)


def solver_settings_override():
    """The JSON object of EDGEFLOW_VALIDATION_SOLVER_SETTINGS, or None when it is unset or empty."""
    return _env_object(SOLVER_SETTINGS_ENV)


def _merge(dst, src):
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v


def apply_linear_solver(params):
    """Merge the overrides (if any) into params' solver_settings (and its linear_solver_settings);
    returns params."""
    override = solver_settings_override()
    if override is not None:
        _merge(params.setdefault("solver_settings", {}), override)
    override = linear_solver_override()
    if override is not None:
        params.setdefault("solver_settings", {}).setdefault("linear_solver_settings", {}).update(override)
    return params


def linear_solver_hook(module, name, kind):
    """With the override set, wrap function `name` of `module` (a python_scripts/ module whose case
    writer the driver cannot reach through write_case) so that what it produces carries the override:
    kind "dict" (it returns the parameters) or "file" (it writes them to the JSON path it returns)."""
    if linear_solver_override() is None and solver_settings_override() is None:
        return
    inner = getattr(module, name)

    def dict_writer(*a, **k):
        return apply_linear_solver(inner(*a, **k))

    def file_writer(*a, **k):
        path = inner(*a, **k)
        with open(path) as f:
            params = json.load(f)
        with open(path, "w") as f:
            json.dump(apply_linear_solver(params), f, indent=2)
        return path

    setattr(module, name, dict_writer if kind == "dict" else file_writer)


def parse_args(description, extra=None):
    """Common options; `extra(parser)` adds the driver's own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--source", required=True, help="source tree root")
    ap.add_argument("--shared", required=True, help="the shared/ folder (reference data)")
    ap.add_argument("--lib", required=True, help="folder of libedgeflow_core.so and the fluid plugin")
    ap.add_argument("--work", required=True, help="scratch folder for meshes and outputs")
    ap.add_argument("--gmsh", default="gmsh", help="gmsh program")
    ap.add_argument("--results", default=None, help="write the measured figures to this JSON file")
    if extra:
        extra(ap)
    args = ap.parse_args()
    os.environ["EDGEFLOW_LIB_DIR"] = args.lib
    os.environ["EDGEFLOW_PLUGIN_DIR"] = args.lib  # the plugin of the same build, whatever the shell says
    sys.path.insert(0, os.path.join(args.source, "python_scripts"))
    os.makedirs(args.work, exist_ok=True)
    args.work = os.path.abspath(args.work)
    if args.results:
        args.results = os.path.abspath(args.results)
    os.chdir(args.work)  # relative output folders land in WORKDIR
    override = linear_solver_override()  # a malformed value fails here, before any run
    if override is not None:
        print(f"{LINEAR_SOLVER_ENV}: linear_solver_settings += {json.dumps(override)}")
    override = solver_settings_override()
    if override is not None:
        print(f"{SOLVER_SETTINGS_ENV}: solver_settings += {json.dumps(override)}")
    if not os.path.isdir(os.path.join(args.shared, "reference")):
        print(f"no reference data in {args.shared}/reference: skipped")
        sys.exit(SKIP)
    return args


def gmsh_mesh(args, geo, out_name, dim, numbers=None):
    """Mesh `geo` with gmsh (-setnumber for each of `numbers`) into WORKDIR/out_name (msh 4.1 ASCII)."""
    out = os.path.join(args.work, out_name)
    cmd = [args.gmsh, f"-{dim}", geo, "-format", "msh41", "-o", out]
    for k, v in (numbers or {}).items():
        cmd[2:2] = ["-setnumber", k, str(v)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        print(f"gmsh program '{args.gmsh}' not found: skipped")
        sys.exit(SKIP)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"gmsh failed on {geo}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return out


def write_case(args, case_json, out_name, edit=None):
    """Copy ProjectParameters `case_json` into WORKDIR/out_name after `edit(dict)`; returns the path.
    The mesh named in it is looked up next to the copy, i.e. in WORKDIR, where gmsh_mesh puts it."""
    with open(case_json) as f:
        params = json.load(f)
    params["problem_data"]["output_folder"] = os.path.splitext(out_name)[0] + "_output"
    if edit:
        edit(params)
    apply_linear_solver(params)
    path = os.path.join(args.work, out_name)
    with open(path, "w") as f:
        json.dump(params, f, indent=2)
    return path


class Monitor:
    """Runs an edgeflow.FluidAnalysis step by step, watching max_I |u_I^{n+1} - u_I^n| / dt.

    run_to_steady(rate_tol, t_max): stops at the first step whose rate is below rate_tol
    (velocity / time units), or fails at t_max.  run_to(t): runs until time t exactly (the
    analysis shortens the last step to end_time, which the drivers set)."""

    def __init__(self, analysis):
        self.a = analysis
        self.rate = float("inf")

    def step(self):
        a = self.a
        u0 = a.model_part.values("VELOCITY").copy()
        a.InitializeSolutionStep()
        a.SolveSolutionStep()
        a.FinalizeSolutionStep()
        a.OutputSolutionStep()
        u1 = a.model_part.values("VELOCITY")
        dt = a.delta_time
        self.rate = float(abs(u1 - u0).max()) / dt
        STEPS.setdefault("first", dt)
        STEPS["min"] = min(STEPS.get("min", dt), dt)
        STEPS["max"] = max(STEPS.get("max", dt), dt)
        STEPS["last"] = dt

    def run_to_steady(self, rate_tol, t_max, t_min=0.0):
        a = self.a
        while a.KeepAdvancingSolutionLoop() and a.time < t_max:
            self.step()
            if self.rate < rate_tol and a.time >= t_min:
                return True
        return False

    def run_to(self, t_end):
        a = self.a
        while a.KeepAdvancingSolutionLoop() and a.time < t_end - 1e-12 * max(1.0, abs(t_end)):
            self.step()
        return abs(a.time - t_end) <= 1e-9 * max(1.0, abs(t_end))


class Report:
    """Measured figures against bounds: each check prints one line and is kept for the JSON."""

    def __init__(self, test, args):
        self.test = test
        self.args = args
        self.t0 = time.time()
        self.checks = []
        self.data = {}
        self.failed = 0

    def check(self, name, value, bound, kind="<=", note=""):
        """kind '<=' (value <= bound), '>=' (value >= bound) or 'in' (bound = (lo, hi))."""
        if kind == "<=":
            ok = value <= bound
            btxt = f"<= {bound:.4g}"
        elif kind == ">=":
            ok = value >= bound
            btxt = f">= {bound:.4g}"
        else:
            ok = bound[0] < value < bound[1]
            btxt = f"in ({bound[0]:.4g}, {bound[1]:.4g})"
        ok = bool(ok) and math.isfinite(value)
        print(f"{self.test}: {name} = {value:.5g}  (bound {btxt})  {'ok' if ok else 'FAILED'}"
              + (f"  [{note}]" if note else ""))
        self.checks.append({"name": name, "measured": value, "bound": bound, "kind": kind, "pass": ok,
                            "note": note})
        if not ok:
            self.failed += 1
        return ok

    def info(self, key, value, show=True):
        """A figure that is reported but not gated."""
        self.data[key] = value
        if show:
            txt = f"{value:.5g}" if isinstance(value, float) else str(value)
            print(f"{self.test}: {key} = {txt}")

    def finish(self):
        wall = time.time() - self.t0
        if self.args.results:
            out = {
                "test": self.test,
                "pass": self.failed == 0,
                "checks": self.checks,
                "data": self.data,
                "wall_seconds": round(wall, 1),
                "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus, "
                           f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}",
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            if linear_solver_override() is not None:
                out["linear_solver_override"] = linear_solver_override()
            if solver_settings_override() is not None:
                out["solver_settings_override"] = solver_settings_override()
            if STEPS:
                out["time_step"] = dict(STEPS)
            d = os.path.dirname(os.path.abspath(self.args.results))
            os.makedirs(d, exist_ok=True)
            with open(self.args.results, "w") as f:
                json.dump(out, f, indent=2)
                f.write("\n")
        print(f"{self.test}: {'PASSED' if self.failed == 0 else f'{self.failed} check(s) FAILED'} "
              f"({wall:.1f} s)")
        return 0 if self.failed == 0 else 1

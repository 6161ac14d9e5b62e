#!/usr/bin/env python3
"""Run a case: python3 python_scripts/run_analysis.py ProjectParameters.json [options].

Same progress lines and outputs as `edgeflow run`.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeflow import EdgeflowError, FluidAnalysis  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("parameters")
    ap.add_argument("--solver-type")
    ap.add_argument("--refine", type=int)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--output")
    ap.add_argument("--skip-unsupported", action="store_true", default=None)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--restart", help="continue the run this restart file saved (docs/restart.md)")
    ap.add_argument("--overwrite", action="store_true", help="remove the files of the run whose manifest is "
                    "in the output folder first")
    a = ap.parse_args()
    try:
        analysis = FluidAnalysis(a.parameters, solver_type=a.solver_type, output_folder=a.output,
                                 refinement_levels=a.refine, max_steps=a.steps,
                                 skip_unsupported_processes=a.skip_unsupported, quiet=a.quiet,
                                 restart_file=a.restart, overwrite=a.overwrite)
        analysis.Run()
    except EdgeflowError as e:
        print(f"edgeflow: error: {e}", file=sys.stderr)
        return 1
    # Stopped by SIGINT/SIGTERM or max_wall_time: the exit codes of `edgeflow run`.
    if analysis.status == "interrupted":
        return 128 + analysis.stop_signal if analysis.stop_signal else 75
    return 0


if __name__ == "__main__":
    sys.exit(main())

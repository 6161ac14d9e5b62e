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
    a = ap.parse_args()
    try:
        FluidAnalysis(a.parameters, solver_type=a.solver_type, output_folder=a.output, refinement_levels=a.refine,
                      max_steps=a.steps, skip_unsupported_processes=a.skip_unsupported, quiet=a.quiet).Run()
    except EdgeflowError as e:
        print(f"edgeflow: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""edgeflow: Python workflow over the C library (ctypes binding, Kratos-style analysis stage)."""
from .core import Library, EdgeflowError
from .fluid_analysis import FluidAnalysis

__all__ = ["Library", "EdgeflowError", "FluidAnalysis"]

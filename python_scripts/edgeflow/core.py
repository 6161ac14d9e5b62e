"""Thin ctypes binding of libedgeflow_core (ef_analysis.h, ef_model_part.h).

The library is found through $EDGEFLOW_LIB_DIR, else the build folders of the
source tree (build/lib, build-*/lib).  No hand-written CPython extension.
"""
import ctypes
import weakref
import glob
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))


class EdgeflowError(RuntimeError):
    """An edgeflow call failed; the message names file, line and cause."""


class _Options(ctypes.Structure):
    _fields_ = [
        ("solver_type", ctypes.c_char_p),
        ("output_folder", ctypes.c_char_p),
        ("refinement_levels", ctypes.c_int),
        ("max_steps", ctypes.c_long),
        ("skip_unsupported_processes", ctypes.c_int),
        ("quiet", ctypes.c_int),
        ("load_only", ctypes.c_int),
        ("applications", ctypes.c_char_p),
        ("stop_when_steady", ctypes.c_int),
        ("restart_file", ctypes.c_char_p),
        ("overwrite", ctypes.c_int),
        ("comm", ctypes.c_void_p),  # NULL: problem_data.parallel_type decides
    ]


def _find_library():
    candidates = []
    env = os.environ.get("EDGEFLOW_LIB_DIR")
    if env:
        candidates.append(os.path.join(env, "libedgeflow_core.so"))
    candidates.append(os.path.join(_ROOT, "build", "lib", "libedgeflow_core.so"))
    candidates += sorted(glob.glob(os.path.join(_ROOT, "build*", "lib", "libedgeflow_core.so")))
    for c in candidates:
        if os.path.exists(c):
            return c
    raise EdgeflowError("libedgeflow_core.so not found: build edgeflow (cmake) or set EDGEFLOW_LIB_DIR; tried "
                        + ", ".join(candidates))


class Library:
    """The loaded C library with typed signatures."""

    _instance = None

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls(_find_library())
        return cls._instance

    def __init__(self, path):
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        # The plugin is found next to the core library.
        os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", os.path.dirname(path))
        vp, i, d, l = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_long
        sig = {
            "ef_error_message": ([], ctypes.c_char_p),
            "ef_analysis_options_default": ([ctypes.POINTER(_Options)], None),
            "ef_analysis_create": ([ctypes.c_char_p, ctypes.POINTER(_Options), ctypes.POINTER(vp)], i),
            "ef_analysis_destroy": ([ctypes.POINTER(vp)], None),
            "ef_analysis_initialize": ([vp], i),
            "ef_analysis_run_solution_loop": ([vp], i),
            "ef_analysis_keep_advancing": ([vp], i),
            "ef_analysis_initialize_solution_step": ([vp], i),
            "ef_analysis_solve_solution_step": ([vp], i),
            "ef_analysis_finalize_solution_step": ([vp], i),
            "ef_analysis_output_solution_step": ([vp], i),
            "ef_analysis_finalize": ([vp], i),
            "ef_analysis_model_part": ([vp], vp),
            "ef_analysis_time": ([vp], d),
            "ef_analysis_delta_time": ([vp], d),
            "ef_analysis_step": ([vp], l),
            "ef_analysis_output_step": ([vp], l),
            "ef_analysis_last_iterations": ([vp], i),
            "ef_analysis_status": ([vp], ctypes.c_char_p),
            "ef_analysis_write_restart": ([vp, ctypes.c_char_p, ctypes.c_size_t], i),
            "ef_request_stop": ([i], None),
            "ef_analysis_stop_signal": ([vp], i),
            "ef_analysis_comm": ([vp], vp),
            "ef_comm_size": ([vp], i),
            "ef_comm_abort": ([vp, i, ctypes.c_char_p], None),  # variadic: the message follows "%s"
            "ef_model_part_sync_to_host": ([vp], i),
            "ef_model_part_mark_modified": ([vp, ctypes.c_char_p], i),
            "ef_model_part_variable_arrays": ([vp, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(d)),
                                               ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                                               ctypes.POINTER(i)], i),
            "ef_model_part_node_count": ([vp], ctypes.c_int64),
            "ef_model_part_coordinates": ([vp], ctypes.POINTER(d)),
            "ef_model_part_element_arrays": ([vp, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(i)],
                                             ctypes.POINTER(ctypes.c_int32)),
        }
        for name, (args, res) in sig.items():
            f = getattr(lib, name)
            f.argtypes = args
            f.restype = res
        self.lib = lib
        self.Options = _Options

    def check(self, err, what):
        if err:
            raise EdgeflowError(f"{what}: {self.lib.ef_error_message().decode(errors='replace')}")


class _Owned:
    """An array interface over C memory that holds a reference to the memory's owner, so a NumPy
    view made of it (its .base) keeps the analysis alive: the memory cannot be freed under it."""

    def __init__(self, owner, address, shape, typestr):
        self._owner = owner
        self.__array_interface__ = {"data": (address, False), "shape": tuple(shape), "typestr": typestr,
                                    "version": 3}


def _view(owner, pointer, shape, ctype):
    """A writable NumPy view of shape over the C array at pointer, keeping owner alive."""
    address = ctypes.cast(pointer, ctypes.c_void_p).value
    if not address:
        raise EdgeflowError("the model part has no such array (not initialized?)")
    typestr = np.dtype(ctype).str
    return np.asarray(_Owned(owner, address, shape, typestr))


class ModelPart:
    """Nodal data of the analysis' model part as NumPy views.

    Reading syncs from the device first; after writing, call mark_modified(name)
    so the strategy uploads the change before its next step.  Every view holds a reference to
    the analysis that owns the memory, so it stays valid after the analysis object is dropped.
    """

    def __init__(self, library, handle, owner=None):
        self._L = library
        self._h = handle
        # weak here (the analysis holds this model part), strong in every view made of it
        self._owner_ref = weakref.ref(owner) if owner is not None else (lambda: None)

    @property
    def _owner(self):
        return self._owner_ref()

    @property
    def number_of_nodes(self):
        return int(self._L.lib.ef_model_part_node_count(self._h))

    def coordinates(self):
        n = self.number_of_nodes
        ptr = self._L.lib.ef_model_part_coordinates(self._h)
        return _view(self._owner, ptr, (n, 3), np.float64)

    def elements(self):
        """Element connectivity (n_elements, nodes_per_element) of internal node indices (a view)."""
        ne = ctypes.c_int64()
        npe = ctypes.c_int()
        ptr = self._L.lib.ef_model_part_element_arrays(self._h, ctypes.byref(ne), ctypes.byref(npe))
        return _view(self._owner, ptr, (ne.value, npe.value), np.int32)

    def _arrays(self, name):
        values = ctypes.POINTER(ctypes.c_double)()
        fixed = ctypes.POINTER(ctypes.c_uint8)()
        ncomp = ctypes.c_int()
        self._L.check(self._L.lib.ef_model_part_variable_arrays(self._h, name.encode(), ctypes.byref(values),
                                                                 ctypes.byref(fixed), ctypes.byref(ncomp)),
                      f"variable {name}")
        n = self.number_of_nodes
        shape = (n, ncomp.value) if ncomp.value > 1 else (n,)
        return _view(self._owner, values, shape, np.float64), _view(self._owner, fixed, shape, np.uint8)

    def values(self, name):
        """Current values (n,) or (n, 3), a writable view of the C array."""
        self._L.check(self._L.lib.ef_model_part_sync_to_host(self._h), "sync to host")
        return self._arrays(name)[0]

    def fixity(self, name):
        self._L.check(self._L.lib.ef_model_part_sync_to_host(self._h), "sync to host")
        return self._arrays(name)[1]

    def mark_modified(self, name):
        self._L.check(self._L.lib.ef_model_part_mark_modified(self._h, name.encode()), f"mark {name} modified")

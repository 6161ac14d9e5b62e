"""FluidAnalysis: Kratos' AnalysisStage shape over the C analysis loop.

    analysis = FluidAnalysis("ProjectParameters.json")
    analysis.Run()

Subclass and override InitializeSolutionStep / FinalizeSolutionStep /
OutputSolutionStep to act between steps; call the base method to keep the
built-in behaviour (boundary conditions, processes, outputs).
"""
import ctypes

from .core import Library, ModelPart


class FluidAnalysis:
    applications = "fluid"

    def __init__(self, parameters_file, solver_type=None, output_folder=None, refinement_levels=None,
                 max_steps=None, skip_unsupported_processes=None, quiet=False):
        self._L = Library.get()
        opts = self._L.Options()
        self._L.lib.ef_analysis_options_default(ctypes.byref(opts))
        self._keep = []  # keep encoded strings alive
        if solver_type:
            opts.solver_type = self._str(solver_type)
        if output_folder:
            opts.output_folder = self._str(output_folder)
        if refinement_levels is not None:
            opts.refinement_levels = int(refinement_levels)
        if max_steps:
            opts.max_steps = int(max_steps)
        if skip_unsupported_processes is not None:
            opts.skip_unsupported_processes = 1 if skip_unsupported_processes else 0
        opts.quiet = 1 if quiet else 0
        # The plugins to load when the case names none in problem_data.applications.
        opts.applications = self._str(self.applications)
        self._h = ctypes.c_void_p()
        self._L.check(self._L.lib.ef_analysis_create(self._str(parameters_file), ctypes.byref(opts),
                                                     ctypes.byref(self._h)), "create analysis")
        self.model_part = None

    def _str(self, s):
        b = s.encode()
        self._keep.append(b)
        return b

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            self._L.lib.ef_analysis_destroy(ctypes.byref(h))

    # AnalysisStage interface ------------------------------------------------
    def Run(self):
        self.Initialize()
        self.RunSolutionLoop()
        self.Finalize()

    def Initialize(self):
        self._L.check(self._L.lib.ef_analysis_initialize(self._h), "Initialize")
        self.model_part = ModelPart(self._L, self._L.lib.ef_analysis_model_part(self._h), owner=self)
        self.OutputSolutionStep()

    def KeepAdvancingSolutionLoop(self):
        return bool(self._L.lib.ef_analysis_keep_advancing(self._h))

    def RunSolutionLoop(self):
        while self.KeepAdvancingSolutionLoop():
            self.InitializeSolutionStep()
            self.SolveSolutionStep()
            self.FinalizeSolutionStep()
            self.OutputSolutionStep()

    def InitializeSolutionStep(self):
        self._L.check(self._L.lib.ef_analysis_initialize_solution_step(self._h), "InitializeSolutionStep")

    def SolveSolutionStep(self):
        self._L.check(self._L.lib.ef_analysis_solve_solution_step(self._h), "SolveSolutionStep")

    def FinalizeSolutionStep(self):
        self._L.check(self._L.lib.ef_analysis_finalize_solution_step(self._h), "FinalizeSolutionStep")

    def OutputSolutionStep(self):
        self._L.check(self._L.lib.ef_analysis_output_solution_step(self._h), "OutputSolutionStep")

    def Finalize(self):
        self._L.check(self._L.lib.ef_analysis_finalize(self._h), "Finalize")

    # State ------------------------------------------------------------------
    @property
    def time(self):
        return self._L.lib.ef_analysis_time(self._h)

    @property
    def delta_time(self):
        return self._L.lib.ef_analysis_delta_time(self._h)

    @property
    def step(self):
        return self._L.lib.ef_analysis_step(self._h)

    @property
    def pressure_iterations(self):
        return self._L.lib.ef_analysis_last_iterations(self._h)

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
                 max_steps=None, skip_unsupported_processes=None, quiet=False, stop_when_steady=False,
                 restart_file=None, overwrite=False):
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
        opts.stop_when_steady = 1 if stop_when_steady else 0
        if restart_file:
            opts.restart_file = self._str(restart_file)
        # Another run's output folder is refused unless overwrite (its manifest's files go first).
        opts.overwrite = 1 if overwrite else 0
        # The plugins to load when the case names none in problem_data.applications.
        opts.applications = self._str(self.applications)
        self._h = ctypes.c_void_p()
        self._L.check(self._L.lib.ef_analysis_create(self._str(parameters_file), ctypes.byref(opts),
                                                     ctypes.byref(self._h)), "create analysis")
        self.model_part = None

    def _check(self, err, what):
        """Raise on an error; on several ranks (parallel_type "MPI" under mpirun) first stop every rank with
        this rank's message instead, as `edgeflow run` does: the others may wait in a collective (docs/mpi.md)."""
        if err and self._h:
            comm = self._L.lib.ef_analysis_comm(self._h)
            if self._L.lib.ef_comm_size(comm) > 1:
                message = f"error: {what}: {self._L.lib.ef_error_message().decode(errors='replace')}"
                self._L.lib.ef_comm_abort(comm, 1, b"%s", message.encode())
        self._L.check(err, what)

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
        self._stop_on_signals()
        self.RunSolutionLoop()
        self.Finalize()

    def _stop_on_signals(self):
        """SIGINT/SIGTERM finish the step, write outputs, a restart file and the summary."""
        import signal
        import threading
        if threading.current_thread() is not threading.main_thread():
            return
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, lambda n, frame: self._L.lib.ef_request_stop(n))

    @property
    def status(self):
        """"running", "completed", "interrupted" or "failed" (run_summary.json's status)."""
        return self._L.lib.ef_analysis_status(self._h).decode()

    @property
    def stop_signal(self):
        """The signal that stopped an interrupted run (0: problem_data.max_wall_time)."""
        return self._L.lib.ef_analysis_stop_signal(self._h)

    def Initialize(self):
        self._check(self._L.lib.ef_analysis_initialize(self._h), "Initialize")
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
        self._check(self._L.lib.ef_analysis_initialize_solution_step(self._h), "InitializeSolutionStep")

    def SolveSolutionStep(self):
        self._check(self._L.lib.ef_analysis_solve_solution_step(self._h), "SolveSolutionStep")

    def FinalizeSolutionStep(self):
        self._check(self._L.lib.ef_analysis_finalize_solution_step(self._h), "FinalizeSolutionStep")

    def OutputSolutionStep(self):
        self._check(self._L.lib.ef_analysis_output_solution_step(self._h), "OutputSolutionStep")

    def Finalize(self):
        self._check(self._L.lib.ef_analysis_finalize(self._h), "Finalize")

    # State ------------------------------------------------------------------
    @property
    def time(self):
        return self._L.lib.ef_analysis_time(self._h)

    @property
    def delta_time(self):
        return self._L.lib.ef_analysis_delta_time(self._h)

    @property
    def step(self):
        """Solver steps taken."""
        return self._L.lib.ef_analysis_step(self._h)

    @property
    def output_step(self):
        """The step the processes count: the user's fixed time steps completed when the stability
        limit made the solver cut them (it lands on each of their ends), else the solver's step.
        Schedule "every N steps" on this to keep the user's meaning, as the C processes do."""
        return self._L.lib.ef_analysis_output_step(self._h)

    @property
    def pressure_iterations(self):
        return self._L.lib.ef_analysis_last_iterations(self._h)

#!/usr/bin/env python3
"""test_findings_cli.py -- each finding of the reliability review (issue 14) through the edgeflow
program: the input now gives a clear error (exit 1, before any step) or a warning.

    test_findings_cli.py SOURCE_DIR EDGEFLOW WORK_DIR"""
import copy, json, os, pathlib, shutil, subprocess, sys

src, exe, work = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
base = json.loads((src / "tests/data/workflow/ProjectParameters.json").read_text())
base["solver_settings"]["model_import_settings"]["input_filename"] = str(src / "test_examples/channel_forces/channel_forces.msh")
failures = []


def case(name, edit=None, text=None):
    """Write a variant of the workflow case (edit: a function on the dict; text: the file's text)."""
    d = copy.deepcopy(base)
    d["problem_data"]["output_folder"] = str(work / name / "out")
    if edit:
        edit(d)
    path = work / name / "ProjectParameters.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(d, indent=2))
    return path


def expect(name, args, rc, *needles, env=None, absent=()):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([exe] + [str(a) for a in args] + ["--quiet"], capture_output=True, text=True, env=e, timeout=60)
    out = p.stdout + p.stderr
    if p.returncode != rc:
        failures.append(f"{name}: exit {p.returncode}, expected {rc}:\n{out}")
    for n in needles:
        if n not in out:
            failures.append(f"{name}: '{n}' missing from:\n{out}")
    for n in absent:
        if n in out:
            failures.append(f"{name}: '{n}' unexpected in:\n{out}")
    return out


# Duplicate keys: an error naming both lines (cJSON alone kept the first silently).
text = json.dumps(base, indent=2).replace('"end_time": 0.16,', '"end_time": 0.16,\n    "end_time": 0.32,', 1)
p = case("duplicate_key", text=text)
line = text.splitlines().index('    "end_time": 0.16,') + 1
expect("duplicate_key", ["load", p], 1, "key 'end_time' appears twice in problem_data",
       f"lines {line} and {line + 1}")

# end_time 1e999 overflows to inf: rejected with file, line and key (it used to run 0 steps, exit 0).
text = json.dumps(base, indent=2).replace('"end_time": 0.16', '"end_time": 1e999', 1)
p = case("end_time_inf", text=text)
expect("end_time_inf", ["run", p, "--steps", "2"], 1, "'problem_data.end_time' is not a finite number", "ProjectParameters.json:")

# A non-positive viscosity says what is wrong, not "no viscosity".
p = case("viscosity", lambda d: d["solver_settings"].update(viscosity=-1.0))
expect("viscosity", ["load", p], 1, "viscosity (kinematic) must be > 0, got -1", absent=("no viscosity",))
p = case("density", lambda d: d["solver_settings"].update(density=0.0))
expect("density", ["load", p], 1, "density must be > 0, got 0")

# An output folder that cannot be written: found before the first step (a file where a folder goes).
def blocked(d):
    d["output_processes"]["vtk_output"][0]["Parameters"]["output_path"] = "blocker/vtk"
p = case("output_blocked", blocked)
(work / "output_blocked" / "out").mkdir(parents=True)
(work / "output_blocked" / "out" / "blocker").write_text("a file, not a folder\n")
expect("output_blocked", ["run", p, "--steps", "3"], 1, "output_processes.vtk_output[0].Parameters.output_path",
       "cannot be created", "no step was run")
if list((work / "output_blocked" / "out").rglob("*.csv")):
    failures.append("output_blocked: steps ran before the output folder was checked")

# The restart folder is created only at the first restart file: checked before the first step too,
# the io_path of a save_restart_process (created) ...
def blocked_restart(d):
    d["output_processes"]["restart"] = [{
        "python_module": "save_restart_process", "kratos_module": "KratosMultiphysics",
        "process_name": "SaveRestartProcess",
        "Parameters": {"model_part_name": "FluidModelPart", "restart_control_type": "step",
                       "restart_save_frequency": 2, "io_path": "blocker/restart"}}]
p = case("output_blocked_restart", blocked_restart)
(work / "output_blocked_restart" / "out").mkdir(parents=True)
(work / "output_blocked_restart" / "out" / "blocker").write_text("a file, not a folder\n")
expect("output_blocked_restart", ["run", p, "--steps", "3"], 1, "restart folder",
       "output_processes.restart[0].Parameters.io_path of save_restart_process", "blocker/restart",
       "cannot be created", "Not a directory", "no step was run")
if list((work / "output_blocked_restart" / "out").rglob("*.csv")):
    failures.append("output_blocked_restart: steps ran before the restart folder was checked")
# ... and, without one, the default folder of a stop by a signal or max_wall_time (not created).
p = case("output_blocked_stop_restart")
(work / "output_blocked_stop_restart" / "out").mkdir(parents=True)
(work / "output_blocked_stop_restart" / "out" / "FluidModelPart__restart_files").write_text("a file\n")
expect("output_blocked_stop_restart", ["run", p, "--steps", "3"], 1, "restart folder",
       "no save_restart_process", "FluidModelPart__restart_files", "SIGINT/SIGTERM or max_wall_time",
       "cannot be created", "Not a directory", "no step was run")
if list((work / "output_blocked_stop_restart" / "out").rglob("*.csv")):
    failures.append("output_blocked_stop_restart: steps ran before the restart folder was checked")
p = case("stop_restart_ok")
expect("stop_restart_ok", ["run", p, "--steps", "2"], 0)
if (work / "stop_restart_ok" / "out" / "FluidModelPart__restart_files").exists():
    failures.append("stop_restart_ok: the check created the restart folder of a run that wrote no restart file")

# Refinement that cannot fit: refused at once with the estimate and what is available.
expect("refine_index", ["load", src / "tests/data/petsc/cavity3d.json", "--refine", "8", "--output", work / "refine8"], 1,
       "refinement_levels 8 would make", "32-bit index")
expect("refine_memory", ["load", case("refine3"), "--refine", "3"], 1, "refinement_levels 3 would make",
       "GB are available", env={"EDGEFLOW_MEMORY_AVAILABLE_MB": "1"})

# A singular inlet expression: named with its process and node, not as a non-finite right-hand side.
def singular(d):
    d["processes"]["boundary_conditions_process_list"][1]["Parameters"]["value"][0] = "1/y"
expect("singular_inlet", ["run", case("singular", singular), "--steps", "2"], 1,
       "assign_vector_variable_process on 'FluidModelPart.inlet'", "expression '1/y'", "is inf")

# Mesh checks on a square of four triangles around a centre node (ids 1-4 corners, 5 centre).
def mdpa(centre, extra_elements="", walls="1\n2\n3\n"):
    return f"""Begin Properties 0
End Properties
Begin Nodes
1 0.0 0.0 0.0
2 1.0 0.0 0.0
3 1.0 1.0 0.0
4 0.0 1.0 0.0
5 {centre[0]} {centre[1]} 0.0
End Nodes
Begin Elements Element2D3N
1 0 1 2 5
2 0 2 3 5
3 0 3 4 5
4 0 4 1 5
{extra_elements}End Elements
Begin Conditions LineCondition2D2N
1 0 1 2
2 0 2 3
3 0 4 1
4 0 3 4
End Conditions
Begin SubModelPart walls
Begin SubModelPartNodes
1
2
3
4
End SubModelPartNodes
Begin SubModelPartConditions
{walls}End SubModelPartConditions
End SubModelPart
Begin SubModelPart lid
Begin SubModelPartNodes
3
4
End SubModelPartNodes
Begin SubModelPartConditions
4
End SubModelPartConditions
End SubModelPart
"""


def mesh_case(name, text, processes=("walls", "lid"), edit=None):
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "square.mdpa").write_text(text)
    def e(d):
        d["solver_settings"]["model_import_settings"].update(input_type="mdpa", input_filename=str(folder / "square"))
        d["solver_settings"]["time_stepping"] = {"automatic_time_step": True, "CFL_number": 0.5}
        d["output_processes"] = {}
        bcs = []
        if "walls" in processes:
            bcs.append({"python_module": "apply_noslip_process", "Parameters": {"model_part_name": "FluidModelPart.walls"}})
        if "lid" in processes:
            bcs.append({"python_module": "assign_vector_variable_process",
                        "Parameters": {"model_part_name": "FluidModelPart.lid", "variable_name": "VELOCITY",
                                       "value": [1.0, 0.0, 0.0], "constrained": [True, True, True]}})
        d["processes"]["boundary_conditions_process_list"] = bcs
        if edit:
            edit(d)
    return case(name, e)


good = mesh_case("mesh_good", mdpa((0.5, 0.5)))
expect("mesh_good", ["check", good], 0, "Mesh check (2D): 5 nodes, 4 triangles", "tangled faces:    0",
       "boundary faces without a boundary condition: 0", absent=("warning",))
expect("mesh_duplicate", ["check", mesh_case("mesh_duplicate", mdpa((0.5, 0.5), "5 0 1 2 5\n"))], 1,
       "elements 1 and 5 have the same nodes")
expect("mesh_tangled", ["check", mesh_case("mesh_tangled", mdpa((0.5, -0.5)))], 1, "the mesh is tangled")
# The same checks at load: load and run stop with the same messages before any step.
for command in ("load", "run"):
    args = ["--steps", "2"] if command == "run" else []
    expect(f"mesh_duplicate_{command}",
           [command, mesh_case(f"mesh_duplicate_{command}", mdpa((0.5, 0.5), "5 0 1 2 5\n"))] + args, 1,
           "elements 1 and 5 have the same nodes")
    expect(f"mesh_tangled_{command}", [command, mesh_case(f"mesh_tangled_{command}", mdpa((0.5, -0.5)))] + args, 1,
           "the mesh is tangled")
    for name in (f"mesh_duplicate_{command}", f"mesh_tangled_{command}"):
        summary = work / name / "out" / "run_summary.json"
        if command == "run" and not (summary.exists() and json.loads(summary.read_text()).get("status") == "failed"
                                     and "run" not in json.loads(summary.read_text())):
            failures.append(f"{name}: no run_summary.json saying 'failed' before any step")
expect("mesh_sliver", ["check", mesh_case("mesh_sliver", mdpa((0.5, 1e-7)))], 0, "sliver element(s)",
       "shape quality")
expect("mesh_uncovered", ["check", mesh_case("mesh_uncovered", mdpa((0.5, 0.5)), processes=("lid",))], 0,
       "boundary face(s) lie in no sub model part that a process names", "checked against: FluidModelPart.lid")
# The same sliver pins the stable step below minimum_delta_time: the run stops instead of hanging.
expect("dt_floor", ["run", mesh_case("dt_floor", mdpa((0.5, 1e-7))), "--steps", "3"], 1, "sliver element(s)",
       "below solver_settings.time_stepping.minimum_delta_time")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)

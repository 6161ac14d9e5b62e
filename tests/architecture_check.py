"""The core names no plugin: fails when the core library depends on what the plugins hold.

    architecture_check.py SOURCE_DIR LIBEDGEFLOW_CORE [LINK_TXT]

Checks, each failure printed with its file and line:
  1. no source under application/core or application/include includes a plugin header
     (a header of application/fluid, custom_utilities or custom_kernels, or a path naming
     them), OpenCL (CL/...), PETSc or MPI;
  2. the core library needs (ELF NEEDED) and links (CMake's link line, when given) no
     plugin, OpenCL, PETSc or MPI library;
  3. neither the core sources nor the built library contain the word "fluid" (any case),
     except Kratos' default model part name "FluidModelPart" (EF_DEFAULT_MODEL_PART_NAME),
     which mesh files and cases use;
  4. no C source anywhere sets an OpenCL kernel argument by index (clSetKernelArg) outside the
     one helper file, custom_utilities/opencl/opencl_context.c: ef_cl_set_args_at (EF_CL_SET_ARGS,
     every argument of a launch in order) and ef_cl_bind_args_at (EF_CL_BIND_ARGS, the same with
     the values kept in an ef_cl_bound_args so that only changed arguments reach the driver).
"""
import os
import re
import subprocess
import sys

CORE_DIRS = ("application/core", "application/include")
ALL_C_DIRS = ("application", "custom_utilities", "custom_kernels", "tests", "tools", "benchmarks")
KERNEL_ARG_HELPER = os.path.join("custom_utilities", "opencl", "opencl_context.c")
SET_KERNEL_ARG = re.compile(r"\bclSetKernelArg\s*\(")
PLUGIN_DIRS = ("application/fluid", "custom_utilities", "custom_kernels")
ALLOWED = re.compile(rb"FluidModelPart")
FLUID = re.compile(rb"fluid", re.IGNORECASE)
BAD_INCLUDE = re.compile(r"(^|/)(CL/|petsc|mpi\.h)|application/fluid|custom_utilities|custom_kernels", re.IGNORECASE)
BAD_LIBRARY = re.compile(r"edgeflow_(?!core)|opencl|petsc|mpi", re.IGNORECASE)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def files_under(root, dirs, suffixes):
    for d in dirs:
        for folder, _, names in os.walk(os.path.join(root, d)):
            for n in sorted(names):
                if n.endswith(suffixes):
                    yield os.path.join(folder, n)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root, library = sys.argv[1], sys.argv[2]
    link_txt = sys.argv[3] if len(sys.argv) > 3 else None
    problems = []
    plugin_headers = {os.path.basename(p) for p in files_under(root, PLUGIN_DIRS, (".h",))}
    core_sources = list(files_under(root, CORE_DIRS, (".c", ".h")))
    if not core_sources:
        problems.append(f"no core sources under {root}/{CORE_DIRS}")

    for path in core_sources:
        rel = os.path.relpath(path, root)
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        for number, raw in enumerate(lines, 1):
            line = raw.decode("utf-8", "replace")
            m = INCLUDE.match(line)
            if m and (BAD_INCLUDE.search(m.group(1)) or os.path.basename(m.group(1)) in plugin_headers):
                problems.append(f"{rel}:{number}: the core includes '{m.group(1)}' (a plugin, OpenCL, PETSc or MPI header)")
            if FLUID.search(ALLOWED.sub(b"", raw)):
                problems.append(f"{rel}:{number}: the core names the fluid: {line.strip()}")

    for path in files_under(root, ALL_C_DIRS, (".c", ".h", ".cpp")):
        rel = os.path.relpath(path, root)
        if rel == KERNEL_ARG_HELPER:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                code = line.split("//")[0]
                if SET_KERNEL_ARG.search(code) and not code.lstrip().startswith(("*", "/*")):
                    problems.append(f"{rel}:{number}: a kernel argument set by index; use EF_CL_SET_ARGS")

    out = subprocess.run(["readelf", "-d", library], capture_output=True, text=True)
    if out.returncode != 0:
        problems.append(f"readelf -d {library} failed: {out.stderr.strip()}")
    for needed in re.findall(r"\(NEEDED\).*\[(.*)\]", out.stdout):
        if BAD_LIBRARY.search(needed):
            problems.append(f"{library}: needs {needed}")
    if link_txt:
        with open(link_txt) as f:
            for word in f.read().split():
                if BAD_LIBRARY.search(os.path.basename(word)) and not word.startswith("-o"):
                    problems.append(f"{link_txt}: the core links {word}")

    with open(library, "rb") as f:
        # The checkout's own path (in __FILE__ strings) is the user's business.
        data = ALLOWED.sub(b"", f.read().replace(os.path.abspath(root).encode(), b""))
    for m in FLUID.finditer(data):
        start = max(data.rfind(b"\0", 0, m.start()) + 1, m.start() - 60)
        end = data.find(b"\0", m.end())
        end = min(end if end >= 0 else len(data), m.end() + 60)
        problems.append(f"{library}: contains '{data[start:end].decode('ascii', 'replace')}'")

    for p in problems:
        print(p)
    if problems:
        print(f"architecture check: {len(problems)} problem(s): the core must not know its plugins, and kernel "
              "arguments go through EF_CL_SET_ARGS")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

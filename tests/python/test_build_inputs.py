"""What `pip install ./python` compiles (python/CMakeLists.txt), the input of its install time,
checked by configuring the build (no compiling): by default the core in one CPU variant, this
machine's, as two translation units and one link; GPUPLACE_CORES=all adds the other variants;
every compile and link step of the core reports its progress (cmake/build_progress.py)."""

import os
import re
import shutil
import subprocess
import sys

import pytest

import gpuplace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = {"portable": "_core", "x86-64-v3": "_core_v3", "x86-64-v4": "_core_v4"}


def _tool(name):
    found = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    assert found, f"{name} is needed to configure the build (scripts/setup.sh installs it)"
    return found


def configure(tmp_path, cores=None):
    """Configures python/ into a fresh folder; returns (exit code, output with its lines joined,
    build.ninja and CMakeFiles/rules.ninja)."""
    import pybind11

    build = tmp_path / f"build_{cores or 'default'}"
    env = {k: v for k, v in os.environ.items() if k not in ("GPUPLACE_CORES", "GPUPLACE_NATIVE")}
    env["GPUPLACE_BUILD_PROGRESS"] = "0"
    cmd = [_tool("cmake"), "-S", os.path.join(ROOT, "python"), "-B", str(build), "-G", "Ninja",
           f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
           f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"]
    if cores is not None:
        cmd.append(f"-DGPUPLACE_CORES={cores}")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    ninja = (build / "build.ninja").read_text() + (build / "CMakeFiles" / "rules.ninja").read_text() if p.returncode == 0 else ""
    return p.returncode, " ".join((p.stdout + p.stderr).split()), ninja


def compiled(ninja):
    """The object files the build compiles, and the core modules it links."""
    objects = re.findall(r"^build (CMakeFiles/\S+\.o): CXX_COMPILER", ninja, re.M)
    modules = sorted(set(re.findall(r"^build (_core\w*)\.\S+\.so: CXX_MODULE_LIBRARY_LINKER", ninja, re.M)))
    return objects, modules


def host_level():
    from gpuplace import _cpu

    if _cpu.x86_64_v4():
        return "x86-64-v4"
    return "x86-64-v3" if _cpu.x86_64_v3() else "portable"


def test_the_default_build_compiles_one_variant_in_two_units(tmp_path):
    rc, out, ninja = configure(tmp_path)
    assert rc == 0, out
    objects, modules = compiled(ninja)
    assert modules == [MODULES[host_level()]]
    # the bindings once, the variant's module and PPO once (unity builds), the CPU probe
    assert sorted(o.split("/")[1] for o in objects) == sorted(
        ["gpuplace_py_common.dir", f"{MODULES[host_level()]}.dir", "_cpu.dir"]), objects
    assert f"{host_level()}" in out and "(this machine's; GPUPLACE_CORES=all builds every variant)" in out
    # every compile and link step of the core goes through the progress reporter
    steps = re.findall(r"build_progress\.py \S+ (\S+) -- ", ninja)
    assert sorted(steps) == sorted(["common", f"variant:{host_level()}", f"link:{MODULES[host_level()]}"])


def test_all_builds_every_variant_and_bad_names_are_refused(tmp_path):
    rc, out, ninja = configure(tmp_path, "all")
    assert rc == 0, out
    _, modules = compiled(ninja)
    if gpuplace._cpu.x86_64_v3():  # an x86-64 machine (with a compiler that knows the levels)
        assert modules == ["_core", "_core_v3", "_core_v4"]
    rc, out, _ = configure(tmp_path, "portable,avx9000")
    assert rc != 0
    assert 'unknown variant "avx9000" (expected host, all, or a list of portable, x86-64-v3, x86-64-v4)' in out


def test_progress_lines(tmp_path):
    """What a build step says (python/cmake/build_progress.py): its start and end with the time since
    the build began, on the terminal or, without one (as here: a process with no controlling
    terminal), on the standard output; the step's own exit code; nothing with
    GPUPLACE_BUILD_PROGRESS=0."""
    script = os.path.join(ROOT, "python", "cmake", "build_progress.py")
    clock = str(tmp_path / "start")

    def run(*args, **env):
        return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, start_new_session=True,
                              env=dict(os.environ, **env), timeout=60)

    assert run("--start", clock).returncode == 0
    p = run(clock, "variant:x86-64-v3", "--", sys.executable, "-c", "import sys; print('compiler output'); sys.exit(3)")
    assert p.returncode == 3
    lines = p.stdout.splitlines()
    step = re.escape("compiling the x86-64-v3 core (module.cpp and the C++ PPO)")
    assert re.fullmatch(rf"gpuplace build \[0:0\d\] {step} \.\.\.", lines[0]), lines
    assert lines[1] == "compiler output"
    assert re.fullmatch(rf"gpuplace build \[0:0\d\] {step}: FAILED in 0 s", lines[2]), lines
    p = run(clock, "link:_core_v3", "--", sys.executable, "-c", "pass")
    assert p.returncode == 0 and p.stdout.splitlines()[-1].endswith("linking gpuplace._core_v3: done in 0 s")
    assert run("--say", clock, "hello").stdout.startswith("gpuplace build [0:")
    quiet = run(clock, "common", "--", sys.executable, "-c", "pass", GPUPLACE_BUILD_PROGRESS="0")
    assert quiet.returncode == 0 and quiet.stdout == ""


def test_progress_lines_reach_pips_stderr_when_pip_captures_the_build(tmp_path):
    """Under pip (here a stand-in named pip) with the build's output captured and no terminal, the
    lines go to pip's own standard error as they happen, not into the captured output."""
    script = os.path.join(ROOT, "python", "cmake", "build_progress.py")
    clock = str(tmp_path / "start")
    pip = tmp_path / "pip"
    pip.write_text(f"#!{sys.executable}\nimport subprocess, sys\n"
                   f"cap = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
                   f"subprocess.run([sys.executable, {script!r}, '--start', {clock!r}], **cap)\n"
                   f"r = subprocess.run([sys.executable, {script!r}, {clock!r}, 'common', '--', sys.executable, '-c', "
                   f"'pass'], **cap)\n"
                   f"print('captured:', repr(r.stdout.decode()))\n")
    pip.chmod(0o755)
    p = subprocess.run([str(pip)], capture_output=True, text=True, start_new_session=True, timeout=60)
    assert p.stdout.strip() == "captured: ''"
    lines = p.stderr.splitlines()
    step = re.escape("compiling the bindings (python/cpp/, one translation unit)")
    assert len(lines) == 2 and re.fullmatch(rf"gpuplace build \[0:0\d\] {step} \.\.\.", lines[0]), lines
    assert lines[1].endswith(": done in 0 s"), lines

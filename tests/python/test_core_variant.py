"""The builds of the C++ core (python/CMakeLists.txt, gpuplace/_load.py): the portable ``_core``
and, on x86-64, ``_core_v3`` for AVX2/FMA CPUs and ``_core_v4`` for AVX-512 CPUs, each built when
GPUPLACE_CORES asks for it (by default only this machine's; scripts/setup.sh builds all of them).
gpuplace loads the highest built one the CPU runs; GPUPLACE_CORE asks for another. Env results
must not depend on which runs."""

import os
import subprocess
import sys

import pytest

import gpuplace
from gpuplace._load import built_cores

BUILT = built_cores("gpuplace")

# Plays seeded episodes (random valid actions, default and proximity_drl presets, a vector env)
# and prints the core's variant and a hash of every observation, mask and reward.
PLAY = r"""
import hashlib, numpy as np, gpuplace
h = hashlib.sha256()
for preset in ("default", "proximity_drl"):
    for seed in range(3):
        env = gpuplace.make_core_env(preset)
        env.reset(seed)
        rng = np.random.default_rng(seed)
        while not env.done:
            h.update(np.asarray(env.observation).tobytes()); h.update(np.asarray(env.action_mask).tobytes())
            valid = np.flatnonzero(env.action_mask)
            h.update(np.float64(env.step(int(rng.choice(valid)))[0]).tobytes())
v = gpuplace.make_core_vector_env("default", 8)
v.reset(7)
for _ in range(300):
    v.step_random()
    h.update(np.asarray(v.observations).tobytes()); h.update(np.asarray(v.rewards).tobytes())
print(gpuplace.core_variant, h.hexdigest())
"""


def run(core):
    env = dict(os.environ, GPUPLACE_CORE=core)
    out = subprocess.run([sys.executable, "-c", PLAY], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def available(level):
    """Whether this CPU runs the level ("x86-64-v3" or "x86-64-v4") and its core was built."""
    try:
        from gpuplace import _cpu
    except ImportError:
        return False
    return getattr(_cpu, level.replace("-", "_"))() and level in BUILT


def test_variant_is_reported():
    assert gpuplace.core_variant in ("portable", "x86-64-v3", "x86-64-v4", "native")
    assert gpuplace._core.variant == gpuplace.core_variant
    if "GPUPLACE_CORE" not in os.environ:  # the fastest build the CPU runs is chosen
        best = next((lv for lv in ("x86-64-v4", "x86-64-v3") if available(lv)), None)
        if best is not None:
            assert gpuplace.core_variant == best


def test_levels_are_nested():
    from gpuplace import _cpu

    assert not _cpu.x86_64_v4() or _cpu.x86_64_v3()  # v4 includes v3


def test_portable_forced():
    if "portable" in BUILT:
        variant, _ = run("portable")
        assert variant in ("portable", "native")  # a GPUPLACE_NATIVE build has only its one core
        return
    # a build of this machine's variant alone (GPUPLACE_CORES=host) says how to get the portable one
    env = dict(os.environ, GPUPLACE_CORE="portable")
    out = subprocess.run([sys.executable, "-c", "import gpuplace"], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert (f"GPUPLACE_CORE=portable, but this package holds only the {', '.join(BUILT)} core (GPUPLACE_CORES when "
            "it was built): reinstall with GPUPLACE_CORES=all (every variant) or GPUPLACE_CORES=portable") in out.stderr


def test_env_results_identical_across_builds():
    runnable = [lv for lv in ("x86-64-v3", "x86-64-v4") if available(lv)] + (["portable"] if "portable" in BUILT else [])
    if len(runnable) < 2:
        pytest.skip(f"only the {', '.join(BUILT)} core is built: nothing to compare (GPUPLACE_CORES=all builds every "
                    "variant, as scripts/setup.sh does)")
    results = {level: run(level) for level in runnable}
    for level, (variant, digest) in results.items():
        assert variant == level
        assert digest == results[runnable[0]][1], f"{level} core: other results than the {runnable[0]} core"


def test_missing_level_is_a_clear_error():
    # a level the CPU cannot run (or that was not built) is an ImportError that names it; the CPU
    # is made to look older than it is when it runs every level
    for level, cap in (("x86-64-v4", "x86-64-v3"), ("x86-64-v3", "portable")):
        env = dict(os.environ, GPUPLACE_CORE=level, GPUPLACE_CPU_CAP=cap)
        out = subprocess.run([sys.executable, "-c", "import gpuplace"], env=env, capture_output=True, text=True)
        assert out.returncode != 0
        assert f"GPUPLACE_CORE={level}, but this CPU does not run {level} code" in out.stderr
    # and without GPUPLACE_CORE the capped loader picks the highest level below the cap, or, when
    # no built one is below it, says so
    env = dict(os.environ, GPUPLACE_CPU_CAP="portable")
    env.pop("GPUPLACE_CORE", None)
    out = subprocess.run([sys.executable, "-c", "import gpuplace; print(gpuplace.core_variant)"], env=env,
                         capture_output=True, text=True)
    if "portable" in BUILT:
        assert out.returncode == 0 and out.stdout.split()[-1] in ("portable", "native")
    else:
        assert out.returncode != 0
        assert (f"no build of the C++ core runs on this CPU: this package holds only the {', '.join(BUILT)} core"
                in out.stderr)


def test_unknown_choice_is_a_clear_error():
    env = dict(os.environ, GPUPLACE_CORE="avx9000")
    out = subprocess.run([sys.executable, "-c", "import gpuplace"], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "GPUPLACE_CORE='avx9000': expected one of auto, portable, x86-64-v3, x86-64-v4" in out.stderr

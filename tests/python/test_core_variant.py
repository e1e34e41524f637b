"""The two builds of the C++ core (python/CMakeLists.txt, gpuplace/_load.py): the portable
``_core`` and, on x86-64, ``_core_v3`` for AVX2/FMA CPUs. gpuplace loads the v3 one when the CPU
runs it; GPUPLACE_CORE=portable forces the other. Env results must not depend on which runs."""

import os
import subprocess
import sys

import pytest

import gpuplace

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


def v3_available():
    try:
        from gpuplace import _cpu  # noqa: F401
    except ImportError:
        return False
    import importlib.util

    return _cpu.x86_64_v3() and importlib.util.find_spec("gpuplace._core_v3") is not None


def test_variant_is_reported():
    assert gpuplace.core_variant in ("portable", "x86-64-v3", "native")
    assert gpuplace._core.variant == gpuplace.core_variant
    if v3_available() and "GPUPLACE_CORE" not in os.environ:
        assert gpuplace.core_variant == "x86-64-v3"  # the faster build is chosen when the CPU runs it


def test_portable_forced():
    variant, _ = run("portable")
    assert variant in ("portable", "native")  # a GPUPLACE_NATIVE build has only its one core


@pytest.mark.skipif(not v3_available(), reason="this CPU or build has no x86-64-v3 core")
def test_env_results_identical_across_builds():
    pv, ph = run("portable")
    vv, vh = run("x86-64-v3")
    assert (pv, vv) == ("portable", "x86-64-v3")
    assert ph == vh


def test_unknown_choice_is_a_clear_error():
    env = dict(os.environ, GPUPLACE_CORE="avx9000")
    out = subprocess.run([sys.executable, "-c", "import gpuplace"], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "GPUPLACE_CORE='avx9000': expected one of auto, portable, x86-64-v3" in out.stderr

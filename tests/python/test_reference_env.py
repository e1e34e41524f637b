"""The pure-Python reference env (benchmarks/python/reference_env.py) has the C++ env's semantics:
on the proximity_drl preset, with first-fit actions, the same rewards, metrics, masks and (to
float32 rounding) observations, step by step."""

import importlib.util
import pathlib

import numpy as np
import pytest

import gpuplace

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "python" / "reference_env.py"
_spec = importlib.util.spec_from_file_location("reference_env", _PATH)
reference_env = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference_env)


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_reference_env_matches_core_with_first_fit(seed):
    core = gpuplace.make_core_env("proximity_drl")
    jobs = reference_env.jobs_from_core(core, seed)
    ref = reference_env.ReferenceEnv()  # the proximity_drl cluster: 2 racks x 4 nodes x 4 GPUs
    assert ref.obs_size == int(core.observation_size)
    obs, mask = ref.reset(jobs)
    np.testing.assert_array_equal(mask, core.action_mask)
    np.testing.assert_allclose(obs, core.observation, rtol=0, atol=1e-6)
    G = ref.G
    total_ref = total_core = 0.0
    steps = 0
    while True:
        action = int(np.argmax(mask[:G]))  # first fit
        obs, r_ref, term_ref, mask = ref.step(action)
        r_core, term_core, _ = core.step(action)
        steps += 1
        assert r_ref == pytest.approx(r_core, rel=1e-12, abs=1e-12), f"step {steps}"
        assert term_ref == term_core
        np.testing.assert_array_equal(mask, core.action_mask, err_msg=f"mask at step {steps}")
        np.testing.assert_allclose(obs, core.observation, rtol=0, atol=1e-6, err_msg=f"observation at step {steps}")
        total_ref += r_ref
        total_core += r_core
        if term_ref:
            break
    m_ref, m_core = ref.metrics(), core.metrics()
    assert m_ref["jobs_done"] == m_core["jobs_done"] == len(jobs)
    assert m_ref["avg_jct"] == pytest.approx(m_core["avg_jct"], rel=1e-12)
    assert m_ref["makespan"] == pytest.approx(m_core["makespan"], rel=1e-12)
    assert m_ref["avg_comm_cost"] == pytest.approx(m_core["avg_comm_cost"], rel=1e-12)
    # the reward identity holds for both: the episode's rewards sum to -(sum of JCTs) / time_scale
    assert total_ref == pytest.approx(-m_ref["avg_jct"] * len(jobs) / 3600.0, rel=1e-9)

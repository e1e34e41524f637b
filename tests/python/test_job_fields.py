"""Job fields and traces in their own words from Python: the four-level scenario with its user fields
(examples/scenarios/four_levels.json) and the ITP-style trace through a column mapping
(examples/scenarios/itp_trace.json) reach GymnasiumEnv, the job dicts, finished_jobs() and info();
the docs show those files as they are."""

import math
import pathlib

import numpy as np
import pytest

import gpuplace
from gpuplace.gymnasium import GymnasiumEnv

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOUR = ROOT / "examples/scenarios/four_levels.json"
ITP = ROOT / "examples/scenarios/itp_trace.json"


def _play(env, seed):
    env.reset(seed=seed)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = term or trunc


def test_user_fields_reach_the_jobs_the_observation_and_the_finished_jobs():
    env = GymnasiumEnv(str(FOUR))
    core = env.core
    assert [f["name"] for f in core.job_fields()] == ["team", "priority"]
    assert core.job_fields()[0]["categories"] == ["product", "research"]
    env.reset(seed=1)
    job = core.current_job()
    assert set(job["fields"]) == {"team", "priority"}
    assert job["fields"]["team"] in ("product", "research") and 0 <= job["fields"]["priority"] <= 10
    seg = next(s for s in env.observation_layout if s["name"] == "job_fields")
    assert seg["fields"][:2] == ["team", "priority"]
    obs = env._obs
    assert obs[seg["offset"] + 1] == pytest.approx(job["fields"]["priority"] / 10, abs=1e-6)
    _play(env, 1)
    fin = core.finished_jobs()
    assert len(fin["fields"]["team"]) == len(fin["id"]) == 60
    assert fin["fields"]["priority"].dtype == np.float64
    assert all(t in ("product", "research") for t in fin["fields"]["team"])


def test_an_itp_style_trace_loads_through_a_mapping_and_the_episode_counts_the_models_it_assigned():
    env = GymnasiumEnv(str(ITP))
    _, info = env.reset(seed=3)
    assert env.core.info()["models_assigned"] == 40
    _play(env, 3)
    assert env.core.info()["jobs_done"] == 40


def test_undeclared_fields_are_refused_by_name():
    sc = {"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": "A3C", "work": 10, "owner": "x"}]}}
    with pytest.raises(gpuplace.ConfigError, match=r'config /workload/jobs/0/owner: unknown field "owner"'):
        gpuplace.Scenario(sc)
    sc["job_fields"] = [{"name": "owner", "type": "category"}]
    env = GymnasiumEnv(sc)
    env.reset(seed=0)
    assert env.core.current_job()["fields"] == {"owner": "x"}
    assert env.core.current_job()["model_name"] == "A3C"


@pytest.mark.parametrize("doc, example", [("docs/extending.md", FOUR), ("docs/workloads.md", ITP)])
def test_the_docs_show_the_example_scenarios_as_they_are(doc, example):
    text = (ROOT / doc).read_text()
    assert "```json\n" + example.read_text() + "```" in text, f"{doc} no longer shows {example.name} as it is"

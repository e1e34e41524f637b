"""What the scheduler knows from Python (docs/information.md): the ``durations`` keyword of the
Gymnasium and SB3 envs, gpuplace/PhillyHidden-v0, the preemptive and oracle queue policies, the
information setting recorded in the observation layout, and a model refused in another setting."""

import gymnasium as gym
import numpy as np
import pytest

import gpuplace
from gpuplace import _core
from gpuplace.config import QUEUES, durations_of, load_scenario, queue_name, queue_overrides, scenario_of
from gpuplace.gymnasium import GymnasiumEnv, GymnasiumVectorEnv

SMALL = {"workload": {"num_jobs": 12}}


def _play(env, seed):
    """Plays the first valid action until the episode ends; the observations seen and the metrics."""
    obs, _ = env.reset(seed=seed)
    seen = [obs.copy()]
    while True:
        a = int(np.flatnonzero(env.action_masks())[0])
        obs, _, term, trunc, info = env.step(a)
        seen.append(obs.copy())
        if term or trunc:
            return seen, info["metrics"]


def test_the_durations_keyword_sets_the_scenario_and_the_layout():
    env = GymnasiumEnv("default", overrides=SMALL, durations="hidden")
    assert durations_of(env.scenario) == "hidden"
    assert env.observation_space.gpuplace_layout["information"] == "hidden"
    oracle = GymnasiumEnv("default", overrides=SMALL)
    assert durations_of(oracle.scenario) == "oracle"
    assert oracle.observation_space.gpuplace_layout["information"] == "oracle"
    venv = GymnasiumVectorEnv("default", num_envs=2, overrides=SMALL, durations="predicted")
    assert venv.single_observation_space.gpuplace_layout["information"] == "predicted"
    with pytest.raises(_core.ConfigError, match='durations: unknown mode "psychic"'):
        GymnasiumEnv("default", durations="psychic")


def test_hidden_durations_keep_oracle_defaults_bit_for_bit():
    """durations="oracle" is the default: the same episode as no keyword, observation for observation."""
    a, ma = _play(GymnasiumEnv("default", overrides=SMALL), 7)
    b, mb = _play(GymnasiumEnv("default", overrides=SMALL, durations="oracle"), 7)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert ma == mb


def test_sjf_is_refused_when_durations_are_hidden():
    with pytest.raises(_core.ConfigError, match="sjf"):
        GymnasiumEnv("default", overrides={"env": {"queue_policy": "sjf"}}, durations="hidden")


def test_philly_hidden_id_and_preemption_metrics():
    gpuplace.register_envs()
    env = gym.make("gpuplace/PhillyHidden-v0", overrides={"workload": {"episode_jobs": 40}})
    sc = env.unwrapped.scenario
    assert durations_of(sc) == "hidden" and sc["preemption"]["enabled"]
    _, m = _play(env.unwrapped, 3)
    assert m["jobs_done"] == 40
    assert m["avg_preemptions"] >= 0 and m["lost_gpu_hours"] >= 0 and m["avg_fairness"] > 0


def test_queue_policies_mean_what_the_cpp_harness_applies():
    for q in ("las", "2d_las", "gittins"):
        sc = load_scenario("default", queue_overrides(q))
        assert sc["preemption"]["enabled"] and queue_name(sc["env"]["queue_policy"], sc["env"]["backfill"]) == q
    sc = load_scenario("philly_hidden:0e4a51", queue_overrides("srtf_oracle"))
    assert durations_of(sc) == "oracle" and sc["env"]["queue_policy"] == "srtf"
    assert set(_core.Heuristic("pack+las").name.split("+")) == {"pack", "las"}
    with pytest.raises(_core.ConfigError, match="unknown queue policy"):
        queue_overrides("psychic")
    assert set(QUEUES) >= {"fifo", "backfill", "sjf", "fewest_gpus", "las", "2d_las", "gittins", "sjf_oracle", "srtf_oracle"}


def test_a_network_is_refused_in_another_information_setting():
    net = _core.load_checkpoint(_core.model_path("default"))  # trained with true durations
    hidden = scenario_of("default", SMALL, durations="hidden")
    with pytest.raises(_core.Error, match="trained with durations oracle .* has durations hidden"):
        _core.evaluate_network(hidden, net, seeds=1)
    rep = _core.evaluate_network(scenario_of("default", SMALL), net, seeds=1)
    assert rep.per_seed(rep.policies[0])[0]["jobs_done"] == 12


def test_cli_evaluate_takes_durations(capsys):
    from gpuplace.cli import main

    assert main(["evaluate", "--scenario", "philly_hidden:e13805", "--durations", "hidden", "--policies", "pack+las",
                 "--seeds", "1", "-q"]) == 0
    assert "pack+las" in capsys.readouterr().out
    assert main(["evaluate", "--scenario", "default", "--durations", "hidden", "--policies", "pack+sjf", "--seeds", "1",
                 "-q"]) == 2
    assert "sjf" in capsys.readouterr().err


def test_a_maskable_ppo_model_is_refused_in_another_information_setting():
    from types import SimpleNamespace

    from gpuplace.sb3 import scenario_for_model
    from gpuplace.torch_net import LayoutError

    hidden = GymnasiumEnv("default", overrides=SMALL, durations="hidden")
    model = SimpleNamespace(observation_space=hidden.observation_space)  # what scenario_for_model reads of a model
    with pytest.raises(LayoutError, match="trained with durations hidden and scenario default has durations oracle"):
        scenario_for_model(model, load_scenario("default", SMALL))

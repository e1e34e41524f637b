"""The reference policies shipped in the package (data/models/, experiments/train_models.sh): each loads by
name and schedules every job of the scenario it was trained on, under its own queue policy."""

import pytest

from gpuplace import _core
from gpuplace.config import load_scenario

pytestmark = pytest.mark.skipif(not getattr(_core, "has_ppo", False), reason="built without the C++ PPO")


@pytest.mark.parametrize("name", list(_core.model_names()))
def test_a_reference_policy_loads_by_name_and_finishes_every_job(name):
    from gpuplace.ppo import load_model

    net = load_model(name)
    scenario = load_scenario(net.scenario)
    report = _core.evaluate_network(scenario, net, [1000000], name, 1)
    (m,) = report.per_seed(name)
    assert m["jobs_done"] == m["jobs_total"] > 0


def test_a_per_gpu_reference_policy_acts_on_another_cluster_size():
    from gpuplace.ppo import load_model

    net = load_model("default")  # trained on 64 GPUs
    small = load_scenario("default", {"topology": {"racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 40}})
    report = _core.evaluate_network(small, net, [1000000], "ppo", 1)
    (m,) = report.per_seed("ppo")
    assert m["jobs_done"] == m["jobs_total"] == 40

"""Tenants, spot jobs and deadlines from Python (docs/realities.md): the presets, their
queue policies, and the group metrics in the metrics dict, read back into an EvalReport."""

import numpy as np

from gpuplace import _core
from gpuplace.config import QUEUES, load_scenario, queue_name, queue_overrides
from gpuplace.gymnasium import GymnasiumEnv

SMALL = {"workload": {"num_jobs": 20}}


def _metrics(preset, queue=None):
    over = dict(SMALL)
    if queue:
        over.update(queue_overrides(queue))
    env = GymnasiumEnv(preset, overrides=over)
    env.reset(seed=3)
    while True:
        a = int(np.flatnonzero(env.action_masks())[0])
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            return info["metrics"]


def test_the_disciplines_are_queue_policies():
    for q in ("capacity", "drf", "themis", "edf", "edf_ac"):
        sc = load_scenario("tenants" if q in ("capacity", "drf", "themis") else "deadlines", queue_overrides(q))
        assert sc["preemption"]["enabled"] and queue_name(sc["env"]["queue_policy"], sc["env"]["backfill"]) == q
        assert q in QUEUES


def test_group_metrics_in_the_metrics_dict():
    m = _metrics("tenants")
    assert m["jobs_done"] == 20
    assert len(m["tenants"]["avg_jct"]) == 3 and 0 < m["jain_index"] <= 1 and m["worst_tenant_rho"] > 0
    assert m["below_guarantee_hours"] >= 0
    s = _metrics("spot")
    assert s["spot_jobs"] > 0 and s["spot_evictions"] >= 0
    d = _metrics("deadlines", "edf_ac")
    assert 0 <= d["deadlines_met"] <= 1 and d["not_admitted"] >= 0
    assert "tenants" not in _metrics("default") and "deadlines_met" not in _metrics("default")
    # an EvalReport takes them back from a metrics dict
    rep = _core.evaluate(load_scenario("tenants", SMALL), ["pack"], seeds=1)
    rep.add("dict", [m], [0.0])
    row = [line for line in rep.table().splitlines() if line.startswith("dict")][0]
    assert "tenant0_jct" in rep.table() and "jain_index" in rep.table()
    assert f"{m['jain_index']:.3f}" in row

"""The evaluation harness from Python: heuristics in C++, any Python policy (e.g. MaskablePPO)
on the same held-out seeds, one table in the C++ harness's format."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from . import _core
from .config import ScenarioLike, core_classes, scenario_of
from .progress import progress_bar

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _seeds(seeds) -> list[int]:
    if isinstance(seeds, (int, np.integer, str)):  # a count (bool and str: a ConfigError naming the value)
        return list(_core.held_out_seeds(seeds))
    return [int(s) for s in seeds]


def evaluate(
    scenario: ScenarioLike = "default",
    policies: Sequence[str] | None = None,
    seeds: int | Iterable[int] = 20,
    threads: int = 1,
) -> _core.EvalReport:
    """Runs heuristics (by name; default: every one in ``heuristic_names()``) on held-out seeds
    (a count, or a list) in C++ and returns an :class:`EvalReport` (``.table()``, ``.csv()``,
    ``.to_json()``, ``.summary(policy, metric)``)."""
    sc = scenario_of(scenario)
    return _core.evaluate(sc, list(policies) if policies is not None else None, _seeds(seeds), threads)


def evaluate_agent(
    policy: BatchPolicy,
    scenario: ScenarioLike = "default",
    seeds: int | Iterable[int] = 20,
    name: str = "agent",
    report: _core.EvalReport | None = None,
    show_progress: bool = False,
) -> _core.EvalReport:
    """Evaluates a Python policy on the held-out seeds, every episode at once: ``policy(obs, masks)``
    gets a (B, obs) float32 batch and the (B, A) bool masks of the B running episodes and returns
    B actions. Episode j uses ``reset(seeds[j])``, exactly like the C++ harness, so the rows are
    comparable. The results are added to ``report`` (or a new one) under ``name``. The progress
    bar counts decisions (one per episode and step) and shows how many episodes have ended."""
    sc = scenario_of(scenario)
    sd = _seeds(seeds)
    if report is None:
        report = _core.EvalReport(sc.name, sd)
    elif list(report.seeds) != sd:
        raise ValueError(f"evaluate_agent: the report's seeds {list(report.seeds)[:3]}... differ from {sd[:3]}...")
    cls = core_classes(sc)[0]
    envs = [cls(sc) for _ in sd]  # copies of the scenario read once
    for e, s in zip(envs, sd):
        e.reset(s)
    obs = [e.observation for e in envs]
    masks = [e.action_mask.view(np.bool_) for e in envs]
    active = [j for j, e in enumerate(envs) if not e.done]
    with progress_bar(total=None, desc=f"evaluating {name}", disable=not show_progress) as bar:
        while active:
            o = np.stack([obs[j] for j in active])
            m = np.stack([masks[j] for j in active])
            acts = np.asarray(policy(o, m)).reshape(-1)
            if acts.shape[0] != len(active):
                raise ValueError(f"policy returned {acts.shape[0]} actions for {len(active)} observations")
            still = []
            for j, a in zip(active, acts):
                envs[j].step(int(a))
                if not envs[j].done:
                    still.append(j)
            bar.update(len(active))
            if len(still) != len(active):
                bar.set_postfix_str(f"episodes {len(sd) - len(still)}/{len(sd)}")
            active = still
    report.add(name, [e.metrics() for e in envs], [e.episode_return for e in envs])
    return report


class _TorchThreads:
    """Runs a block with ``n`` torch threads (restored after): a forward pass on a few dozen
    observations is slower with more threads than one."""

    def __init__(self, n: int):
        self.n, self.old = n, None

    def __enter__(self):
        import torch

        self.old = torch.get_num_threads()
        if self.n and self.n != self.old:
            torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        import torch

        if self.old is not None and torch.get_num_threads() != self.old:
            torch.set_num_threads(self.old)


def maskable_policy(model, deterministic: bool = True, torch_threads: int = 1) -> BatchPolicy:
    """A batch policy from an sb3-contrib MaskablePPO model (or its policy). Greedy by default:
    the most probable valid action. Runs the policy's network directly under ``torch.no_grad()``
    (not SB3's ``predict()``) with ``torch_threads`` torch threads (default 1: the batches of an
    evaluation are small; 0 keeps torch's setting)."""
    import torch

    pol = getattr(model, "policy", model)
    greedy = getattr(pol, "greedy_actions", None)

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with _TorchThreads(torch_threads), torch.no_grad():
            if deterministic and greedy is not None:
                return greedy(obs, masks)
            pol.set_training_mode(False)
            o = torch.as_tensor(obs, dtype=torch.float32, device=pol.device)
            d = pol.get_distribution(o, action_masks=masks)
            return d.get_actions(deterministic=deterministic).cpu().numpy()

    return act

"""Queue policies and teachers: a teacher ``"<heuristic>+<queue>"`` acts under that queue policy,
which is an env setting (:func:`teacher_scenario`)."""

from __future__ import annotations

from .. import _core
from ..config import ScenarioLike, load_scenario, queue_name, queue_overrides


def split_teacher(teacher: str) -> tuple[str, str | None]:
    """``"pack+sjf"`` -> ``("pack", "sjf")``; ``"pack"`` -> ``("pack", None)``. Unknown heuristics or
    queue policies raise :class:`gpuplace.ConfigError` naming the known ones."""
    _core.Heuristic(teacher)  # validates both parts
    base, _, queue = teacher.partition("+")
    return base, queue or None


def queue_policy_of(scenario: ScenarioLike) -> str:
    """The queue policy name a scenario runs under (fifo, backfill, sjf, fewest_gpus), or a
    description when it is none of them (e.g. sjf without backfill)."""
    env = load_scenario(scenario)["env"]
    return queue_name(env["queue_policy"], env["backfill"])


def with_queue(scenario: ScenarioLike, queue: str) -> dict:
    """The scenario run under a queue policy (fifo, backfill, sjf, fewest_gpus, las, 2d_las, gittins,
    sjf_oracle, srtf_oracle), as the harness
    runs ``"<heuristic>+<queue>"``."""
    return load_scenario(scenario, queue_overrides(queue))


def teacher_scenario(scenario: ScenarioLike, teacher: str | None) -> dict:
    """The scenario a policy imitating ``teacher`` is trained and evaluated in: under the teacher's
    queue policy when it names one (``"pack+sjf"``), else unchanged."""
    sc = load_scenario(scenario)
    if not teacher:
        return sc
    _, queue = split_teacher(teacher)
    return with_queue(sc, queue) if queue else sc

"""Queue policies and teachers: a teacher ``"<heuristic>+<queue>"`` acts under that queue policy,
which is an env setting (:func:`teacher_scenario`). In the round action mode the teacher may also
be the round planner ``"rollout<F>h<H>:<placer>+class_gittins"`` (docs/rounds.md), which acts in
the env as it is: its base is the env's class_gittins advisor (``env.round_advisor``)."""

from __future__ import annotations

from .. import _core
from ..config import ScenarioLike, load_scenario, queue_name, queue_overrides


def split_teacher(teacher: str) -> tuple[str, str | None]:
    """``"pack+sjf"`` -> ``("pack", "sjf")``; ``"pack"`` -> ``("pack", None)``; the round planner
    ``"rollout8h20:pack+class_gittins"`` -> itself and None (it needs no queue policy of the env).
    Unknown heuristics or queue policies, and other planners, raise :class:`gpuplace.ConfigError`
    naming the known ones."""
    queue = _core.Teacher(teacher, 1).queue  # validates the name as the teacher that will act
    return (teacher.partition("+")[0], queue) if queue else (teacher, None)


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

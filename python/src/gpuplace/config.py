"""Scenarios from a preset name, a JSON file, JSON text or a dict, read and validated once by the
C++ core (:class:`gpuplace.Scenario`; the rule that tells a preset, a file and JSON text apart is
the C++ one, include/gpuplace/scenario_source.hpp)."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Mapping, Union

from . import _core

PRESETS = tuple(_core.preset_names())  # one list, the core's ("philly:<file>" is a preset too)

Scenario = _core.Scenario

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any], Scenario, None]


def scenario_of(scenario: ScenarioLike = "default", overrides: Mapping[str, Any] | None = None,
                action_mode: str | None = None, durations: str | None = None) -> Scenario:
    """The :class:`gpuplace.Scenario` of a preset name, a path to a JSON file, JSON text, a dict or a
    Scenario (None: "default"), read and validated once by the C++ core, with ``overrides`` (a
    nested dict) merged in, then ``durations`` ("oracle", "hidden" or "predicted": what the scheduler
    knows of durations, docs/information.md) and ``action_mode`` ("gpu", "placement", "job" or "round"). A string is
    JSON text when it starts with ``{``, else a preset when it names one, else a file that must
    exist; anything else is a :class:`gpuplace.ConfigError` saying what was tried."""
    if scenario is None:
        scenario = "default"
    if isinstance(scenario, Scenario) and overrides is None and action_mode is None and durations is None:
        return scenario
    if overrides is not None and not isinstance(overrides, Mapping):
        raise _core.ConfigError(f"scenario overrides: expected a dict of options, got {type(overrides).__name__} {overrides!r}")
    overrides = with_durations(overrides, durations)
    if isinstance(scenario, (str, os.PathLike)):
        text = os.fspath(scenario)
        if not text.lstrip().startswith("{") and text not in PRESETS and os.path.lexists(text):
            from ._files import check_input_file

            check_input_file(text, "scenario file")  # a FIFO or /dev/zero: refused before the core reads it
    return Scenario(scenario if not isinstance(scenario, Mapping) else dict(scenario),
                    dict(overrides) if overrides is not None else None, action_mode)


def load_scenario(scenario: ScenarioLike = "default", overrides: Mapping[str, Any] | None = None,
                  action_mode: str | None = None) -> dict:
    """Returns a validated scenario dict with every option filled in (:func:`scenario_of` as a dict).

    ``scenario`` is a preset name ("default", "proximity_drl"), a path to a JSON file, JSON text,
    a dict or a :class:`gpuplace.Scenario`. ``overrides`` (a nested dict) is merged on top, e.g.
    ``{"env": {"max_steps": 100}}``. ``action_mode`` ("gpu", "placement" or "job"), when given,
    sets ``env.action_mode`` last. Unknown keys and bad values raise :class:`gpuplace.ConfigError`
    naming the JSON path.
    """
    return scenario_of(scenario, overrides, action_mode).to_dict()


def read_json_object(path: str | os.PathLike, what: str) -> dict:
    """The JSON object in a file (``what`` names it in errors: "scenario", "training config"); a
    :class:`gpuplace.ConfigError` naming the file when it cannot be read, is not UTF-8 text (a
    binary file), is not JSON or is not an object."""
    from ._files import check_input_file

    path = check_input_file(path, f"{what} file")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise _core.ConfigError(f'cannot open {what} file "{path}": {e.strerror}') from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _core.ConfigError(f"{path}: not a JSON {what} file: byte {e.start} (0x{raw[e.start]:02x}) is not UTF-8 text "
                                "(a binary file?)") from None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as e:
        raise _core.ConfigError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(parsed, dict):
        raise _core.ConfigError(f"{path}: a {what} must be a JSON object, got {_json_type(parsed)}")
    return parsed


def _json_type(v) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null", int: "a number",
            float: "a number"}.get(type(v), type(v).__name__)


# queue policy name -> the env settings it means, (env.queue_policy, env.backfill), as the C++
# harness applies it (include/gpuplace/any_policy.hpp apply_queue): las, 2d_las and gittins turn
# preemption on, and so do the tenant and deadline disciplines (capacity, drf, themis, edf,
# edf_ac; docs/realities.md); the *_oracle references read the true durations (docs/information.md)
QUEUES = {"fifo": ("fifo", False), "backfill": ("fifo", True), "sjf": ("sjf", True), "fewest_gpus": ("fewest_gpus", True),
          "las": ("las", True), "2d_las": ("2d_las", True), "gittins": ("gittins", True),
          "capacity": ("capacity", True), "drf": ("drf", True), "themis": ("themis", True), "edf": ("edf", True),
          "edf_ac": ("edf_ac", True),
          "sjf_oracle": ("sjf", True), "srtf_oracle": ("srtf", True)}
PREEMPTIVE_QUEUES = ("las", "2d_las", "gittins", "capacity", "drf", "themis", "edf", "edf_ac", "srtf_oracle")
ORACLE_QUEUES = ("sjf_oracle", "srtf_oracle")

#: What the scheduler may know of a job's duration (scenario key durations.mode).
DURATIONS = ("oracle", "hidden", "predicted")


def queue_overrides(queue: str) -> dict:
    """The scenario overrides a queue policy name means (ConfigError naming the known ones)."""
    if queue not in QUEUES:
        raise _core.ConfigError(f'unknown queue policy "{queue}" (known: {", ".join(QUEUES)})')
    order, backfill = QUEUES[queue]
    ov = {"env": {"queue_policy": order, "backfill": backfill}, "preemption": {"enabled": queue in PREEMPTIVE_QUEUES}}
    if queue in ORACLE_QUEUES:
        ov["durations"] = {"mode": "oracle"}
    return ov


def queue_name(queue_policy: str, backfill: bool) -> str:
    """The queue policy name of the env settings (fifo, backfill, sjf, fewest_gpus, las, 2d_las,
    gittins), or a description when they are none of them (e.g. sjf without backfill)."""
    for name, v in QUEUES.items():
        if v == (queue_policy, bool(backfill)):
            return name
    return f"queue_policy {queue_policy}, backfill {str(bool(backfill)).lower()}"


def durations_of(scenario: Mapping[str, Any]) -> str:
    """What a scenario (a dict, e.g. :func:`load_scenario`'s) lets the scheduler know of durations:
    "oracle" (the default), "hidden" or "predicted"."""
    return str((scenario.get("durations") or {}).get("mode", "oracle"))


def with_durations(overrides: Mapping[str, Any] | None, durations: str | None) -> dict | None:
    """``overrides`` with ``durations.mode`` set to ``durations`` (None: unchanged); ConfigError
    for a mode that is none of :data:`DURATIONS`."""
    if durations is None:
        return None if overrides is None else dict(overrides)
    if durations not in DURATIONS:
        raise _core.ConfigError(f'durations: unknown mode "{durations}" (allowed: {", ".join(DURATIONS)})')
    ov = dict(overrides or {})
    ov["durations"] = {**dict(ov.get("durations") or {}), "mode": durations}
    return ov


def core_classes(scenario: Scenario | Mapping[str, Any]) -> tuple[type, type]:
    """The C++ classes (env, vector env): Env and VectorEnv for every scenario (the comm model is
    a run-time value of the C++ env)."""
    return _core.Env, _core.VectorEnv


def warn_short_episodes(core, stacklevel: int = 3) -> str:
    """A UserWarning when a core env's episodes are shorter than its scenario asks (a trace with
    fewer jobs than ``episode_jobs``), naming the real count; returns the text ("" when none)."""
    why = str(getattr(core, "short_episodes", "") or "")
    if why:
        warnings.warn(why, UserWarning, stacklevel=stacklevel)
    return why


def make_core_env(scenario: ScenarioLike = "default"):
    """The C++ environment for a scenario (Env)."""
    sc = scenario_of(scenario)
    core = core_classes(sc)[0](sc)
    warn_short_episodes(core)
    return core


def make_core_vector_env(scenario: ScenarioLike = "default", num_envs: int = 8, num_threads: int = 1,
                         autoreset: str = "same_step"):
    """The C++ vector environment for a scenario (VectorEnv). ``autoreset``:
    "same_step" (an ended episode's env restarts in the step that ends it) or "next_step" (in the
    next step, which ignores that env's action)."""
    sc = scenario_of(scenario)
    core = core_classes(sc)[1](sc, num_envs, num_threads, autoreset)
    warn_short_episodes(core)
    return core

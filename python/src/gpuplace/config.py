"""Scenarios from a preset name, a JSON file, JSON text or a dict, validated by the C++ core."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Mapping, Union

from . import _core

PRESETS = tuple(_core.preset_names())  # one list, the core's ("philly:<file>" is a preset too)

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any], None]


def _deep_merge(base: dict, over: Mapping[str, Any]) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_scenario(scenario: ScenarioLike = "default", overrides: Mapping[str, Any] | None = None,
                  action_mode: str | None = None) -> dict:
    """Returns a validated scenario dict with every option filled in.

    ``scenario`` is a preset name ("default", "proximity_drl"), a path to a JSON file, JSON text
    or a dict. ``overrides`` (a nested dict) is merged on top, e.g. ``{"env": {"max_steps": 100}}``.
    ``action_mode`` ("gpu", "placement" or "job"), when given, sets ``env.action_mode`` last.
    Unknown keys and bad values raise :class:`gpuplace.ConfigError` naming the JSON path.
    """
    if scenario is None:
        scenario = "default"
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if isinstance(scenario, str):
        text = scenario.strip()
        if text.startswith("{"):
            data = _core.normalize_scenario(text)
        elif _core.is_preset_name(text):
            data = _core.preset_scenario(text)
        elif text.endswith(".json") or os.path.sep in text or os.path.exists(text):
            parsed = read_json_object(text, "scenario")
            data = _normalize(parsed, source=text, base_dir=os.path.dirname(os.path.abspath(text)))
        else:
            raise _core.ConfigError(
                f'unknown scenario "{text}": not a preset ({", ".join(PRESETS)}), a .json file or JSON text'
            )
    elif isinstance(scenario, Mapping):
        data = _normalize(dict(scenario))
    else:
        raise TypeError(f"scenario must be a preset name, a file path, JSON text or a dict, got {type(scenario).__name__}")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise _core.ConfigError(f"scenario overrides: expected a dict of options, got {type(overrides).__name__} {overrides!r}")
    if action_mode is not None:  # with the overrides: a GPU-mode scenario's JSON has no slots to keep
        overrides = _deep_merge(dict(overrides or {}), {"env": {"action_mode": action_mode}})
    if overrides:
        data = _normalize(_deep_merge(data, overrides), source="scenario overrides")
    return data


def read_json_object(path: str | os.PathLike, what: str) -> dict:
    """The JSON object in a file (``what`` names it in errors: "scenario", "training config"); a
    :class:`gpuplace.ConfigError` naming the file when it cannot be read, is not UTF-8 text (a
    binary file), is not JSON or is not an object."""
    path = os.fspath(path)
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


# queue policy name -> the env settings it means (include/gpuplace/evaluate.hpp apply_queue)
QUEUES = {"fifo": ("fifo", False), "backfill": ("fifo", True), "sjf": ("sjf", True), "fewest_gpus": ("fewest_gpus", True)}


def queue_name(queue_policy: str, backfill: bool) -> str:
    """The queue policy name of the env settings (fifo, backfill, sjf, fewest_gpus), or a
    description when they are none of them (e.g. sjf without backfill)."""
    for name, v in QUEUES.items():
        if v == (queue_policy, bool(backfill)):
            return name
    return f"queue_policy {queue_policy}, backfill {str(bool(backfill)).lower()}"


def _normalize(d: dict, source: str | None = None, base_dir: str = "") -> dict:
    try:
        return _core.normalize_scenario(d, base_dir)
    except _core.ConfigError as e:
        if source:
            raise _core.ConfigError(f"{source}: {e}") from None
        raise


def core_classes(scenario: dict) -> tuple[type, type]:
    """The C++ classes (env, vector env) of a loaded scenario's comm model: (Env, VectorEnv) for
    ring_allreduce, (TreeRouteEnv, TreeRouteVectorEnv) for tree_route."""
    if _core.comm_model_of(scenario) == "tree_route":
        return _core.TreeRouteEnv, _core.TreeRouteVectorEnv
    return _core.Env, _core.VectorEnv


def make_core_env(scenario: ScenarioLike = "default"):
    """The C++ environment for a scenario: Env (ring_allreduce) or TreeRouteEnv (tree_route)."""
    sc = load_scenario(scenario)
    return core_classes(sc)[0](json.dumps(sc))


def make_core_vector_env(scenario: ScenarioLike = "default", num_envs: int = 8, num_threads: int = 1):
    """The C++ vector environment for a scenario: VectorEnv or TreeRouteVectorEnv."""
    sc = load_scenario(scenario)
    return core_classes(sc)[1](json.dumps(sc), num_envs, num_threads)

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
            try:
                with open(text, encoding="utf-8") as f:
                    raw = f.read()
            except OSError as e:
                raise _core.ConfigError(f'cannot open scenario file "{text}": {e.strerror}') from None
            try:
                parsed = json.loads(raw)
            except json.JSONDecodeError as e:
                raise _core.ConfigError(f"{text}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
            if not isinstance(parsed, dict):
                raise _core.ConfigError(f"{text}: a scenario must be a JSON object, got {type(parsed).__name__}")
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

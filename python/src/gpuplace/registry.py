"""Policies of one's own, by name: ``@gpuplace.register_policy("name")`` on a class (one instance
per episode, ``reset(seed)`` called if it has one, ``act(env) -> action``) or on a function
``act(env) -> action``. The name then works wherever a heuristic's does, under a queue policy too
(``"name+sjf"``): :func:`gpuplace.evaluate`, :class:`gpuplace.Heuristic`,
:func:`gpuplace.run_episode`, the rollout planners (``"rollout:name"``), ``python -m gpuplace
evaluate --plugin FILE.py --policies name`` and ``info --list``.

The C++ harness calls the policy once per decision, holding the GIL, with a copy of the env (an
:class:`gpuplace.Env`); its action is the env's action in the scenario's action mode.

    import gpuplace

    @gpuplace.register_policy("last_fit", about="the highest-numbered GPU with room")
    def last_fit(env):
        mask = env.action_mask
        return int(mask[:-1].nonzero()[0][-1]) if mask[:-1].any() else len(mask) - 1
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, Callable

from . import _core

_registered: dict[str, Any] = {}


def _about(obj: Any, about: str) -> str:
    if about:
        return about
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return (doc.splitlines()[0] if doc else "a policy registered from Python") + " (Python)"


def register_policy(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a policy class or function under ``name`` (see the module's
    docstring). Returns what it decorates, unchanged. Registering a name again (a module imported
    again) replaces it; a built-in heuristic's name, or one with ``+``, ``:`` or ``,``, is a
    :class:`gpuplace.ConfigError`."""

    def decorate(obj: Any) -> Any:
        if isinstance(obj, type):
            def factory(seed: int, cls=obj):
                p = cls()
                if hasattr(p, "reset"):
                    p.reset(seed)
                return p.act
        elif callable(obj):
            def factory(seed: int, fn=obj):
                return fn
        else:
            raise _core.ConfigError(f"register_policy({name!r}): expected a class with act(env) or a function "
                                    f"act(env), got {obj!r}")
        _core.register_policy(name, _about(obj, about), factory)
        _registered[name] = obj
        return obj

    return decorate


def _function_decorator(kind: str, name: str, about: str, signature: str, held: dict[str, Any], *extra: Any) -> Callable[[Any], Any]:
    """The decorator of a function registered in the C++ registry of ``kind`` (its
    ``_core.register_<kind>(name, about, fn, *extra)`` and ``_core.unregister_<kind>``), kept in
    ``held`` by name; a name registered again from Python replaces the earlier function."""

    def decorate(fn: Any) -> Any:
        if not callable(fn):
            raise _core.ConfigError(f"register_{kind}({name!r}): expected a function {signature}, got {fn!r}")
        if name in held:
            getattr(_core, f"unregister_{kind}")(name)
            del held[name]
        doc = (getattr(fn, "__doc__", None) or "").strip()
        default = f"a {kind.replace('_', ' ')} registered from Python"
        getattr(_core, f"register_{kind}")(name, about or ((doc.splitlines()[0] if doc else default) + " (Python)"), fn, *extra)
        held[name] = fn
        return fn

    return decorate


_disciplines: dict[str, Any] = {}


def register_discipline(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a preemptive queue discipline under ``name``: the decorated
    ``key(view, job)`` returns a job's priority, a number or a tuple of up to three numbers
    (lower runs first; ties go to the earlier job). ``view`` (:class:`gpuplace._core.DisciplineView`)
    has ``now``, ``num_gpus``, ``active``, ``job_fields`` and ``field(name)``; ``job``
    (:class:`gpuplace._core.DisciplineJob`) has ``index``, ``submit_time``, ``gpus``, ``attained``
    (GPU-seconds), ``shown_duration``, ``running``, ``preemptions`` and ``fields``. The name is then
    a queue policy like ``"las"``: ``"pack+name"`` in :func:`gpuplace.evaluate` and the command line
    (``--plugin``), a scenario's ``env.queue_policy``. The C++ core calls the key with the GIL taken,
    at every decision once per active job; `view` and `job` are valid during the call only. Registering a
    name again from Python replaces it."""

    return _function_decorator("discipline", name, about, "key(view, job)", _disciplines)


def unregister_discipline(name: str) -> bool:
    """Removes a discipline registered by name; returns whether there was one."""
    _disciplines.pop(name, None)
    return bool(_core.unregister_discipline(name))


_workload_kinds: dict[str, Any] = {}


def register_workload_kind(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a workload kind under ``name``: the decorated
    ``generate(options, num_gpus, seed)`` returns one episode's jobs, a list of dicts with
    ``submit_time`` (seconds), ``num_gpus``, ``model`` (a zoo model's name or id), ``work``
    (training steps) or ``duration`` (seconds at the model's measured rate on its GPUs), and
    optionally ``gpu_fraction``. ``options`` is the scenario's workload object (its ``kind``
    included), ``num_gpus`` the cluster's GPUs, ``seed`` the episode's seed: draw from it, so that
    a seed gives the same episode. The name is then a scenario's workload ``kind`` (a mixture's
    component too), listed by ``info --list``; a bad job is a :class:`gpuplace.ConfigError`
    naming it and the key. The C++ core calls ``generate`` with the GIL taken, once per episode,
    at reset. Registering a name again from Python replaces it; a built-in kind's name is a
    ConfigError.

        @gpuplace.register_workload_kind("bursts", about="bursts of 8 same-sized jobs")
        def bursts(options, num_gpus, seed):
            rng = random.Random(seed)
            return [{"submit_time": 1800.0 * b, "num_gpus": options.get("gpus", 2), "model": "ResNet-50 (batch size 64)",
                     "duration": rng.uniform(600, 3600)} for b in range(4) for _ in range(8)]
    """

    return _function_decorator("workload_kind", name, about, "generate(options, num_gpus, seed)", _workload_kinds)


def unregister_workload_kind(name: str) -> bool:
    """Removes a workload kind registered by name; returns whether there was one."""
    _workload_kinds.pop(name, None)
    return bool(_core.unregister_workload_kind(name))


_trace_formats: dict[str, Any] = {}


def register_trace_format(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a trace format under ``name``: the decorated ``read(text, source,
    fields)`` returns a trace file's jobs (``text``: the file's contents; ``source``: its name;
    ``fields``: the scenario's declared job fields' names), each a dict with ``submit_time`` (s),
    ``num_gpus``, ``model`` (a zoo name or id), ``work`` (steps) or ``duration`` (seconds at the
    model's measured rate), optionally ``gpu_fraction``, and the declared fields it gives (a number,
    or a category's name). The name is then a trace workload's ``format``
    (``{"kind": "trace", "format": name, "path": ...}``): the library sorts the jobs and applies
    the trace options, the declared fields' defaults and the checks as for a built-in format. A bad
    job is a :class:`gpuplace.TraceError` naming the format, the file, the job and the key.
    Registering a name again from Python replaces it; a built-in format's name is a ConfigError."""
    return _function_decorator("trace_format", name, about, "read(text, source, fields)", _trace_formats)


def unregister_trace_format(name: str) -> bool:
    """Removes a trace format registered by name; returns whether there was one."""
    _trace_formats.pop(name, None)
    return bool(_core.unregister_trace_format(name))


_reward_terms: dict[str, Any] = {}


def register_reward_term(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a reward term under ``name``: the decorated ``term(job, view)``
    returns the value of a job that just finished (``job``: a dict of its record, with ``submit``,
    ``start``, ``end``, ``ideal_duration``, ``num_gpus``, ``model``, ``slowdown``, ``comm_cost``,
    ``preemptions``, ``run_time``, ...; ``view``: ``num_gpus``, ``time_scale``, ``now``). A scenario
    then weighs it in ``"reward"`` like a built-in term, ``{"reward": {"name": 0.5}}``: each job
    that finishes adds weight x term(job) to the step's reward. The C++ core calls it with the GIL
    taken, once per finished job. Registering a name again from Python replaces it; a built-in
    key's name is a :class:`gpuplace.ConfigError`.

        @gpuplace.register_reward_term("late_hours", about="-hours past twice the ideal duration")
        def late_hours(job, view):
            return -max(0.0, job["end"] - job["submit"] - 2 * job["ideal_duration"]) / 3600
    """

    return _function_decorator("reward_term", name, about, "term(job, view)", _reward_terms)


def unregister_reward_term(name: str) -> bool:
    """Removes a reward term registered by name; returns whether there was one."""
    _reward_terms.pop(name, None)
    return bool(_core.unregister_reward_term(name))


_features: dict[str, Any] = {}


def register_observation_feature(name: str, about: str = "", range: tuple[float, float] = (0.0, 1.0)) -> Callable[[Any], Any]:
    """A decorator registering an observation feature of one's own under ``name``: the decorated
    ``feature(job)`` returns a job's value (``job``: a dict with ``submit_time`` (s from the
    episode's start), ``num_gpus``, ``model`` (its name), ``work`` (steps), ``gpu_fraction`` and
    ``fields``, the declared job fields' values by name, NaN where missing), computed for every
    job when its episode is drawn (at reset, with the GIL taken). A scenario observes it by
    declaring it as a job field, by name alone (``"job_fields": ["name"]``) or as ``{"name": ...,
    "feature": "name", "range": [lo, hi]}``: its values are then in the env's field table, the
    observation's ``job_fields`` segment (the current job's and each queue slot's, scaled from
    ``range`` into [0, 1]), reward terms, disciplines and the result files like a declared field.
    Return NaN for a missing value; an infinite one is a :class:`gpuplace.Error` naming the job.
    Registering a name again from Python replaces it; a known field's name is a ConfigError.

        @gpuplace.register_observation_feature("log_work", range=(0, 8))
        def log_work(job):
            return math.log10(1 + job["work"])
    """

    lo, hi = range
    return _function_decorator("observation_feature", name, about, "feature(job)", _features, float(lo), float(hi))


def unregister_observation_feature(name: str) -> bool:
    """Removes an observation feature registered by name; returns whether there was one."""
    _features.pop(name, None)
    return bool(_core.unregister_observation_feature(name))


_comm_models: dict[str, Any] = {}


def register_comm_model(name: str, about: str = "") -> Callable[[Any], Any]:
    """A decorator registering a communication model under ``name``: the decorated
    ``slowdown(model, gpus, view)`` prices a placement, returning its slowdown (>= 1: step time
    over the ring all-reduce's step time on the most compact placement, the unit of a job's work)
    or a pair ``(cost, slowdown)`` (the cost is ``slowdown - 1`` otherwise). ``model`` is the
    job's model name, ``gpus`` its GPUs (sorted), ``view`` a dict with ``num_gpus``, ``levels``
    (the topology's level names, level 1 first, the root last), ``domains`` (how many domains of
    each level the GPUs span) and ``link`` (the level of their lowest common domain, 0 for one
    GPU). A scenario's ``{"comm": {"model": "name"}}`` then takes it, in every front door. The
    placement score's bounds are its costs on the first k GPUs and on k GPUs spread evenly. The C++
    core calls it with the GIL taken at every job start (and candidate priced); an exception it
    raises becomes a :class:`gpuplace.Error` from the env's next step. Registering a name again
    from Python replaces it; a built-in model's name is a ConfigError.

        @gpuplace.register_comm_model("hop_penalty", about="5% slower per level crossed")
        def hop_penalty(model, gpus, view):
            return 1.0 + 0.05 * max(0, view["link"] - 1)
    """
    return _function_decorator("comm_model", name, about, "slowdown(model, gpus, view)", _comm_models)


def unregister_comm_model(name: str) -> bool:
    """Removes a communication model registered by name; returns whether there was one."""
    _comm_models.pop(name, None)
    return bool(_core.unregister_comm_model(name))


def register_scenario(name: str, scenario: Any, about: str = "") -> None:
    """Registers ``scenario`` (a preset name, JSON text, a file, a dict or a
    :class:`gpuplace.Scenario`, read and checked now) under ``name``: the name is then a scenario
    wherever a preset's is (:class:`gpuplace.GymnasiumEnv`, :func:`gpuplace.evaluate`, the command
    line's ``--scenario`` after ``--plugin``) and ``info --list`` shows it. A preset's name, or one
    with ``:`` or ``/``, is a :class:`gpuplace.ConfigError`; registering a name again from Python
    replaces it."""
    from .config import load_scenario

    doc = load_scenario(scenario)
    if name in _scenarios:
        _core.unregister_scenario(name)
    _core.register_scenario(name, about or f"{doc.get('name', 'a scenario')}, registered from Python", doc)
    _scenarios.add(name)


def unregister_scenario(name: str) -> bool:
    """Removes a scenario registered by name; returns whether there was one."""
    _scenarios.discard(name)
    return bool(_core.unregister_scenario(name))


_scenarios: set[str] = set()


def register_topology(name: str, levels: Any, about: str = "", parameters: dict[str, str] | None = None) -> None:
    """Registers a topology preset of one's own under ``name``, written as the built-in presets are
    (``gpuplace/data/topologies.hpp``): ``levels`` is a list of levels, level 1 first and the root
    last (``{"name", "fanout", "bandwidth", "latency", "gpu_types", ...}``, as a scenario's
    ``"levels"``), or a whole entry ``{"levels": [...], "about": ..., "parameters": {...}}`` (a
    dict or JSON text). ``parameters`` maps keys a scenario may set beside ``"preset"`` to the
    level whose fan-out each sets, e.g. ``{"racks": "spine"}``. The name is then a preset wherever a
    built-in one's is: a scenario's ``{"topology": {"preset": name, "racks": 4}}`` (and
    ``"<level>_bandwidth"`` / ``"<level>_latency"``), ``--topology`` after ``--plugin``, ``info
    --list``. Checked now: bad levels or parameters are a :class:`gpuplace.ConfigError` naming the
    topology and the JSON path. Registering a name again from Python replaces it; a built-in
    preset's name is a ConfigError.

        gpuplace.register_topology("pods", [
            {"name": "board", "fanout": 4, "bandwidth": 200},
            {"name": "pod", "fanout": 8, "bandwidth": 25},
            {"name": "spine", "fanout": 2, "bandwidth": 10}], parameters={"pods": "spine"})
    """
    import json

    if isinstance(levels, str):
        try:
            entry = json.loads(levels)
        except json.JSONDecodeError as e:
            raise _core.ConfigError(f"register_topology({name!r}): not JSON text: {e}") from None
    elif isinstance(levels, (list, tuple)):
        entry = {"levels": list(levels)}
    elif isinstance(levels, dict):
        entry = dict(levels)
    else:
        raise _core.ConfigError(f"register_topology({name!r}): expected a list of levels or an entry with \"levels\", got {levels!r}")
    if isinstance(entry, dict):
        if about:
            entry["about"] = about
        entry.setdefault("about", "a topology registered from Python")
        if parameters is not None:
            entry["parameters"] = dict(parameters)
    try:
        text = json.dumps(entry)
    except (TypeError, ValueError) as e:
        raise _core.ConfigError(f"register_topology({name!r}): not JSON data: {e}") from None
    if name in _topologies:
        _core.unregister_topology(name)
        _topologies.discard(name)
    _core.register_topology(name, text)
    _topologies.add(name)


def unregister_topology(name: str) -> bool:
    """Removes a topology preset registered by name; returns whether there was one."""
    _topologies.discard(name)
    return bool(_core.unregister_topology(name))


_topologies: set[str] = set()


def registered_policies() -> dict[str, Any]:
    """The policies registered from Python, by name."""
    return dict(_registered)


def load_plugin(spec: str) -> None:
    """Imports user code that registers policies: a ``.py`` file's path, or a module's name
    (importable from the current folder). A file that is missing, not a regular file or that
    raises is a ConfigError naming it."""
    if spec.endswith(".py") or os.sep in spec:
        from ._files import check_input_file

        check_input_file(spec, "--plugin")
        mod_name = "gpuplace_plugin_" + os.path.splitext(os.path.basename(spec))[0]
        loader = importlib.util.spec_from_file_location(mod_name, spec)
        if loader is None or loader.loader is None:
            raise _core.ConfigError(f"--plugin {spec!r}: not a Python file that can be imported")
        module = importlib.util.module_from_spec(loader)
        sys.modules[mod_name] = module
        try:
            loader.loader.exec_module(module)
        except _core.ConfigError:
            raise
        except Exception as e:  # the user's code: say where it came from
            raise _core.ConfigError(f"--plugin {spec!r}: importing it raised {type(e).__name__}: {e}") from e
        return
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        importlib.import_module(spec)
    except ImportError as e:
        raise _core.ConfigError(f"--plugin {spec!r}: no such module or .py file ({e})") from e

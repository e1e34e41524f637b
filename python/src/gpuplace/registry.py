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

    def decorate(fn: Any) -> Any:
        if not callable(fn):
            raise _core.ConfigError(f"register_discipline({name!r}): expected a function key(view, job), got {fn!r}")
        if name in _disciplines:
            _core.unregister_discipline(name)
            del _disciplines[name]
        doc = (getattr(fn, "__doc__", None) or "").strip()
        _core.register_discipline(name, about or ((doc.splitlines()[0] if doc else "a discipline registered from Python") + " (Python)"), fn)
        _disciplines[name] = fn
        return fn

    return decorate


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

    def decorate(fn: Any) -> Any:
        if not callable(fn):
            raise _core.ConfigError(f"register_workload_kind({name!r}): expected a function generate(options, num_gpus, seed), "
                                    f"got {fn!r}")
        if name in _workload_kinds:
            _core.unregister_workload_kind(name)
            del _workload_kinds[name]
        doc = (getattr(fn, "__doc__", None) or "").strip()
        _core.register_workload_kind(
            name, about or ((doc.splitlines()[0] if doc else "a workload kind registered from Python") + " (Python)"), fn)
        _workload_kinds[name] = fn
        return fn

    return decorate


def unregister_workload_kind(name: str) -> bool:
    """Removes a workload kind registered by name; returns whether there was one."""
    _workload_kinds.pop(name, None)
    return bool(_core.unregister_workload_kind(name))


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

"""Model files: MaskablePPO zips, the observation layout and queue policy a model records, and the
scenario a model acts in (:func:`scenario_for_model`)."""

from __future__ import annotations

import os

import numpy as np

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "gpuplace.sb3 needs the sb3 extra: pip install 'torch==2.13.0' && pip install './python[sb3]'"
    ) from e

from .. import _core
from ..config import DURATIONS, QUEUES, ScenarioLike, durations_of, load_scenario, queue_name
from .._files import check_input_file
from ..spaces import INFORMATION, LAYOUT_ATTR
from ..torch_net import LayoutError, ObsSpec, check_compatible
from .teachers import queue_policy_of, with_queue
from .policy import PerGpuPolicy


def model_file(path: str | os.PathLike) -> str:
    """The file a MaskablePPO model path names (SB3 adds ".zip" to a path without it); a
    FileNotFoundError naming the path when there is none."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        return check_input_file(path, "model")  # a FIFO or a device is refused, not read
    if not path.endswith(".zip") and os.path.isfile(path + ".zip"):
        return path + ".zip"
    what = "is a folder, not a model file" if os.path.isdir(path) else "does not exist"
    raise FileNotFoundError(f"model {path} {what} (a MaskablePPO .zip, e.g. train-sb3's OUT/maskable_ppo.zip)")


def load_maskable_ppo(path: str | os.PathLike, device: str = "cpu"):
    """Loads a MaskablePPO model (sb3-contrib) from ``path``. A missing file is a FileNotFoundError
    naming the path; a truncated or corrupt file a :class:`gpuplace.CheckpointError` naming the
    file (not the zipfile / pickle / SB3 error it comes from, which is chained)."""
    file = check_input_file(model_file(path), "model")
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(file, device=device)
    except Exception as e:  # SB3 reports a bad file as BadZipFile, EOFError, KeyError, AssertionError, pickle's...
        raise _core.CheckpointError(
            f"model {file}: cannot be loaded as a MaskablePPO model (truncated, corrupt or not an SB3 .zip): "
            f"{type(e).__name__}: {e}") from e


def save_model(model, path: str | os.PathLike) -> str:
    """``model.save(path)``, atomically (the file is the old one or the new one, never a part):
    SB3 writes a temporary .zip in the same folder, renamed over ``path``. A model with non-finite
    weights (a diverged training) is refused with a :class:`gpuplace.CheckpointError` and nothing
    is written."""
    from .._files import atomic_target

    path = os.fspath(path)
    if not path.endswith(".zip"):
        path += ".zip"  # as SB3 names it
    bad = [n for n, p in getattr(model, "policy", model).named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise _core.CheckpointError(f"model {path}: not written: non-finite weights (NaN or inf) in {', '.join(bad[:4])}"
                                    f"{' ...' if len(bad) > 4 else ''}; the training diverged")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_target(path) as tmp:
        model.save(tmp)
    return path


def model_layout(model) -> dict:
    """The gpuplace observation layout a model was built on (its observation space's
    ``gpuplace_layout``: segments, queue settings, information setting), or {} for a model built
    on another env."""
    space = getattr(model, "observation_space", None) or getattr(getattr(model, "policy", None), "observation_space", None)
    return dict(getattr(space, LAYOUT_ATTR, None) or {})


def model_queue(model) -> str | None:
    """The queue policy a model acts under (fifo, backfill, sjf, fewest_gpus or a description):
    ``model.gpuplace_queue`` when set (train-sb3 sets it for a teacher's queue policy), else the
    one of the env the model was built on (recorded in its observation space); None when the
    model records neither."""
    queue = getattr(model, "gpuplace_queue", None)
    if queue:
        return queue
    q = model_layout(model).get("queue")
    return queue_name(q["queue_policy"], q["backfill"]) if q else None


def scenario_for_model(model, scenario: ScenarioLike, name: str = "maskable_ppo",
                       queue: str | None = None) -> tuple[dict, str]:
    """The scenario a model acts in and the name of its row: the scenario under the model's queue
    policy (:func:`model_queue`), named ``name+<queue>`` when that is not the scenario's own. With
    ``queue`` (a queue policy name, as ``evaluate --queue`` gives it), the scenario under that
    queue policy instead, named ``name+<queue>`` always, whatever the model was trained under. A
    :class:`gpuplace.torch_net.LayoutError` naming what differs when the model cannot act on the
    scenario's observations (another queue window or features; an MlpPolicy on another number of
    GPUs; another information setting), before any episode runs."""
    from ..config import make_core_env

    sc = load_scenario(scenario)
    lay = model_layout(model)
    info = lay.get("information", INFORMATION)
    if info not in DURATIONS:
        raise LayoutError(f'the model observes under information setting "{info}"; this gpuplace provides '
                          f'{", ".join(DURATIONS)}')
    if queue is not None:
        sc = with_queue(sc, queue)
        name = f"{name}+{queue}"
        queue = None
    else:
        queue = model_queue(model)
    if queue and queue_policy_of(sc) != queue:
        q = lay.get("queue")
        sc = with_queue(sc, queue) if queue in QUEUES or not q else load_scenario(sc, {"env": dict(q)})
        name = f"{name}+{queue}"
    if durations_of(sc) != info:
        raise LayoutError(f'the model was trained with durations {info} and scenario {sc.get("name", "custom")} has '
                          f'durations {durations_of(sc)}: a model acts only in the information setting it was trained in')
    core = make_core_env(sc)
    want = ObsSpec.from_env(core)
    what = f"scenario {sc.get('name', 'custom')}"
    pol = getattr(model, "policy", model)
    if isinstance(pol, PerGpuPolicy):
        check_compatible(pol.obs_spec, want, pol.net_config, what=what)
    else:
        have_obs = int(np.prod(pol.observation_space.shape))
        have_act = int(getattr(pol.action_space, "n", -1))
        if (have_obs, have_act) != (int(core.observation_size), int(core.num_actions)):
            raise LayoutError(
                f"the model ({type(pol).__name__}) does not fit {what}: it acts on observations of {have_obs} values "
                f"and {have_act} actions, the scenario's have {int(core.observation_size)} and "
                f"{int(core.num_actions)}; a policy over the whole observation (such as MlpPolicy) acts only on the "
                "cluster, queue window and features it was trained on (a PerGpuPolicy acts on any number of GPUs)")
        if lay.get("segments"):  # the same size: the same inputs, by name, when the model recorded them
            named = ObsSpec.from_space(pol.observation_space).name_difference(want, mine="the model", theirs=what)
            if named:
                raise LayoutError(f"the model ({type(pol).__name__}) does not fit {what}: its observation differs: {named}")
    return sc, name

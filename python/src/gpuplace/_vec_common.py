"""Shared parts of the SB3 and Gymnasium vector environments."""

from __future__ import annotations

import numpy as np

from . import _core


def as_actions(actions, num_envs: int, num_actions: int) -> np.ndarray:
    """Batched actions as a contiguous int64 array of shape (num_envs,). Integer arrays of other
    widths are converted (values checked); floats, bools and other shapes are clear errors."""
    if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (num_envs,) \
            and actions.flags.c_contiguous:
        return actions  # the common case, without further checks (C++ checks the values)
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"batched actions must be integers, got dtype {a.dtype} (shape {a.shape}); "
            f"pass an int64 array of shape ({num_envs},)"
        )
    if a.shape == (num_envs, 1):
        a = a.reshape(num_envs)
    if a.shape != (num_envs,):
        raise ValueError(f"batched actions must have shape ({num_envs},), got {a.shape}")
    if a.dtype != np.int64:
        if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
            bad = int(np.argmax(a))
            raise _core.InvalidAction(f"vector env: env {bad}: invalid action {int(a[bad])}: out of range")
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


def check_seed(seed) -> int | None:
    """A reset seed as a Python int in [0, 2**64) (numpy integers too), or None; a TypeError for
    other types (bools too), a ValueError naming the value out of range."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if seed < 0 or seed >= 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed

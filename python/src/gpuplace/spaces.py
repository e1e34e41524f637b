"""Action spaces whose ``sample()`` respects the environment's current action mask.

``Discrete(G + 1)`` contains every action, but in a given state only the masked ones are valid,
and ``step`` rejects the others with ``InvalidAction``. So that random agents, Gymnasium's and
SB3's environment checkers and any code that calls ``env.action_space.sample()`` get a valid
action, these spaces sample under the live mask when no mask is given. They pickle and deep-copy
as the plain Gymnasium space (without the link to the environment), so saved models stay portable.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from gymnasium import spaces


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws among the currently valid actions."""

    def __init__(self, n: int, mask_fn: Callable[[], np.ndarray | None], seed=None):
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._mask_fn is not None:
            m = self._mask_fn()
            if m is not None and m.any():
                return super().sample(mask=m.astype(np.int8))
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.Discrete, (int(self.n), None, int(self.start)))


class MaskedMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete([n] * N)`` whose ``sample()`` without a mask draws a valid action per env."""

    def __init__(self, nvec, mask_fn: Callable[[], np.ndarray | None], seed=None):
        super().__init__(nvec, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._mask_fn is not None:
            m = self._mask_fn()
            if m is not None:
                return super().sample(mask=tuple(row.astype(np.int8) for row in m))
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self):
        return (spaces.MultiDiscrete, (np.array(self.nvec), self.dtype))

"""Deprecated: ``gpuplace.vector.GpuPlaceVectorEnv`` is :class:`gpuplace.gymnasium.GymnasiumVectorEnv`
(which takes the scenario first; the deprecated name still accepts ``(num_envs, scenario)``)."""

import warnings

from ._deprecated import module_getattr
from ._vec_common import is_count
from .gymnasium import GymnasiumVectorEnv


class _GpuPlaceVectorEnv(GymnasiumVectorEnv):
    """GymnasiumVectorEnv under its old name, which also took ``(num_envs, scenario)``."""

    def __init__(self, scenario="default", num_envs=8, *args, **kwargs):
        if is_count(scenario):  # the old order, GpuPlaceVectorEnv(num_envs, scenario)
            warnings.warn("GpuPlaceVectorEnv(num_envs, scenario) is the old argument order; pass "
                          "GymnasiumVectorEnv(scenario, num_envs) or keywords", DeprecationWarning, stacklevel=2)
            scenario, num_envs = ("default" if is_count(num_envs) else num_envs), scenario
        super().__init__(scenario, num_envs, *args, **kwargs)


_GpuPlaceVectorEnv.__name__ = _GpuPlaceVectorEnv.__qualname__ = "GpuPlaceVectorEnv"

__getattr__ = module_getattr(__name__, {
    "GpuPlaceVectorEnv": ("gpuplace.gymnasium.GymnasiumVectorEnv", lambda: _GpuPlaceVectorEnv),
})

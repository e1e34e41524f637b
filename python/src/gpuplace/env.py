"""Deprecated: ``gpuplace.env.GpuPlaceEnv`` is :class:`gpuplace.gymnasium.GymnasiumEnv`."""

from ._deprecated import module_getattr


def _gymnasium_env():
    from .gymnasium import GymnasiumEnv

    return GymnasiumEnv


__getattr__ = module_getattr(__name__, {"GpuPlaceEnv": ("gpuplace.gymnasium.GymnasiumEnv", _gymnasium_env)})

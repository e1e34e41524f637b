"""Deprecated: ``gpuplace.vec_env.GpuPlaceVecEnv`` is :class:`gpuplace.sb3.SB3VecEnv`."""

from ._deprecated import module_getattr


def _sb3_vec_env():
    from ._sb3_vec_env import SB3VecEnv

    return SB3VecEnv


__getattr__ = module_getattr(__name__, {"GpuPlaceVecEnv": ("gpuplace.sb3.SB3VecEnv", _sb3_vec_env)})

"""The names of the release before (CHANGELOG.md, "Deprecated"): each still works, is the new class
(or, for GpuPlaceVectorEnv, a subclass that also takes the old argument order), and warns with a
DeprecationWarning that names its replacement; the new names warn about nothing."""

import importlib
import warnings

import numpy as np
import pytest

import gpuplace
from gpuplace.gymnasium import GymnasiumEnv, GymnasiumVectorEnv

# (module, old name, the replacement the warning names, the replacement's module and name)
RENAMED = [
    ("gpuplace", "GpuPlaceEnv", "gpuplace.gymnasium.GymnasiumEnv"),
    ("gpuplace.env", "GpuPlaceEnv", "gpuplace.gymnasium.GymnasiumEnv"),
    ("gpuplace", "GpuPlaceVectorEnv", "gpuplace.gymnasium.GymnasiumVectorEnv"),
    ("gpuplace.vector", "GpuPlaceVectorEnv", "gpuplace.gymnasium.GymnasiumVectorEnv"),
    ("gpuplace", "GpuPlaceVecEnv", "gpuplace.sb3.SB3VecEnv"),
    ("gpuplace.vec_env", "GpuPlaceVecEnv", "gpuplace.sb3.SB3VecEnv"),
    ("gpuplace.rllib", "MaskedDictEnv", "gpuplace.rllib.RLlibEnv"),
    ("gpuplace.rllib", "MaskedDictVectorEnv", "gpuplace.rllib.RLlibVectorEnv"),
    ("gpuplace.rllib.env", "MaskedDictEnv", "gpuplace.rllib.RLlibEnv"),
    ("gpuplace.rllib.env", "MaskedDictVectorEnv", "gpuplace.rllib.RLlibVectorEnv"),
]

NEEDS = {"gpuplace.sb3": "stable_baselines3", "gpuplace.rllib": "ray.rllib"}


def _new(full_name):
    module, _, name = full_name.rpartition(".")
    pytest.importorskip(NEEDS.get(module, "gymnasium"))
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("module,old,new", RENAMED, ids=[f"{m}.{o}" for m, o, _ in RENAMED])
def test_an_old_name_warns_and_names_its_replacement(module, old, new):
    replacement = _new(new)
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning) as record:
        cls = getattr(mod, old)
    assert [str(w.message) for w in record] == [
        f"{module}.{old} is deprecated and will be removed in the next release; use {new} instead"]
    assert record[0].filename == __file__  # attributed to the code that used the old name
    assert cls is replacement or (old == "GpuPlaceVectorEnv" and issubclass(cls, replacement))
    with pytest.warns(DeprecationWarning, match=f"use {new} instead"):  # `from module import old` too
        exec(f"from {module} import {old}", {})


def test_the_new_names_warn_about_nothing(small):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import gpuplace.gymnasium as g

        g.GymnasiumEnv(small).reset(seed=0)
        g.GymnasiumVectorEnv(small, 2).reset(seed=0)
        assert gpuplace.GymnasiumEnv is GymnasiumEnv and gpuplace.GymnasiumVectorEnv is GymnasiumVectorEnv
        assert not any(n.startswith(("GpuPlace", "MaskedDict")) for n in gpuplace.__all__)
        exec("from gpuplace import *", {})  # every exported name, none deprecated


def test_an_unknown_name_is_still_an_attribute_error():
    for module in ("gpuplace", "gpuplace.env", "gpuplace.vector", "gpuplace.vec_env"):
        with pytest.raises(AttributeError, match=f"module '{module}' has no attribute 'Nope'"):
            getattr(importlib.import_module(module), "Nope")


def _trajectory(env, seed, steps=60):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        out += [obs, np.float64(r)]
        if term or trunc:
            obs, _ = env.reset()
            out.append(obs)
    return np.concatenate([np.ravel(x) for x in out])


def test_old_names_play_the_same_episodes(small):
    with pytest.warns(DeprecationWarning):
        old_env = gpuplace.GpuPlaceEnv(small)
    np.testing.assert_array_equal(_trajectory(old_env, 3), _trajectory(GymnasiumEnv(small), 3))
    with pytest.warns(DeprecationWarning):
        Old = gpuplace.GpuPlaceVectorEnv
    old, new = Old(small, 3), GymnasiumVectorEnv(small, 3)
    np.testing.assert_array_equal(old.reset(seed=5)[0], new.reset(seed=5)[0])
    for _ in range(50):
        a = new.action_space.sample()
        for x, y in zip(old.step(a)[:4], new.step(a)[:4]):
            np.testing.assert_array_equal(x, y)


def test_the_old_vector_argument_order_still_works_with_a_warning(small):
    with pytest.warns(DeprecationWarning):
        Old = gpuplace.GpuPlaceVectorEnv
    with pytest.warns(DeprecationWarning, match="old argument order"):
        old = Old(3, small)
    assert old.num_envs == 3 and old.scenario["name"] == "small"
    with pytest.warns(DeprecationWarning, match="old argument order"):
        assert Old(2).scenario["name"] == "default"
    assert Old(small, 2).num_envs == 2  # the new order, without a warning about it


def test_old_sb3_name_plays_the_same_episodes(small):
    pytest.importorskip("stable_baselines3")
    from gpuplace.sb3 import SB3VecEnv

    with pytest.warns(DeprecationWarning):
        from gpuplace.vec_env import GpuPlaceVecEnv
    old, new = GpuPlaceVecEnv(small, 2), SB3VecEnv(small, 2)
    assert isinstance(old, SB3VecEnv)
    old.seed(7)
    new.seed(7)
    np.testing.assert_array_equal(old.reset(), new.reset())
    for _ in range(40):
        a = np.array([np.flatnonzero(m)[-1] for m in new.action_masks()], dtype=np.int64)
        o1, r1, d1, _ = old.step(a)
        o2, r2, d2, _ = new.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)


def test_old_rllib_names_play_the_same_episodes(small):
    pytest.importorskip("ray.rllib")
    import gpuplace.rllib as rl

    with pytest.warns(DeprecationWarning):
        OldVec, OldOne = rl.MaskedDictVectorEnv, rl.MaskedDictEnv
    assert OldVec is rl.RLlibVectorEnv and OldOne is rl.RLlibEnv
    old, new = OldVec(small, 2), rl.RLlibVectorEnv(small, 2)
    for x, y in zip(old.reset(seed=1)[0].values(), new.reset(seed=1)[0].values()):
        np.testing.assert_array_equal(x, y)

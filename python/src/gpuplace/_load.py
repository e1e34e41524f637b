"""Chooses which build of the C++ core ``gpuplace._core`` is. On x86-64 the package holds one or
more of: a portable build (``_core``), one for x86-64-v3 CPUs (``_core_v3``: AVX2 and FMA, which
make the C++ PPO's network update about twice as fast) and one for x86-64-v4 CPUs (``_core_v4``:
AVX-512 too, about 1.2x faster again); which ones is chosen when the package is built
(``GPUPLACE_CORES``: by default only the one for the building machine, ``all`` for every one).
The highest build the CPU runs (``gpuplace._cpu`` asks CPUID) is imported and registered as
``gpuplace._core``; the environment variable ``GPUPLACE_CORE`` (``portable``, ``x86-64-v3`` or
``x86-64-v4``) asks for one. Env results are bit-identical between them.
``gpuplace.core_variant`` tells which one runs."""

import importlib
import importlib.machinery
import os
import sys

# the optimised builds, fastest first: (variant, module suffix, gpuplace._cpu's check)
_LEVELS = (("x86-64-v4", "_core_v4", "x86_64_v4"), ("x86-64-v3", "_core_v3", "x86_64_v3"))
_CHOICES = ("auto", "portable") + tuple(level for level, _, _ in reversed(_LEVELS))
_REBUILD = "reinstall with GPUPLACE_CORES=all (every variant) or GPUPLACE_CORES=portable"


def _runs(package, check):
    """Whether gpuplace._cpu says this CPU runs the level (False when the probe is missing). The
    environment variable GPUPLACE_CPU_CAP (tests: ``portable`` or ``x86-64-v3``) makes the loader
    believe the CPU runs no level above it."""
    cap = os.environ.get("GPUPLACE_CPU_CAP", "").strip().lower()
    order = ("portable", "x86_64_v3", "x86_64_v4")
    if cap.replace("-", "_") in order and order.index(check) > order.index(cap.replace("-", "_")):
        return False
    try:
        return bool(getattr(importlib.import_module(f"{package}._cpu"), check)())
    except (ImportError, AttributeError):
        return False


def built_cores(package):
    """The variants of the core this package holds, fastest first ("portable" for ``_core``, which
    is also where a GPUPLACE_NATIVE build is)."""
    path = sys.modules[package].__path__

    def has(module):  # on disk (sys.modules' gpuplace._core is whichever build was loaded)
        return importlib.machinery.PathFinder.find_spec(f"{package}.{module}", path) is not None

    return [level for level, module, _ in _LEVELS if has(module)] + (["portable"] if has("_core") else [])


def load_core(package):
    """Imports the chosen core as ``<package>._core``; returns its variant name."""
    choice = os.environ.get("GPUPLACE_CORE", "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ImportError(f"GPUPLACE_CORE={choice!r}: expected one of {', '.join(_CHOICES)}")
    name = f"{package}._core"
    built = built_cores(package)
    if choice != "portable" and name not in sys.modules:
        for level, module, check in _LEVELS:
            if choice not in ("auto", level):
                continue
            runs = _runs(package, check)
            if choice == level and not (runs and level in built):
                raise ImportError(f"GPUPLACE_CORE={level}, but this CPU does not run {level} code "
                                  f"or this build has no {package}.{module} (it has: {', '.join(built) or 'none'})")
            if runs and level in built:
                mod = importlib.import_module(f"{package}.{module}")
                sys.modules[name] = mod
                setattr(sys.modules[package], "_core", mod)
                return mod.variant
    if name not in sys.modules and "portable" not in built:
        held = f"this package holds only the {', '.join(built) or 'no'} core (GPUPLACE_CORES when it was built)"
        if choice == "portable":
            raise ImportError(f"GPUPLACE_CORE=portable, but {held}: {_REBUILD}")
        raise ImportError(f"no build of the C++ core runs on this CPU: {held}: {_REBUILD}")
    return importlib.import_module(name).variant

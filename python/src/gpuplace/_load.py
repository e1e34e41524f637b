"""Chooses which build of the C++ core ``gpuplace._core`` is: on x86-64 the package holds a
portable build (``_core``) and one for x86-64-v3 CPUs (``_core_v3``: AVX2 and FMA, which make the
C++ PPO's network update about twice as fast). The v3 build is imported when the CPU runs it
(``gpuplace._cpu`` asks CPUID) and is then registered as ``gpuplace._core``; the environment
variable ``GPUPLACE_CORE=portable`` forces the portable one. Env results are bit-identical
between the two. ``gpuplace.core_variant`` tells which one runs."""

import importlib
import importlib.util
import os
import sys

_CHOICES = ("auto", "portable", "x86-64-v3")


def load_core(package):
    """Imports the chosen core as ``<package>._core``; returns its variant name."""
    choice = os.environ.get("GPUPLACE_CORE", "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ImportError(f"GPUPLACE_CORE={choice!r}: expected one of {', '.join(_CHOICES)}")
    name = f"{package}._core"
    if choice != "portable" and name not in sys.modules:
        try:
            v3 = importlib.import_module(f"{package}._cpu").x86_64_v3()
        except ImportError:
            v3 = False
        # not built: not x86-64, or a GPUPLACE_NATIVE build (one core, for this machine)
        built = importlib.util.find_spec(f"{package}._core_v3") is not None
        if choice == "x86-64-v3" and not (v3 and built):
            raise ImportError("GPUPLACE_CORE=x86-64-v3, but this CPU does not run x86-64-v3 code "
                              "or this build has no gpuplace._core_v3")
        if v3 and built:
            mod = importlib.import_module(f"{package}._core_v3")
            sys.modules[name] = mod
            setattr(sys.modules[package], "_core", mod)
    return importlib.import_module(name).variant

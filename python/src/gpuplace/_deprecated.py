"""The names gpuplace renamed, kept for one release: using one warns (DeprecationWarning) and names
its replacement. CHANGELOG.md lists them."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new} instead",
                  DeprecationWarning, stacklevel=stacklevel)


def module_getattr(module: str, aliases: Mapping[str, tuple[str, Callable[[], Any]]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) serving the renamed names: ``aliases`` maps an old name to
    (its replacement's full name, a function that imports and returns the replacement)."""

    def __getattr__(name: str):
        if name in aliases:
            new, load = aliases[name]
            warn_renamed(f"{module}.{name}", new)
            return load()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__

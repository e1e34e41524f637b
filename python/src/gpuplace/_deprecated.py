"""The names gpuplace renamed, kept for one release: using one warns (DeprecationWarning) and names
its replacement; a renamed command-line option still parses, with a note. CHANGELOG.md lists them."""

from __future__ import annotations

import argparse
import sys
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


# Command-line spellings renamed to the C++ programs' (gpuplace-train --steps, gpuplace-eval --seeds):
# the old one still parses, into the new one's value, with a note on stderr naming the new spelling.
class _RenamedOption(argparse.Action):
    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"note: {option_string} is deprecated and will be removed in the next release; use {self.new} "
              f"(the C++ programs' spelling)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed_option(parser: argparse.ArgumentParser, old: str, new: str, **kwargs) -> None:
    """Adds ``old`` as a hidden spelling of the option ``new`` (already added to ``parser``): same
    value (``kwargs``: its ``type``), same destination, a deprecation note when used."""
    dest = next(a.dest for a in parser._actions if new in a.option_strings)
    parser.add_argument(old, dest=dest, action=_RenamedOption, new=new, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS, **kwargs)

"""Checked command-line values (argparse ``type=`` functions) and output paths, shared by
``python -m gpuplace`` and ``python -m gpuplace rllib``: a bad value is argparse's usage error
naming the option and the value, before any work starts."""

from __future__ import annotations

import argparse
import math
import os
from typing import Sequence

from . import _core

#: Seeds are 64-bit unsigned integers (include/gpuplace/workload.hpp).
SEED_MAX = 2**64 - 1


def count(lo: int = 0, hi: int | None = None, what: str = "a whole number"):
    """An integer in [lo, hi] (hi None: no upper bound)."""

    def parse(text: str) -> int:
        try:
            v = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if v < lo or (hi is not None and v > hi):
            bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise argparse.ArgumentTypeError(f"{v} out of range: expected {what} {bound}")
        return v

    return parse


def number(lo: float, hi: float, what: str = "a number", lo_open: bool = False):
    """A finite float in [lo, hi] (``lo_open``: (lo, hi])."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
            raise argparse.ArgumentTypeError(f"{text} out of range: expected {what} in {'(' if lo_open else '['}{lo:g}, "
                                             f"{hi:g}]")
        return v

    return parse


def seed_list(text: str) -> list[int]:
    """Comma-separated seeds, each a whole number in [0, 2**64); at least one."""
    items = [s.strip() for s in text.split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError(f"{text!r}: no seeds (expected comma-separated seeds, e.g. 1,2,3)")
    one = count(0, SEED_MAX, "a seed (a whole number >= 0)")
    out = []
    for i, s in enumerate(items):
        if not s:
            raise argparse.ArgumentTypeError(f"{text!r}: item {i + 1} is empty (expected comma-separated seeds, e.g. 1,2,3)")
        try:
            out.append(one(s))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{text!r}: item {i + 1}: {e}") from None
    return out


def window(text: str) -> list[float]:
    """--window START,END: two finite seconds >= 0, START below END."""
    items = [s.strip() for s in text.split(",")]
    if len(items) != 2:
        raise argparse.ArgumentTypeError(f"{text!r}: expected START,END in seconds (two numbers), got {len(items)} item(s)")
    one = number(0.0, 1.7976931348623157e308, "a number of seconds")
    start, end = one(items[0]), one(items[1])
    if not start < end:
        raise argparse.ArgumentTypeError(f"{text}: START must be below END")
    return [start, end]


class comma_list(argparse.Action):
    """A list option (``nargs="+"``): comma-separated, the C++ programs' spelling (``--policies
    pack,first_fit``); space-separated items and repeats are joined on too, as CLI11 does. Stored as
    one comma-separated string."""

    def __call__(self, parser, namespace, values, option_string=None):
        joined = ",".join(values)
        old = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, f"{old},{joined}" if old else joined)


def policy_names(s: str | None, plugins: Sequence[str] = ()) -> list[str]:
    """--policies: comma-separated heuristic names (default: all, and the policies the command's
    --plugin files registered), each checked before any work."""
    if s is None:
        return list(_core.heuristic_names()) + list(plugins)
    names = [p.strip() for p in s.split(",") if p.strip()]
    if not names:
        raise _core.ConfigError(f"--policies {s!r}: no heuristic names (known: {', '.join(_core.heuristic_names())})")
    for n in names:
        try:
            _core.Heuristic(n)
        except _core.ConfigError as e:
            raise _core.ConfigError(f"--policies: {e}") from None
    return names


def check_output_file(path: str | None, option: str) -> None:
    """Before any work: a file the command will write must be writable, in an existing folder.
    A ConfigError naming the option and the path otherwise."""
    if not path:
        return
    full = os.path.abspath(path)
    folder = os.path.dirname(full)
    if os.path.isdir(full):
        raise _core.ConfigError(f"{option} {path}: is a folder, not a file name")
    if not os.path.isdir(folder):
        raise _core.ConfigError(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(full) and not os.access(full, os.W_OK)):
        raise _core.ConfigError(f"{option} {path}: not writable")


def check_output_folder(path: str, option: str) -> None:
    """Before any work: a folder the command writes into is made (with its parents) and must be
    writable. A ConfigError naming the option and the path otherwise."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise _core.ConfigError(f"{option} {path}: is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise _core.ConfigError(f"{option} {path}: cannot make the folder: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise _core.ConfigError(f"{option} {path}: not writable")

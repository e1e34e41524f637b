"""Runs a command line built with argparse: the chosen subcommand's ``fn(args)``, and gpuplace's
errors, bad values, unreadable files and missing extras as exit status 2 with the message (no
traceback). Used by ``python -m gpuplace`` and ``python -m gpuplace rllib``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import _core


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parses ``argv`` with ``parser`` and returns the command's exit status."""
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except (_core.Error, ValueError, OSError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

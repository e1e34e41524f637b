"""A training log as TensorBoard event files: ``python -m gpuplace tensorboard RUN_FOLDER|CSV --out
DIR`` writes every numeric column of the C++ PPO's ``learning.csv`` (gpuplace-train, ``python -m
gpuplace train``; one folder per restart's ``seed_N/learning.csv`` too) or train-sb3's
``episodes.csv`` as scalars against env steps, through ``torch.utils.tensorboard`` (needs torch and
tensorboard, both in the ``sb3`` extra). ``tensorboard --logdir DIR`` shows them.
``train-sb3 --tensorboard DIR`` writes SB3's own log there while it trains."""

from __future__ import annotations

import glob
import math
import os

from .plot import EPISODE_COLUMNS, LEARNING_COLUMNS, read_rows

MISSING = ("the TensorBoard export needs torch and tensorboard, which are in gpuplace's 'sb3' extra: "
           "pip install './python[sb3]'")


def _logs(source: str) -> list[tuple[str, str]]:
    """(run name, CSV) pairs of a run folder or one CSV file."""
    if os.path.isdir(source):
        found = [("", os.path.join(source, f)) for f in ("learning.csv", "episodes.csv")
                 if os.path.exists(os.path.join(source, f))]
        found += [(os.path.basename(os.path.dirname(p)), p)
                  for p in sorted(glob.glob(os.path.join(glob.escape(source), "seed_*", "learning.csv")))]
        if not found:
            raise ValueError(f"{source}: no learning.csv or episodes.csv in it (a run folder of gpuplace-train, "
                             "python -m gpuplace train or train-sb3 has one)")
        return found
    return [("", source)]


def write_events(source: str | os.PathLike, out: str | os.PathLike) -> list[str]:
    """Writes the training log(s) of ``source`` (a run folder, a learning.csv or an episodes.csv) as
    event files under ``out`` (``out/seed_N`` for each restart of a multi-restart run); returns the
    folders written. Every numeric, finite value of a row becomes a scalar at its env step; a
    missing, empty or unknown CSV is an error naming it."""
    source, out = os.fspath(source), os.fspath(out)
    logs = _logs(source)
    tables = []
    for name, path in logs:
        cols, rows = read_rows(path)
        if all(c in cols for c in LEARNING_COLUMNS):
            step = "env_steps"
        elif all(c in cols for c in EPISODE_COLUMNS):
            step = "timesteps"
        else:
            raise ValueError(f"{path}: not a learning.csv (columns {', '.join(LEARNING_COLUMNS)}) nor an episodes.csv "
                             f"(columns {', '.join(EPISODE_COLUMNS)}); its columns are {', '.join(cols)}")
        tables.append((name, path, step, cols, rows))
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:
        raise ImportError(MISSING) from e
    written = []
    for name, path, step, cols, rows in tables:
        folder = os.path.join(out, name) if name else out
        with SummaryWriter(log_dir=folder) as w:
            for row in rows:
                try:
                    at = int(float(row[step]))
                except (TypeError, ValueError):
                    continue
                for c in cols:
                    if c == step:
                        continue
                    try:
                        v = float(row[c])
                    except (TypeError, ValueError):
                        continue  # text columns (phase) and empty cells
                    if math.isfinite(v):
                        w.add_scalar(c, v, at)
        written.append(folder)
    return written

"""Files the package writes for a user to keep (reports, checkpoints, plots), written atomically:
into a temporary file in the target's folder, flushed and fsynced, then renamed over the target
(``os.replace``). A reader sees the old file or the new one, never a part of either; a write that
fails leaves the old file and no temporary behind. The C++ side does the same
(include/gpuplace/detail/atomic_file.hpp)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator[IO]:
    """``open(path, mode)`` for writing ("w" or "wb", with open()'s keyword arguments), where
    ``path`` takes the written content only when the block ends without an exception."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; a plain open() would not
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Writes ``data`` (text as UTF-8, or bytes) to ``path`` atomically."""
    if isinstance(data, bytes):
        with atomic_open(path, "wb") as f:
            f.write(data)
    else:
        with atomic_open(path, "w", encoding="utf-8", newline="") as f:
            f.write(data)


def atomic_target(path: str | os.PathLike, suffix: str | None = None) -> "AtomicTarget":
    """For writers that take a file name (matplotlib's savefig, SB3's save): a temporary name in
    the target's folder to write to, renamed over ``path`` when the block ends without an
    exception. ``suffix`` (default: ``path``'s extension) keeps writers that choose the format
    from the name working."""
    return AtomicTarget(os.fspath(path), suffix)


class AtomicTarget:
    def __init__(self, path: str, suffix: str | None):
        self.path = path
        self.suffix = os.path.splitext(path)[1] if suffix is None else suffix
        self.tmp: str | None = None

    def __enter__(self) -> str:
        folder = os.path.dirname(os.path.abspath(self.path))
        fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(self.path)}.", suffix=".tmp" + self.suffix, dir=folder)
        os.close(fd)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self.tmp is not None
        if exc_type is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            return
        try:
            with open(self.tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.chmod(self.tmp, 0o666 & ~_umask())
            os.replace(self.tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            raise


def _read_umask() -> int:
    mask = os.umask(0o022)  # read it once, at import (os.umask can only be read by setting it)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _umask() -> int:
    return _UMASK

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
    with _naming(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with _naming(path, tmp):
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
        with _naming(self.path):
            fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(self.path)}.", suffix=".tmp" + self.suffix, dir=folder)
        os.close(fd)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self.tmp is not None
        if exc_type is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            if isinstance(exc, OSError):  # the writer's error, naming the target rather than the temporary file
                with _naming(self.path, self.tmp):
                    raise exc
            return
        try:
            with _naming(self.path, self.tmp):
                with open(self.tmp, "rb+") as f:
                    os.fsync(f.fileno())
                os.chmod(self.tmp, 0o666 & ~_umask())
                os.replace(self.tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            raise


@contextlib.contextmanager
def _naming(path: str, tmp: str | None = None) -> Iterator[None]:
    """An OSError raised in the block names ``path``, the file the user asked for, instead of the
    temporary file (or no file at all): same class and errno, chained to the original."""
    try:
        yield
    except OSError as e:
        names = (e.filename, getattr(e, "filename2", None))
        ours = e.filename is None or any(n is not None and (n == tmp or os.path.basename(str(n)).startswith(
            f".{os.path.basename(path)}.")) for n in names)
        if not ours or e.errno is None:
            raise
        raise type(e)(e.errno, e.strerror, path) from e


def _read_umask() -> int:
    mask = os.umask(0o022)  # read it once, at import (os.umask can only be read by setting it)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _umask() -> int:
    return _UMASK

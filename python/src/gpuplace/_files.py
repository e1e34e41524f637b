"""Files the package reads (:func:`check_input_file`: only a regular file, up to a stated size) and
files it writes for a user to keep (reports, checkpoints, plots), written atomically:
into a temporary file in the target's folder, flushed and fsynced, then renamed over the target
(``os.replace``). A reader sees the old file or the new one, never a part of either; a write that
fails leaves the old file and no temporary behind. The C++ side does the same
(include/gpuplace/detail/atomic_file.hpp)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Iterator

#: The most bytes the package reads of one input file (scenario, config, trace, model, checkpoint,
#: result or CSV file): 1 GiB, the C++ readers' cap too (include/gpuplace/detail/input_file.hpp).
MAX_INPUT_BYTES = 1 << 30


def _size_text(n: float) -> str:
    """"1 GiB", "1.5 MiB", "300 bytes"."""
    unit = "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            break
        n /= 1024
    return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"


def check_input_file(path: str | os.PathLike, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """Before a file is read: it must exist and be a regular file (a folder reads as nothing, a FIFO
    blocks its reader, /dev/zero never ends) of at most ``max_bytes``. Returns the path; a
    :class:`gpuplace.ConfigError` naming ``what`` (an option or a kind of file) and the path
    otherwise."""
    from . import _core

    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _core.ConfigError(f'{what} "{path}": cannot open it: {e.strerror}') from None
    if stat.S_ISDIR(st.st_mode):
        raise _core.ConfigError(f'{what} "{path}" is a directory, not a file')
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise _core.ConfigError(f'{what} "{path}" is {kind}, not a regular file (only regular files of at most '
                                f'{_size_text(max_bytes)} are read)')
    if st.st_size > max_bytes:
        raise _core.ConfigError(f'{what} "{path}" is {_size_text(st.st_size)}, larger than the {_size_text(max_bytes)} '
                                'an input file may be')
    return path


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

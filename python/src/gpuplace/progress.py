"""Progress bars: tqdm when installed, otherwise a plain one on stderr."""

from __future__ import annotations

import sys
import time


class _Plain:
    def __init__(self, total: int | None, desc: str, disable: bool):
        self.total, self.desc, self.n, self.disable = total, desc, 0, disable
        self._t0 = self._last = time.monotonic()

    def update(self, k: int = 1) -> None:
        self.n += k
        now = time.monotonic()
        if not self.disable and (now - self._last > 0.5 or (self.total and self.n >= self.total)):
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.n / max(now - self._t0, 1e-9)
        if self.total:
            frac = min(1.0, self.n / self.total)
            bar = "#" * int(frac * 30)
            sys.stderr.write(f"\r{self.desc} [{bar:<30}] {self.n}/{self.total} ({rate:,.0f}/s)")
        else:
            sys.stderr.write(f"\r{self.desc} {self.n} ({rate:,.0f}/s)")
        sys.stderr.flush()

    def close(self) -> None:
        if not self.disable:
            self._draw(time.monotonic())
            sys.stderr.write("\n")
            sys.stderr.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_bar(total: int | None = None, desc: str = "", disable: bool = False):
    """A context manager with update(k)."""
    try:
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, disable=disable, dynamic_ncols=True)
    except ImportError:
        return _Plain(total, desc, disable)

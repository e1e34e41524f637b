"""Progress bars (tqdm)."""

from __future__ import annotations

from tqdm.auto import tqdm


def progress_bar(total: int | None = None, desc: str = "", disable: bool = False) -> tqdm:
    """A tqdm bar (a context manager with update(k) and write(line))."""
    return tqdm(total=total, desc=desc, disable=disable, dynamic_ncols=True)

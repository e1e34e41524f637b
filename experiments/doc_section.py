"""The generated part of a doc page: the text between `<!-- results:begin -->` and
`<!-- results:end -->` (experiments/information.py, experiments/planning.py), or between the markers of
another section name (`<!-- distilled:begin -->`, experiments/distilled.py)."""
from __future__ import annotations

import math
import pathlib
import re
import statistics
import sys


def mean_sem(v: list[float]) -> tuple[float, float]:
    """The mean of `v` and its standard error (0 for a single value)."""
    m = statistics.fmean(v)
    return m, (statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 1 else 0.0)

def write_results(doc: pathlib.Path, table: str, root: pathlib.Path, section: str = "results") -> None:
    """Replaces the section `section` of `doc` by `table`; exits naming the file when it has no markers."""
    BEGIN, END = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{doc.relative_to(root)}: no {BEGIN} ... {END} markers")
    doc.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: f"{BEGIN}\n{table}{END}", text, flags=re.S))
    print(f"wrote {doc.relative_to(root)}", file=sys.stderr)


def finish(lines: list[str], doc: pathlib.Path, root: pathlib.Path, print_only: bool, section: str = "results") -> int:
    """The table of `lines`: printed (`print_only`), else written into `doc`'s section `section`."""
    table = "\n".join(lines) + "\n"
    if print_only:
        print(table)
    else:
        write_results(doc, table, root, section)
    return 0

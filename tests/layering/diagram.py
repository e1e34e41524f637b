#!/usr/bin/env python3
"""Checks docs/architecture.md's layer diagram against the headers' #include lines: every header of
include/gpuplace belongs to exactly one layer of the diagram, and no header includes one of a
higher layer. A diagram line starts with its layer's name in the first column; the lines indented
below it continue that layer. A layer's headers are the words ending in `.hpp` (a path under
include/gpuplace, `*` matching any name) or in `/` (every header under that folder); other words
are description. A header's definitions (`impl/X_inl.hpp`, `env/X_inl.hpp`) belong to X's layer.

Run: python3 tests/layering/diagram.py [REPO]   (exit 1 and the differences when they disagree)"""

from __future__ import annotations

import fnmatch
import os
import re
import sys


def diagram(text: str) -> list[tuple[str, list[str]]]:
    """The layers of the first code block, top first: (name, header patterns)."""
    block = text.split("```", 2)[1].split("\n", 1)[1]
    layers: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        if line[0] != " ":
            name, _, rest = line.partition(" ")
            layers.append((name, []))
        else:
            rest = line
        words = re.findall(r"[\w./*-]+", rest)
        layers[-1][1].extend(w.rstrip(",") for w in words if w.endswith(".hpp") or w.endswith("/"))
    return layers


def headers(inc: str) -> list[str]:
    out = []
    for d, _, files in os.walk(inc):
        out += [os.path.relpath(os.path.join(d, f), inc) for f in files if f.endswith(".hpp")]
    return sorted(out)


def owner(h: str) -> str:
    """The header whose definitions h holds (itself unless it is an X_inl.hpp)."""
    m = re.match(r"(?:(.*)/)?impl/(\w+)_inl\.hpp$", h) or re.match(r"(?:(.*)/)?(\w+)_inl\.hpp$", h)
    if not m:
        return h
    return (m.group(1) + "/" if m.group(1) else "") + m.group(2) + ".hpp"


def matches(h: str, pattern: str) -> bool:
    if pattern.endswith("/"):
        return h.startswith(pattern)
    return fnmatch.fnmatchcase(h, pattern)


def check(repo: str) -> list[str]:
    inc = os.path.join(repo, "include", "gpuplace")
    layers = diagram(open(os.path.join(repo, "docs", "architecture.md"), encoding="utf-8").read())
    all_h = headers(inc)
    problems, level = [], {}
    for h in all_h:
        # the most specific pattern wins: an exact name over a glob over a folder
        best = None
        for i, (name, pats) in enumerate(layers):
            for p in pats:
                for cand in {h, owner(h)}:
                    if matches(cand, p):
                        rank = (0 if p.endswith("/") else 1 if "*" in p else 2, len(p))
                        if best is None or rank > best[0]:
                            best = (rank, i)
        if best is None:
            problems.append(f"{h}: in no layer of docs/architecture.md's diagram")
        else:
            level[h] = best[1]
    for h in all_h:
        if h not in level:
            continue
        for line in open(os.path.join(inc, h), encoding="utf-8"):
            m = re.match(r'#include "([^"]+)"', line)
            if not m:
                continue
            dep = os.path.normpath(os.path.join(os.path.dirname(h), m.group(1)))
            if dep in level and level[dep] < level[h]:  # a layer above (layers are listed top first)
                problems.append(f"{h} ({layers[level[h]][0]}) includes {dep} ({layers[level[dep]][0]}), a layer above it")
    return problems


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    problems = check(repo)
    for p in problems:
        print(p)
    if problems:
        print(f"docs/architecture.md's diagram disagrees with the includes ({len(problems)} problems)")
        sys.exit(1)
    print("docs/architecture.md's diagram agrees with the includes")

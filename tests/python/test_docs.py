"""The docs say what is true: every preset is in docs/mdp.md's table, and no doc names an issue."""

import os
import re

import gpuplace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def test_the_preset_table_lists_every_preset():
    text = _read("docs/mdp.md")
    table = text[text.index("| preset | GPUs |"):text.index("The default one is:")]
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M)
    assert sorted(rows) == sorted(p for p in gpuplace.PRESETS if ":" not in p)


def test_no_doc_names_an_issue():
    docs = ["README.md", "python/README.md", "benchmarks/README.md"] + [
        os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")]
    found = [f"{d}: {m.group(0)}" for d in docs for m in re.finditer(r"\b[Ii]ssue #?\d+", _read(d))]
    assert found == []

"""The README's quick starts are the example files CI runs, character for character, and the Python
one runs as printed (the C++ one runs as the ctest example_quickstart)."""

import difflib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def readme_block(heading: str) -> str:
    """The first fenced code block after the README line `heading`, without its fences."""
    lines = (ROOT / "README.md").read_text().splitlines(keepends=True)
    start = lines.index(heading + "\n")
    begin = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(begin + 1, len(lines)) if lines[i].rstrip("\n") == "```")
    return "".join(lines[begin + 1 : end])


@pytest.mark.parametrize(
    "heading, example",
    [("## Quick start (C++)", "examples/quickstart.cpp"), ("## Quick start (Python)", "examples/python/quickstart.py")],
)
def test_readme_quick_start_is_the_example_file(heading, example):
    shown, actual = readme_block(heading), (ROOT / example).read_text()
    diff = "".join(difflib.unified_diff(actual.splitlines(True), shown.splitlines(True), example, "README.md"))
    assert shown == actual, f"README.md's '{heading}' differs from {example}:\n{diff}"


def test_python_quick_start_runs_as_printed():
    pytest.importorskip("sb3_contrib")
    r = subprocess.run(
        [sys.executable, "examples/python/quickstart.py"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # the harness table: every heuristic and the trained agent, on the 10 held-out seeds
    rows = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    for name in ("random", "first_fit", "pack", "load_balance", "topology_greedy", "maskable_ppo"):
        assert name in rows, r.stdout
    assert "over 10 seeds" in r.stdout


def test_readme_opens_with_what_gpuplace_is_then_the_two_commands():
    """The front door: the title, what gpuplace is with its picture, then the two commands that set
    up a fresh machine, all within the first lines; no results table (those are docs/results/)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "# gpuplace"
    top = lines[:25]
    picture = next(i for i, line in enumerate(top) if line.startswith("!["))
    main = next(i for i, line in enumerate(top) if line.startswith("scripts/main.sh"))
    test = next(i for i, line in enumerate(top) if line.startswith("scripts/test.sh"))
    what = next(i for i, line in enumerate(top) if "gpuplace is" in line)
    assert what < picture < main < test, top
    assert not [line for line in lines if "±" in line], "results tables belong in docs/results/ (scripts/results.py)"


def test_result_pages_name_their_commands():
    """docs/results/ pages are written by scripts/results.py: each names the command that printed it,
    and none carries a date or a commit."""
    import re

    pages = sorted((ROOT / "docs" / "results").glob("*.md"))
    assert pages, "docs/results/ has no pages (run scripts/results.py)"
    for page in pages:
        text = page.read_text()
        if page.name != "README.md":
            assert re.search(r"^`build/(apps|examples)/", text, re.M), f"{page.name} names no command"
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\bcommit [0-9a-f]{7}", text), f"{page.name} carries a date or a commit"

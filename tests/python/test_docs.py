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


def test_the_memory_figures_in_python_md_are_the_messages_of_today():
    from gpuplace import _core

    doc = " ".join(_read("docs/python.md").split())
    try:
        _core.VectorEnv(gpuplace.config.scenario_of("default"), 1_000_000_000_000, 1, "same_step")
        raise AssertionError("a vector env of 10^12 envs was made")
    except gpuplace.ConfigError as e:
        msg = str(e)
    quoted = msg[:msg.index(", more than this machine's")]  # the machine's memory differs from machine to machine
    assert quoted in doc, quoted
    huge = {"topology": {"preset": "custom", "racks": 100, "nodes_per_rack": 125, "gpus_per_node": 8},
            "workload": {"kind": "synthetic", "num_jobs": 2000}}
    try:
        gpuplace.run_episode(huge, "pack", seed=1, record=True)
        raise AssertionError("an episode of 100,000 GPUs was recorded")
    except gpuplace.ConfigError as e:
        msg = str(e)
    quoted = msg[:msg.index(" (600041 floats")]
    assert quoted in doc, quoted

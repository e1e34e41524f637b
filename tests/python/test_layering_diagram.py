"""tests/layering/diagram.py, the check of docs/architecture.md's layer diagram: it passes on the
repository, and on a small made-up repository it names a header in no layer and an include of a
layer above."""

import importlib.util
import pathlib

_ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("diagram", _ROOT / "tests" / "layering" / "diagram.py")
diagram = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(diagram)


def test_the_repository_agrees_with_its_diagram():
    assert diagram.check(str(_ROOT)) == []


def test_a_wrong_diagram_is_named(tmp_path):
    inc = tmp_path / "include" / "gpuplace"
    (inc / "detail").mkdir(parents=True)
    (inc / "impl").mkdir()
    (inc / "env.hpp").write_text('#include "detail/rng.hpp"\n#include "impl/env_inl.hpp"\n')
    (inc / "impl" / "env_inl.hpp").write_text('#include "../env.hpp"\n')
    (inc / "detail" / "rng.hpp").write_text('#include "../env.hpp"\n')
    (inc / "stray.hpp").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text("# A\n\n```\nenv      env.hpp (the env)\nleaves   detail/\n```\n")
    assert diagram.check(str(tmp_path)) == [
        "stray.hpp: in no layer of docs/architecture.md's diagram",
        "detail/rng.hpp (leaves) includes env.hpp (env), a layer above it",
    ]

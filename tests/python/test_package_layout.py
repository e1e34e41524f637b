"""The package's module graph: no import cycles (top-level or inside functions), and no module
imports another module's private (underscore) names."""

import ast
import os

import gpuplace

PKG = os.path.dirname(gpuplace.__file__)


def _imports():
    """module -> [(imported module, names)] for every relative import in the package's sources."""
    graph = {}
    for f in sorted(os.listdir(PKG)):
        if not f.endswith(".py"):
            continue
        mod = f[:-3]
        with open(os.path.join(PKG, f), encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), f)
        edges = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    edges.append((node.module.split(".")[0], [a.name for a in node.names]))
                else:  # from . import x
                    edges.extend((a.name, []) for a in node.names)
        graph[mod] = edges
    return graph


def test_no_import_cycles():
    graph = {m: sorted({t for t, _ in e if t != "_core"}) for m, e in _imports().items()}
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import cycle: " + " -> ".join(path + [m])
        state[m] = "open"
        for t in graph.get(m, []):
            visit(t, path + [m])
        state[m] = "done"

    for m in graph:
        visit(m, [])


def test_no_private_names_cross_modules():
    bad = [f"{m} imports {n} from {t}" for m, edges in _imports().items() for t, names in edges
           for n in names if n.startswith("_") and t != "_core"]
    assert bad == []

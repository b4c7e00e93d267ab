"""The package's layers: folders import only from folders below them, and no module imports
itself back through others (no import cycles), counting imports inside functions too.

A module's layer is its folder (``auditor/stats/levels.py`` -> ``stats``); the modules at the
top of the package are the entry points (``api``, ``cli``, ``runner``...), above every folder,
except ``errors``, which is below every folder. Imports under ``if TYPE_CHECKING:`` are
annotations only: they may name a higher layer but still count as edges of a cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import auditor

ROOT = Path(auditor.__file__).resolve().parent

# Bottom to top. A module may import from its own layer and from the layers before it.
# The engines (the measuring operations) lie below every check.
LAYERS = ["errors", "core", "report", "integrations", "loading", "stats", "codescan", "engines",
          "judging", "probes", "detectors", "signoff", "entry"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join(("auditor",) + parts)
    return name.removesuffix(".__init__")


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "entry"  # the package itself (``from auditor import __version__``)
    if (ROOT / parts[1]).is_dir():
        return parts[1]
    return "errors" if parts[1] == "errors" else "entry"


def imports(path: Path, modules: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, under TYPE_CHECKING) for every auditor import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "auditor":
            for alias in node.names:  # `from auditor.report import output` imports a module
                sub = f"{node.module}.{alias.name}"
                names.append(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "auditor"]
        found += [(n, node.lineno, id(node) in typing_only) for n in names]
    return found


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    files = {module_name(p): p for p in ROOT.rglob("*.py")}
    modules = set(files)
    return {m: [(d, line, t) for d, line, t in imports(p, modules)
                if d != m and d != "auditor"]  # the root package holds only __version__/audit
            for m, p in files.items()}


def test_every_module_has_a_known_layer():
    assert {layer_of(m) for m in graph()} <= set(LAYERS)


def test_no_module_imports_from_a_higher_layer():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = [f"{m}:{line} imports {d} ({layer_of(m)} < {layer_of(d)})"
              for m, deps in graph().items() for d, line, typing_only in deps
              if not typing_only and rank[layer_of(d)] > rank[layer_of(m)]]
    assert upward == []


def private_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, private name, line) of every ``from auditor.x import _name`` in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, a.name, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
            and node.module.split(".")[0] == "auditor"
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]


def test_no_private_name_is_imported_across_layers(tmp_path):
    crossing = [f"{module_name(p)}:{line} imports {name} from {d}"
                for p in ROOT.rglob("*.py") for d, name, line in private_imports(p)
                if layer_of(d) != layer_of(module_name(p))]
    assert crossing == []
    planted = tmp_path / "planted.py"  # the scan sees one when there is one
    planted.write_text("def f():\n    from auditor.stats.drift import _as_float, prepare\n")
    assert private_imports(planted) == [("auditor.stats.drift", "_as_float", 2)]


def test_there_is_no_import_cycle():
    g = {m: {d for d, _, _ in deps} for m, deps in graph().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert cycles == []

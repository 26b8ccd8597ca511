"""Import layering: a layer imports only the layers under it, and no module imports itself back.

Every module under ``memgraph/`` and ``providers/`` (installed as
``memgraph.providers``) is parsed with :mod:`ast`; every import counts, at module
level, inside functions and under ``if TYPE_CHECKING:`` alike (a function-level
import that hides a cycle is still a cycle). ``from package import name`` counts
as importing the submodule ``package.name`` when there is one. Python also runs
each parent package's ``__init__`` on import; those implicit edges are left out,
which is why the layer folders' ``__init__.py`` files hold only a docstring
(``cli`` and ``store`` re-export their own modules).

The contracts are the table below; docs/ARCHITECTURE.md ("Layers") explains it.
A new folder gets a row here before it gets modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent

BELOW_ENGINE = ("foundation", "llm_calls", "graph", "retrieval", "store", "faces", "view page")
BELOW_TOP = (*BELOW_ENGINE, "engine", "conversation", "admin")
TOP = (*BELOW_TOP, "public API")
FACES = ("mcp", "integrations", "view", "importing", "portable")

# layer           its modules (a module and everything under it)   may import, besides itself
CONTRACTS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("foundation",   ("memgraph.errors", "memgraph.models", "memgraph.clock",
                      "memgraph.config", "memgraph.scope", "memgraph.text",
                      "memgraph.dates", "memgraph.holidays", "memgraph.speakers",
                      "memgraph.attributes",
                      "memgraph.answer_kinds", "memgraph.background",
                      "memgraph.id_column", "memgraph.chatter",
                      "memgraph.sums"),  ()),
    ("llm_calls",    ("memgraph.llm_calls",),      ("foundation",)),
    ("graph",        ("memgraph.graph",),          ("foundation", "llm_calls")),
    ("retrieval",    ("memgraph.retrieval",),      ("foundation", "llm_calls", "graph")),
    ("store",        ("memgraph.store",),          ("foundation", "graph", "retrieval")),
    ("faces",        ("memgraph.faces",),          ("foundation", "graph", "retrieval")),
    # The graph view's payload and page, which Memory.view() hands out: foundation only.
    ("view page",    ("memgraph.view.data", "memgraph.view.html"), ("foundation",)),
    ("engine",       ("memgraph.engine",),         BELOW_ENGINE),
    ("conversation", ("memgraph.conversation",),   (*BELOW_ENGINE, "engine")),
    ("admin",        ("memgraph.admin",),          (*BELOW_ENGINE, "engine")),
    ("public API",   ("memgraph",),                BELOW_TOP),  # memgraph/__init__.py only
    # The faces at the top: each may use the public API and every layer under it,
    # and none imports another; the command line gathers them (and nothing imports
    # the CLI but ``python -m memgraph``).
    ("cli",          ("memgraph.cli",),            (*TOP, *FACES)),
    ("mcp",          ("memgraph.mcp",),            TOP),
    ("integrations", ("memgraph.integrations",),   TOP),
    ("view",         ("memgraph.view",),           TOP),
    ("importing",    ("memgraph.importing",),      TOP),
    ("portable",     ("memgraph.portable",),       TOP),
    ("__main__",     ("memgraph.__main__",),       ("cli",)),
    # Old names of moved modules: each hands out the moved module (by name, at run time).
    ("moved",        ("memgraph.core", "memgraph.parsing"), ()),
    # Providers plug in through the seam only (entries may name single modules).
    ("providers",    ("memgraph.providers",),      ("foundation", "memgraph.llm_calls.provider",
                                                    "memgraph.llm_calls.prompts")),
]  # fmt: skip

ALLOWED_CYCLES: dict[frozenset[str], str] = {}
"""Import cycles accepted on purpose, each with its reason. None today; keep it that way."""

LAYER_OF_PREFIX = {prefix: layer for layer, prefixes, _ in CONTRACTS for prefix in prefixes}
ALLOWED = {layer: set(allowed) | {layer} for layer, _, allowed in CONTRACTS}

Edge = tuple[str, str, str]  # importer, imported, "path:line"


def module_files() -> dict[str, Path]:
    """Every module's dotted name and its file."""
    found: dict[str, Path] = {}
    for top, package in (("memgraph", "memgraph"), ("providers", "memgraph.providers")):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT / top).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imported_names(module: str, path: Path) -> Iterator[tuple[str, list[str], int]]:
    """``(module, [names], line)`` for every import statement anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base, [alias.name for alias in node.names], node.lineno


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    """Every import of one memgraph module by another."""
    edges: list[Edge] = []
    for module, path in modules.items():
        where = path.relative_to(ROOT)
        for target, names, line in imported_names(module, path):
            if target != "memgraph" and not target.startswith("memgraph."):
                continue
            targets = {f"{target}.{name}" for name in names if f"{target}.{name}" in modules}
            if not targets or len(targets) < len(names):
                targets.add(target)
            edges.extend((module, t, f"{where}:{line}") for t in sorted(targets) if t != module)
    return edges


def layer_of(module: str) -> str | None:
    """The layer of the longest prefix in CONTRACTS (``memgraph`` itself only names ``__init__``)."""
    parts = module.split(".")
    for size in range(len(parts), 1, -1):
        layer = LAYER_OF_PREFIX.get(".".join(parts[:size]))
        if layer is not None:
            return layer
    return LAYER_OF_PREFIX.get(module)


def allows(importer: str, imported: str) -> bool:
    allowed = ALLOWED[layer_of(importer) or "?"]
    return layer_of(imported) in allowed or any(
        imported == entry or imported.startswith(entry + ".") for entry in allowed
    )


def violations(edges: list[Edge]) -> list[str]:
    return [
        f"{where}: {importer} ({layer_of(importer)}) imports {imported} ({layer_of(imported)}); "
        f"{layer_of(importer)} may import only {sorted(ALLOWED[layer_of(importer) or '?'])}"
        for importer, imported, where in edges
        if not allows(importer, imported)
    ]


def cycles(edges: list[Edge]) -> list[str]:
    graph = nx.DiGraph()
    for importer, imported, where in edges:
        graph.add_edge(importer, imported, where=where)
    found = []
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2 or frozenset(component) in ALLOWED_CYCLES:
            continue
        loop = nx.find_cycle(graph.subgraph(component))
        steps = [f"{a} -> {b} ({graph.edges[a, b]['where']})" for a, b in loop]
        found.append("import cycle:\n    " + "\n    ".join(steps))
    return found


MODULES = module_files()
EDGES = import_edges(MODULES)


def test_the_scan_sees_the_whole_package() -> None:
    assert len(MODULES) > 60
    assert ("memgraph.engine.memory", "memgraph.engine.core") in {(a, b) for a, b, _ in EDGES}


def test_every_module_belongs_to_a_layer() -> None:
    missing = [module for module in MODULES if layer_of(module) is None]
    assert not missing, f"add these modules' folder to CONTRACTS in {__name__}: {missing}"


def test_no_layer_imports_a_layer_it_may_not() -> None:
    problems = violations(EDGES)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_no_import_cycles() -> None:
    problems = cycles(EDGES)
    assert not problems, "\n".join(problems)


def test_the_checks_catch_a_violation_and_a_cycle() -> None:
    upward = ("memgraph.graph.graph", "memgraph.engine.core", "memgraph/graph/graph.py:1")
    back = ("memgraph.engine.core", "memgraph.graph.graph", "memgraph/engine/core.py:1")
    (message,) = violations([upward])
    assert "memgraph.graph.graph (graph) imports memgraph.engine.core (engine)" in message
    assert "memgraph/graph/graph.py:1" in message
    assert violations([("memgraph.__main__", "memgraph.cli", "x:1")]) == []
    assert violations([("memgraph.engine.core", "memgraph.cli", "x:1")])
    assert violations([("memgraph.providers.mock", "memgraph.conversation.thread", "x:1")])
    assert layer_of("memgraph") == "public API" and layer_of("memgraph.newmodule") is None
    (loop,) = cycles([upward, back])
    assert "memgraph/engine/core.py:1" in loop and "memgraph/graph/graph.py:1" in loop

"""What engine/ and crabtui/ import, read from their source (ast), not by importing them: no
module imports itself back through others, so each can be read, tested and moved on its own."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of ``packages`` under ``root``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, found: dict[str, Path]) -> dict[str, int]:
    """The modules of ``found`` the module imports, each with the line of its first import.
    Every import statement counts, a function's too; ``from a import b`` imports module ``a.b``
    when there is one, else a name of ``a``; relative imports are made absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            named = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in found else base for alias in node.names]
        else:
            continue
        for target in named:
            while target and target not in found:  # ``import a.b.c`` of a name: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                targets[target] = min(targets.get(target, node.lineno), node.lineno)
    return targets


def import_graph(found: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {module it imports: line}."""
    return {name: imports(name, path, found) for name, path in found.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle of imports (a -> b -> ... -> a) per group of modules that import one another."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(sorted(group), graph) for group in groups]


def _circle(group: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest circle through the group's first module, for the message."""
    members = set(group)
    start = group[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    return paths[v] + [start]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    following.append(w)
        frontier = following
    return group


def describe(circle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(circle, circle[1:])) + f" -> {circle[-1]}"


def test_engine_and_crabtui_have_no_import_circles():
    graph = import_graph(modules(ROOT, ("engine", "crabtui")))
    # the reader sees imports at the top, in functions and under TYPE_CHECKING alike
    assert "engine.dagman.node" in graph["engine.dagman.runner"]
    assert "engine.crab.ap.joblog" in graph["engine.crab.client.status"]  # imported in a function
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(describe(c, graph) for c in found)


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from pkg.b import helper\n")
    (tmp_path / "pkg" / "b.py").write_text("def helper():\n    from . import c\n")
    (tmp_path / "pkg" / "c.py").write_text("import pkg.a\n")
    (tmp_path / "pkg" / "d.py").write_text("from pkg import a, b\n")  # imports both, in no circle
    graph = import_graph(modules(tmp_path, ("pkg",)))
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert describe(cycles(graph)[0], graph) == "pkg.a (line 1) -> pkg.b (line 2) -> pkg.c (line 1) -> pkg.a"

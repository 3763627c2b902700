"""What engine/ and crabtui/ import, read from their source (ast), not by importing them.

No module imports itself back through others, so each can be read, tested and moved on its own;
and each place where CRAB code runs (engine/crab/client, taskworker, ap, wn, grid) imports only
what its package docstring allows: the access point and the worker node run under a bare
python3, with nothing installed but the standard library (and, on the access point, the HTCondor
bindings), so everything they import, and everything that imports in turn, must keep to that."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

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
    """What the module imports, each with the line of its first import: modules of ``found`` by
    their names, any other by its top-level name (``os``, ``htcondor2``).  Every import statement
    counts, a function's and one under TYPE_CHECKING too; ``from a import b`` imports module
    ``a.b`` when there is one, else a name of ``a``; relative imports are made absolute."""
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
            module = target
            while module and module not in found:  # ``import a.b.c`` of a name: its module
                module = module.rpartition(".")[0]
            module = module or target.partition(".")[0]
            if module != name:
                targets[module] = min(targets.get(module, node.lineno), node.lineno)
    return targets


def import_graph(found: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {module of ``found`` it imports: line}."""
    return {name: {t: line for t, line in imports(name, path, found).items() if t in found}
            for name, path in found.items()}


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


# ------------------------------------------------------------------------------------ the places of engine/crab

CRAB = "engine.crab"
PLACES = ("client", "taskworker", "ap", "wn", "grid")
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
BINDINGS = frozenset({"htcondor2", "classad2"})  # what an access point has of HTCondor
HELPERS = frozenset({"engine.atomic", "engine.crashpoint", "engine.hints", "engine.state", "engine.tomlfile", f"{CRAB}.jsonfile"})  # standard library only
WN_FORMATS = frozenset(f"{CRAB}.wn.{m}" for m in ("fjr", "jobad", "job_input", "failure_plan"))
USER_LOG = "engine.schedd.local.userlog"
# DAGMan's debug log, which alone tells of a PRE script's failure, and the node states it names.
DAGMAN_OUT = frozenset({"engine.dagman.dagman_out", "engine.dagman.node_status"})
# The TaskWorker code PreDAG runs again on the access point, as CRAB ships its TaskWorker to the schedd.
SHIPPED_TASKWORKER = frozenset(f"{CRAB}.taskworker.{m}" for m in ("dagman_creator", "splitting", "automatic",
                                                                   "datasets", "stand_ins", "parents", "task_input"))


def packages_of(names: set[str]) -> set[str]:
    """The modules and every package above them (a package's ``__init__`` runs first)."""
    return {".".join(name.split(".")[:i]) for name in names for i in range(1, name.count(".") + 2)}


def keeps_to(roots: set[str], allowed: set[str], external: frozenset[str], found: dict[str, Path],
             rule: str) -> list[str]:
    """Where the modules ``roots``, or anything they import in turn, import a module of the tree
    outside ``allowed`` (or the packages above them) or any other outside ``external``, as
    "a (line n) imports b: rule"."""
    allowed = packages_of(allowed | roots)
    broken, seen, pending = set(), set(), sorted(packages_of(roots))
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for target, line in imports(name, found[name], found).items():
            ours = target in found
            if (ours and target not in allowed) or (not ours and target not in external):
                broken.add(f"{name} (line {line}) imports {target}: {rule}")
            elif ours:
                pending.append(target)
    return sorted(broken)


@pytest.fixture(scope="module")
def engine_modules() -> dict[str, Path]:
    return modules(ROOT, ("engine",))


def in_place(found: dict[str, Path], where: str) -> set[str]:
    return {name for name in found if name.startswith(f"{CRAB}.{where}.") or name == f"{CRAB}.{where}"}


def test_every_crab_module_is_in_one_place(engine_modules):
    loose = [name for name in engine_modules if name.startswith(f"{CRAB}.") and name.split(".")[2] not in PLACES
             and name not in HELPERS]
    assert not loose, f"modules of engine/crab in none of its places {PLACES}: {loose}"
    assert all(in_place(engine_modules, where) for where in PLACES)


def test_the_worker_node_imports_the_standard_library_and_itself(engine_modules):
    found = engine_modules
    assert keeps_to(in_place(found, "wn"), in_place(found, "wn") | HELPERS, STDLIB, found,
                    "the worker node imports the standard library, its own modules and the helpers") == []


def test_the_worker_nodes_shared_formats_import_no_other_worker_node_module(engine_modules):
    assert keeps_to(set(WN_FORMATS), set(WN_FORMATS) | HELPERS, STDLIB, engine_modules,
                    "a shared format imports only the standard library, the other formats and the helpers") == []


def test_the_access_point_imports_the_standard_library_bindings_and_shared_formats(engine_modules):
    found = engine_modules
    allowed = in_place(found, "ap") | WN_FORMATS | SHIPPED_TASKWORKER | HELPERS | DAGMAN_OUT | {USER_LOG}
    assert keeps_to(in_place(found, "ap"), allowed, STDLIB | BINDINGS, found,
                    "the access point imports the standard library, htcondor2 and classad2, its own modules, "
                    "the worker node's formats, the user log, dagman.out, the helpers and the TaskWorker code PreDAG runs") == []


def test_the_helpers_import_only_the_standard_library(engine_modules):
    assert keeps_to(set(HELPERS), set(HELPERS), STDLIB, engine_modules, "a helper imports the standard library") == []


def test_engine_never_imports_the_ui(engine_modules):
    ui = [f"{name} (line {line}) imports {target}" for name, path in engine_modules.items()
          for target, line in imports(name, path, engine_modules).items()
          if target.split(".")[0] in ("crabtui", "textual", "rich")]
    assert ui == []


def test_a_forbidden_import_is_found_where_it_hides(tmp_path):
    """The rules see an import a module away, in a function, and in a package's __init__."""
    for path, text in {"engine/__init__.py": "", "engine/crab/__init__.py": "", "engine/crab/ap/__init__.py": "",
                       "engine/crab/wn/__init__.py": "import textual\n",
                       "engine/crab/wn/job.py": "from engine.crab.wn import report\n",
                       "engine/crab/wn/report.py": "def write():\n    import sqlite3\n    import engine.crab.ap.x\n",
                       "engine/crab/ap/x.py": ""}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    found = modules(tmp_path, ("engine",))
    assert keeps_to({"engine.crab.wn.job"}, in_place(found, "wn"), frozenset({"sqlite3"}), found, "rule") == [
        "engine.crab.wn (line 1) imports textual: rule",
        "engine.crab.wn.report (line 3) imports engine.crab.ap.x: rule"]

"""The package's structure, drawn from its imports (ast): no import cycles, and the flat core at
the top of judgeflow/ never imports a wing folder (backends/, runs/, calibration/, integrations/, cli/).

Imports under `if TYPE_CHECKING:` are annotations only and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judgeflow"
WINGS = ("backends", "runs", "calibration", "integrations", "cli")
# the public surface and the entry points may import anything
EDGE = {"judgeflow", "judgeflow.__main__", "judgeflow._moved", "judgeflow.testing", "judgeflow.pytest_plugin"}
# cycles still to break (in files other helpers are editing right now); the list may only shrink
KNOWN_CYCLES: list[list[str]] = []


def modules(root: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """{module: judgeflow modules it imports (anywhere in the file, including inside functions)}."""
    mods = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        base = mod if is_pkg else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    b = base
                    for _ in range(node.level - 1):
                        b = b.rpartition(".")[0]
                    src = b + ("." + node.module if node.module else "")
                else:
                    src = node.module or ""
                targets = [src] + [f"{src}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                if t == "judgeflow" or t.startswith("judgeflow."):
                    r = resolve(t)
                    if r and r != mod:
                        graph[mod].add(r)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def room(mod: str) -> str:
    parts = mod.split(".")
    if mod in EDGE:
        return "edge"
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else "core"


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, bs in graph.items() for b in bs if room(a) == "core" and room(b) in WINGS)


def test_no_import_cycles():
    assert cycles(import_graph()) == KNOWN_CYCLES


def test_the_core_never_imports_a_wing():
    assert upward_imports(import_graph()) == []


def test_the_checks_can_fail(tmp_path):
    pkg = tmp_path / "judgeflow"
    (pkg / "runs").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "runs" / "__init__.py").write_text("")
    (pkg / "judge.py").write_text("from .runs.store import RunStore\n")
    (pkg / "runs" / "store.py").write_text("def f():\n    from ..judge import Judge\n")
    (pkg / "items.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .runs import store\n")
    graph = import_graph(pkg)
    assert cycles(graph) == [["judgeflow.judge", "judgeflow.runs.store"]]
    assert upward_imports(graph) == [("judgeflow.judge", "judgeflow.runs.store")]

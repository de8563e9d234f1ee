"""The product's import graph, read from source (AST, nothing imported): modules by dotted name,
what each imports anywhere in its file, and the circles among them. The house tests and the
floor-plan test share it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "bot", "circus")


def module_files(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Every module under the packages, by dotted name → its file relative to root."""
    found: dict[str, str] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = rel.as_posix()
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an `from … import` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(source: str, module: str, is_package: bool, known: Mapping[str, str]) -> set[str]:
    """The product modules one module imports anywhere in its file: at the top, inside
    functions and under `if TYPE_CHECKING:` alike (a circle for the type checker is a circle
    for the reader). `from pkg import name` counts as pkg.name when that is a module."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            for alias in node.names:
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {t for t in targets if t in known and t != module}


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """File → the product files it imports."""
    known = module_files(root, packages)
    return {
        rel: {
            known[t]
            for t in imports_of(
                (root / rel).read_text("utf-8"), name, rel.endswith("__init__.py"), known
            )
        }
        for name, rel in known.items()
    }


def circles(graph: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components with more than one file (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(circle: frozenset[str]) -> str:
    return " ↔ ".join(sorted(circle))

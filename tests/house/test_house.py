"""House rules a reader can rely on: no import circle among the product's modules, no
function longer than a screen, no dead code.

Each guard walks the source of engine/, bot/ and circus/ itself (AST, nothing imported) and fails
naming the files or functions at fault. What is wrong today sits in an explicit allow-list
(KNOWN_CIRCLES, LONG_FUNCTIONS) that can only shrink: an entry that no longer holds fails too,
so the list is emptied as the code is fixed, never silently outgrown.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from housekit import REPO, circles, describe, import_graph, module_files

MAX_FUNCTION_LINES = 60

# Import circles tolerated, each as the sorted files in it: none. Keep it empty.
KNOWN_CIRCLES: set[frozenset[str]] = set()

# Functions tolerated over MAX_FUNCTION_LINES, "file:qualified.name" → the most lines allowed
# until it is split: none. Keep it empty.
LONG_FUNCTIONS: dict[str, int] = {}


# --- function length ----------------------------------------------------------------------


def function_lengths(source: str, rel: str) -> dict[str, int]:
    """Every function and method in a file, "file:Outer.name" → its lines (def to last line,
    decorators left out), nested functions counted on their own as well."""
    lengths: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lengths[f"{rel}:{name}"] = (child.end_lineno or child.lineno) - child.lineno + 1
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return lengths


def long_functions(root: Path, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    found: dict[str, int] = {}
    for rel in module_files(root).values():
        lengths = function_lengths((root / rel).read_text("utf-8"), rel)
        found.update({name: n for name, n in lengths.items() if n > limit})
    return found


def length_problems(found: Mapping[str, int], allowed: Mapping[str, int]) -> list[str]:
    """What the length guard says, one line per function at fault."""
    problems = [
        f"{name} is {n} lines (over {MAX_FUNCTION_LINES}): split it"
        for name, n in sorted(found.items())
        if name not in allowed
    ]
    problems += [
        f"{name} grew to {found[name]} lines (allowed {cap} until it is split)"
        for name, cap in sorted(allowed.items())
        if name in found and found[name] > cap
    ]
    problems += [
        f"{name} is no longer over {MAX_FUNCTION_LINES} lines: take it off LONG_FUNCTIONS"
        for name in sorted(allowed)
        if name not in found
    ]
    return problems


# --- the guards ---------------------------------------------------------------------------


def test_no_new_import_circle() -> None:
    found = circles(import_graph(REPO))
    new = sorted(describe(c) for c in found - KNOWN_CIRCLES)
    assert not new, "import circle(s) among the product's modules:\n" + "\n".join(new)


def test_known_circles_still_exist() -> None:
    gone = sorted(describe(c) for c in KNOWN_CIRCLES - circles(import_graph(REPO)))
    assert not gone, "no longer circles: take them off KNOWN_CIRCLES:\n" + "\n".join(gone)


def test_no_function_over_sixty_lines() -> None:
    problems = length_problems(long_functions(REPO), LONG_FUNCTIONS)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_vulture_finds_no_dead_code() -> None:
    """The same command CI runs (.ci/run); pyproject's [tool.vulture] says where and how sure."""
    run = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, "vulture found dead code:\n" + run.stdout + run.stderr


# --- the guards can fail ------------------------------------------------------------------


def plant(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"engine/__init__.py": "", "engine/a.py": "import engine.b\n", "engine/b.py": ""},
            set(),
            id="one-direction",
        ),
        pytest.param(
            {
                "engine/__init__.py": "",
                "engine/a.py": "from engine import b\n",
                "engine/b.py": "from . import a\n",
            },
            {frozenset({"engine/a.py", "engine/b.py"})},
            id="top-level-and-relative",
        ),
        pytest.param(
            {
                "engine/__init__.py": "",
                "engine/a.py": "from engine.b import thing\n",
                "engine/b.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from engine.c import Other\n",
                "engine/c.py": "def f():\n    from .a import g\n",
            },
            {frozenset({"engine/a.py", "engine/b.py", "engine/c.py"})},
            id="type-checking-and-function-level",
        ),
        pytest.param(
            {
                "engine/__init__.py": "from engine.a import A\n",
                "engine/a.py": "A = 1\n",
                "bot/__init__.py": "",
                "bot/x.py": "from engine import A\nfrom bot import y\n",
                "bot/y.py": "from bot.x import B\n",
            },
            {frozenset({"bot/x.py", "bot/y.py"})},
            id="across-packages-names-not-modules",
        ),
    ],
)
def test_circle_detector_finds_planted_circles(
    tmp_path: Path, files: dict[str, str], expected: set[frozenset[str]]
) -> None:
    root = plant(tmp_path, files)
    packages = sorted({rel.split("/")[0] for rel in files})
    assert circles(import_graph(root, packages)) == expected


def test_circle_message_names_the_files() -> None:
    circle = frozenset({"bot/y.py", "bot/x.py"})
    assert describe(circle) == "bot/x.py ↔ bot/y.py"


LONG = "def long():\n" + "    x = 1\n" * 61
SHORT = "def short():\n    return 1\n"


@pytest.mark.parametrize(
    ("source", "allowed", "problems"),
    [
        pytest.param(SHORT, {}, [], id="short-passes"),
        pytest.param(
            LONG, {}, ["engine/m.py:long is 62 lines (over 60): split it"], id="long-fails"
        ),
        pytest.param(LONG, {"engine/m.py:long": 62}, [], id="allow-listed"),
        pytest.param(
            LONG,
            {"engine/m.py:long": 61},
            ["engine/m.py:long grew to 62 lines (allowed 61 until it is split)"],
            id="grew-past-its-allowance",
        ),
        pytest.param(
            SHORT,
            {"engine/m.py:short": 70},
            ["engine/m.py:short is no longer over 60 lines: take it off LONG_FUNCTIONS"],
            id="stale-entry",
        ),
        pytest.param(
            "class K:\n    async " + LONG.replace("\n    ", "\n        "),
            {},
            ["engine/m.py:K.long is 62 lines (over 60): split it"],
            id="method-by-qualified-name",
        ),
    ],
)
def test_length_guard(
    tmp_path: Path, source: str, allowed: dict[str, int], problems: list[str]
) -> None:
    root = plant(tmp_path, {"engine/__init__.py": "", "engine/m.py": source})
    assert length_problems(long_functions(root), allowed) == problems

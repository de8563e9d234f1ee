"""bot/ is a house with floors: app.py composes the command modules, the commands stand on the
shared helpers (gate, replies, files, edge, host) and the per-scene Stage, and nothing below
looks back up — no import circle, not even one made only for type hints."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.scenes import template_for

BOT = Path(__file__).resolve().parents[1] / "bot"
COMMAND_MODULES = {"commands", "harvest", "stagecraft", "cast", "scenes", "context", "backstory"}


def bot_imports(source: str) -> set[str]:
    """The bot modules `source` imports anywhere (top level, in a function, under TYPE_CHECKING)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "bot":
                found |= {a.name for a in node.names}
            elif node.module.startswith("bot."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("bot.")}
    return found


def graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in BOT.glob("*.py") if p.stem != "__init__"}
    return {m: bot_imports(p.read_text("utf-8")) & set(modules) for m, p in modules.items()}


def circle(edges: dict[str, set[str]]) -> list[str]:
    """One import circle of `edges` (module -> what it imports), or []."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        path.pop()
        return []

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return []


@pytest.mark.parametrize(
    "edges, found",
    [
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_a_circle_is_found_and_a_ladder_is_not(edges, found):
    assert circle(edges) == found


def test_bot_has_no_import_circle():
    assert circle(graph()) == []


def test_only_the_package_entry_imports_app_and_the_stage_imports_no_command():
    edges = graph()
    assert [m for m, imports in edges.items() if "app" in imports] == []
    assert edges["stage"] & COMMAND_MODULES == set()
    # Command modules stand side by side; only /scene takes in its two subcommand modules.
    among = {m: edges[m] & COMMAND_MODULES for m in COMMAND_MODULES}
    assert {m: sorted(found) for m, found in among.items() if found} == {
        "scenes": ["backstory", "context"]
    }


@pytest.mark.parametrize(
    "chosen, offered, template",
    [
        ("wake", ["interrogation", "wake"], "wake"),
        (None, ["interrogation", "wake"], "interrogation"),
        (None, ["wake", "zoo"], "wake"),
        (None, [], "interrogation"),
    ],
)
def test_a_new_scene_starts_from_the_chosen_template_else_the_default_else_the_first(
    chosen, offered, template
):
    assert template_for(chosen, offered) == template

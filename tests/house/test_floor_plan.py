"""The floor plan is the folders: each wing of engine/ and bot/ imports only the wings below it.

engine/ stands on a small top (config, errors, events, clock, vocabulary, redact, catalog/); its wings, from the
ground up, are listed in ENGINE_WINGS; `engine/__init__.py` is the face that composes them for
the frontends. bot/ stands on its top-level helpers; its wings are listed in BOT_WINGS; app.py
composes them. An arrow from a lower wing to a higher one, from the top into any wing, or into a
face, fails here naming both files — so two wings can never import each other both ways.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from housekit import REPO, import_graph

ENGINE_TOP = ("config", "errors", "events", "clock", "vocabulary", "redact", "catalog")
ENGINE_WINGS = (
    "door",  # the model door: calls, the gateway, caching, metering, tokens, metrics
    "folder",  # the scene folder on disk and its vocabulary (turns, stage blocks, souls)
    "script",  # a writer's screenplay file (Fountain, FDX) read, and one scene as a record
    "reply",  # reading a model's reply into a turn
    "providers",  # in-process models: embedded, scripted
    "turn",  # who speaks, what each role is shown, the performance
    "spend",  # budgets, the call log, the daily ledger
    "takes",  # saved takes read back
    "harvest",  # reports, diffs, picks, exports
    "voice",  # the table read: script, engines, line cache, audio
    "rehearsal",  # the Rehearsal and its command groups
    "continuity",  # the next scene
    "probe",  # check-model
)
BOT_TOP = ("errors", "i18n", "render", "serial", "binding", "shards", "server_folders")
BOT_WINGS = (
    "thread",  # a scene as it plays in its thread: events rendered, personas, DMs, votes
    "interaction",  # answering one interaction: gate, host, options, forms, replies, the edge
    "commands",  # the slash commands
    "panel",  # the control panel: one more way to call the commands
)
# Composition roots: they may import every floor, and nothing imports them but the package.
ROOTS = {"engine/__init__.py", "bot/__init__.py", "bot/app.py"}


def floor_of(rel: str, top: tuple[str, ...], wings: tuple[str, ...]) -> tuple[int, str]:
    """(floor, name) of a product file: 0 for the top, 1… for the wings from the ground up."""
    parts = Path(rel).with_suffix("").parts[1:]
    head = parts[0] if parts else "__init__"
    if head in wings:
        return wings.index(head) + 1, head
    if head in top:
        return 0, "the top"
    raise AssertionError(f"{rel} is in no wing and not in the top: place it in the floor plan")


def violations(graph: dict[str, set[str]], package: str, top, wings) -> list[str]:
    """Every arrow of `package` that runs up the floor plan, as "a → b: why"."""
    found = []
    for rel, targets in sorted(graph.items()):
        if not rel.startswith(f"{package}/") or rel in ROOTS:
            continue
        floor, name = floor_of(rel, top, wings)
        for target in sorted(t for t in targets if t.startswith(f"{package}/")):
            if target in ROOTS:
                found.append(f"{rel} → {target}: nothing below the composition imports it")
                continue
            if target.endswith("/__init__.py") and Path(target).parent.name in wings:
                found.append(f"{rel} → {target}: a wing's __init__ is no module to import")
                continue
            their_floor, theirs = floor_of(target, top, wings)
            if their_floor > floor:
                found.append(f"{rel} → {target}: {name} (floor {floor}) looks up at {theirs}")
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(REPO, ("engine", "bot"))


def test_engine_wings_import_only_downward(graph) -> None:
    assert violations(graph, "engine", ENGINE_TOP, ENGINE_WINGS) == []


def test_bot_wings_import_only_downward(graph) -> None:
    assert violations(graph, "bot", BOT_TOP, BOT_WINGS) == []


def test_every_wing_is_a_folder_and_every_folder_a_wing() -> None:
    for package, top, wings in (("engine", ENGINE_TOP, ENGINE_WINGS), ("bot", BOT_TOP, BOT_WINGS)):
        folders = {p.parent.name for p in (REPO / package).glob("*/__init__.py")}
        assert folders == set(wings) | ({"catalog"} & set(top)), package


def test_a_wings_init_holds_only_its_docstring() -> None:
    """Frontends use the engine's face; a wing's __init__ exports nothing of its own."""
    for package, wings in (("engine", ENGINE_WINGS), ("bot", BOT_WINGS)):
        for wing in wings:
            text = (REPO / package / wing / "__init__.py").read_text("utf-8").strip()
            assert text.startswith('"""') and text.endswith('"""'), f"{package}/{wing}"
            assert text.count('"""') == 2, f"{package}/{wing}/__init__.py holds code"


def test_commands_stand_side_by_side(graph) -> None:
    """A command module does not lean on another, but for /scene's own subcommands, /scene
    next, which starts a scene the way /scene new does and runs it the way /run does, and
    /scene import, which opens its thread the way /scene new does."""
    among = {
        rel: sorted(t for t in targets if t.startswith("bot/commands/"))
        for rel, targets in graph.items()
        if rel.startswith("bot/commands/")
    }
    assert {rel: found for rel, found in among.items() if found} == {
        "bot/commands/scenes.py": ["bot/commands/backstory.py", "bot/commands/context.py"],
        "bot/commands/continuity.py": ["bot/commands/directing.py", "bot/commands/scenes.py"],
        "bot/commands/scripts.py": ["bot/commands/scenes.py"],
    }


@pytest.mark.parametrize(
    "files, found",
    [
        ({"engine/folder/a.py": "from engine.turn import b\n", "engine/turn/b.py": ""},
         ["engine/folder/a.py → engine/turn/b.py: folder (floor 2) looks up at turn"]),
        ({"engine/turn/b.py": "from engine.folder.a import x\n", "engine/folder/a.py": ""}, []),
        ({"engine/config.py": "def f():\n    from engine.door.llm import Models\n",
          "engine/door/llm.py": ""},
         ["engine/config.py → engine/door/llm.py: the top (floor 0) looks up at door"]),
        ({"engine/door/llm.py": "from engine import Rehearsal\n"},
         ["engine/door/llm.py → engine/__init__.py: nothing below the composition imports it"]),
        ({"engine/door/llm.py": "from engine.turn import casting\n", "engine/turn/casting.py": ""},
         ["engine/door/llm.py → engine/turn/casting.py: door (floor 1) looks up at turn"]),
    ],
)  # fmt: skip
def test_the_checker_sees_an_arrow_up_wherever_it_is(tmp_path: Path, files, found) -> None:
    files = {"engine/__init__.py": "", "engine/door/__init__.py": '""""""\n',
             "engine/folder/__init__.py": "", "engine/turn/__init__.py": "", **files}  # fmt: skip
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    planted = import_graph(tmp_path, ("engine",))
    assert violations(planted, "engine", ENGINE_TOP, ENGINE_WINGS) == found

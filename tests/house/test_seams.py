"""The seam between the engine and its frontends: bot/ and circus/ use `engine` only.

Everything a frontend may use is exported by engine/__init__.py; reads go through the frozen
`SceneView`, writes through `Rehearsal` commands and the store. These tests walk the frontends'
source and fail naming the file and line that crosses the seam. The engine's wings are its
insides: a frontend that names one (`engine.door`, `from engine import folder`) fails here.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scenekit import operator_config

import engine

REPO = Path(__file__).resolve().parents[2]
ENGINE = Path(engine.__file__).resolve().parent
FRONTENDS = ("bot", "circus")
# A rehearsal's insides: its loader, its store and the mutable state they hold.
INSIDES = {"files", "store", "state"}


def frontend_files() -> list[str]:
    return sorted(
        p.relative_to(REPO).as_posix() for d in FRONTENDS for p in (REPO / d).rglob("*.py")
    )


def engine_modules() -> set[str]:
    """Every module and package under engine/, as it would be imported."""
    found = set()
    for p in ENGINE.rglob("*.py"):
        parts = p.relative_to(ENGINE.parent).with_suffix("").parts
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found - {"engine"}


def crossings(rel: str) -> list[str]:
    """Where one frontend file steps past `engine`'s surface, as "file:line: what"."""
    tree = ast.parse((REPO / rel).read_text("utf-8"), rel)
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        where = f"{rel}:{at[0]}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "engine" or alias.name.startswith("engine."):
                    found.append(
                        (*at, f"{where}: `import {alias.name}` (write `from engine import X`)")
                    )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("engine."):
                found.append((*at, f"{where}: `from {node.module} import …` (a submodule)"))
            elif node.module == "engine":
                for alias in node.names:
                    if alias.name not in engine.__all__:
                        kind = "a submodule" if f"engine.{alias.name}" in engine_modules() else (
                            "not in engine.__all__"
                        )  # fmt: skip
                        found.append((*at, f"{where}: `from engine import {alias.name}` ({kind})"))
        elif isinstance(node, ast.Attribute) and node.attr in INSIDES:
            found.append((*at, f"{where}: `.{node.attr}` reaches into a rehearsal (use `.view()`)"))
    return [text for *_, text in sorted(found, key=lambda f: f[:2])]


def names_imported_by_frontends() -> set[str]:
    """Engine names any frontend file imports today (from `engine` or a submodule)."""
    names: set[str] = set()
    for rel in frontend_files():
        for node in ast.walk(ast.parse((REPO / rel).read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "engine":
                names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("rel", frontend_files())
def test_a_frontend_file_uses_the_engine_only_through_its_surface(rel: str) -> None:
    assert crossings(rel) == []


def test_the_checker_sees_every_way_across_the_seam(tmp_path: Path, monkeypatch) -> None:
    """The walker itself, on a file that crosses the seam every way it knows (a spec of it)."""
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "leaky.py").write_text(
        "from engine import Rehearsal, SceneView\n"
        "from engine import door, Soul\n"
        "from engine.folder.scene import SceneState\n"
        "import engine.folder.store\n"
        "def f(stage):\n"
        "    from engine.errors import CircusError\n"
        "    return stage.rehearsal.files, stage.rehearsal.state(), stage.rehearsal.store\n",
        "utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert crossings("bot/leaky.py") == [
        "bot/leaky.py:2: `from engine import door` (a submodule)",
        "bot/leaky.py:2: `from engine import Soul` (not in engine.__all__)",
        "bot/leaky.py:3: `from engine.folder.scene import …` (a submodule)",
        "bot/leaky.py:4: `import engine.folder.store` (write `from engine import X`)",
        "bot/leaky.py:6: `from engine.errors import …` (a submodule)",
        "bot/leaky.py:7: `.files` reaches into a rehearsal (use `.view()`)",
        "bot/leaky.py:7: `.state` reaches into a rehearsal (use `.view()`)",
        "bot/leaky.py:7: `.store` reaches into a rehearsal (use `.view()`)",
    ]


def test_the_surface_is_sorted_and_every_name_in_it_exists() -> None:
    assert engine.__all__ == sorted(set(engine.__all__)), "keep engine.__all__ sorted, once each"
    missing = [name for name in engine.__all__ if not hasattr(engine, name)]
    assert missing == []
    # …and nothing is exported by accident: every public name the package holds is listed.
    public = {n for n, v in vars(engine).items() if not n.startswith("_")}
    assert public - set(engine.__all__) <= engine_modules_short()


def test_the_lazy_face_loads_each_name_from_where_its_import_says() -> None:
    """engine/__init__.py names each export twice: an import the type checker reads, and the
    module its first use loads at run time (`_HOME`). Both must say the same."""
    tree = ast.parse((ENGINE / "__init__.py").read_text("utf-8"))
    declared, eager = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine"):
            for alias in node.names:
                where = node.module if alias.asname is None else f"{node.module}:{alias.name}"
                declared[alias.asname or alias.name] = where
                if node in tree.body:  # imported at once, not lazily
                    eager.add(alias.asname or alias.name)
    assert {n: w for n, w in declared.items() if n not in eager} == engine._HOME
    assert sorted([*engine._HOME, *eager]) == engine.__all__


def test_no_name_of_the_face_is_shadowed_by_a_module_of_the_same_name() -> None:
    """Importing engine/X.py sets the package's attribute X to that module: a face name that is
    also a module's name must be bound before (engine/__init__.py imports `redact` at once)."""
    code = (
        "import engine, engine.config, engine.errors, engine.events, engine.redact;"
        "import types; print([n for n in engine.__all__ "
        "if isinstance(getattr(engine, n), types.ModuleType)])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "[]", done.stderr


def test_importing_the_engine_loads_none_of_its_wings() -> None:
    code = "import sys, engine; print(sorted(m for m in sys.modules if m.startswith('engine.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "['engine.redact']", done.stderr  # a top module, no wing


def engine_modules_short() -> set[str]:
    """Submodules appear as attributes of the package once imported; they are not exports."""
    return {m.removeprefix("engine.") for m in engine_modules()}


def test_every_exported_name_is_used_by_a_frontend_or_documented() -> None:
    used = names_imported_by_frontends()
    doc = engine.__doc__ or ""
    idle = [n for n in engine.__all__ if n not in used and not re.search(rf"\b{n}\b", doc)]
    assert idle == [], "export only what a frontend uses, or say in the docstring why"


@pytest.mark.parametrize(
    "frontend",
    ["pending", "players", "usage", "posts", "run", "../discord", "a/b", "Discord", "", ".x"],
)
def test_a_frontend_file_can_never_be_one_of_the_engines_own(tmp_path: Path, frontend) -> None:
    """The door a frontend writes through opens on its own file only: never the turn journal,
    who plays whom, the usage log, nor a path outside .circus/."""
    with pytest.raises(ValueError):
        engine.write_frontend_file(tmp_path, frontend, {"x": 1})
    assert list(tmp_path.iterdir()) == []


def test_a_frontend_file_round_trips_and_an_unreadable_one_is_refused(tmp_path: Path):
    assert engine.read_frontend_file(tmp_path, "discord") is None
    engine.write_frontend_file(tmp_path, "discord", {"thread_id": "3", "directors": ["4"]})
    assert engine.read_frontend_file(tmp_path, "discord") == {
        "thread_id": "3",
        "directors": ["4"],
    }
    assert [p.name for p in (tmp_path / ".circus").iterdir()] == ["discord.json"]
    for broken in ("{torn", "[1, 2]", "null", "\xff"):  # never "nothing": the bot reads it as free
        (tmp_path / ".circus" / "discord.json").write_text(broken, "latin-1")
        with pytest.raises(engine.BadSceneFile, match=r"\.circus/discord\.json"):
            engine.read_frontend_file(tmp_path, "discord")


async def test_a_frontend_reads_a_scene_as_a_frozen_snapshot(scene: Path) -> None:
    rehearsal = engine.Rehearsal(scene)
    await rehearsal.stage.say(engine.Actor("刑警"), "坐下。", "拍桌子", "林小姐")
    view = await rehearsal.view()
    assert view.cast == ("林小姐", "刑警", "律師") and view.language == "zh"
    assert view.aliases["林小姐"] == ("林", "林曉雯")
    assert dict(view.models) == dict.fromkeys(view.cast, "scripted/improv")
    assert view.turns == 1
    assert view.last_turn == engine.LastTurn(1, "刑警", "坐下。", "拍桌子", "林小姐")
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        view.cast = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        view.aliases["林小姐"] = ()  # type: ignore[index]
    await rehearsal.stage.say(engine.Actor("林小姐"), "我不知道。")
    assert view.turns == 1 and (await rehearsal.view()).turns == 2  # a snapshot, not a window


async def test_load_view_reads_a_folder_and_writes_nothing(scene: Path) -> None:
    before = sorted(p.relative_to(scene) for p in scene.rglob("*"))
    view = await engine.load_view(scene, config=operator_config())
    assert view.cast == ("林小姐", "刑警", "律師") and view.last_turn is None
    assert sorted(p.relative_to(scene) for p in scene.rglob("*")) == before

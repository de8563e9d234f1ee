"""Where the bot keeps scenes on disk: one folder per Discord server, `scenes/<server id>/<scene>/`.

Invariant: a scene bound to a server lives in that server's folder, so a process serving some
shards finds its scenes without reading anyone else's; a scene at the top of the scenes folder
is *loose* (made in the terminal, bound to no server) and stays the operator's: a server sees it
only when the operator names that server (CIRCUS_TERMINAL_SCENE_SERVERS), or once the operator
gives it to a server (`circus scene give`, `give_scene`). Opening one moves it into the opener's
folder in one rename under its run lock (engine.folder.relocate), so two servers opening it at
once cannot both get it. Bound scenes at the top are the layout of older versions:
`sort_scenes` (`circus sort-scenes`) moves them once, with their servers' ledgers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from bot.binding import ID_DIGITS, Binding, binding_or_none, read_binding, scan_bindings
from bot.shards import ShardPlan
from engine import (
    BadSceneFile,
    CircusError,
    SceneNotFound,
    ledger_accounts,
    list_scenes,
    move_ledger,
    move_scene,
    whole_number,
)

log = logging.getLogger("circus.bot")


def server_folder(scenes_dir: Path, guild_id: int) -> Path:
    return Path(scenes_dir) / str(guild_id)


def scene_folder(scenes_dir: Path, guild_id: int, name: str) -> Path:
    return server_folder(scenes_dir, guild_id) / name


ACCOUNT_PREFIX = "discord-"  # a server's spend account in the engine's ledger


def account_of(guild_id: int) -> str:
    """The spend account a server's scenes count against (its daily budget)."""
    return f"{ACCOUNT_PREFIX}{guild_id}"


def scene_key(guild_id: int, name: str) -> str:
    """How the bot tells scenes apart: two servers may each have a scene called 審訊室."""
    return f"{guild_id}/{name}"


def server_ids(scenes_dir: Path) -> list[int]:
    """The servers that have a folder in the scenes folder (named by their id, nothing else)."""
    root = Path(scenes_dir)
    if not root.is_dir():
        return []
    ids = []
    for entry in root.iterdir():
        number = whole_number(entry.name, ID_DIGITS)
        if number is not None and str(number) == entry.name and entry.is_dir():
            ids.append(number)
    return sorted(ids)


def bound_scenes(scenes_dir: Path, plan: ShardPlan) -> list[tuple[int, str, Binding]]:
    """Every scene bound in the folders of the servers `plan` owns: (server, name, binding).
    A folder's binding to another server (a folder copied by hand) is left unattached."""
    found = []
    for guild_id in server_ids(scenes_dir):
        if not plan.owns(guild_id):
            continue  # another process's server: never read
        for name, binding in scan_bindings(server_folder(scenes_dir, guild_id)).items():
            if binding.guild_id != guild_id:
                log.warning("scene %s/%s is another server's: not attached", guild_id, name)
                continue
            found.append((guild_id, name, binding))
    return found


def loose_scenes(scenes_dir: Path) -> list[str]:
    """The scenes at the top of the scenes folder that no server has: every server may open
    them. One with an unreadable binding is nobody's: it may belong to another server."""
    names = []
    for name in list_scenes(scenes_dir):
        try:
            if read_binding(Path(scenes_dir) / name) is None:
                names.append(name)
        except BadSceneFile:
            continue
    return names


def misplaced(scenes_dir: Path) -> list[tuple[str, int]]:
    """Bound scenes at the top of the scenes folder (older versions' layout): (name, server)."""
    out = []
    for name in list_scenes(scenes_dir):
        binding = binding_or_none(Path(scenes_dir) / name)
        if binding is not None:
            out.append((name, binding.guild_id))
    return out


def own_scenes(scenes_dir: Path, guild_id: int) -> list[str]:
    """The scenes in the server's folder that are its to open: unbound, or bound to it. One
    with an unreadable binding, or bound elsewhere (copied by hand), is left out."""
    folder = server_folder(scenes_dir, guild_id)
    names = []
    for name in list_scenes(folder):
        try:
            binding = read_binding(folder / name)
        except BadSceneFile:
            continue
        if binding is None or binding.guild_id == guild_id:
            names.append(name)
    return names


def terminal_servers(text: str | None) -> frozenset[int]:
    """The servers CIRCUS_TERMINAL_SCENE_SERVERS names (comma-separated ids): the ones that may
    list and open the terminal's loose scenes. None or empty: no server. CircusError for text
    that is not server ids, so `circus bot` refuses to start rather than guess."""
    ids: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        number = whole_number(part, ID_DIGITS)
        if number is None or str(number) != part or number == 0:
            raise CircusError("error.terminal_servers", text=part[:40])
        ids.add(number)
    return frozenset(ids)


def visible_scenes(scenes_dir: Path, guild_id: int, terminal: frozenset[int]) -> list[str]:
    """What /scene list and /scene open offer in a server: its own scenes, and the loose ones
    when the operator lets this server see them (`terminal`: terminal_servers)."""
    loose = loose_scenes(scenes_dir) if guild_id in terminal else []
    return sorted(set(own_scenes(scenes_dir, guild_id)) | set(loose))


def home_of(scenes_dir: Path, guild_id: int, name: str, terminal: frozenset[int]) -> Path | None:
    """The folder `/scene open name` in this server opens: its own scene of that name, else a
    loose one (not yet moved) if this server is in `terminal`, else None."""
    own = scene_folder(scenes_dir, guild_id, name)
    if name in list_scenes(own.parent):
        return own
    if guild_id in terminal and name in loose_scenes(scenes_dir):
        return Path(scenes_dir) / name
    return None


def give_scene(scenes_dir: Path, name: str, guild_id: int) -> Path:
    """The operator hands the loose scene `name` to a server (`circus scene give`): it moves
    into that server's folder, still unbound, for its members to open. SceneNotFound when no
    loose scene has that name; SceneBusy while a terminal runs it; SceneExists when the server
    already has a scene of that name."""
    if name not in loose_scenes(scenes_dir):
        raise SceneNotFound(Path(scenes_dir) / name)
    return move_scene(Path(scenes_dir) / name, scene_folder(scenes_dir, guild_id, name))


def claim(scenes_dir: Path, guild_id: int, name: str) -> Path:
    """Move the loose scene `name` into the server's folder (SceneNotFound: another server
    took it first; SceneBusy: a terminal is running it)."""
    return move_scene(Path(scenes_dir) / name, scene_folder(scenes_dir, guild_id, name))


def sort_scenes(
    scenes_dir: Path, on_moved: Callable[[str, Path], None] | None = None
) -> tuple[list[tuple[str, Path]], list[tuple[int, int]]]:
    """Move every bound scene at the top into its server's folder, and every server's spend
    ledger with it: ([(scene, new folder)], [(server, day files moved)]). Safe to repeat.
    Stops at the first scene it cannot move (SceneExists, SceneBusy): `on_moved(scene, new
    folder)` is told of each move as it is made, so the ones before it are not kept quiet."""
    moved: list[tuple[str, Path]] = []
    for name, guild in misplaced(scenes_dir):
        dest = move_scene(Path(scenes_dir) / name, scene_folder(scenes_dir, guild, name))
        moved.append((name, dest))
        if on_moved is not None:
            on_moved(name, dest)
    ledgers = []
    for account in ledger_accounts(scenes_dir):
        server = whole_number(account.removeprefix(ACCOUNT_PREFIX), ID_DIGITS)
        if account.startswith(ACCOUNT_PREFIX) and server is not None:
            days = move_ledger(scenes_dir, server_folder(scenes_dir, server), account)
            if days:  # a folder kept by a stray file of the operator's has nothing to move
                ledgers.append((server, days))
    return moved, ledgers

"""Moving a scene folder to another place in the scenes folder.

Invariant: a scene moves by one rename (atomic on one filesystem) while its run lock is held,
so no run in any process is writing into it as it goes, and two processes moving the same scene
at once cannot both have it: the second finds it gone (SceneNotFound). A move never replaces
anything at the destination; a scene behind a link moves as the link, still pointing at it.
(An account's spend ledger moves with engine.spend.ledger.move_ledger.)
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import SceneExists, SceneNotFound
from engine.folder.scene import is_scene
from engine.folder.store import SceneStore


def move_scene(src: Path | str, dest: Path | str) -> Path:
    """Move the scene folder `src` to `dest` (its parent is made if missing) and return `dest`.
    SceneBusy if a run holds it, SceneNotFound if it is gone (another process moved it first),
    SceneExists if something is at `dest` already."""
    src, dest = Path(src), Path(dest)
    if not is_scene(src):
        raise SceneNotFound(src)
    if dest.exists() or dest.is_symlink():
        raise SceneExists(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    store = SceneStore(src)
    with store.held(src.name):  # the lock's file moves with the folder: held until done
        if not is_scene(src):  # moved by another process between our check and our lock
            raise SceneNotFound(src)
        try:
            # os.rename would silently replace an empty folder at dest: link-free check above,
            # and a non-empty one makes rename fail, which is what we want.
            if dest.exists():
                raise SceneExists(dest)
            # A scene kept elsewhere behind a link (a writer's vault) moves as the link, which
            # must still point at it from its new place: relative targets are made absolute.
            target = os.path.realpath(src) if src.is_symlink() else None
            os.rename(src, dest)
            if target is not None:
                _relink(dest, target)
        except FileNotFoundError:
            raise SceneNotFound(src) from None
        except OSError as exc:  # dest appeared meanwhile (ENOTEMPTY / EEXIST)
            raise SceneExists(dest) from exc
    return dest


def _relink(link: Path, target: str) -> None:
    """Point the link `link` at `target` (an absolute path), replacing it atomically."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
    os.symlink(target, tmp)
    os.replace(tmp, link)

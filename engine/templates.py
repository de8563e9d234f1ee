"""Scene templates: ready-made scene folders under scenes/templates/ that `new_scene` copies.

A new scene is copied aside and renamed into place, so a refused or failed `new` leaves
nothing behind and never touches an existing folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from engine.catalog import Phrase
from engine.errors import BadRequest, SceneExists
from engine.names import check_name

DEFAULT_TEMPLATE = "interrogation"


def templates_dir() -> Path:
    env = os.environ.get("CIRCUS_TEMPLATES_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "scenes" / "templates"


def list_templates() -> list[str]:
    root = templates_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "context.md").is_file())


def template_summary(name: str) -> str:
    """The first line of a template's public context, for listings ("" if it can't be read)."""
    from engine import frontmatter
    from engine.errors import CircusError
    from engine.store import decode

    path = templates_dir() / name / "context.md"
    try:
        _, body = frontmatter.split(decode(path.read_bytes(), path), path)
    except (OSError, CircusError):  # a broken template is listed as broken, never a traceback
        return ""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:100]
    return ""


def new_scene(dest: Path | str, template: str = DEFAULT_TEMPLATE) -> Path:
    """Create a scene folder at `dest` from `template`; refuse to overwrite anything."""
    dest = Path(dest)
    check_name(dest.name, "Scene")
    available = list_templates()
    if template not in available:
        raise BadRequest(
            "error.no_template",
            template=template,
            available=tuple(available) or Phrase("error.no_templates"),
        )
    if dest.exists():
        raise SceneExists(dest)
    if not dest.parent.is_dir():
        raise BadRequest("error.no_parent", parent=dest.parent)
    tmp = dest.with_name(f".{dest.name}.new")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(
        templates_dir() / template,
        tmp,
        ignore=shutil.ignore_patterns("takes", ".circus", "__pycache__"),
    )
    os.replace(tmp, dest)
    return dest

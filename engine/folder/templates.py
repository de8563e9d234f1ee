"""New scenes: a copy of a ready-made template (package data in engine/scene_templates/, where
no run can touch it), or a blank scene with the writer's own cast.

A new scene is built aside and renamed into place, so a refused or failed `new` leaves nothing
behind and never touches an existing folder; a template folder itself is never rehearsed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from engine.catalog import Phrase, lang_of, say
from engine.config import Config
from engine.errors import BadRequest, SceneExists
from engine.folder.frontmatter import with_setting
from engine.folder.names import check_cast, check_name
from engine.folder.soul import blank_soul
from engine.folder.whispers import empty_notes

DEFAULT_TEMPLATE = "interrogation"
CONTEXT_GUIDE = "template.context"  # the catalog key of a blank scene's placeholder context
SHIPPED = Path(__file__).resolve().parent.parent / "scene_templates"  # package data


def templates_dir(config: Config) -> Path:
    """CIRCUS_TEMPLATES_DIR, else the templates shipped inside the engine package."""
    chosen = config.templates_dir
    return chosen or SHIPPED


def _roots(config: Config) -> list[Path]:
    """Where templates are looked for, first found first: the operator's folder, then the
    shipped templates (a folder of your own adds to them; one of the same name replaces it)."""
    return [templates_dir(config), SHIPPED] if config.templates_dir else [SHIPPED]


def template_path(name: str, config: Config) -> Path:
    """The folder of the template `name` (see _roots)."""
    for root in _roots(config):
        if (root / name / "context.md").is_file():
            return root / name
    return templates_dir(config) / name


def is_template(folder: Path | str, config: Config) -> bool:
    """True if `folder` is (inside) a templates folder: copy it with `new`, never rehearse it."""
    try:
        here = Path(folder).resolve()
    except OSError:
        return False
    roots = {SHIPPED.resolve(), templates_dir(config).resolve()}
    return any(here == root or root in here.parents for root in roots)


def _has_cjk(text: str) -> bool:
    return any(ord(ch) >= 0x2E80 for ch in text)


def blank_scene_files(
    cast: Sequence[str], title: str, language: str | None = None
) -> dict[str, str]:
    """The files of a blank scene (path inside the scene -> text): context.md with the title
    and the stage facts to fill in, director_notes.md, transcript.md, and one soul.md with the
    three parts per actor. `language` None: Chinese if a name or the title is, else English."""
    if language is None:
        language = "zh" if any(_has_cjk(t) for t in (*cast, title)) else "en"
    lang = lang_of(language)
    context = with_setting("", "language", language)
    context = with_setting(context, "neglect_turns", 3)
    context = with_setting(context, "cast", list(cast))
    context += f"# {title}\n\n{say(CONTEXT_GUIDE, lang)}\n"
    files = {
        "context.md": context,
        "director_notes.md": empty_notes(cast, lang) + "\n",
        "transcript.md": f"# {title}\n",
    }
    for actor in cast:
        files[f"actors/{actor}/soul.md"] = blank_soul(lang)
    return files


def list_templates(config: Config) -> list[str]:
    names = {
        p.name
        for root in _roots(config)
        if root.is_dir()
        for p in root.iterdir()
        if (p / "context.md").is_file()
    }
    return sorted(names)


def template_summary(name: str, config: Config) -> str:
    """The first line of a template's public context, for listings ("" if it can't be read)."""
    from engine.errors import CircusError
    from engine.folder import frontmatter
    from engine.folder.store import decode

    path = template_path(name, config) / "context.md"
    try:
        _, body = frontmatter.split(decode(path.read_bytes(), path), path)
    except (OSError, CircusError):  # a broken template is listed as broken, never a traceback
        return ""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:100]
    return ""


def new_scene(
    dest: Path | str,
    template: str | None = None,
    *,
    config: Config,
    cast: Sequence[str] = (),
    title: str | None = None,
    language: str | None = None,
) -> Path:
    """Create a scene folder at `dest`; refuse to overwrite anything.

    With `cast`, a blank scene of those actors (`blank_scene_files`; `title` defaults to the
    folder's name); otherwise a copy of `template` (default DEFAULT_TEMPLATE)."""
    dest = Path(dest)
    check_name(dest.name, "Scene")
    if cast or title is not None or language is not None:
        if template is not None:
            raise BadRequest("error.template_and_cast")
        if not cast:
            raise BadRequest("error.cast_needed")
        if language is not None and lang_of(language) != language:
            raise BadRequest("error.language_choice", language=language)
        title = (title if title is not None else dest.name).strip()
        if not title or "\n" in title or len(title) > 200:
            raise BadRequest("error.title_line")
        files = blank_scene_files(check_cast(cast), title, language)
        return _build(dest, lambda tmp: _write(tmp, files))
    template = DEFAULT_TEMPLATE if template is None else template
    available = list_templates(config)
    if template not in available:
        raise BadRequest(
            "error.no_template",
            template=template,
            available=tuple(available) or Phrase("error.no_templates"),
        )
    source = template_path(template, config)
    return _build(
        dest,
        lambda tmp: shutil.copytree(
            source, tmp, ignore=shutil.ignore_patterns("takes", ".circus", "__pycache__")
        ),
    )


def _write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")


def _build(dest: Path, fill) -> Path:  # fill: Callable[[Path], object], makes the folder
    """Make the scene beside `dest` with `fill`, then rename it into place in one step."""
    if dest.exists():
        raise SceneExists(dest)
    if not dest.parent.is_dir():
        raise BadRequest("error.no_parent", parent=dest.parent)
    tmp = dest.with_name(f".{dest.name}.new")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        fill(tmp)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest

"""The next scene of a script, started from a take of this one (seed 000 §14.1).

Invariant: the new folder holds the same cast with each soul's settings, bio and prior story
kept, the prior story gaining one marked section "Carried from <scene>, take N" built only from
what that actor witnessed (engine.turn.witness), and empty director's notes; a context.md whose body
is a template to fill in (its settings carried), fresh whispers, a scene.md saying what to
review. Nothing else is carried (transcript, backstage, takes, picks, usage). The old scene is
only read. Every refusal is raised before anything is written, and the folder appears whole
(engine.folder.store.create_folder). The carried sections are written to the writer to rewrite (the
absorb-and-rewrite is a person's, §14.1): `unedited` says which still read as carried.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engine.catalog import say
from engine.config import Config
from engine.door.llm import Models
from engine.errors import BadRequest, CircusError, SceneExists, SceneNotFound
from engine.folder import frontmatter
from engine.folder.carried import CARRIED
from engine.folder.names import check_name
from engine.folder.scene import CONTEXT, NOTES, SceneState, is_scene, soul_path
from engine.folder.sections import split
from engine.folder.soul import NOTES_HEADINGS, PRIOR_STORY_HEADINGS, replace_prior_story
from engine.folder.store import create_folder
from engine.folder.whispers import empty_notes
from engine.rehearsal.facade import Rehearsal
from engine.turn.witness import witnessed

REVIEW = "scene.md"  # in the new scene: what the writer should review (read by no model)
_SECTION = re.compile(r"## (.+?)\s*$")


def carried_heading(scene: str, take: int, language: str) -> str:
    return "### " + say("next.carried_heading", language, scene=scene, take=take)


def carried_section(scene: str, take: int, lines: list[str], language: str) -> str:
    """The marked section: its heading, then the record (or a draft of it)."""
    body = "\n".join(lines) if lines else say("next.saw_nothing", language)
    return f"{carried_heading(scene, take, language)}\n\n{body.strip()}"


def _header(text: str) -> tuple[str, str]:
    """(front matter as written, body) of a soul.md."""
    _, body = frontmatter.split(text)
    text = text.removeprefix("\ufeff")
    # a file of settings alone has an empty body: its whole text is the header
    header = text[: len(text) - len(body)] if text.endswith(body) else ""
    if header and not header.endswith("\n"):  # "---" closing the file: the body starts below
        header += "\n"
    return header, body


def unheaded(draft: str) -> str:
    """A model's draft as prose: its heading marks go, so no line of it can start a section of
    the soul (a draft is untrusted text; the soul's parts are found by their headings)."""
    return re.sub(r"(?m)^[ \t]*#+[ \t]*", "", draft).strip()


def _is(heading: str, words: tuple[str, ...]) -> bool:
    return any(w in heading.casefold() for w in words)


def next_soul(text: str, section: str, language: str) -> str:
    """A soul.md for the next scene: settings, bio and prior story kept, `section` added at the
    end of the prior story, the director's notes emptied (they are rewritten per scene)."""
    header, body = _header(text)
    parts = split(body, _SECTION)
    out = body[: parts[0].offset] if parts else body
    found = False
    for part in parts:
        heading = part.match.group(1)
        chunk = body[part.offset : part.end_offset].rstrip("\n")
        if _is(heading, PRIOR_STORY_HEADINGS) and not found:
            found = True
            chunk = chunk + "\n\n" + section
        elif _is(heading, NOTES_HEADINGS):
            chunk = part.line
        out += chunk + "\n\n"
    if not found:
        out = replace_prior_story(out, section, language)
    return header + out.rstrip("\n") + "\n"


def context_text(old: str, title: str, scene: str, take: int, language: str) -> str:
    """The new context.md: the old one's settings as written, a body to fill in."""
    header, _ = _header(old)
    return header + say("next.context", language, title=title, scene=scene, take=take) + "\n"


@dataclass(frozen=True)
class NextPlan:
    files: dict[str, str]  # rel → text, the whole new folder
    sections: dict[str, str]  # actor → the carried section as written
    records: dict[str, list[str]]  # actor → the witnessed record (what --draft drafts from)


def plan(
    scene: SceneState,
    take: SceneState,
    texts: Mapping[str, str],
    number: int,
    new_name: str,
    context: str,
    drafts: Mapping[str, str] | None = None,
) -> NextPlan:
    """The new folder from the scene's current cast and soul `texts` and the take's record.
    An actor the take never had (added since) witnessed nothing."""
    lang = scene.language
    records = {
        a: witnessed(a, take.cast, take.turns, take.blocks, take.thoughts.get(a, {}), lang)
        if a in take.souls
        else []
        for a in scene.cast
    }
    sections, files = {}, {}
    for actor in scene.cast:
        lines = [unheaded(drafts[actor])] if drafts and drafts.get(actor) else records[actor]
        sections[actor] = carried_section(scene.name, number, lines, lang)
        files[soul_path(actor)] = next_soul(texts[actor], sections[actor], lang)
    files[CONTEXT] = context_text(context, new_name, scene.name, number, lang)
    files[NOTES] = empty_notes(scene.cast, lang)
    files[REVIEW] = say(
        "next.review", lang, title=new_name, scene=scene.name, take=number, cast=tuple(scene.cast)
    )
    carried = {"from": scene.name, "take": number, "sections": sections}
    files[CARRIED] = json.dumps(carried, ensure_ascii=False, indent=1) + "\n"
    return NextPlan(files, sections, records)


def check_target(new_root: Path) -> None:
    """Refuse a new folder that exists, or a name that could not be a folder."""
    check_name(new_root.name, "Scene")
    if new_root.exists() or new_root.is_symlink():
        raise SceneExists(new_root)


def check_source(root: Path) -> None:
    if not is_scene(root):
        raise SceneNotFound(root)


def write(new_root: Path, files: Mapping[str, str]) -> None:
    """The whole folder at once (engine.folder.store.create_folder): all of it or nothing."""
    create_folder(new_root, files)


@dataclass(frozen=True)
class NextResult:
    root: Path
    take: int
    cast: tuple[str, ...]
    drafted: bool
    unedited: tuple[str, ...]
    draft_failed: str = ""  # why --draft drafted nothing (the records themselves stay)


async def start_next(
    root: Path | str,
    new_root: Path | str,
    take: object | None = None,
    *,
    draft: bool = False,
    models: Models | None = None,
    config: Config | None = None,
) -> NextResult:
    """`circus next`: the new scene folder from a take (default: the last saved one) of the
    scene at `root`. With `draft`, each carried section is then redrafted by `summarize_for`
    on the new scene (its souls, its budget) from exactly that actor's witnessed record; a
    model failure leaves the record itself in place (the folder is already whole)."""
    from engine.folder.scene import SceneFiles
    from engine.rehearsal.view import Actor
    from engine.takes.reading import load_take, resolve

    root, new_root = Path(root), Path(new_root)
    check_source(root)
    check_target(new_root)
    if new_root.resolve().is_relative_to(root.resolve()):  # the old scene is only read
        raise BadRequest("error.next_inside", path=new_root)
    number, saved = await resolve(root, take)
    files = SceneFiles(root)
    scene = await files.load()
    took = await load_take(root, number, saved)
    texts = {a: await files.store.read(soul_path(a)) or "" for a in scene.cast}
    context = await files.store.read(CONTEXT) or ""
    made = plan(scene, took, texts, number, new_root.name, context)
    write(new_root, made.files)
    failed = ""
    if draft:
        rehearsal = Rehearsal(new_root, models=models, config=config)
        drafts = {}
        try:
            for actor, lines in made.records.items():
                if lines:
                    history = "\n".join(lines)
                    drafts[actor] = await rehearsal.souls.summarize_for(
                        Actor(actor), history, write=False
                    )
        except CircusError as exc:  # the folder is whole already: keep the records, say why
            failed = str(exc)
            drafts = {}
    if draft and not failed:
        redone = plan(scene, took, texts, number, new_root.name, context, drafts)
        store = rehearsal.files.store
        for rel in [soul_path(a) for a in scene.cast] + [CARRIED]:
            await store.write_atomic(rel, redone.files[rel])
    drafted = draft and not failed
    return NextResult(new_root, number, tuple(scene.cast), drafted, tuple(scene.cast), failed)

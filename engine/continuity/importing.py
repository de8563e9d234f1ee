"""`circus import`: a scene folder made from one scene of the writer's own screenplay.

Invariant: the folder is a normal scene — context.md from the heading, the title page's title
and the action before the first cue; one soul per character (the three parts, bio empty; for a
scene after the first, the prior story holds a marked "previously" section of exactly what that
character witnessed in the earlier scenes, engine.turn.witness); the lines so far as turns
1..K of the record with who is on stage (engine.script.record) — so `circus run` goes on after
the last imported line. The writer's notes ([[…]], <ScriptNote>) and the scene's goal go only to
script.md, which no model reads, never to the record, a soul or a prompt. .circus/script.json
says where the scene sits in the file, for the splice back (engine.harvest.splice). Every
refusal comes before anything is written, and the folder appears whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.catalog import lang_of, say
from engine.config import Config
from engine.continuity.next_scene import check_target, unheaded
from engine.door.llm import Models
from engine.errors import CircusError
from engine.folder.frontmatter import with_setting
from engine.folder.names import Actor, check_name, check_unique
from engine.folder.scene import CONTEXT, NOTES, TRANSCRIPT, soul_path
from engine.folder.soul import blank_soul, replace_bio, replace_prior_story
from engine.folder.stage import EVENT, merge, render_block
from engine.folder.store import create_folder
from engine.folder.turns import Turn, render_turn
from engine.folder.whispers import empty_notes
from engine.rehearsal.facade import Rehearsal
from engine.script.crosscheck import cross_check
from engine.script.elements import Note, Script
from engine.script.reading import load_script, parse_script
from engine.script.record import ScriptScene, Staged, pick_scene, recognise, scenes_of, stage
from engine.script.splicing import ANCHOR, SHEET, anchor_of
from engine.turn.witness import witnessed

LAST_LINES = 4  # the imported lines a frontend shows under the scene card
_PLACE = re.compile(r"^(INT\.?/EXT\.?|I/E|INT|EXT|EST)[. ]\s*(.*)$", re.I)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class ImportAsk:
    """What the writer asked for: which scene, up to where, in which language, which names
    are cues where the script does not force them."""

    scene: str | None = None
    heading: str | None = None
    until: int | None = None
    language: str | None = None
    cast: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportPlan:
    files: dict[str, str]
    staged: Staged
    scene: ScriptScene
    language: str
    records: dict[str, list[str]]  # actor → what it witnessed (what --draft drafts from)


def _language(asked: str | None, staged: Staged, heading: str) -> str:
    if asked:
        return lang_of(asked)
    return "zh" if any(_CJK.search(t) for t in (*staged.cast, heading)) else "en"


def context_body(scene: ScriptScene, staged: Staged, title: Mapping[str, str], lang: str) -> str:
    """The public stage facts: the heading as written, its place and time, the title page's
    title, and the action before the first cue."""
    heading = scene.label or title.get("Title", "") or "—"
    out = [f"# {heading}", ""]
    if title.get("Title"):
        out += [say("import.from", lang, title=title["Title"], scene=scene.number or scene.ordinal)]
    if match := _PLACE.match(scene.label):
        side = say(
            "import.exterior" if match.group(1).upper() == "EXT" else "import.interior", lang
        )
        place, _, time = match.group(2).rpartition(" - ")
        place = place or time
        out.append(say("import.place", lang, place=place.strip(), side=side))
        if place is not time and time.strip():
            out.append(say("import.time", lang, time=time.strip()))
    out.append("")
    for element in staged.opening:
        out += [element.text.strip(), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def transcript_text(heading: str, staged: Staged, language: str) -> str:
    body = "".join(
        render_turn(item, language) if isinstance(item, Turn) else render_block(item, language)
        for item in merge(staged.turns, staged.blocks)
    )
    return f"# {heading}\n\n{body}"


def previously(
    script: Script, scene: ScriptScene, actor: str, language: str, ask: ImportAsk
) -> list[str]:
    """What `actor` witnessed in each earlier scene of the file (the same walk as
    `circus next`), under one marked heading per scene; a scene it was not in leaves nothing."""
    out: list[str] = []
    for earlier in scenes_of(script):
        if earlier.ordinal >= scene.ordinal:
            break
        try:
            if ask.cast:  # the names the writer gave are cues in every scene
                earlier = ScriptScene(
                    earlier.ordinal, earlier.heading, tuple(recognise(earlier.elements, ask.cast))
                )
            done = stage(earlier, language, script.characters)
        except CircusError:  # no cue in it: nothing happened that anyone said
            continue
        name = next((a for a in done.cast if a.casefold() == actor.casefold()), None)
        if name is None:
            continue
        lines = witnessed(name, done.cast, done.turns, done.blocks, {}, language)
        if len(lines) > 1:  # every walk sees its opening "on stage" line: more than that
            heading = say("import.previously", language, heading=earlier.label)
            out.append(f"### {heading}\n\n" + "\n".join(lines))
    return out


def soul_text(aliases: Sequence[str], story: Sequence[str], language: str, bio: str = "") -> str:
    body = blank_soul(language)
    if bio.strip():
        body = replace_bio(body, bio, language)
    if story:
        body = replace_prior_story(body, "\n\n".join(story), language)
    body = body.rstrip("\n") + "\n"
    return with_setting(body, "aliases", list(aliases)) if aliases else body


def _lines_of(script: Script, scene: ScriptScene) -> range:
    """The file's lines from this scene's heading to the next one's (the whole file for a
    script without headings)."""
    if scene.heading is None:
        return range(0, 1 << 62)
    starts = [s.heading.start for s in scenes_of(script) if s.heading]
    after = [start for start in starts if start > scene.heading.start]
    return range(scene.heading.start + 1, min(after, default=1 << 62) + 1)


def scene_notes(script: Script, scene: ScriptScene) -> tuple[Note, ...]:
    """The writer's notes between this scene's heading and the next one, and those the file
    keeps in no place (a Final Draft note outside every paragraph: line 0)."""
    within = _lines_of(script, scene)
    return tuple(n for n in script.notes if n.line == 0 or n.line in within)


def scene_cuts(script: Script, scene: ScriptScene) -> int:
    """How many cut passages (/* … */) lie between this scene's heading and the next one."""
    within = _lines_of(script, scene)
    return sum(1 for line in script.cut_lines if line in within) if script.cut_lines else 0


def sheet_text(source: str, script: Script, scene: ScriptScene, staged: Staged, lang: str) -> str:
    events = sum(1 for b in staged.blocks if b.kind == EVENT)
    out = say(
        "import.sheet", lang, heading=scene.label or source, source=source,
        scene=scene.number or scene.ordinal, turns=len(staged.turns), events=events,
        line=staged.last.end + 1, cut=scene_cuts(script, scene),
    )  # fmt: skip
    if script.revision:
        out += say("import.sheet.revision", lang, revision=script.revision)
    if staged.goal:
        out += "\n" + say("import.sheet.goal", lang, goal=staged.goal)
    if script.title:
        lines = "\n".join(f"- {k}: {' / '.join(v.splitlines())}" for k, v in script.title.items())
        out += "\n" + say("import.sheet.title_page", lang, lines=lines)
    if notes := scene_notes(script, scene):
        lines = "\n".join(say("import.sheet.note", lang, line=n.line, text=n.text) for n in notes)
        out += "\n" + say("import.sheet.notes", lang, lines=lines)
    return out.rstrip("\n") + "\n"


def plan_import(script: Script, source: str, ask: ImportAsk) -> ImportPlan:
    """The whole new folder, from the script already read. Raises before anything exists."""
    scene = pick_scene(scenes_of(script), ask.scene, ask.heading)
    elements = recognise(scene.elements, ask.cast)
    scene = ScriptScene(scene.ordinal, scene.heading, tuple(elements))
    staged = stage(scene, ask.language or "en", script.characters, ask.until)
    lang = _language(ask.language, staged, scene.label)
    staged = stage(scene, lang, script.characters, ask.until)
    cast = [check_name(a) for a in staged.cast]
    check_unique(cast)
    heading = scene.label or source
    context = with_setting("", "language", lang)
    context = with_setting(context, "neglect_turns", 3)
    context = with_setting(context, "cast", list(staged.cast))
    files = {
        CONTEXT: context + context_body(scene, staged, script.title, lang),
        NOTES: empty_notes(staged.cast, lang) + "\n",
        TRANSCRIPT: transcript_text(heading, staged, lang),
        SHEET: sheet_text(source, script, scene, staged, lang),
        ANCHOR: json.dumps(anchor_of(script, scene, staged, source, ask.cast), ensure_ascii=False)
        + "\n",
    }
    records = {}
    for actor in staged.cast:
        story = previously(script, scene, actor, lang, ask)
        records[actor] = story + witnessed(
            actor, staged.cast, staged.turns, staged.blocks, {}, lang
        )
        files[soul_path(actor)] = soul_text(staged.aliases.get(actor, ()), story, lang)
    return ImportPlan(files, staged, scene, lang, records)


@dataclass(frozen=True)
class ImportResult:
    root: Path
    scene: str  # its number or place in the file
    heading: str
    cast: tuple[str, ...]
    turns: int
    events: int
    line: int  # the last line imported (1-based; FDX: paragraph)
    cut: int
    notes: tuple[tuple[int, str], ...]
    language: str
    last_lines: tuple[tuple[str, str], ...] = ()  # (actor, line) of the last few turns
    drafted: bool = False
    draft_failed: str = ""


async def import_script(
    script_path: Path | str,
    new_root: Path | str,
    ask: ImportAsk | None = None,
    *,
    data: bytes | None = None,
    draft: bool = False,
    models: Models | None = None,
    config: Config | None = None,
) -> ImportResult:
    """`circus import`: the new scene folder from one scene of the file at `script_path` (or
    of `data`, an upload named `script_path`, read as its name says)."""
    ask = ask or ImportAsk()
    new_root = Path(new_root)
    check_target(new_root)
    if data is None:
        script, data = load_script(Path(script_path))
    else:
        script = parse_script(Path(script_path).name, data)
    made = plan_import(script, Path(script_path).name, ask)
    if script.format == "fountain" and not ask.cast:  # named cues are ours alone to read
        cross_check(data.decode("utf-8"), made.scene, made.staged.last.end)
    create_folder(new_root, made.files)
    failed = ""
    if draft:
        failed = await _draft(new_root, made, models, config)
    return ImportResult(
        root=new_root,
        scene=made.scene.number or str(made.scene.ordinal),
        heading=made.scene.label,
        cast=made.staged.cast,
        turns=len(made.staged.turns),
        events=sum(1 for b in made.staged.blocks if b.kind == EVENT),
        line=made.staged.last.end + 1,
        cut=scene_cuts(script, made.scene),
        notes=tuple((n.line, n.text) for n in scene_notes(script, made.scene)),
        language=made.language,
        last_lines=tuple((t.actor, t.dialogue) for t in made.staged.turns[-LAST_LINES:]),
        drafted=draft and not failed,
        draft_failed=failed,
    )


async def _draft(root: Path, made: ImportPlan, models: Models | None, config: Config | None) -> str:
    """Each soul's bio and prior story drafted from exactly what that character said, did and
    witnessed, billed to the new scene (as `circus next --draft`); a model failure leaves the
    skeletons (and any "previously" section) as they are and says why."""
    rehearsal = Rehearsal(root, models=models, config=config)
    drafts: dict[str, tuple[str, str]] = {}
    try:
        for actor, lines in made.records.items():
            if lines:
                seen = "\n".join(lines)
                story = await rehearsal.souls.summarize_for(Actor(actor), seen, write=False)
                bio = await rehearsal.souls.draft_bio(Actor(actor), seen)
                drafts[actor] = (bio, story)
    except CircusError as exc:
        return str(exc)
    for actor, (bio, story) in drafts.items():
        if bio.strip() or story.strip():
            told = [unheaded(story)] if story.strip() else []
            aliases = made.staged.aliases.get(actor, ())
            soul = soul_text(aliases, told, made.language, bio=unheaded(bio))
            await rehearsal.files.store.write_atomic(soul_path(actor), soul)
    return ""

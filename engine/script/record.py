"""One scene of a screenplay as a Circus record: its cast, its opening, its lines as turns and
its action as stage events, with who is on stage by the screenplay's own conventions.

Invariant: nothing is guessed beyond the conventions. A character is on stage from their first
appearance in the scene — named in capitals in an action paragraph (MARA enters, RAY (40s) at
the rail) or, failing that, their first cue that is not a voice over — and off it after an
action sentence that names them with an exit verb (exits, leaves, 離開); a voice over (V.O.) is
heard and never puts the speaker on stage; O.S./O.C. is on stage, unseen. A cue's extensions
are not part of the name (MARA (CONT'D) is MARA) but stay on the turn, in its action. A cue is
matched by its case-folded spelling; the first spelling is the actor's name, later ones its
aliases. Notes never get here (engine.script.elements). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.catalog import say
from engine.errors import BadScript
from engine.folder.stage import ENTER, EVENT, EXIT, PRESENT, StageBlock
from engine.folder.turns import Turn
from engine.script.elements import Element, Script
from engine.script.fountain import cue_parts, dialogue_parts

HAPPENINGS = ("action", "lyric", "centered", "transition")  # what becomes a stage event
# What may close a scene (CUT TO:, THE END, ===): not imported after the last line, so the
# rehearsal, and a splice, goes on right after the last line or action.
ENDINGS = ("transition", "centered", "page_break", "section", "synopsis")
_EXIT_EN = re.compile(
    r"\b(exits?|leaves|leave|walks out|storms out|goes out|departs?|is gone|heads out)\b", re.I
)
_EXIT_ZH = re.compile(r"離開|离开|退場|退场|走出|離去|离去|出門|出门")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff]")
_NOT_A_NAME = re.compile(r"[。，！？,.!?：:；;、]")
CUE_MOST = 20  # characters: a longer first line is no unforced cue


@dataclass(frozen=True)
class ScriptScene:
    """A heading and the elements up to the next one."""

    ordinal: int  # 1-based among the file's headings (0: the lines before any heading)
    heading: Element | None
    elements: tuple[Element, ...]

    @property
    def label(self) -> str:
        return self.heading.text if self.heading else ""

    @property
    def number(self) -> str:
        return self.heading.number if self.heading else ""


@dataclass(frozen=True)
class Staged:
    cast: tuple[str, ...]
    aliases: dict[str, tuple[str, ...]]
    opening: tuple[Element, ...]  # before the first cue: the public context
    turns: tuple[Turn, ...]
    blocks: tuple[StageBlock, ...]
    last: Element  # the last element imported: a splice lands after it
    goal: str = ""  # the synopses: the scene's stated goal, for the director
    imported: tuple[Element, ...] = field(default=())  # every element taken, in order


def scenes_of(script: Script) -> list[ScriptScene]:
    """The file's scenes in order, one per heading (what comes before the first heading is no
    scene); a file without a heading is one scene."""
    out: list[ScriptScene] = []
    before: list[Element] = []
    heading: Element | None = None
    current: list[Element] = []
    for element in script.elements:
        if element.kind == "heading":
            if heading is not None:
                out.append(ScriptScene(len(out) + 1, heading, tuple(current)))
            heading, current = element, []
        else:
            (current if heading is not None else before).append(element)
    if heading is not None:
        out.append(ScriptScene(len(out) + 1, heading, tuple(current)))
    if not out and before:
        out.append(ScriptScene(1, None, tuple(before)))
    return out


def headings_list(scenes: Sequence[ScriptScene]) -> str:
    return "; ".join(f"{s.ordinal} · {s.label}" for s in scenes if s.heading)


def pick_scene(
    scenes: Sequence[ScriptScene], number: str | None, heading: str | None
) -> ScriptScene:
    """`--scene N` (a heading's own scene number #N# first, else the N-th heading) or
    `--heading TEXT` (the one heading containing it, case folded); default: the first."""
    numbered = [s for s in scenes if s.heading]
    if heading:
        wanted = " ".join(heading.split()).casefold()
        found = [s for s in numbered if wanted in " ".join(s.label.split()).casefold()]
        if len(found) == 1:
            return found[0]
        raise BadScript("no_heading", asked=heading, headings=headings_list(scenes))
    if number is None:
        if not scenes:
            raise BadScript("not_a_screenplay")
        return numbered[0] if numbered else scenes[0]
    by_number = [s for s in numbered if s.number and s.number == number.strip()]
    if by_number:
        return by_number[0]
    ordinal = [s for s in numbered if str(s.ordinal) == number.strip()]
    if ordinal:
        return ordinal[0]
    raise BadScript("no_scene", asked=number, headings=headings_list(scenes))


def recognise(elements: Sequence[Element], names: Sequence[str]) -> list[Element]:
    """Unforced cues read as action: an action paragraph whose first line is a name the
    writer gave (`--cast`) becomes that character's speech. Without names, a paragraph that
    looks like an unforced CJK cue is refused, saying how to force it."""
    wanted = {n.casefold() for n in names}
    out: list[Element] = []
    for element in elements:
        first, *rest = element.text.split("\n")
        name, extensions = cue_parts(first.removesuffix("^").strip())
        if element.kind == "action" and rest and name.casefold() in wanted:
            parts = dialogue_parts(rest)
            text = "\n".join(t for _, t in parts)
            out.append(
                Element("speech", text, element.start, element.end, name=name,
                        extensions=extensions, parts=parts)
            )  # fmt: skip
            continue
        if element.kind == "action" and rest and not names and _looks_like_cue(first):
            raise BadScript("cjk_cue", line=element.start + 1, name=first.strip())
        out.append(element)
    return out


def _looks_like_cue(line: str) -> bool:
    text = line.strip()
    return 0 < len(text) <= CUE_MOST and bool(_CJK.search(text)) and not _NOT_A_NAME.search(text)


def _mentions(name: str, text: str, *, capitals: bool) -> bool:
    """`name` named in `text`: in capitals for an entrance (a name without letter case, as in
    Chinese, as written), in any case for an exit."""
    if name.upper() == name.lower():  # no letter case: the name itself
        return name in text
    spelled = name.upper() if capitals else name
    flags = 0 if capitals else re.I
    return re.search(rf"(?<![\w]){re.escape(spelled)}(?![\w])", text, flags) is not None


def _leaving(text: str, present: set[str], cast: Sequence[str]) -> list[str]:
    """Who an action paragraph says exits: a sentence naming them with an exit verb."""
    out: list[str] = []
    for sentence in _SENTENCE.split(text):
        if not (_EXIT_EN.search(sentence) or _EXIT_ZH.search(sentence)):
            continue
        out += [a for a in cast if a in present and a not in out and _mentions(a, sentence,
                capitals=False)]  # fmt: skip
    return out


def _cast(elements: Sequence[Element], extra: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The actors in order of first cue (then `extra` named in the action), and each
    case-folded spelling → the actor."""
    cast: list[str] = []
    key: dict[str, str] = {}
    for element in elements:
        if element.kind == "speech" and element.name.casefold() not in key:
            cast.append(element.name)
            key[element.name.casefold()] = element.name
    action = "\n".join(e.text for e in elements if e.kind in HAPPENINGS)
    for name in extra:
        if name.casefold() not in key and _mentions(name, action, capitals=True):
            cast.append(name)
            key[name.casefold()] = name
    return cast, key


def _turn_action(element: Element, simultaneous: bool, language: str) -> str:
    """What stays on the turn besides its words: the cue's extensions, the parentheticals
    before the first spoken line, and a mark when it is said at the same time as another."""
    bits = [f"({e})" for e in element.extensions]
    for paren, text in element.parts:
        if not paren:
            break
        bits.append(text)
    if simultaneous:
        bits.append(say("import.simultaneous", language))
    return " ".join(bits)


def _dialogue(element: Element) -> str:
    parts = list(element.parts)
    while parts and parts[0][0]:
        parts.pop(0)
    return "\n".join(text for _, text in parts)


def stage(
    scene: ScriptScene, language: str, extra: Sequence[str] = (), until: int | None = None
) -> Staged:
    """The scene as a record. `until`: only elements whose last line (1-based) is at most it.
    `extra`: characters who may never speak (FDX SmartType), cast when the action names them."""
    elements = [e for e in scene.elements if until is None or e.end + 1 <= until]
    while elements and elements[-1].kind in ENDINGS:  # the scene's closing furniture stays
        elements.pop()
    first = next((i for i, e in enumerate(elements) if e.kind == "speech"), None)
    if first is None:
        raise BadScript("no_cues", heading=scene.label or "—")
    cast, key = _cast(elements, extra)
    opening = tuple(e for e in elements[:first] if e.kind in HAPPENINGS)
    present = {a for a in cast if any(_mentions(a, e.text, capitals=True) for e in opening)}
    start = tuple(a for a in cast if a in present)
    walk = _Walk(cast, key, present, language)
    walk.block(StageBlock(0, 1, PRESENT, names=start))
    for index, element in enumerate(elements[first:], first):
        after = elements[index + 1] if index + 1 < len(elements) else None
        walk.take(element, bool(after and after.kind == "speech" and after.dual))
    spellings = {a: tuple(sorted({e.name for e in elements if e.kind == "speech"
                                  and key[e.name.casefold()] == a} - {a})) for a in cast}  # fmt: skip
    goal = "\n".join(e.text for e in elements if e.kind == "synopsis")
    return Staged(
        cast=tuple(cast),
        aliases={a: s for a, s in spellings.items() if s},
        opening=opening,
        turns=tuple(walk.turns),
        blocks=tuple(walk.blocks),
        last=elements[-1],
        goal=goal,
        imported=tuple(elements),
    )


class _Walk:
    """The record growing element by element, and who is on stage."""

    def __init__(self, cast: list[str], key: dict[str, str], present: set[str], language: str):
        self.cast, self.key, self.present, self.language = cast, key, present, language
        self.turns: list[Turn] = []
        self.blocks: list[StageBlock] = []

    def block(self, block: StageBlock) -> None:
        self.blocks.append(block)

    def add(self, kind: str, **values: object) -> None:
        after = len(self.turns)
        seq = 1 + sum(1 for b in self.blocks if b.after == after)
        self.blocks.append(StageBlock(after, seq, kind, **values))  # type: ignore[arg-type]

    def take(self, element: Element, before_dual: bool) -> None:
        if element.kind == "speech":
            actor = self.key[element.name.casefold()]
            if not element.heard_only and actor not in self.present:
                self.add(ENTER, actor=actor)
                self.present.add(actor)
            action = _turn_action(element, element.dual or before_dual, self.language)
            number = len(self.turns) + 1
            self.turns.append(Turn(number, actor, action, _dialogue(element)))
        elif element.kind in HAPPENINGS and element.text.strip():
            for actor in self.cast:
                if actor not in self.present and _mentions(actor, element.text, capitals=True):
                    self.add(ENTER, actor=actor)
                    self.present.add(actor)
            self.add(EVENT, text=element.text.strip())
            for actor in _leaving(element.text, self.present, self.cast):
                self.add(EXIT, actor=actor)
                self.present.discard(actor)

"""Where an imported scene sits in its file, and text set in after its last imported line.

Invariant: a splice writes only after the element the import ended on, and only when the
file still holds that scene as imported (its heading and every imported element, compared by
content through a digest, not by line numbers alone); otherwise it is refused and nothing is
written. Every byte of the file before and after the insertion point is kept as it was,
line endings included. Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import BadScript
from engine.folder.store import STATE_DIR
from engine.script.elements import Element, Script
from engine.script.fountain import LINE_BREAK
from engine.script.record import ScriptScene, Staged, recognise, scenes_of

SHEET = "script.md"  # the director's: source, goal, the writer's notes; read by no model
ANCHOR = f"{STATE_DIR}/script.json"  # where the scene sits in its file, for the splice back


def digest(elements: Sequence[Element]) -> str:
    shown = [[e.kind, e.text, e.name, list(e.extensions), e.dual, e.number] for e in elements]
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode()).hexdigest()


def anchor_of(
    script: Script, scene: ScriptScene, staged: Staged, source: str, cast: Sequence[str]
) -> dict[str, Any]:
    """What .circus/script.json keeps: the file's format and name, the scene, how many turns
    and which stage blocks were imported, the last element's place, and the digest."""
    head = [scene.heading] if scene.heading else []
    last_block = max((b.key for b in staged.blocks), default=(0, 0))
    return {
        "format": script.format,
        "source": source,
        "scene": scene.ordinal,
        "heading": scene.label,
        "turns": len(staged.turns),
        "block": list(last_block),
        "last": staged.last.end,
        "count": len(staged.imported),
        "cast": list(cast),
        "digest": digest(head + list(staged.imported)),
    }


def check_anchor(anchor: Mapping[str, Any], script: Script, name: str) -> tuple[ScriptScene, int]:
    """The imported scene in `script` and the place (a Fountain line, an FDX paragraph) of
    its last imported element, refused unless the file still holds the scene as imported.
    The scene is found by its heading and its imported elements, compared by content: lines
    a writer added or removed elsewhere in the file move it, and it is found there."""
    if anchor.get("format") != script.format:
        raise BadScript("wrong_format", was=anchor.get("format", "?"), name=name)
    count = int(anchor.get("count", 0))
    cast = [str(c) for c in anchor.get("cast", [])]
    scenes = [s for s in scenes_of(script) if s.label == anchor.get("heading")]
    # the scene where it was first, then any other scene under the same heading
    scenes.sort(key=lambda s: s.ordinal != anchor.get("scene"))
    for scene in scenes:
        try:
            kept = recognise(scene.elements, cast)[:count]
        except BadScript:
            continue
        head = [scene.heading] if scene.heading else []
        if kept and len(kept) == count and digest(head + kept) == anchor.get("digest"):
            return scene, kept[-1].end
    raise BadScript("changed", name=name)


def splice_lines(text: str, last: int, paragraphs: Sequence[Sequence[str]]) -> str:
    """`text` with each paragraph set in after line `last` (from 0), a blank line before
    each, in the file's own line ending; nothing else changes."""
    if not paragraphs:
        return text
    breaks = list(LINE_BREAK.finditer(text))
    nl = breaks[0].group(0) if breaks else "\n"
    blocks = [nl.join(p) for p in paragraphs]
    if last < len(breaks):
        offset = breaks[last].end()
        insert = "".join(nl + b + nl for b in blocks)
        rest = text[offset:]
        if rest and not LINE_BREAK.match(rest):  # the next paragraph needs its blank line
            insert += nl
        return text[:offset] + insert + rest
    return text + "".join(nl + nl + b for b in blocks)

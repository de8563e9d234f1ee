"""Screenplays read by independent parsers (screenplain, fountain-py) in one shape, so a test
can hold our reader (engine.script) and a splice to them: the cue/dialogue sequence as
(name, extensions, dual, the speech's lines joined)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from fountain import FountainParser
from fountain.elements import ElementType
from screenplain.parsers import fountain as screenplain
from screenplain.types import Dialog, DualDialog

SCRIPTS = Path(__file__).resolve().parent / "fixtures" / "scripts"
_EXT = re.compile(r"\s*[(（]([^()（）]*)[)）]\s*$")

Speech = tuple[str, tuple[str, ...], str]


def _name(cue: str) -> tuple[str, tuple[str, ...]]:
    cue, exts = cue.strip(), []
    while (m := _EXT.search(cue)) and cue[: m.start()].strip():
        exts.insert(0, m.group(1).strip())
        cue = cue[: m.start()]
    return cue.strip(), tuple(exts)


def screenplain_speeches(text: str) -> list[Speech]:
    out: list[Speech] = []
    for para in screenplain.parse(io.StringIO(text)).paragraphs:
        dialogs = [para.left, para.right] if isinstance(para, DualDialog) else [para]
        for d in dialogs:
            if isinstance(d, Dialog):
                name, exts = _name(str(d.character))
                out.append((name, exts, "\n".join(str(line) for _, line in d.blocks)))
    return out


def fountain_py_speeches(text: str) -> list[Speech]:
    out: list[Speech] = []
    current: list[str] | None = None
    for e in FountainParser().parse(text).elements:
        if e.type == ElementType.DUAL_DIALOGUE:
            for side in ("left", "right"):
                who = e.metadata[f"{side}_character"]
                said = [x.text for x in e.metadata[f"{side}_dialogue"]]
                out.append(_joined(who, "\n".join(said)))
            current = None
        elif e.type == ElementType.CHARACTER:
            out.append(_joined(e, ""))
            current = []
        elif e.type in (ElementType.DIALOGUE, ElementType.PARENTHETICAL) and current is not None:
            current.append(e.text)
            name, exts, _ = out[-1]
            out[-1] = (name, exts, "\n".join(current))
        elif e.type != ElementType.NOTE:
            current = None
    return out


def _joined(cue, said: str) -> Speech:
    """fountain-py's cue: its extension, or the full-width one it leaves in the name."""
    name, exts = _name(cue.text)
    ext = cue.metadata.get("extension")
    return name, exts + ((ext,) if ext else ()), said


def our_speeches(text: str) -> list[Speech]:
    from engine.script.fountain import parse_fountain

    return [
        (e.name, e.extensions, e.text) for e in parse_fountain(text).elements if e.kind == "speech"
    ]

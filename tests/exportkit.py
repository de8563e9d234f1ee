"""A played take for the export tests, and the independent parsers' reading of its exports
(screenplain and fountain-py for Fountain, the FDX XML, the storyboard CSV).
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

from fountain import FountainParser
from fountain.elements import ElementType
from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, Slug

from engine import Actor, Rehearsal
from engine.providers.scripted import ScriptedRequest

CONTEXT = "A small room. It is late."
PLAN = [
    # (actor, action, dialogue, cue)
    ("Ruth", "Ruth slams the file down.", "Where were you at *nine*?\n\nAnswer me.", "林小姐"),
    ("林小姐", "BANG\nThe door flies open. INT. KITCHEN - NIGHT", "", "Ruth"),
    ("Ruth", "", "CUT TO:\nYou heard me.", "ANY"),
    ("林小姐", "她把手放在桌上，看著窗外，很久都沒有說話，直到遠處傳來一聲汽車喇叭，才慢慢轉過頭來。",
     "我那天晚上在家。\n一個人。", "Ruth"),
    ("Ruth", "", "Fine.", ""),
]  # fmt: skip


def expected(heading: str, ruth: str) -> list[tuple[str, str]]:
    return [
        ("heading", heading),
        ("character", ruth),
        ("parenthetical", "(Ruth slams the file down.)"),
        ("dialogue", "Where were you at *nine*?\n\nAnswer me."),
        ("action", "BANG\nThe door flies open. INT. KITCHEN - NIGHT"),
        ("character", ruth),
        ("dialogue", "CUT TO:\nYou heard me."),
        ("action", PLAN[3][1]),
        ("character", "林小姐"),
        ("dialogue", "我那天晚上在家。\n一個人。"),
        ("character", ruth),
        ("dialogue", "Fine."),
    ]


def make_scene(root: Path, language: str) -> Path:
    (root / "actors").mkdir(parents=True)
    (root / "context.md").write_text(
        f"---\nmodel: scripted/plan\nlanguage: {language}\ncast: [Ruth, 林小姐]\n---\n{CONTEXT}\n",
        encoding="utf-8",
    )
    for actor in ("Ruth", "林小姐"):
        (root / "actors" / actor).mkdir()
        (root / "actors" / actor / "soul.md").write_text(f"## Bio\n{actor}.\n", encoding="utf-8")
    return root


async def play_plan(root: Path, scripted) -> Rehearsal:
    queue = list(PLAN)

    def script(request: ScriptedRequest) -> str:
        actor, action, dialogue, cue = queue.pop(0)
        assert actor == request.shape.speaker
        parts = [f"<thought>{actor} hides something ({len(queue)}).</thought>"]
        if action:
            parts.append(f"<action>{action}</action>")
        if dialogue:
            parts.append(f"<dialogue>{dialogue}</dialogue>")
        parts.append(f"<cue>{cue}</cue>")
        return "\n".join(parts)

    scripted.register("plan", script)
    rehearsal = Rehearsal(root, models=scripted)
    for actor, *_ in PLAN:
        await rehearsal.cue(Actor(actor))
    return rehearsal


def fountain_elements(text: str) -> tuple[dict, list[tuple[str, str]]]:
    play = fountain.parse(io.StringIO(text))
    out: list[tuple[str, str]] = []
    for para in play.paragraphs:
        if isinstance(para, Slug):
            out.append(("heading", str(para.line)))
        elif isinstance(para, Action):
            out.append(("action", "\n".join(str(line) for line in para.lines)))
        elif isinstance(para, Dialog):
            out.append(("character", str(para.character)))
            for paren, line in para.blocks:
                kind = "parenthetical" if paren else "dialogue"
                if kind == "dialogue" and out[-1][0] == "dialogue":
                    out[-1] = ("dialogue", out[-1][1] + "\n" + str(line))
                else:
                    out.append((kind, str(line)))
        else:
            out.append((type(para).__name__, ""))
    return play.title_page, out


_FOUNTAIN_PY = {
    ElementType.SCENE_HEADING: "heading",
    ElementType.ACTION: "action",
    ElementType.CHARACTER: "character",
    ElementType.PARENTHETICAL: "parenthetical",
    ElementType.DIALOGUE: "dialogue",
}


def fountain_py_elements(text: str) -> list[tuple[str, str]]:
    """fountain-py's reading, in the shape of fountain_elements' (headings as printed, in
    capitals; a speech's lines joined; notes dropped, as a reader drops them)."""
    out: list[tuple[str, str]] = []
    for element in FountainParser().parse(text).elements:
        kind = _FOUNTAIN_PY.get(element.type, element.type.value)
        said = element.text.upper() if kind == "heading" else element.text
        if kind == "note":
            continue
        if kind == "dialogue" and out and out[-1][0] == "dialogue":
            out[-1] = ("dialogue", out[-1][1] + "\n" + said)
        else:
            out.append((kind, said))
    return out


def fdx_elements(text: str) -> list[tuple[str, str]]:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "FinalDraft" and root.get("DocumentType") == "Script"
    kinds = {"Scene Heading": "heading", "Action": "action", "Character": "character",
             "Parenthetical": "parenthetical", "Dialogue": "dialogue"}  # fmt: skip
    return [
        (kinds[p.get("Type")], "".join(t.text or "" for t in p.findall("Text")))
        for p in root.find("Content").findall("Paragraph")
    ]


def read_csv(path: Path) -> list[list[str]]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # the BOM spreadsheet programs need for Chinese
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))

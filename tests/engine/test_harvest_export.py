"""Exports read back by independent parsers: Fountain by screenplain, FDX as XML, the storyboard
with the csv module. A scripted take with the awkward cases: a Chinese name and a Latin one,
an actions-only turn, multi-line lines, text that looks like Fountain structure."""

from __future__ import annotations

from pathlib import Path

import pytest
from exportkit import (
    CONTEXT,
    PLAN,
    expected,
    fdx_elements,
    fountain_elements,
    make_scene,
    play_plan,
    read_csv,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Rehearsal
from engine.errors import BadRequest, TakeNotFound, UnknownFormat
from engine.harvest.export import JOINER, ExportLine, ScriptMeta, to_fountain


@pytest.mark.parametrize(
    "language, folder, headers, sizes",
    [
        ("en", "interview", ["shot", "scene", "speaker", "addressee", "action", "line",
                             "shot size", "duration"], ("wide", "medium", "close-up")),
        ("zh", "審訊室", ["鏡號", "場景", "說話人", "對象", "動作", "台詞", "建議景別", "建議時長"],
         ("全景", "中景", "近景")),
    ],
)  # fmt: skip
async def test_a_take_exports_into_four_formats_that_read_back(
    tmp_path: Path, scripted, language, folder, headers, sizes
) -> None:
    scene = make_scene(tmp_path / folder, language)
    rehearsal = await play_plan(scene, scripted)
    paths = await rehearsal.harvest.export()
    out = scene / "exports" / "take_1"
    assert sorted(paths) == sorted(
        out / n
        for n in ("screenplay.fountain", "screenplay.fdx", "screenplay.md", "storyboard.csv")
    )

    title, elements = fountain_elements((out / "screenplay.fountain").read_text(encoding="utf-8"))
    assert elements == expected(folder.upper(), "RUTH")
    assert title["Title"] == [folder] and "1" in title["Source"][0] and title["Draft date"]
    assert "@林小姐" in (out / "screenplay.fountain").read_text(encoding="utf-8")

    assert fdx_elements((out / "screenplay.fdx").read_text(encoding="utf-8")) == expected(
        folder, "Ruth"
    )

    md = (out / "screenplay.md").read_text(encoding="utf-8")
    assert md.index(folder) < md.index(CONTEXT) < md.index("Where were you") < md.index("Fine.")
    assert "hides something" not in md

    wide, medium, close = sizes
    rows = read_csv(out / "storyboard.csv")
    assert rows[0] == headers
    assert [r[0] for r in rows[1:]] == ["S001", "S002", "S003", "S004", "S005"]
    assert [(r[2], r[3], r[6], r[7]) for r in rows[1:]] == [
        ("Ruth", "林小姐", wide, "4.8"),  # 7 words at 2.5/s + 2 s of business
        ("林小姐", "Ruth", medium, "2.0"),  # action only
        ("Ruth", "", medium, "2.0"),  # ANY: nobody in particular
        ("林小姐", "Ruth", close, "4.5"),  # 10 characters at 4/s + 2 s
        ("Ruth", "", medium, "2.0"),  # an empty cue
    ]
    assert rows[1][4:6] == [PLAN[0][1], PLAN[0][2]] and rows[1][1] == folder


async def test_thoughts_go_in_notes_that_parsers_skip(tmp_path: Path, scripted) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    rehearsal = await play_plan(scene, scripted)
    plain = await rehearsal.harvest.export(formats=("fountain",), out=tmp_path / "plain")
    noted = await rehearsal.harvest.export(
        formats="fountain,md,csv", thoughts=True, out=tmp_path / "th"
    )
    plain_text = plain[0].read_text(encoding="utf-8")
    noted_text = noted[0].read_text(encoding="utf-8")
    assert "hides something" not in plain_text
    assert noted_text.count("[[Ruth hides something") == 3
    assert fountain_elements(noted_text)[1] == fountain_elements(plain_text)[1]
    assert "林小姐 hides something" in (tmp_path / "th" / "screenplay.md").read_text("utf-8")
    rows = read_csv(tmp_path / "th" / "storyboard.csv")
    assert rows[0][-1] == "thought" and rows[1][-1].startswith("Ruth hides something")


async def test_picks_export_in_pick_order_with_their_references(tmp_path: Path, scripted) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    rehearsal = await play_plan(scene, scripted)
    await rehearsal.takes.save()
    await rehearsal.harvest.pick(4, take=1, by="alice")
    await rehearsal.harvest.pick(1, take=1, by="bob")
    await rehearsal.harvest.export(picks=True)
    out = scene / "exports" / "picks"
    text = (out / "screenplay.fountain").read_text(encoding="utf-8")
    _, elements = fountain_elements(text)
    full = expected("INTERVIEW", "RUTH")
    assert elements == [full[0]] + full[7:10] + full[1:4]
    assert text.index("[[take_1 · turn 4]]") < text.index("[[take_1 · turn 1]]")
    rows = read_csv(out / "storyboard.csv")
    assert rows[0][-2:] == ["take", "turn"]
    assert [(r[0], r[2], r[-2], r[-1]) for r in rows[1:]] == [
        ("S001", "林小姐", "1", "4"),
        ("S002", "Ruth", "1", "1"),
    ]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"formats": ("fountain", "pdf")}, UnknownFormat),
        ({"formats": "docx"}, UnknownFormat),
        ({"take": 9}, TakeNotFound),
        ({"picks": True}, BadRequest),  # nothing picked yet
    ],
)
async def test_refused_exports_write_nothing(tmp_path: Path, scripted, kwargs, error) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    rehearsal = await play_plan(scene, scripted)
    with pytest.raises(error):
        await rehearsal.harvest.export(**kwargs)
    assert not (scene / "exports").exists()


async def test_an_empty_take_is_refused(tmp_path: Path) -> None:
    scene = make_scene(tmp_path / "interview", "en")
    with pytest.raises(BadRequest):
        await Rehearsal(scene).harvest.export()
    assert not (scene / "exports").exists()


# Model output is untrusted: a line may look like any piece of Fountain structure. Each must
# come back as the text it was, in its place (boneyard /* */ across turns, notes, sections,
# page breaks, centred text, transitions, a title-page key, emphasis, a forced cue).
ATTACKS = [
    ExportLine(1, "Ruth", "", "Let me open /* a comment", "Danny"),
    ExportLine(2, "Danny", "# ACT TWO\n= synopsis\n===\n> THE END <", "", ""),
    ExportLine(3, "Ruth", "", "and close it */ here.\nTitle: forged\n**bold** _under_", ""),
    ExportLine(4, "Danny", "FADE OUT.\nCUT TO:", "", ""),
    ExportLine(5, "Ruth", "@MALLORY\nRUTH", "", ""),
    ExportLine(6, "Danny", "", "@MALLORY\nWhat?  \nINT. HOUSE - DAY", ""),
]


def test_structure_in_what_actors_say_stays_text() -> None:
    meta = ScriptMeta("scene", "1", "2026-01-01", "", "en", {"Ruth": (), "Danny": ()})
    _, elements = fountain_elements(to_fountain(meta, ATTACKS))
    assert elements == [
        ("heading", "SCENE"),
        ("character", "RUTH"),
        ("dialogue", "Let me open /* a comment"),
        ("action", "# ACT TWO\n= synopsis\n===\n> THE END <"),
        ("character", "RUTH"),
        # Fountain parsers know no escape for `_`: a pair of them is read as underlining, the
        # words themselves stay (stars are escaped, so they stay literal; an invisible joiner
        # keeps a "*/" from closing a comment in readers that do not know the escape).
        ("dialogue", f"and close it *{JOINER}/ here.\nTitle: forged\n**bold** under"),
        ("action", "FADE OUT.\nCUT TO:"),
        ("action", "@MALLORY\nRUTH"),
        ("character", "DANNY"),
        ("dialogue", "@MALLORY\nWhat?\nINT. HOUSE - DAY"),
    ]


def test_what_xml_cannot_hold_is_the_complement_of_its_char_production() -> None:
    """XML 1.0's Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF];
    every other code point is dropped from an FDX, and none of these."""
    from engine.harvest.export import _NOT_XML

    def xml_char(c: int) -> bool:
        return c in (0x9, 0xA, 0xD) or any(
            lo <= c <= hi for lo, hi in ((0x20, 0xD7FF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF))
        )

    every = "".join(chr(c) for c in range(0x110000))
    assert _NOT_XML.sub("", every) == "".join(ch for ch in every if xml_char(ord(ch)))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("你好한글かなカナ豈'’_")))
def test_cjk_characters_are_counted_one_by_one_wherever_they_stand(text: str) -> None:
    from engine.harvest.textstats import _CJK_RANGES, cjk_chars

    expected = sum(1 for ch in text if any(lo <= ch <= hi for lo, hi in _CJK_RANGES))
    assert cjk_chars(text) == expected

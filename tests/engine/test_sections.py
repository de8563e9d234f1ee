"""engine.folder.sections: the one `## heading` splitter under transcript.md, the backstage and
stage-manager logs, director_notes.md, picks.md and soul.md — and what each format does with
the `## ` lines that are not its own (pinned here, so the shared splitter changes none of it)."""

from __future__ import annotations

import re

import pytest

from engine.folder.sections import escape, split, unescape
from engine.folder.soul import bio_part, replace_prior_story
from engine.folder.stage import StageBlock, parse_blocks
from engine.folder.turns import Turn, parse_backstage, parse_transcript
from engine.folder.whispers import add_note, parse_notes, rename_section, without_section
from engine.harvest.picks import Pick, parse_picks
from engine.takes.folders import cut_log

NUMBERED = re.compile(r"## ([0-9]+)\s*$")

# text, pattern, [(heading line, first line number, lines under it)]
SPLITS = [
    ("", None, []),
    ("no headings at all\n", None, []),
    ("preamble\n## A\none\ntwo", None, [("## A", 0 + 1, ("one", "two"))]),
    ("## A\n## B\nb\n", None, [("## A", 0, ()), ("## B", 1, ("b", ""))]),
    ("##A\n#  A\n ## A\n", None, []),  # not headings: no space, one hash, indented
    ("\\## escaped\n## real\n\\## again", None, [("## real", 1, ("\\## again",))]),
    ("## \nbare", None, [("## ", 0, ("bare",))]),  # a bare `## ` is structure by default...
    ("## 1\na\n## note\nb\n## 2\nc", NUMBERED, [("## 1", 0, ("a", "## note", "b")), ("## 2", 4, ("c",))]),  # ...a format may count only its own
    ("## A\r\nx\r\n", None, [("## A\r", 0, ("x\r", ""))]),  # "\n" alone separates lines
]  # fmt: skip


@pytest.mark.parametrize(("text", "pattern", "expected"), SPLITS)
def test_split_finds_each_heading_and_the_lines_under_it(text, pattern, expected):
    sections = split(text) if pattern is None else split(text, pattern)
    assert [(s.line, s.start, s.lines) for s in sections] == expected
    for s in sections:  # offsets cut the text exactly where the lines say
        assert text[s.offset :].startswith(s.line)
        between = "\n" if s.end_offset < len(text) else ""  # before the next heading
        assert text[s.offset : s.end_offset] == "\n".join((s.line, *s.lines)) + between
        assert s.end == s.start + 1 + len(s.lines)


def test_sections_tile_the_text_after_the_preamble():
    text = "head\n## A\na\n\n## B\n\\## b\n## C"
    sections = split(text)
    assert text[: sections[0].offset] == "head\n"
    assert "".join(text[s.offset : s.end_offset] for s in sections) == text[sections[0].offset :]
    assert [s.body() for s in sections] == ["a", "## b", ""]


# line as a person or a model wrote it, as stored
ESCAPES = [
    ("plain", "plain"),
    ("## looks like a heading", "\\## looks like a heading"),
    ("**Line**: looks like a label", "\\**Line**: looks like a label"),
    ("\\ starts with a backslash", "\\\\ starts with a backslash"),
    ("##no space", "##no space"),
    (" ## indented", " ## indented"),
    ("", ""),
]


@pytest.mark.parametrize(("written", "stored"), ESCAPES)
def test_escape_round_trips_every_line(written, stored):
    assert escape(written) == stored
    assert unescape(stored) == written
    assert not split(stored)  # a stored value line never starts a section


def test_a_format_may_escape_its_own_structure_too():
    assert escape("- ⭐ bob", also=("- ⭐",)) == "\\- ⭐ bob"
    assert escape("- ⭐ bob") == "- ⭐ bob"


# ---------------------------------------------------------------- each format's own rules


def test_transcript_every_unescaped_heading_ends_a_turn():
    text = "# T\n## 1 · A\n**Line**: hi\n## writer\n**Line**: lost\n## 2 · B\n**動作**: x\n\\## y\n"
    assert parse_transcript(text) == [Turn(1, "A", dialogue="hi"), Turn(2, "B", action="x\n## y")]


def test_backstage_a_heading_that_is_no_turn_number_stays_in_the_thought():
    text = "head\n## 1\nthought one\n## writer heading\nmore\n\\## 2\n## 2 \nsecond\n"
    assert parse_backstage(text) == {1: "thought one\n## writer heading\nmore\n## 2", 2: "second"}


def test_stage_blocks_skip_turns_writers_headings_and_nameless_entrances():
    text = "## 1.1 · 事件\nrain\n\\## not\n## 2 · A\n**Line**: x\n## 2.1 · Enters · B\n## 2.2 · Exits\n"
    assert parse_blocks(text) == [
        StageBlock(1, 1, "event", text="rain\n## not"),
        StageBlock(2, 1, "enter", actor="B"),
    ]


def test_notes_a_bare_heading_is_text_and_a_blank_name_reaches_nobody():
    whispers = parse_notes("pre\n## Everyone\n- a\n## \n- b\n##  \n- c\n## A\n- d\n", ["A"])
    assert whispers.everyone == "- a\n## \n- b"
    assert whispers.per_actor == {"A": "- d"}
    assert whispers.unknown_sections == (" ",)
    assert add_note("## A\n- d\n## \n- x\n", "new", "A") == "## A\n- d\n## \n- x\n- new\n"
    assert add_note("## A\n- d\n\n\n## B\n", "new", "A") == "## A\n- d\n- new\n\n\n## B\n"


def test_picks_a_writers_heading_stays_in_the_pick_above():
    text = (
        "# Picks\n## take_1 · turn 2 · A · ⭐ 1\n**Line**: hi\nmore\n## writer heading\n- ⭐ bob\n"
    )
    assert parse_picks(text) == [
        Pick(1, 2, "A", dialogue="hi\nmore\n## writer heading", votes=("bob",))
    ]


SOULS = [
    # body, after replace_prior_story(body, "NEW"), bio_part(body): the heading as written, one
    # blank line, the story, one blank line, the rest.
    ("bio\n## 前期劇本  \n  \n\nold\n## 導演\nx",
     "bio\n## 前期劇本  \n\nNEW\n\n## 導演\nx", "bio\n## 導演\nx"),
    ("## 前期劇本\nold\n## 導演\nx", "## 前期劇本\n\nNEW\n\n## 導演\nx", "## 導演\nx"),
    ("## 前期劇本\n", "## 前期劇本\n\nNEW\n", ""),
    ("bio\n##  前期劇本\nold", "bio\n##  前期劇本\n\nNEW\n", "bio"),
    ("bio only", "bio only\n\n## 前期劇本\n\nNEW\n", "bio only"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "replaced", "bio"), SOULS)
def test_soul_prior_story_is_replaced_in_place(body, replaced, bio):
    assert replace_prior_story(body, "NEW") == replaced
    assert bio_part(body) == bio
    # a redraft of a redraft has the same shape: blank lines never pile up
    assert replace_prior_story(replace_prior_story(replaced, "X"), "NEW") == replaced


def test_cut_log_cuts_at_the_first_block_past_the_turn():
    log = "## before turn 1 → A\nr\n## 2\n\\## 9\n## 2.1 · 事件\nx\n## 3 · B\n"
    assert cut_log(log, 0) == ""
    assert cut_log(log, 1) == "## before turn 1 → A\nr\n"
    assert cut_log(log, 2) == "## before turn 1 → A\nr\n## 2\n\\## 9\n## 2.1 · 事件\nx\n"
    assert cut_log(log, 3) == log


NOTES = "# Notes\n\n## Everyone\n- all\n\n## Ruth\n- hide it <!-- director · take 1 · after turn 0 -->\n- two\n  lines\n\n## Carol\n"
WITHOUT = [
    # (actor, the notes left, how many whispers went)
    ("Ruth", "# Notes\n\n## Everyone\n- all\n\n## Carol\n", 2),
    (
        "Carol",
        "# Notes\n\n## Everyone\n- all\n\n## Ruth\n- hide it <!-- director · take 1 · after turn 0 -->\n- two\n  lines\n",
        0,
    ),
    ("Danny", NOTES, 0),  # no section: nothing changes
    ("Rut", NOTES, 0),  # a name, not a prefix
]


@pytest.mark.parametrize(("actor", "left", "gone"), WITHOUT)
def test_a_removed_actors_whispers_go_and_nobody_elses(actor: str, left: str, gone: int) -> None:
    assert without_section(NOTES, actor) == (left, gone)
    assert parse_notes(left, ["Ruth", "Carol"]).unknown_sections == ()


def test_removing_a_section_never_opens_a_comment_that_ran_past_its_heading() -> None:
    hidden = (
        "## Ruth\n- ruth private\n\n## Danny\n- d <!-- disabled:\n## 全體\n"
        "- Ruth secretly sold the house\n-->\n\n## Carol\n- c\n"
    )
    left, _ = without_section(hidden, "Danny")
    notes = parse_notes(left, ["Ruth", "Carol"])
    assert "sold the house" not in notes.everyone and "sold the house" not in left
    assert notes.for_actor("Carol") == "- c" and notes.for_actor("Ruth") == "- ruth private"


def test_a_renamed_actor_keeps_their_whispers() -> None:
    renamed = rename_section(NOTES, "Ruth", "Ruthie")
    assert (
        parse_notes(renamed, ["Ruthie", "Carol"]).for_actor("Ruthie") == "- hide it\n- two\n  lines"
    )

"""Who speaks next, as tables: director's cue > neglect > the actor's cue > stage manager."""

from __future__ import annotations

import pytest

from engine.reply.cue import match_cue
from engine.turn.casting import longest_silent, next_on_stage, read_stage_manager, silence

CAST = ["林小姐", "刑警", "律師"]
ALIASES = {"林小姐": ("林", "林曉雯"), "刑警": ("王警官",), "律師": ("張律師",)}


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("律師", "律師"),
        ("@律師", "律師"),
        ("＠律師", "律師"),
        (" 律師。", "律師"),
        ("「林小姐」", "林小姐"),
        ("張律師", "律師"),  # an alias
        ("王警官", "刑警"),
        ("林", "林小姐"),
        ("林曉雯小姐", "林小姐"),  # honorific around an alias
        ("ANY", "ANY"),
        ("any", "ANY"),
        ("任何人", "ANY"),
        ("", None),
        ("   ", None),
        ("王五", None),  # nobody by that name
        ("律師和刑警", None),  # ambiguous: two people
    ],
)
def test_cues_are_matched_to_the_cast(raw, expected):
    assert match_cue(raw, ALIASES) == expected


def test_english_honorifics_and_case():
    cast = {"Mara": (), "Detective Reyes": ("Reyes",), "Tom": ("Tommy",)}
    assert match_cue("@mara", cast) == "Mara"
    assert match_cue("Mr. Tom", cast) == "Tom"
    assert match_cue("Det. Reyes?", cast) == "Detective Reyes"


@pytest.mark.parametrize(
    "speakers, last_cue, expected",
    [
        ([], None, (None, "stage_manager")),
        (["林小姐"], "刑警", ("刑警", "cue")),
        (["林小姐"], "林小姐", ("林小姐", "self_cue")),
        (["林小姐"], "ANY", (None, "stage_manager")),
        (["林小姐"], None, (None, "stage_manager")),
        (["林小姐", "刑警", "林小姐"], "刑警", ("律師", "neglect")),  # 律師 silent 3
        (["律師", "林小姐", "刑警", "林小姐"], "刑警", ("律師", "neglect")),
        (["林小姐", "刑警"], "林小姐", ("林小姐", "cue")),  # 律師 silent only 2
        # the neglected actor who just spoke is not "neglected"
        (["刑警", "刑警", "刑警", "林小姐"], "林小姐", ("律師", "neglect")),
    ],
)
def test_next_on_stage(speakers, last_cue, expected):
    """The scene's own rules, everyone on stage (the director's cue is the run's first turn)."""
    last = speakers[-1] if speakers else None
    choice = next_on_stage(CAST, silence(CAST, speakers), last, last_cue, neglect_turns=3)
    assert (choice.actor, choice.reason) == expected


def test_neglect_protection_can_be_switched_off():
    speakers = ["林小姐", "刑警"] * 5
    choice = next_on_stage(CAST, silence(CAST, speakers), "刑警", "林小姐", neglect_turns=0)
    assert (choice.actor, choice.reason) == ("林小姐", "cue")


def test_silence_counts_and_longest_silent():
    speakers = ["林小姐", "刑警", "林小姐"]
    assert silence(CAST, speakers) == {"林小姐": 0, "刑警": 1, "律師": 3}
    assert longest_silent(CAST, speakers) == "律師"
    assert longest_silent(CAST, []) == "林小姐"
    assert longest_silent(["林小姐", "刑警"], ["刑警"]) == "林小姐"


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("NEXT: 律師\nREASON: 林小姐問了她", ("律師", "林小姐問了她")),
        ("next: @張律師", ("律師", "")),
        ("刑警", ("刑警", "")),
        ("NEXT: ANY", (None, "")),
        ("NEXT: 王五\nREASON: x", (None, "x")),
        ("I think the lawyer should go next because…", (None, "")),
    ],
)
def test_stage_manager_answers_are_validated_against_the_cast(answer, expected):
    assert read_stage_manager(answer, ALIASES) == expected

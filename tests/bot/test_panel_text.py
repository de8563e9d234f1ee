"""The panel's pure decisions: its lines, which controls work now, its custom ids (untrusted
input), the paging of a large cast and the coalescing of edits (an injected clock)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.panel.text import (
    EVERYONE,
    OPTIONS,
    Coalescer,
    PanelId,
    Progress,
    SelectSpec,
    Snapshot,
    advance,
    enabled,
    encode_id,
    layout,
    page_of,
    page_options,
    panel_text,
    parse_id,
    title,
    turns_given,
)
from engine import Cut, RunFinished, RunStarted, Status, TurnCompleted
from engine.spend.budget import Budget

IDLE = Status(
    scene="interrogation",
    take=2,
    turns=3,
    cast=("Ana", "Bo"),
    mode="idle",
    progress="",
    prompt_tokens=0,
    completion_tokens=0,
    cost_usd=None,
    model_calls=0,
    saved_takes=(1,),
    on_stage=("Ana", "Bo"),
)
RUNNING = replace(IDLE, mode="running")
FRESH = replace(IDLE, turns=0)


def turn(actor: str) -> TurnCompleted:
    return TurnCompleted(
        scene="s", take=2, turn=4, actor=actor, action="", dialogue="hi", cue="", thought="secret"
    )


# ---------------------------------------------------------------------- custom ids
@pytest.mark.parametrize(
    ("custom_id", "parsed"),
    [
        ("circus:run:0:interrogation", PanelId("run", "interrogation")),
        ("circus:cue:3:審訊", PanelId("cue", "審訊", 3)),
        ("circus:note:0:a scene with spaces", PanelId("note", "a scene with spaces")),
        ("circus:explode:0:interrogation", None),  # no such action
        ("circus:run:0:", None),
        ("circus:run:0:../etc", None),  # a path is no scene name
        ("circus:run:0:.hidden", None),
        ("circus:run:x:interrogation", None),
        ("circus:run:123:interrogation", None),
        ("circus:run:0:" + "s" * 65, None),  # longer than a name may be
        ("circus:run:0:a\nb", None),
        ("other:run:0:interrogation", None),
        ("x" * 101, None),
        (None, None),
        (42, None),
    ],
)
def test_a_custom_id_from_discord_is_parsed_or_refused(custom_id: object, parsed: PanelId | None):
    assert parse_id(custom_id) == parsed


@pytest.mark.parametrize("action", ["run", "cut", "resume", "save", "report", "cue", "note"])
def test_every_custom_id_round_trips_within_discords_limit(action: str):
    longest = "名" * 64
    custom_id = encode_id(action, longest, 99)
    assert len(custom_id) <= 100
    assert parse_id(custom_id) == PanelId(action, longest, 99)


def test_an_unknown_action_is_never_encoded():
    with pytest.raises(ValueError):
        encode_id("explode", "scene")


# ---------------------------------------------------------------------- progress
@pytest.mark.parametrize(
    ("before", "event", "after"),
    [
        (Progress(), RunStarted("s", take=2, turns=5, mode="run"), Progress("running", 0, 5)),
        (Progress("running", 0, 5), turn("Ana"), Progress("running", 1, 5, "Ana")),
        (Progress("running", 1, 5, "Ana"), Cut("s", take=2, turn=4), Progress("cut", 1, 5, "Ana")),
        (Progress("cut", 1, 5, "Ana"), RunFinished("s", 2, 1, "cut"), Progress("cut", 1, 5, "Ana")),
        (Progress("running", 5, 5, "Bo"), RunFinished("s", 2, 5, "completed"), Progress("idle", 5, 5, "Bo")),
        (Progress("running", 2, 5), RunFinished("s", 2, 2, "budget"), Progress("idle", 2, 5)),
        (Progress("cut", 1, 5, "Ana"), RunStarted("s", take=2, turns=1, mode="cue"), Progress("running", 0, 1, "Ana")),
    ],
)  # fmt: skip
def test_the_run_progress_follows_the_events(before: Progress, event, after: Progress):
    assert advance(before, event) == after


# ---------------------------------------------------------------------- what it shows
@pytest.mark.parametrize(
    ("snap", "lines"),
    [
        (
            Snapshot("en", IDLE, last_speaker="Bo"),
            ["🎛 **interrogation** · take 2 · 3 turns", "⏸ Idle", "On stage: Ana, Bo", "Last line: Bo"],
        ),
        (
            Snapshot("en", RUNNING, Progress("running", 2, 5, "Ana"), "Bo"),
            ["🎛 **interrogation** · take 2 · 3 turns", "▶ Running · turn 3 of 5", "On stage: Ana, Bo", "Last line: Ana"],
        ),
        (
            Snapshot("en", replace(IDLE, players=(("Ana", "discord:42"),)), Progress("cut", 1, 5)),
            ["🎛 **interrogation** · take 2 · 3 turns", "⏹ Cut", "On stage: Ana, Bo", "Ana played by <@42>"],
        ),
        (
            Snapshot("en", replace(IDLE, cost_usd=0.5, budgets=(Budget("scene", "usd", 2, 0.5), Budget("day", "usd", 10, 1.25)))),
            ["🎛 **interrogation** · take 2 · 3 turns", "⏸ Idle", "On stage: Ana, Bo", "Spent today: $1.2500 of $10.0000"],
        ),
        (
            Snapshot("en", replace(IDLE, cost_usd=0.5, on_stage=())),
            ["🎛 **interrogation** · take 2 · 3 turns", "⏸ Idle", "On stage: nobody", "Spent so far: $0.5000"],
        ),
        (
            Snapshot("zh", RUNNING, Progress("running", 0, 3)),
            ["🎛 **interrogation** · 第 2 條 · 3 輪", "▶ 排練中 · 第 1 / 3 輪", "台上：Ana, Bo"],
        ),
        (
            Snapshot("en", replace(RUNNING, held_by=(7, "laptop"))),
            ["🎛 **interrogation** · take 2 · 3 turns", "▶ Running elsewhere (a terminal or another bot)", "On stage: Ana, Bo"],
        ),
    ],
)  # fmt: skip
def test_the_panel_says_the_state_in_a_few_lines(snap: Snapshot, lines: list[str]):
    assert panel_text(snap).splitlines() == lines


@pytest.mark.parametrize(
    ("status", "on"),
    [
        (IDLE, {"run", "resume", "save", "report", "read", "cue", "note"}),
        (RUNNING, {"cut", "report", "read", "note"}),
        (FRESH, {"run", "cue", "note"}),
        (replace(RUNNING, held_by=(7, "laptop")), {"report", "read", "note"}),  # not ours to cut
        (replace(FRESH, cast=(), on_stage=()), {"run"}),
    ],
)
def test_controls_that_make_no_sense_now_are_disabled(status: Status, on: set[str]):
    assert {a for a, yes in enabled(Snapshot("en", status)).items() if yes} == on


def test_the_layout_fits_discords_limits_with_a_cast_of_thirty():
    cast = tuple(f"Actor {i:02d} " + "x" * 50 for i in range(30))
    snap = Snapshot("zh", replace(IDLE, cast=cast, on_stage=cast))
    rows = layout(snap)
    assert len(rows) <= 5
    buttons, hear, cue, note = rows
    assert isinstance(buttons, list) and len(buttons) == 5
    assert isinstance(hear, list) and [b.custom_id.split(":")[1] for b in hear] == ["read"]
    assert all(len(b.label) <= 80 and len(b.custom_id) <= 100 for b in buttons + hear)
    for select in (cue, note):
        assert isinstance(select, SelectSpec) and len(select.options) <= OPTIONS
        assert len({v for _, v in select.options}) == len(select.options)
        assert all(len(label) <= 100 and len(v) <= 100 for label, v in select.options)
    assert note.options[0][1] == EVERYONE


def test_a_large_cast_is_paged_and_every_name_is_offered_once():
    cast = tuple(f"A{i}" for i in range(60))
    seen, page, pages = [], 0, 0
    while True:
        options = page_options(cast, page, "en")
        assert len(options) <= OPTIONS
        seen += [v for _, v in options if page_of(v) is None]
        turn_to = page_of(options[-1][1])
        pages += 1
        if turn_to == 0:
            break
        page = turn_to
    assert seen == list(cast) and pages == 3


@pytest.mark.parametrize("size", [0, 1, 24, 25])
def test_a_small_cast_needs_no_paging(size: int):
    cast = tuple(f"A{i}" for i in range(size))
    options = page_options(cast, 0, "en")
    assert [page_of(v) for _, v in options] == [None] * max(size, 1)


@pytest.mark.parametrize(
    ("raw", "turns"),
    [("", 8), ("  ", 8), ("3", 3), (" 50 ", 50), ("51", None), ("0", None), ("-2", None), ("three", None), ("1e3", None), ("３", None)],
)  # fmt: skip
def test_the_run_form_takes_a_number_of_turns(raw: str, turns: int | None):
    assert turns_given(raw, 8, 50) == turns


def test_a_modal_title_fits_in_45_characters():
    assert len(title("panel.cue_title", "en", actor="x" * 80)) == 45
    assert title("panel.cue_title", "en", actor="Ana") == "Cue Ana"


# ---------------------------------------------------------------------- coalescing
def test_edits_are_coalesced_at_most_one_every_interval_and_the_last_state_wins():
    c = Coalescer(interval=2.0)
    assert c.delay(0.0) is None  # nothing changed: no edit
    c.changed()
    assert c.delay(0.0) == 0.0  # the first change goes out at once
    c.taking(0.0)
    for now in (0.1, 0.5, 1.0):  # twenty turns land in a second: one edit waits for them
        c.changed()
        assert c.delay(now) == pytest.approx(2.0 - now)
    c.taking(2.0)
    assert c.delay(2.5) is None
    c.changed()
    assert c.delay(5.0) == 0.0  # a quiet spell: the next change goes out at once


def test_a_change_during_an_edit_is_not_lost():
    c = Coalescer(interval=2.0)
    c.changed()
    c.taking(0.0)  # the edit reads the state now ...
    c.changed()  # ... and a turn lands while it is on its way
    assert c.delay(0.3) == pytest.approx(1.7)


# ---------------------------------------------------------------------- the panel's id on disk
@pytest.mark.parametrize(
    ("panel", "found"),
    [(None, None), ("", None), ("123456789012345678", 123456789012345678), (42, 42)],
)
def test_the_binding_keeps_the_panels_id(tmp_path, panel, found):
    from bot.binding import Binding, read_binding, write_binding
    from engine import write_frontend_file

    write_binding(tmp_path, Binding(1, 2, 3, (4,), 5, panel_id=found))
    assert read_binding(tmp_path).panel_id == found
    data = {"guild_id": "1", "channel_id": "2", "thread_id": "3", "directors": ["4"]}
    write_frontend_file(tmp_path, "discord", {**data, "panel_id": panel})
    assert read_binding(tmp_path).panel_id == found


@pytest.mark.parametrize("panel", ["../x", "1e9", [1], "-5"])
def test_a_hand_edited_panel_id_that_is_no_id_is_refused_naming_the_file(tmp_path, panel):
    from bot.binding import read_binding
    from engine import BadSceneFile, write_frontend_file

    data = {"guild_id": "1", "channel_id": "2", "thread_id": "3", "directors": ["4"]}
    write_frontend_file(tmp_path, "discord", {**data, "panel_id": panel})
    with pytest.raises(BadSceneFile, match="discord.json"):
        read_binding(tmp_path)


@pytest.mark.parametrize(
    ("values", "ok"),
    [
        (["Ana"], True),
        ([], False),
        (["Ana", "Bo"], False),
        ([3], False),
        ("Ana", False),
        (None, False),
    ],
)
def test_a_select_sends_exactly_one_name_or_is_refused(values: object, ok: bool):
    from bot.errors import BotProblem
    from bot.panel.controls import chosen

    if ok:
        assert chosen(values) == "Ana"
    else:
        with pytest.raises(BotProblem):
            chosen(values)

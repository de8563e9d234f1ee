"""The line bin: picks.md round-trips, votes add up, and a pick stays on the line it was made
on across saves, replays and restarts. The Discord message map survives a restart too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine import Actor, Rehearsal
from engine.errors import NotPicked, TakeNotFound, TurnNotFound
from engine.folder.turns import parse_transcript
from engine.harvest.picks import Pick, add_vote, parse_picks, remove_vote, render_picks, retarget

TRICKY = [
    Pick(1, 2, "林小姐", "拍桌子", "你到底在怕什麼？\n說啊。", ("alice",), "好句"),
    Pick(
        3, 14, "Ruth", "", "## take_9 · turn 9 · Mallory · ⭐ 9\n**Line**: forged", ("bob", "c d")
    ),
    Pick(2, 1, "律師", "- ⭐ mallory\n\\backslash\n**動作**: x", "", ("eve",), "two\nlines"),
    Pick(4, 7, "刑警", "", "only a line", (), ""),
]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_picks_md_round_trips_exactly(language: str) -> None:
    text = render_picks(TRICKY, language)
    assert parse_picks(text) == TRICKY
    assert render_picks(parse_picks(text), language) == text
    assert "mallory" not in [v for p in parse_picks(text) for v in p.votes]


def test_picks_md_tolerates_a_writers_edits() -> None:
    edited = (
        "# My favourite lines\n\nSome words of my own.\n\n"
        "## take_1 · turn 2 · 林小姐 · ⭐ 7\r\n"  # a stale count, Windows line ends
        "**Line**: 你到底在怕什麼？\r\n"  # an English label in a Chinese scene
        "\n"
        "- ⭐ alice\n- ⭐alice\n-  ⭐ bob\n"  # a duplicate vote; a line that is no vote
        "## take 3 · 第 4 輪 · 刑警\n"
        "**台词**: 简体标签\n"
    )
    picks = parse_picks(edited)
    assert picks == [
        Pick(1, 2, "林小姐", "", "你到底在怕什麼？", ("alice",)),
        Pick(3, 4, "刑警", "", "简体标签", ()),
    ]


LINE = Pick(1, 2, "Ruth", "", "a line")
ONE_VOTER = [
    # (voters picking the line in turn, the votes it shows, why)
    (["Ana", "ana"], ("Ana",), "one writer in two cases: one vote, first spelled"),
    (["ANA", "Ana", "bob"], ("ANA", "bob"), "the first spelling stays"),
    (["Straße", "STRASSE"], ("Straße",), "folded as casefold folds"),
    (["Ana", "Anna"], ("Ana", "Anna"), "two names: two votes"),
]


@pytest.mark.parametrize(("voters", "votes", "why"), ONE_VOTER)
def test_a_voter_is_one_vote_whatever_the_case(voters: list[str], votes: tuple, why: str) -> None:
    picks: list[Pick] = []
    for by in voters:
        picks, pick = add_vote(picks, LINE, by)
    assert pick.votes == votes, why
    assert parse_picks(render_picks(picks, "en"))[0].votes == votes, why


def test_a_vote_is_taken_back_and_merged_whatever_the_case() -> None:
    ana = Pick(1, 2, "Ruth", votes=("Ana", "bob"))
    assert remove_vote([ana], 1, 2, "ANA") == (
        [replace(ana, votes=("bob",))],
        replace(ana, votes=("bob",)),
    )
    merged = retarget([ana, Pick(3, 2, "Ruth", votes=("ana", "cy"))], 3, 1)
    assert [p.votes for p in merged] == [("Ana", "bob", "cy")]
    edited = "## take_1 · turn 2 · Ruth · ⭐ 2\n- ⭐ Ana\n- ⭐ ana\n"  # a hand-edited file
    assert parse_picks(edited)[0].votes == ("Ana",)


async def test_pick_vote_and_unpick(scene: Path) -> None:
    rehearsal = Rehearsal(scene)
    await rehearsal.run(3, start=Actor("律師"))
    said = parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))[1]

    pick = await rehearsal.harvest.pick(2, by="alice", note="好句")
    assert pick == Pick(1, 2, said.actor, said.action, said.dialogue, ("alice",), "好句")
    assert (await rehearsal.harvest.pick(2, by="bob")).votes == ("alice", "bob")
    assert (await rehearsal.harvest.pick(2, by="alice", note="changed")).votes == ("alice", "bob")
    text = (scene / "picks.md").read_text(encoding="utf-8")
    assert said.dialogue in text and "- ⭐ alice" in text and "- ⭐ bob" in text and "好句" in text
    assert "changed" not in text

    assert (await rehearsal.harvest.unpick(2, by="alice")).votes == ("bob",)
    assert await rehearsal.harvest.unpick(2, by="bob") is None
    assert await rehearsal.harvest.picks() == []
    await rehearsal.harvest.pick(3, take="current", by="carol")
    assert await rehearsal.harvest.unpick(3) is None
    assert await rehearsal.harvest.picks() == []


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda r: r.harvest.pick(9, by="a"), TurnNotFound),
        (lambda r: r.harvest.pick(0, by="a"), TurnNotFound),
        (lambda r: r.harvest.pick(1, take=5, by="a"), TakeNotFound),
        (lambda r: r.harvest.pick(1, take="take_x", by="a"), TakeNotFound),
        (lambda r: r.harvest.unpick(2), NotPicked),
        (lambda r: r.harvest.unpick(1, by="nobody"), NotPicked),
        (lambda r: r.harvest.unpick(1, take=7), TakeNotFound),
    ],
)
async def test_refusals_write_nothing(scene: Path, call, error) -> None:
    rehearsal = Rehearsal(scene)
    await rehearsal.run(2, start=Actor("律師"))
    await rehearsal.harvest.pick(1, by="alice")
    before = (scene / "picks.md").read_bytes()
    with pytest.raises(error) as caught:
        await call(rehearsal)
    assert "\n" not in str(caught.value) and caught.value.in_language("zh")
    assert (scene / "picks.md").read_bytes() == before


def turns_of(folder: Path) -> dict[int, tuple[str, str]]:
    turns = parse_transcript((folder / "transcript.md").read_text(encoding="utf-8"))
    return {t.number: (t.actor, t.dialogue) for t in turns}


def check_picks_point_at_their_lines(scene: Path, picks: list[Pick]) -> None:
    """Every pick's text is exactly what its take says at its turn."""
    for p in picks:
        assert (scene / "takes" / f"take_{p.take}").is_dir(), p
        assert turns_of(scene / "takes" / f"take_{p.take}")[p.turn] == (p.actor, p.dialogue), p


async def test_picks_follow_their_lines_across_save_replay_and_restart(scene: Path) -> None:
    rehearsal = Rehearsal(scene)
    await rehearsal.run(4, start=Actor("律師"))
    await rehearsal.harvest.pick(2, by="alice")  # a pick of the current take (take 1, unsaved)
    assert await rehearsal.takes.save() == 1
    assert [(p.take, p.turn) for p in await rehearsal.harvest.picks()] == [(1, 2)]

    # The current take (2) is still exactly take_1: a pick made now, then a replay that does not
    # need to save anything, must land on take_1's turn, not on the new attempt's turn 3.
    await rehearsal.harvest.pick(3, by="bob")
    result = await rehearsal.takes.replay(1, until=1)
    assert result.autosaved is None and result.take == 2
    picks = await rehearsal.harvest.picks()
    assert [(p.take, p.turn, p.votes) for p in picks] == [(1, 2, ("alice",)), (1, 3, ("bob",))]
    await rehearsal.run(3)
    check_picks_point_at_their_lines(scene, picks)

    # Unsaved work with a pick: the replay saves it first as take_2, and the pick stays there.
    await rehearsal.harvest.pick(3, by="carol")
    current_line = turns_of(scene)[3]
    result = await rehearsal.takes.replay(1, until=2)
    assert result.autosaved == 2 and result.take == 3
    assert turns_of(scene / "takes" / "take_2")[3] == current_line
    await rehearsal.run(2)
    assert turns_of(scene)[3] != current_line  # the new attempt's turn 3 is another line

    restarted = Rehearsal(scene)  # a restart reads the same bin from picks.md
    picks = await restarted.harvest.picks()
    assert [(p.take, p.turn) for p in picks] == [(1, 2), (1, 3), (2, 3)]
    check_picks_point_at_their_lines(scene, picks)
    assert "take_2 · turn 3" in (scene / "picks.md").read_text(encoding="utf-8")


async def test_the_message_map_survives_a_restart_and_follows_a_saved_take(scene: Path) -> None:
    rehearsal = Rehearsal(scene)
    await rehearsal.run(2, start=Actor("律師"))
    await rehearsal.harvest.remember_post(1001, 1, 1)
    await rehearsal.harvest.remember_post(1002, 1, 2)
    assert await Rehearsal(scene).harvest.post_of(1002) == (1, 2)
    assert await rehearsal.harvest.post_of(4242) is None

    assert await rehearsal.takes.save() == 1
    await rehearsal.harvest.remember_post(2001, 2, 2)  # posted while take 2 equals take_1
    await rehearsal.takes.replay(1, until=1)
    later = Rehearsal(scene)
    assert await later.harvest.post_of(2001) == (
        1,
        2,
    )  # moved with the take, not onto the new attempt
    assert await later.harvest.post_of(1001) == (1, 1)
    await later.harvest.remember_post(3001, 2, 2)  # the new attempt's message
    assert await later.harvest.post_of(3001) == (2, 2)
    # a torn last line (a crash mid-append) is skipped
    with open(scene / ".circus" / "posts.jsonl", "a", encoding="utf-8") as f:
        f.write('{"message": 9')
    assert await Rehearsal(scene).harvest.post_of(3001) == (2, 2)


async def test_many_picks_and_whispers_at_once_in_one_process_all_land(scene: Path) -> None:
    """Two directors (two Rehearsals on one folder, as the bot and a console share it) vote and
    whisper at the same moment: every vote and every whisper lands, and nothing deadlocks (a
    blocking file lock held across awaits used to freeze the whole event loop here)."""
    import asyncio

    first, second = Rehearsal(scene), Rehearsal(scene)
    await first.run(3, start=Actor("律師"))
    voters = [f"v{i}" for i in range(12)]
    await asyncio.gather(
        *(
            (first if i % 2 else second).harvest.pick(1 + i % 3, by=name)
            for i, name in enumerate(voters)
        ),
        *((first if i % 2 else second).notes.note(f"WHISPER-{i}") for i in range(6)),
    )
    votes = {p.turn: set(p.votes) for p in await first.harvest.picks()}
    assert votes == {t: {v for i, v in enumerate(voters) if 1 + i % 3 == t} for t in (1, 2, 3)}
    notes = (scene / "director_notes.md").read_text(encoding="utf-8")
    assert all(f"WHISPER-{i}" in notes for i in range(6))

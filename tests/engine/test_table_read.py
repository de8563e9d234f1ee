"""The table read through a speech server (tests/fakeproviders/speech.py): what is sent, in
which voice, what it costs, and what the file and its cue sheet say — read back from disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakeproviders import FakeSpeech
from fakeproviders.speech import seconds_for
from readkit import THOUGHT, cue_times, distinct, duration, onsets, speech_config

from engine import BudgetExceeded, ModelError, ReadOrder, Rehearsal
from engine.folder.turns import parse_backstage, parse_transcript
from engine.voice.script import LINE_PAUSE, TURN_PAUSE
from engine.voice.table_read import LEAD

pytestmark = pytest.mark.asyncio


async def six_turns(scene: Path, scripted, config) -> Rehearsal:
    scripted.register("improv", distinct)
    r = Rehearsal(scene, models=scripted, config=config, account="room-1")
    await r.run(6)
    return r


def expected(scene: Path) -> list[tuple[str, str]]:
    """(voice, text) a read of the working take must ask for, in take order."""
    turns = parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))
    order = {"林小姐": "alloy", "刑警": "echo", "律師": "nova"}  # the defaults, in cast order
    out = [("fable", "審訊室。第 1 條。")]
    for t in turns:
        out += [("fable", t.action), (order[t.actor], t.dialogue)]
    return out


async def test_a_read_sends_every_line_in_take_order_in_its_voice(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        result = await r.read.read(ReadOrder(fmt="wav"))
    assert fake.said() == expected(scene)
    assert {body["model"] for body in fake.requests} == {"tts-1"}
    assert result.made == 13 and result.cached == 0 and result.lines == 13


async def test_no_thought_reaches_a_speech_server(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        await r.read.read(ReadOrder())
    thoughts = [
        text
        for log in (scene / "backstage").glob("*.log")
        for text in parse_backstage(log.read_text(encoding="utf-8")).values()
    ]
    assert len(thoughts) == 6
    for body in fake.requests:
        assert THOUGHT not in body["input"]
        assert not any(t in body["input"] for t in thoughts)


async def test_the_thoughts_read_is_a_file_of_its_own_in_its_own_voice(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        result = await r.read.read(ReadOrder(thoughts=True))
    assert result.thoughts is not None and result.thoughts.is_file()
    assert THOUGHT not in result.cue_sheet.read_text(encoding="utf-8")
    heard = [(v, text) for v, text in fake.said() if THOUGHT in text]
    assert len(heard) == 6 and {v for v, _ in heard} == {"ballad"}
    cues = result.thoughts.with_suffix(".txt").read_text(encoding="utf-8")
    assert cues.count(THOUGHT) == 6
    # every file the thoughts' read wrote is named, its cue sheet too, and each line counts once
    assert result.thoughts_files == (result.thoughts, result.thoughts.with_suffix(".txt"))
    assert result.made + result.cached == result.lines == len(fake.said())


async def test_speech_is_billed_per_character_in_the_scene_and_the_day(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        result = await r.read.read(ReadOrder())
    characters = sum(len(text) for _, text in fake.said())
    rows = [
        json.loads(line)
        for line in (scene / ".circus" / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    speech = [row for row in rows if row["kind"] == "speech"]
    assert len(speech) == 13 and sum(row["characters"] for row in speech) == characters
    assert sum(row["cost_usd"] for row in speech) == pytest.approx(characters * 1.5e-5)
    assert result.characters == characters
    assert result.cost_usd == pytest.approx(characters * 1.5e-5)
    day = list((scene.parent / ".circus" / "spend" / "room-1").glob("*.jsonl"))
    ledger = [json.loads(line) for line in day[0].read_text(encoding="utf-8").splitlines()]
    assert sum(row.get("characters", 0) for row in ledger) == characters
    status = await r.status()  # what `circus status` and /status show: the scripted turns are free
    assert status.cost_usd == pytest.approx(characters * 1.5e-5)


async def test_the_file_lasts_its_lines_and_pauses_and_the_cue_sheet_agrees(
    scene, scripted
) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        result = await r.read.read(ReadOrder(fmt="wav"))
    said = fake.said()
    # after the heading a turn's pause; within a turn a line's; after a turn's last line a turn's
    pauses = [TURN_PAUSE] + [LINE_PAUSE, TURN_PAUSE] * 6
    lengths = [seconds_for(text) + pause for (_, text), pause in zip(said, pauses, strict=True)]
    assert duration(result.audio[0]) == pytest.approx(sum(lengths), abs=1e-3)
    starts = [sum(lengths[:i]) + LEAD for i in range(len(lengths))]
    assert onsets(result.audio[0]) == pytest.approx(starts, abs=1e-3)  # where each line is
    cues = cue_times(result.cue_sheet.read_text(encoding="utf-8"))
    assert cues == pytest.approx(starts, abs=0.051)  # shown to a tenth of a second


async def test_the_default_file_is_opus_in_ogg_and_its_cue_sheet_agrees(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        wav = await r.read.read(ReadOrder(fmt="wav"))
        ogg = await r.read.read(ReadOrder())
    assert ogg.audio[0].suffix == ".ogg" and ogg.audio[0].read_bytes()[:4] == b"OggS"
    assert b"OpusHead" in ogg.audio[0].read_bytes()[:200]
    # joined line by line: each line keeps its encoder's priming (6.5 ms) and last frame
    extra = duration(ogg.audio[0]) - duration(wav.audio[0])
    assert duration(ogg.audio[0]) == pytest.approx(ogg.seconds, abs=1e-3)
    assert 0 <= extra <= 13 * 0.03
    cues = cue_times(ogg.cue_sheet.read_text(encoding="utf-8"))
    assert cues == pytest.approx(onsets(ogg.audio[0]), abs=0.051)
    assert ogg.audio[0].stat().st_size < wav.audio[0].stat().st_size / 5


async def test_a_re_read_after_a_replayed_turn_sends_only_the_changed_lines(
    scene, scripted
) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        await r.read.read(ReadOrder())
        first = set(fake.said())
        await r.takes.save()
        await r.takes.replay(1, until=5)
        await r.run(1)
        before = len(fake.requests)
        again = await r.read.read(ReadOrder())
    new = fake.said()[before:]
    heading = ("fable", "審訊室。第 2 條。")
    assert len(new) == 3 and heading in new  # the new take's heading, turn 6's action and line
    assert not set(new) & first
    assert again.made == 3 and again.cached == 10


async def test_no_cache_synthesises_every_line_again(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        await r.read.read(ReadOrder())
        await r.read.read(ReadOrder(cache=False))
    assert len(fake.requests) == 26


async def test_a_provider_failing_mid_read_keeps_what_was_made_and_the_next_read_resumes(
    scene, scripted
) -> None:
    fake = FakeSpeech(fail_at=5)
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        with pytest.raises(ModelError):
            await r.read.read(ReadOrder())
        assert not (scene / "exports").exists()  # nothing half-written
        assert len(fake.requests) == 4
        result = await r.read.read(ReadOrder())
    assert result.made == 9 and result.cached == 4
    assert len(fake.requests) == 13 and len(set(fake.said())) == 13


async def test_a_range_reads_only_its_turns(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        result = await r.read.read(ReadOrder(first=2, last=3))
    turns = parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))
    texts = [text for _, text in fake.said()]
    assert texts[1:] == [turns[1].action, turns[1].dialogue, turns[2].action, turns[2].dialogue]
    assert result.audio[0].name == "take_1_turns_2-3.ogg"


async def test_a_dollar_budget_refuses_the_line_that_would_cross_it(scene, scripted) -> None:
    context = scene / "context.md"
    context.write_text(
        context.read_text(encoding="utf-8").replace("neglect_turns: 3", "budget_usd: 0.0005"),
        encoding="utf-8",
    )
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        with pytest.raises(BudgetExceeded):
            await r.read.read(ReadOrder())
    billed = sum(len(text) for _, text in fake.said()) * 1.5e-5
    assert 0 < billed <= 0.0005
    assert not (scene / "exports").exists()


async def test_a_large_read_is_cut_into_numbered_parts_between_lines(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        whole = await r.read.read(ReadOrder(fmt="wav"))
        limit = whole.audio[0].stat().st_size // 2
        parts = await r.read.read(ReadOrder(fmt="wav", limit=limit, out=scene.parent / "p.wav"))
    assert len(parts.audio) >= 2
    assert [p.name for p in parts.audio][:2] == ["p.part1.wav", "p.part2.wav"]
    assert all(p.stat().st_size <= limit for p in parts.audio)
    total = sum(duration(p) for p in parts.audio)
    assert total == pytest.approx(duration(whole.audio[0]), abs=1e-3)
    assert "第 2 部分" in parts.cue_sheet.read_text(encoding="utf-8")  # the scene's language


async def test_a_large_ogg_read_is_cut_into_parts_that_each_play(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        r = await six_turns(scene, scripted, speech_config(base))
        whole = await r.read.read(ReadOrder())
        limit = whole.audio[0].stat().st_size // 2
        parts = await r.read.read(ReadOrder(limit=limit, out=scene.parent / "p.ogg"))
    assert len(parts.audio) >= 2 and all(p.stat().st_size <= limit for p in parts.audio)
    assert sum(duration(p) for p in parts.audio) == pytest.approx(whole.seconds, abs=0.05)
    sheet = parts.cue_sheet.read_text(encoding="utf-8")
    assert sheet.count("0:00.1") == len(parts.audio)  # each part's first line, from its start


async def test_through_the_gateway_every_line_goes_to_it_with_its_key(scene, scripted) -> None:
    fake = FakeSpeech()
    async with fake as base:
        config = speech_config(
            "", CIRCUS_GATEWAY_URL=base, CIRCUS_GATEWAY_KEY="sk-gateway-0123456789"
        )
        r = await six_turns(scene, scripted, config)
        await r.read.read(ReadOrder())
    assert len(fake.requests) == 13
    assert {body["model"] for body in fake.requests} == {"openai/tts-1"}  # the proxy's name
    assert set(fake.auth) == {"Bearer sk-gateway-0123456789"}

"""A writer plays a character: no model ever writes that actor's lines; a run waits for the
person and goes on when they speak; seed 001's exclude guardrail; nothing in any prompt says a
human wrote a line."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine import Actor, Rehearsal, Run
from engine.errors import NotPlaying, NotYourTurn
from engine.events import RunFinished, TurnCompleted, WaitingForPlayer
from engine.providers.scripted import ScriptedRequest
from engine.rehearsal.run_slot import can_answer

PLAYED_LINE = "PLAYED-LINE 我那天晚上不在家。"
PLAYED_THOUGHT = "PLAYED-THOUGHT 他不會相信的。"


def throws_to(target: str):
    def script(request: ScriptedRequest) -> str:
        shape = request.shape
        if shape.kind == "stage_manager":
            return f"NEXT: {shape.cast[0]}\nREASON: 第一個"
        me = shape.speaker
        cue = target if me != target else "ANY"
        return (
            f"<thought>{me} 想。</thought><action>{me}看著。</action>"
            f"<dialogue>{me}的第{request.index}句。</dialogue><cue>{cue}</cue>"
        )

    return script


class Watch:
    """Events of one rehearsal, awaited (never slept on)."""

    def __init__(self, rehearsal: Rehearsal) -> None:
        self.events: list[object] = []
        self._changed = asyncio.Event()
        rehearsal.events.listen(self._on)

    def _on(self, event: object) -> None:
        self.events.append(event)
        self._changed.set()

    async def until(self, kind: type, count: int = 1) -> object:
        async with asyncio.timeout(60):  # bounds a broken run, never times a good one
            while sum(isinstance(e, kind) for e in self.events) < count:
                self._changed.clear()
                await self._changed.wait()
        return [e for e in self.events if isinstance(e, kind)][count - 1]


def actor_calls(scripted, actor: str) -> list[ScriptedRequest]:
    return [c for c in scripted.calls if c.shape.kind == "actor" and c.shape.speaker == actor]


async def test_a_run_waits_for_the_person_and_goes_on_when_they_speak(scene, scripted):
    scripted.register("improv", throws_to("林小姐"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "console")
    watch = Watch(r)
    task = await r.start_run(Run(4, Actor("刑警")))
    waiting = await watch.until(WaitingForPlayer)
    assert (waiting.actor, waiting.turn, waiting.player) == ("林小姐", 2, "console")
    assert r.stage.waiting_for == "林小姐" and r.running
    await r.stage.say(
        Actor("林小姐"), PLAYED_LINE, "低頭。", "律師", PLAYED_THOUGHT, player="console"
    )
    await watch.until(WaitingForPlayer, 2)  # 律師 answered and threw the ball back to her
    await r.stage.say(Actor("林小姐"), "我說完了。", player="console")
    result = await task
    assert result.turns_done == 4 and result.reason == "completed"

    state = await r.state()
    assert [(t.actor, t.dialogue) for t in state.turns][1] == ("林小姐", PLAYED_LINE)
    assert [t.actor for t in state.turns] == ["刑警", "林小姐", "律師", "林小姐"]
    assert not actor_calls(scripted, "林小姐"), "no model ever writes a played actor's lines"
    played = [e for e in watch.events if isinstance(e, TurnCompleted) and e.played]
    assert [e.turn for e in played] == [2, 4]

    # Her thought went to her backstage; her line without a thought left it alone.
    log = (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")
    assert log == f"## 2\n{PLAYED_THOUGHT}\n\n"
    rows = [json.loads(x) for x in (scene / ".circus/usage.jsonl").read_text().splitlines()]
    mine = [row for row in rows if row["role"] == "林小姐"]
    assert [row["reason"] for row in mine] == ["played", "played"]
    assert all(row["calls"] == 0 for row in mine)
    assert (await r.status()).model_calls == len(scripted.calls)


async def test_nothing_in_any_prompt_says_a_person_wrote_the_line(scene, scripted):
    scripted.register("improv", throws_to("律師"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "discord:4242")
    await r.stage.say(Actor("林小姐"), PLAYED_LINE, cue="ANY", thought=PLAYED_THOUGHT)
    await r.run(2)
    for call in scripted.calls:
        assert PLAYED_LINE in call.prompt  # an ordinary public turn to everyone
        assert PLAYED_THOUGHT not in call.prompt  # her thought stays hers
        for tell in ("4242", "discord", "console", "human", "person", "player", "人類", "玩家"):
            assert tell not in call.prompt.lower()


async def test_after_a_persons_line_the_next_speaker_is_never_their_own_actor(scene, scripted):
    scripted.register("improv", throws_to("律師"))
    context = scene / "context.md"
    context.write_text(
        context.read_text(encoding="utf-8").replace("neglect_turns: 3", "neglect_turns: 0"),
        encoding="utf-8",
    )
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("刑警"), "console")
    for cue in ("ANY", "", "鬼魂"):  # open, empty, nobody in the cast: the stage manager
        before = len(scripted.calls)
        await r.stage.say(Actor("刑警"), f"我問最後一次（{cue}）。", cue=cue)
        await r.run(1)
        sm = [c for c in scripted.calls[before:] if c.shape.kind == "stage_manager"]
        assert sm and "刑警" not in sm[0].shape.cast
        assert (await r.state()).turns[-1].actor != "刑警"
    # A person who cues themself keeps the floor: the run waits for them again.
    watch = Watch(r)
    await r.stage.say(Actor("刑警"), "還有一件事。", cue="刑警")
    task = await r.start_run(Run(1))
    assert (await watch.until(WaitingForPlayer)).actor == "刑警"
    await r.cut()
    assert (await task).reason == "cut"


async def test_the_director_can_cut_or_cue_someone_else_while_the_run_waits(scene, scripted):
    scripted.register("improv", throws_to("林小姐"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "console")
    watch = Watch(r)
    task = await r.start_run(Run(3, Actor("刑警")))
    await watch.until(WaitingForPlayer)
    before = (scene / "transcript.md").read_text(encoding="utf-8")
    # A cue while the run waits: the wait is cut (nothing half-made), the cued actor plays.
    await r.cue(Actor("律師"), "拍桌子")
    assert (await task).reason == "cut"
    state = await r.state()
    assert [t.actor for t in state.turns] == ["刑警", "律師"]
    assert (scene / "transcript.md").read_text(encoding="utf-8").startswith(before)
    # A cut while waiting lands nothing.
    task = await r.start_run(Run(2))
    await watch.until(WaitingForPlayer, 2)
    await r.cut()
    assert (await task).reason == "cut"
    assert len((await r.state()).turns) == 2


async def test_giving_the_role_back_while_the_run_waits_lets_the_model_play(scene, scripted):
    scripted.register("improv", throws_to("林小姐"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "console")
    watch = Watch(r)
    task = await r.start_run(Run(2, Actor("刑警")))
    await watch.until(WaitingForPlayer)
    assert await r.stage.unplay(player="console") == ["林小姐"]
    assert (await task).reason == "completed"
    assert len(actor_calls(scripted, "林小姐")) == 1
    assert await r.stage.players() == {}


async def test_refusals_for_players(scene, scripted):
    scripted.register("improv", throws_to("律師"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "discord:1")
    with pytest.raises(NotPlaying):
        await r.stage.say(Actor("林小姐"), "冒名。", player="discord:2")
    with pytest.raises(NotPlaying):
        await r.stage.say(Actor("刑警"), "沒人演他。", player="discord:1")
    assert not (scene / "transcript.md").exists()
    # While a model's turn is in flight the ball is not hers: refused, nothing queued.
    gate = asyncio.Event()

    async def slow(request: ScriptedRequest) -> str:
        await gate.wait()
        return throws_to("律師")(request)

    scripted.register("improv", slow)
    watch = Watch(r)
    task = await r.start_run(Run(1, Actor("刑警")))
    with pytest.raises(NotYourTurn):
        await r.stage.say(Actor("林小姐"), "插話。", player="discord:1")
    gate.set()
    await task
    await watch.until(RunFinished)
    assert [t.actor for t in (await r.state()).turns] == ["刑警"]


async def test_who_plays_whom_survives_a_restart_and_one_person_plays_one_actor(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("林小姐"), "discord:7")
    await r.stage.play(
        Actor("刑警"), "discord:7"
    )  # moving to another role gives the first one back
    await r.stage.play(Actor("律師"), "console")
    again = Rehearsal(scene, models=scripted)
    assert await again.stage.players() == {"刑警": "discord:7", "律師": "console"}
    assert (await again.status()).players == (("刑警", "discord:7"), ("律師", "console"))
    await again.takes.save()
    assert not (scene / "takes" / "take_1" / ".circus").exists()  # a take holds no players


async def test_a_stage_manager_pick_that_hands_a_person_the_ball_is_logged_with_their_line(
    scene, scripted
):
    scripted.register("improv", throws_to("律師"))
    r = Rehearsal(scene, models=scripted)
    await r.stage.play(Actor("刑警"), "console")
    await r.stage.say(
        Actor("林小姐"), "誰來說說？", cue="ANY"
    )  # the director writes a line for her
    watch = Watch(r)
    task = await r.start_run(Run(1))
    assert (await watch.until(WaitingForPlayer)).actor == "刑警"
    await r.stage.say(Actor("刑警"), "我來。", player="console")
    await task
    log = (scene / "stage_manager.log").read_text(encoding="utf-8")
    assert log.startswith("## before turn 2 → 刑警\n")
    rows = [json.loads(x) for x in (scene / ".circus/usage.jsonl").read_text().splitlines()]
    assert [(row["turn"], row["role"]) for row in rows] == [
        (1, "林小姐"), (2, "刑警"), (2, "stage_manager"),
    ]  # fmt: skip


CAN_ANSWER = [
    # (player, who can type a line into this process, whether a run here waits for them)
    ("console", None, True),  # the frontend never said (the bot): every player
    ("discord:7", None, True),
    ("console", frozenset({"console"}), True),  # the console types its own roles
    ("discord:7", frozenset({"console"}), False),  # a member cannot type into a terminal
    ("console", frozenset(), False),  # `circus run`: nobody types here
]


@pytest.mark.parametrize(("player", "here", "waits"), CAN_ANSWER)
def test_a_run_waits_only_for_a_player_who_can_type_here(player, here, waits):
    assert can_answer(player, here) is waits

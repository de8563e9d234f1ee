"""The stage in Discord, end to end against the fake: /enter /exit /event by directors (posted
by a neutral stage persona), /play and /say (a member's line lands as the actor's turn through
the actor's own persona, a run waits for them and mentions them once), /unplay, and private
refusals for spectators, for anyone but the player, and for off-stage actors."""

from __future__ import annotations

import pytest
from botkit import finished, room, until

STAGE = "🎭 舞台"
SAY_THOUGHT = "SAY-THOUGHT 她不知道我看見了。"


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def stage_posts(r, thread: int) -> list[str]:
    return [m["content"] for m in r.thread(thread) if m["username"] == STAGE]


async def test_spectators_are_refused_privately_and_nothing_changes(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")
        r.let_open_scenes("bob")
        thread = await r.new_scene("審訊室", user="bob")
        for command, options in [
            ("enter", {"actor": "律師"}),
            ("exit", {"actor": "律師"}),
            ("event", {"text": "電話響了"}),
            ("play", {"actor": "林小姐"}),
            ("unplay", {"actor": "林小姐"}),
        ]:
            text = await r.ask(command, options, user="dave", channel=thread)
            assert "/director add" in text, command
        text = await r.ask("say", {"line": "冒名頂替。"}, user="dave", channel=thread)
        assert "沒有扮演任何角色" in text
        await r.drain()
        scene = r.home / "審訊室"
        assert stage_posts(r, thread) == [] and r.lines(thread) == []
        assert "## " not in (scene / "transcript.md").read_text(encoding="utf-8")
        assert not (scene / ".circus" / "players.json").exists()


async def test_entrances_events_and_a_member_playing_a_character(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")
        dave = r.fake.users["dave"].id
        r.let_open_scenes("bob")
        thread = await r.new_scene("審訊室", user="bob")
        scene = r.home / "審訊室"

        assert "律師" in await r.ask("exit", {"actor": "律師"}, user="bob", channel=thread)
        refusal = await r.ask("cue", {"actor": "律師"}, user="bob", channel=thread)
        assert "不在場上" in refusal and "enter" in refusal
        assert "已經在場上" in await r.ask("enter", {"actor": "刑警"}, user="bob", channel=thread)
        await r.ask("event", {"text": "走廊的燈閃了兩下。"}, user="bob", channel=thread)
        await r.drain()
        assert stage_posts(r, thread) == ["*律師 退場。*", "**〔事件〕** 走廊的燈閃了兩下。"]

        text = await r.ask("play", {"actor": "林小姐", "user": "dave"}, user="bob", channel=thread)
        assert f"<@{dave}>" in text and "林小姐" in text
        status = await r.ask("status", user="dave", channel=thread)  # a spectator may look
        assert "在場：林小姐, 刑警" in status and f"林小姐 由 <@{dave}> 扮演" in status
        # 刑警 opens and (on a stage of two) throws the ball to 林小姐, whom dave plays.
        await r.ask("run", {"turns": 3, "start": "刑警"}, user="bob", channel=thread)
        await until(
            lambda: any(f"<@{dave}>" in m["content"] for m in r.thread(thread)),
            timeout=60,  # the first model call warms litellm up
            what="the scene to wait for dave",
        )
        # Only dave may speak her lines; the director is refused privately.
        assert "沒有扮演" in await r.ask("say", {"line": "我替她說。"}, user="bob", channel=thread)
        said = await r.ask(
            "say",
            {"line": "我那天不在家。", "action": "低頭", "cue": "刑警", "thought": SAY_THOUGHT},
            user="dave",
            channel=thread,
        )
        assert "林小姐" in said
        await finished(r, thread)

        lines = r.lines(thread)
        assert [line.split(":")[0] for line in lines if not line.startswith(STAGE)] == [
            "刑警", "林小姐", "刑警",
        ]  # fmt: skip
        hers = next(m for m in r.thread(thread) if m["username"] == "林小姐")
        assert (
            hers["webhook_id"]
            and "*低頭*" in hers["content"]
            and "我那天不在家。" in hers["content"]
        )
        mentions = [m for m in r.thread(thread) if f"<@{dave}>" in m["content"]]
        assert len(mentions) == 1 and "林小姐" in mentions[0]["content"]  # mentioned once
        assert SAY_THOUGHT not in r.everything_public()
        assert any(SAY_THOUGHT in d for d in r.dms("bob"))  # directors see the thought
        assert SAY_THOUGHT in (scene / "backstage" / "林小姐.log").read_text(encoding="utf-8")

        # Off stage, even the player is refused; back on, their line lands with no run.
        await r.ask("exit", {"actor": "林小姐"}, user="bob", channel=thread)
        assert "不在場上" in await r.ask("say", {"line": "我回來了。"}, user="dave", channel=thread)
        await r.ask("enter", {"actor": "林小姐"}, user="bob", channel=thread)
        await r.ask("say", {"line": "我回來了。"}, user="dave", channel=thread)
        await r.drain()
        assert r.lines(thread)[-1] == "林小姐: 我回來了。"
        assert stage_posts(r, thread)[-2:] == ["*林小姐 退場。*", "*林小姐 進場。*"]

        assert "交還" in await r.ask("unplay", user="dave", channel=thread)
        assert "沒有扮演" in await r.ask("say", {"line": "再一句。"}, user="dave", channel=thread)

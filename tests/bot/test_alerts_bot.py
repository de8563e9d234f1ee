"""Page me when… in Discord: /watch arms alerts kept in the scene folder; when one fires, whoever
armed it gets a DM within seconds of the line landing — the trigger, the line, a link to its
message and three buttons (Cut here, Retake from here, Let it run) that work after a restart and
check who presses them. The scripted model's first call picks the opener; then each actor says
"This is line N from …" on turn N - 1, so a secret marked "line 6" surfaces at turn 5."""

from __future__ import annotations

import json

import pytest
from botkit import Gate, Room, finished, room, until

SCENE = "審訊室"
SOON = 5.0  # seconds: a DM "within seconds of the line landing"


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def mark_secret(r: Room) -> None:
    soul = r.home / SCENE / "actors" / "林小姐" / "soul.md"
    text = soul.read_text("utf-8")
    soul.write_text(text.replace("---\n", "---\nsecrets: [line 6]\n", 1), "utf-8")


def alert_dms(r: Room, user: str) -> list[dict]:
    return [m for m in r.fake.dms_to(user) if m["content"].startswith("🔔")]


def buttons(message: dict) -> dict[str, str]:
    """An alert DM's buttons: label → custom id."""
    return {c["label"]: c["custom_id"] for row in message["components"] for c in row["components"]}


async def press(r: Room, message: dict, label: str, user: str) -> str:
    handle = await r.fake.click(int(message["id"]), buttons(message)[label], user=user)
    await handle.response(timeout=60)
    return await r.answer(handle)


def thread_message(r: Room, thread: int, text: str) -> dict:
    return next(m for m in r.thread(thread) if text in m["content"])


def takes(r: Room) -> list[str]:
    folder = r.home / SCENE / "takes"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


async def test_two_alerts_page_their_armers_and_the_buttons_survive_restarts(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")  # a spectator
        thread = await r.new_scene(SCENE)
        mark_secret(r)
        await r.ask("director add", {"user": "bob"}, channel=thread)
        armed = await r.ask("watch add", {"condition": "secret"}, channel=thread)
        assert "`secret`" in armed and "a1" in armed
        armed = await r.ask(
            "watch add", {"condition": "exit", "actor": "張律師"}, user="bob", channel=thread
        )
        assert "`exit:律師`" in armed
        refused = await r.ask("watch add", {"condition": "stop"}, user="dave", channel=thread)
        assert "/director add" in refused

        await r.stop_bot()  # a restart keeps the alerts: they are in the scene folder
        await r.start_bot()
        listed = await r.ask("watch list", channel=thread)
        assert "`secret`" in listed and "`exit:律師`" in listed
        assert (await r.ask("watch list", user="dave", channel=thread)) == "這場戲沒有設任何提醒。"

        await r.ask("run", {"turns": 8}, channel=thread)
        await r.until_lines(thread, 5)  # turn 5 has landed in the thread …
        [secret_dm] = await until(lambda: alert_dms(r, "alice"), SOON, "alice's alert")  # … soon
        await finished(r, thread)
        line = thread_message(r, thread, "This is line 6")
        link = f"https://discord.com/channels/{r.fake.guild_id}/{thread}/{line['id']}"
        assert "林小姐標記的秘密在第 5 輪" in secret_dm["content"]
        assert "This is line 6" in secret_dm["content"] and link in secret_dm["content"]
        assert "||line 6||" in secret_dm["content"]  # the secret itself: alice may read it
        assert set(buttons(secret_dm)) == {"就在這裡卡", "從這裡重來", "讓它演"}
        assert alert_dms(r, "bob") == []  # nobody exited yet: bob's alert has not fired

        await r.ask("exit", {"actor": "律師"}, user="bob", channel=thread)
        await until(lambda: any("律師" in m["content"] for m in r.thread(thread)[-1:]), what="exit")
        [exit_dm] = await until(lambda: alert_dms(r, "bob"), SOON, "bob's alert")
        assert "律師下場了（第 8 輪之後）" in exit_dm["content"]
        assert len(alert_dms(r, "alice")) == 1  # each alert went to the one who armed it
        public = r.everything_public()
        assert "🔔" not in public and "line 6||" not in public

        await r.stop_bot()  # the buttons work after a restart, and check who presses them
        await r.start_bot()
        before = (r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)
        refused = await press(r, secret_dm, "從這裡重來", "dave")  # forwarded to a spectator
        assert "只有這場戲的導演" in refused and "什麼都沒變" in refused
        assert ((r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)) == before

        done = await press(r, secret_dm, "從這裡重來", "alice")
        assert "從第 1 條的第 4 輪重來" in done
        await r.drain()
        assert takes(r) == ["take_1"]
        record = (r.home / SCENE / "transcript.md").read_text("utf-8")
        assert "This is line 5" in record and "This is line 6" not in record  # up to turn 4

        handle = await r.fake.click(int(exit_dm["id"]), buttons(exit_dm)["讓它演"], user="bob")
        await handle.response(timeout=60)
        [exit_dm] = alert_dms(r, "bob")
        assert exit_dm["components"] == [] and "讓它繼續演" in exit_dm["content"]

        assert "🔕 清掉了 1 個提醒" in await r.ask("watch clear", user="bob", channel=thread)
        rows = json.loads((r.home / SCENE / ".circus" / "alerts.json").read_text("utf-8"))
        assert [a["condition"] for a in rows["alerts"]] == ["secret"]


async def test_cut_here_cuts_the_running_scene(tmp_path, scripted):
    gate = Gate()
    scripted.register("gate", gate)
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene(SCENE)
        context = r.home / SCENE / "context.md"
        text = context.read_text("utf-8").replace("---\n", "---\nmodel: scripted/gate\n", 1)
        context.write_text(text, encoding="utf-8")
        await r.ask("watch add", {"condition": "turn:1"}, channel=thread)
        await r.ask("run", {"turns": 5}, channel=thread)
        [dm] = await until(lambda: alert_dms(r, "alice"), what="the alert")
        await gate.waiting.wait()  # turn 2 is in flight
        assert "演到第 1 輪了" in dm["content"]
        assert "卡" in await press(r, dm, "就在這裡卡", "alice")
        await until(
            lambda: any("停在第 1 輪" in m["content"] for m in r.thread(thread)), what="cut"
        )
        await r.drain()
        assert len(r.lines(thread)) == 1
        gate.release.set()


async def test_a_broken_alerts_file_is_named_never_taken_for_no_alerts(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        broken = r.home / SCENE / ".circus" / "alerts.json"
        broken.write_text("{not json", "utf-8")
        for command, options in [("watch list", {}), ("watch add", {"condition": "stop"})]:
            said = await r.ask(command, options, channel=thread)
            assert ".circus/alerts.json" in said, command
        assert broken.read_text("utf-8") == "{not json"
        await r.ask("run", {"turns": 1}, channel=thread)
        await finished(r, thread)
        await until(lambda: any("alerts.json" in m for m in r.dms("alice")), what="the DM")


async def test_a_captain_arms_alerts_for_their_character_alone_and_is_paged_while_captain(
    tmp_path,
):
    async with room(tmp_path) as r:
        r.fake.add_user("erin")  # captains 林小姐
        r.fake.add_user("mod", manage_threads=True)  # directs only through Manage Threads
        thread = await r.new_scene(SCENE)
        mark_secret(r)
        await r.ask("captain add", {"actor": "林小姐", "user": "erin"}, channel=thread)

        armed = await r.ask(
            "watch add", {"condition": "secret", "actor": "林小姐"}, user="erin", channel=thread
        )
        assert "`secret:林小姐`" in armed
        for options in (
            {"condition": "exit", "actor": "律師"},  # another character
            {"condition": "secret"},  # everyone's secrets
            {"condition": "turn:3"},  # the run as a whole is the directors'
        ):
            refused = await r.ask("watch add", options, user="erin", channel=thread)
            assert "/director add" in refused, options
        # An alert that could never page its armer is refused, not silently kept.
        refused = await r.ask("watch add", {"condition": "stop"}, user="mod", channel=thread)
        assert "/director add" in refused
        rows = json.loads((r.home / SCENE / ".circus" / "alerts.json").read_text("utf-8"))
        assert [a["condition"] for a in rows["alerts"]] == ["secret:林小姐"]

        await r.ask("run", {"turns": 6}, channel=thread)
        [dm] = await until(lambda: alert_dms(r, "erin"), SOON, "erin's alert")
        await finished(r, thread)
        assert "林小姐標記的秘密在第 5 輪" in dm["content"] and "||line 6||" in dm["content"]

        # A captain may not cut or replay: the buttons that would are a director's alone.
        before = (r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)
        for label in ("從這裡重來", "就在這裡卡"):
            refused = await press(r, dm, label, "erin")
            assert "什麼都沒變" in refused, label
        await r.drain()
        assert ((r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)) == before

        # No longer captain: the buttons refuse them, and nothing changes.
        await r.ask("captain remove", {"actor": "林小姐", "user": "erin"}, channel=thread)
        before = (r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)
        refused = await press(r, dm, "從這裡重來", "erin")
        assert "只有這場戲的導演" in refused
        assert ((r.home / SCENE / "transcript.md").read_text("utf-8"), takes(r)) == before

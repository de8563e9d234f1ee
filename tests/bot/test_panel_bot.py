"""Directing from a phone: the panel in a scene thread, its buttons, selects and forms, and the
message menus — through the fake Discord with the payloads Discord really sends (component
interactions type 3, modal submits type 5, message commands type 2 / command type 3)."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path

import pytest
from botkit import Gate, Room, finished, room, until

from bot.panel.text import EVERYONE
from engine import DEFAULT_TURNS
from fakediscord import ComponentDisabled, InteractionHandle


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


SCENE = "審訊室"
THOUGHT = (
    "weighs what was said"  # what the scripted actors think (engine.providers.scripted.improv)
)


# ---------------------------------------------------------------------- what members see
def panels(r: Room, thread: int) -> list[dict]:
    return [m for m in r.thread(thread) if m["components"] and not m["webhook_id"]]


def panel_of(r: Room, thread: int) -> dict:
    [panel] = panels(r, thread)
    return panel


def controls(panel: dict) -> dict[str, dict]:
    """The panel's buttons and selects by what they do (the action in their custom id)."""
    return {
        c["custom_id"].split(":")[1]: c for row in panel["components"] for c in row["components"]
    }


def usable(r: Room, thread: int, action: str) -> bool:
    return not controls(panel_of(r, thread))[action].get("disabled")


async def press(
    r: Room, thread: int, action: str, user: str = "alice", values: list[str] | None = None
) -> InteractionHandle:
    """A member taps a panel control (waiting until the panel offers it, as a person would)."""
    await until(lambda: usable(r, thread, action), what=f"{action} to be enabled")
    panel = panel_of(r, thread)
    custom_id = controls(panel)[action]["custom_id"]
    handle = await r.fake.click(int(panel["id"]), custom_id, user=user, values=values)
    await handle.response(timeout=60)
    return handle


async def fill(r: Room, handle: InteractionHandle, values: dict[str, str]) -> str:
    """Submit the form the bot showed; the private answer."""
    assert handle.modal is not None, handle.contents
    submitted = await r.fake.submit_modal(handle, values)
    await submitted.response(timeout=60)
    return await r.answer(submitted)


async def menu(r: Room, name: str, message_id: int, user: str = "alice") -> InteractionHandle:
    handle = await r.fake.message_command(name, message_id, user=user)
    await handle.response(timeout=60)
    return handle


def folder_state(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def actor_posts(r: Room, thread: int) -> list[dict]:
    return [m for m in r.thread(thread) if m["webhook_id"] and m["username"] != "Circus"]


def gated(r: Room) -> None:
    context = r.home / SCENE / "context.md"
    text = context.read_text("utf-8").replace("---\n", "---\nmodel: scripted/gate\n", 1)
    context.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------- the panel
async def test_a_scene_gets_one_pinned_panel_that_says_its_state(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        panel = panel_of(r, thread)
        assert panel["pinned"] is True
        assert "⏸" in panel["content"] and "第 1 條" in panel["content"]
        assert "台上：" in panel["content"]
        assert not usable(r, thread, "cut") and usable(r, thread, "run")
        bound = (r.home / SCENE / ".circus" / "discord.json").read_text("utf-8")
        assert panel["id"] in bound


async def test_a_director_runs_cuts_cues_notes_saves_and_reports_by_buttons_only(
    tmp_path, scripted
):
    gate = Gate()
    scripted.register("gate", gate)
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene(SCENE)
        gated(r)

        run = await press(r, thread, "run")
        assert run.modal["components"][0]["components"][0]["value"] == str(DEFAULT_TURNS)
        assert "▶" in await fill(r, run, {"turns": "3"})
        await asyncio.wait_for(gate.waiting.wait(), 60)
        await until(lambda: "▶" in panel_of(r, thread)["content"], what="the panel to run")
        assert not usable(r, thread, "run")

        assert "卡" in await r.answer(await press(r, thread, "cut"))
        gate.release.set()
        await until(lambda: "⏹" in panel_of(r, thread)["content"], what="the panel to say cut")
        await r.drain()
        assert len(actor_posts(r, thread)) == 1

        cue = await press(r, thread, "cue", values=["刑警"])
        assert "刑警" in await fill(r, cue, {"direction": "拍桌子"})
        await until(lambda: len(actor_posts(r, thread)) == 2, what="the cued line")
        assert actor_posts(r, thread)[-1]["username"] == "刑警"
        on_disk = "\n".join(
            p.read_text("utf-8") for p in (r.home / SCENE).rglob("*.md") if p.is_file()
        )
        assert "拍桌子" in on_disk  # the direction went to the actor, logged privately
        assert "拍桌子" not in r.everything_public()

        note = await press(r, thread, "note", values=[EVERYONE])
        assert "耳語" in await fill(r, note, {"note": "慢一點"})

        assert "🎬" in await r.answer(await press(r, thread, "save"))
        assert (r.home / SCENE / "takes").is_dir()
        shown = await press(r, thread, "report")
        assert "📊" in await r.answer(shown)
        assert shown.followups[-1]["attachments"]
        await r.drain()


async def test_a_spectator_presses_every_control_and_nothing_changes(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        await until(lambda: usable(r, thread, "save"), what="the panel to settle")
        await r.bot.panels.settled()
        folder = r.home / SCENE
        before, public = folder_state(folder), [m["content"] for m in r.thread(thread)]
        line = actor_posts(r, thread)[0]

        refusals = []
        for action in ("run", "resume", "save", "report"):
            handle = await press(r, thread, action, user="bob")
            assert handle.modal is None
            refusals.append(await r.answer(handle))
        for action, value in (("cue", "刑警"), ("note", EVERYONE)):
            handle = await press(r, thread, action, user="bob", values=[value])
            assert handle.modal is None
            refusals.append(await r.answer(handle))
        with pytest.raises(ComponentDisabled):  # Cut while idle: Discord greys it out
            await r.fake.click(int(panel_of(r, thread)["id"]), "circus:cut:0:" + SCENE, user="bob")
        for name in ("🎬 Cue this actor", "💭 Thought"):
            handle = await menu(r, name, int(line["id"]), user="bob")
            assert handle.modal is None
            refusals.append(await r.answer(handle))
        assert all("導演" in text for text in refusals), refusals  # "only the directors"
        assert not any(THOUGHT in text for text in refusals)  # a thought never reaches bob
        await r.drain()
        assert folder_state(folder) == before
        assert [m["content"] for m in r.thread(thread)] == public


async def test_thought_is_for_directors_only_and_pick_is_a_vote_for_anyone_else(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        line = actor_posts(r, thread)[1]

        thought = await r.answer(await menu(r, "💭 Thought", int(line["id"])))
        assert THOUGHT in thought and line["username"] in thought and "第 2 輪" in thought
        assert THOUGHT not in r.everything_public()  # answered privately only

        assert "已精選" in await r.answer(await menu(r, "⭐ Pick line", int(line["id"])))
        assert "已計入" in await r.answer(await menu(r, "⭐ Pick line", int(line["id"]), "bob"))
        assert "已經投過" in await r.answer(await menu(r, "⭐ Pick line", int(line["id"]), "bob"))
        picks = (r.home / SCENE / "picks.md").read_text("utf-8")
        assert picks.count("(discord:") == 2

        cue = await menu(r, "🎬 Cue this actor", int(line["id"]))
        assert line["username"] in cue.modal["title"]
        assert line["username"] in await fill(r, cue, {"direction": ""})
        await until(lambda: len(actor_posts(r, thread)) == 3, what="the cued line")
        assert actor_posts(r, thread)[-1]["username"] == line["username"]
        await r.drain()


async def test_the_menus_on_a_message_that_is_no_line_say_what_they_work_on(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        card = r.thread(thread)[0]
        for name in ("⭐ Pick line", "💭 Thought", "🎬 Cue this actor"):
            text = await r.answer(await menu(r, name, int(card["id"])))
            assert "不是" in text and "台詞" in text, text
        assert not (r.home / SCENE / "picks.md").exists()


async def test_the_panel_works_after_a_restart_without_being_posted_again(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        await r.stop_bot()
        await r.start_bot()
        run = await press(r, thread, "run")
        assert "▶" in await fill(r, run, {"turns": "2"})
        await finished(r, thread)
        await until(lambda: "2 輪" in panel_of(r, thread)["content"], what="the panel to update")
        assert len(panels(r, thread)) == 1  # found again by its id, edited in place
        assert len(actor_posts(r, thread)) == 2


async def test_a_twenty_turn_run_edits_the_panel_a_bounded_number_of_times(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        panel_id = panel_of(r, thread)["id"]
        loop = asyncio.get_running_loop()
        started = loop.time()
        run = await press(r, thread, "run")
        await fill(r, run, {"turns": "20"})
        await finished(r, thread)
        await until(lambda: "20 輪" in panel_of(r, thread)["content"], what="the last edit")
        await r.bot.panels.settled()
        elapsed = loop.time() - started
        edits = [
            q for q in r.fake.requests_to("PATCH", "/channels/{channel_id}/messages/{message_id}")
            if q.path.endswith(f"/{panel_id}")
        ]  # fmt: skip
        assert 1 <= len(edits) <= elapsed / 2.0 + 2  # one every 2 s at most, never per turn
        assert len(edits) < 20
        assert len(panels(r, thread)) == 1
        assert "⏸" in panel_of(r, thread)["content"]


async def test_the_panel_of_a_deleted_scene_answers_privately(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        await r.stop_bot()
        shutil.rmtree(r.home / SCENE)
        await r.start_bot()
        handle = await press(r, thread, "run")
        assert handle.modal is None
        assert "gone" in await r.answer(handle)
        assert not (r.home / SCENE).exists()


async def test_a_replay_typed_as_a_command_shows_on_the_panel(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        await r.ask("take save", channel=thread)
        await r.ask("replay", {"take": 1, "until": 1}, channel=thread)
        await until(lambda: "第 2 條 · 1 輪" in panel_of(r, thread)["content"], what="take 2")
        assert len(panels(r, thread)) == 1


async def test_a_captain_is_refused_a_form_they_could_not_submit_before_typing(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("erin")
        thread = await r.new_scene(SCENE)
        await r.ask("captain add", {"actor": "林小姐", "user": "erin"}, channel=thread)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        await until(lambda: usable(r, thread, "save"), what="the panel to settle")
        before = folder_state(r.home / SCENE)
        for action, value in (("cue", "林小姐"), ("note", EVERYONE), ("note", "刑警")):
            handle = await press(r, thread, action, user="erin", values=[value])
            assert handle.modal is None, (action, value)  # no form to type into, then refusal
            assert "林小姐" in await r.answer(handle) or "captains_cue" in await r.answer(handle)
        line = actor_posts(r, thread)[0]
        handle = await menu(r, "🎬 Cue this actor", int(line["id"]), user="erin")
        assert handle.modal is None
        assert folder_state(r.home / SCENE) == before
        own = await press(r, thread, "note", user="erin", values=["林小姐"])
        assert own.modal is not None  # a note to their own character: the form opens

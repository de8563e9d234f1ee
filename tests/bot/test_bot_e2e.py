"""End to end: the real discord.py client logged into the fake Discord, directing real scenes.

Every REST request the bot makes is checked against Discord's OpenAPI spec by the fake; the
`room` helper fails a test that made a request the spec does not allow.
"""

from __future__ import annotations

import asyncio

import pytest
from botkit import Gate, finished, room, until
from scenekit import SOUL_MARKER, WHISPER_MARKER, write_scene

from engine.providers.scripted import ScriptedRequest


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def transcript(r, scene: str) -> str:
    return (r.home / scene / "transcript.md").read_text(encoding="utf-8")


async def test_a_whole_rehearsal_from_scene_new_to_take_save(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")

        card = r.thread(thread)[0]["content"]
        assert "偵訊室" in card and "林小姐, 刑警, 律師" in card
        assert "角色小傳" not in card  # souls are never on the card

        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
        soul.write_text(
            "---\navatar_url: https://example.com/cop.png\n---\n" + soul.read_text("utf-8"),
            encoding="utf-8",
        )
        assert "▶" in await r.ask("run", {"turns": 3}, channel=thread)
        await finished(r, thread)
        lines = r.lines(thread)
        assert len(lines) == 3
        assert all(line.split(":")[0] in {"林小姐", "刑警", "律師"} for line in lines)
        assert "*" in lines[0] and "-# → " in lines[0]  # action in italics, cue small
        cop = [m for m in r.thread(thread) if m["username"] == "刑警"]
        assert all(m["avatar_url"] == "https://example.com/cop.png" for m in cop)
        assert r.fake.typing  # the thread showed that actors were thinking

        # The bot may pack several thoughts into one DM: count thoughts, not messages.
        dms = "\n".join(r.dms("alice"))
        assert dms.count("weighs what was said") == 3
        assert "審訊室" in dms and "第 1 條" in dms and "第 1 輪" in dms

        assert "耳語" in await r.ask("note", {"text": "慢一點"}, channel=thread)
        assert "刑警" in await r.ask(
            "cue", {"actor": "刑警", "direction": "拍桌子"}, channel=thread
        )
        await finished(r, thread, 2)
        assert r.lines(thread)[-1].startswith("刑警:")

        assert "第 1 條" in await r.ask("take save", channel=thread)
        await until(lambda: any("🎬" in m["content"] for m in r.thread(thread)))
        assert "4 輪" in await r.ask("take list", channel=thread)
        status = await r.ask("status", channel=thread)
        assert "4 輪" in status and "林小姐, 刑警, 律師" in status
        assert (r.home / "審訊室" / "takes" / "take_1" / "transcript.md").is_file()


WALL_THOUGHT = "THOUGHT-SECRET"
WALL_REASON = "SM-REASON-SECRET"
WALL_DIRECTION = "DIRECTION-SECRET"
WALL_NOTE = "NOTE-SECRET"


def walls_script(request: ScriptedRequest) -> str:
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: {WALL_REASON}"
    return (
        f"<thought>{WALL_THOUGHT}-{request.index}</thought>\n"
        f"<action>{shape.speaker} looks at the door.</action>\n"
        f"<dialogue>Line {request.index}.</dialogue>\n<cue>ANY</cue>"
    )


async def test_private_text_never_reaches_the_thread_only_directors_dms(tmp_path, scripted):
    scripted.register("walls", walls_script)
    async with room(tmp_path, models=scripted) as r:
        write_scene(r.home / "密室", model="scripted/walls")
        r.let_open_scenes("bob")
        await r.ask("scene open", {"name": "密室"}, user="bob")
        thread = int(r.fake.thread_by_name("🎭 密室")["id"])

        await r.ask("note", {"text": WALL_NOTE, "actor": "律師"}, channel=thread, user="bob")
        await r.ask("cue", {"actor": "林", "direction": WALL_DIRECTION}, channel=thread, user="bob")
        await finished(r, thread)
        await r.ask("run", {"turns": 3}, channel=thread, user="bob")
        await finished(r, thread, 2)
        shown = await r.ask("soul show", {"actor": "刑警"}, channel=thread, user="bob")
        assert SOUL_MARKER["刑警"] in shown  # to the director, privately

        public = r.everything_public()
        assert "Line 0." in public  # the frontstage did arrive
        secrets = [WALL_THOUGHT, WALL_REASON, WALL_DIRECTION, WALL_NOTE]
        secrets += list(SOUL_MARKER.values()) + list(WHISPER_MARKER.values())
        for secret in secrets:
            assert secret not in public, secret
        dms = "\n".join(r.dms("bob"))
        assert WALL_THOUGHT in dms and WALL_REASON in dms
        assert r.dms("alice") == [] and r.dms("owner") == []  # not directors: nothing


async def test_a_non_director_is_refused_privately_and_nothing_changes(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")
        r.let_open_scenes("bob")
        thread = await r.new_scene("審訊室", user="bob")
        for command, options in [
            ("run", {"turns": 2}),
            ("cue", {"actor": "刑警"}),
            ("note", {"text": "x"}),
            ("take save", {}),
            ("soul show", {"actor": "刑警"}),
            ("director add", {"user": "dave"}),
        ]:
            text = await r.ask(command, options, user="dave", channel=thread)
            assert "/director add" in text and "導演" in text, command
        await r.drain()
        assert r.lines(thread) == [] and transcript(r, "審訊室").count("## ") == 0
        assert not (r.home / "審訊室" / "takes").exists()
        assert "0 輪" in await r.ask("status", user="dave", channel=thread)  # watching is fine

        # Manage Threads overrides; a co-director added by a director may direct.
        assert "▶" in await r.ask("run", {"turns": 1}, user="alice", channel=thread)
        await finished(r, thread)
        await r.ask("director add", {"user": "dave"}, user="bob", channel=thread)
        assert "▶" in await r.ask("run", {"turns": 1}, user="dave", channel=thread)
        await finished(r, thread, 2)
        assert any("weighs" in d for d in r.dms("dave"))
        await r.ask("director remove", {"user": "dave"}, user="bob", channel=thread)
        assert "/director add" in await r.ask("cut", user="dave", channel=thread)


async def test_cut_during_a_run_stops_it_and_nothing_half_made_lands(tmp_path, scripted):
    gate = Gate()
    scripted.register("gate", gate)
    async with room(tmp_path, models=scripted) as r:
        thread = await r.new_scene("審訊室")
        context = r.home / "審訊室" / "context.md"
        context.write_text(
            context.read_text("utf-8").replace("---\n", "---\nmodel: scripted/gate\n", 1),
            encoding="utf-8",
        )
        await r.ask("run", {"turns": 5}, channel=thread)
        await asyncio.wait_for(gate.waiting.wait(), 10)

        busy = await r.ask("run", {"turns": 1}, channel=thread)
        assert "正在排練" in busy and "/cut" in busy

        assert "卡" in await r.ask("cut", channel=thread)
        gate.release.set()
        await until(lambda: any("✂" in m["content"] for m in r.thread(thread)))
        await r.drain()
        assert len(r.lines(thread)) == 1
        assert transcript(r, "審訊室").count("## ") == 1
        assert "停在第 1 輪" in r.thread(thread)[-1]["content"]
        assert "現在沒有" in await r.ask("cut", channel=thread)


async def test_a_restarted_bot_reattaches_every_scene_to_its_thread(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        await r.ask("director add", {"user": "bob"}, channel=thread)
        await r.ask("run", {"turns": 1}, channel=thread)
        await finished(r, thread)
        await r.stop_bot()

        await r.start_bot()
        assert "▶" in await r.ask("run", {"turns": 2}, user="bob", channel=thread)
        await finished(r, thread, 2)
        assert len(r.lines(thread)) == 3
        assert len(r.fake.webhooks_in(r.fake.channel_id)) == 1  # the webhook was reused
        listing = await r.ask("scene list")
        assert f"<#{thread}>" in listing and "templates" not in listing


async def test_two_scenes_run_at_once_each_in_its_own_thread(tmp_path, scripted):
    scripted.latency = 0.02
    async with room(tmp_path, models=scripted) as r:
        a = await r.new_scene("審訊室")
        b = await r.new_scene("wake", template="wake")
        await asyncio.gather(
            r.ask("run", {"turns": 4}, channel=a), r.ask("run", {"turns": 4}, channel=b)
        )
        await finished(r, a)
        await finished(r, b)
        assert {line.split(":")[0] for line in r.lines(a)} <= {"林小姐", "刑警", "律師"}
        assert {line.split(":")[0] for line in r.lines(b)} <= {"Ruth", "Danny", "Carol"}
        assert len(r.lines(a)) == len(r.lines(b)) == 4
        assert "turn 4" in r.thread(b)[-1]["content"] or "4 turns" in r.thread(b)[-1]["content"]
        dms = r.dms("alice")
        assert any("**wake** · take 1" in d for d in dms)
        assert any("**審訊室** · 第 1 條" in d for d in dms)


async def test_soul_edit_through_a_modal_and_as_a_file_when_too_long(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"

        shown = await r.slash("soul edit", {"actor": "刑警"}, channel=thread)
        (field,) = shown.modal["components"][0]["components"]
        assert field["value"] == soul.read_text("utf-8")
        submitted = await r.fake.submit_modal(shown, {"soul": "## 角色小傳\n新的刑警。\n"})
        await submitted.response()
        assert "已保存" in await r.answer(submitted)
        assert soul.read_text("utf-8") == "## 角色小傳\n新的刑警。\n"

        shown = await r.slash("soul edit", {"actor": "刑警"}, channel=thread)
        broken = await r.fake.submit_modal(shown, {"soul": "---\nmodel: [\n---\nbody\n"})
        await broken.response()
        assert "soul.md" in await r.answer(broken)
        assert soul.read_text("utf-8") == "## 角色小傳\n新的刑警。\n"  # nothing written

        soul.write_text("## 角色小傳\n" + "長" * 5000 + "\n", encoding="utf-8")
        long = await r.slash("soul edit", {"actor": "刑警"}, channel=thread)
        assert "4000" in await r.answer(long)
        (attachment,) = long.messages[-1]["attachments"]
        assert attachment["filename"].endswith(".md")

        new = ("## 角色小傳\n" + "短" * 4500 + "\n").encode()
        text = await r.ask("soul edit", {"actor": "刑警", "file": ("soul.md", new)}, channel=thread)
        assert "已保存" in text and soul.read_bytes() == new


async def test_actor_options_autocomplete_from_the_cast(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        handle = await r.fake.autocomplete("cue", {"actor": ""}, focused="actor", channel_id=thread)
        await handle.response()
        assert [c["value"] for c in handle.choices] == ["林小姐", "刑警", "律師"]
        handle = await r.fake.autocomplete(
            "run", {"start": "刑"}, focused="start", channel_id=thread
        )
        await handle.response()
        assert [c["value"] for c in handle.choices] == ["刑警"]
        handle = await r.fake.autocomplete("scene open", {"name": "審"}, focused="name")
        await handle.response()
        assert [c["value"] for c in handle.choices] == ["審訊室"]


async def test_replay_starts_a_new_take_from_a_saved_one(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("wake", template="wake")
        await r.ask("run", {"turns": 3}, channel=thread)
        await finished(r, thread)
        await r.ask("take save", channel=thread)
        text = await r.ask("replay", {"take": 1, "until": 1}, channel=thread)
        assert "take 2" in text
        await until(lambda: "⏮" in r.thread(thread)[-1]["content"])
        assert transcript(r, "wake").count("## ") == 1
        assert "No take" in await r.ask("replay", {"take": 9}, channel=thread)


async def test_commands_outside_a_scene_thread_say_where_to_go(tmp_path):
    async with room(tmp_path) as r:
        assert "/scene new" in await r.ask("run", {"turns": 1})
        assert "/scene new" in await r.ask("scene list")
        names = {c["name"] for c in r.fake.guild_commands.values()}
        assert names == {"scene", "run", "cue", "cut", "resume", "note", "take", "replay"} | {
            "soul",
            "status",
            "director",
        } | {"picks", "notes", "export", "report", "read"} | {
            "enter",
            "exit",
            "event",
            "play",
            "unplay",
            "say",
        } | {"actor"} | {"secrets"} | {"captain", "backstage"} | {"watch"} | {
            "⭐ Pick line",
            "🎬 Cue this actor",
            "💭 Thought",
            "📌 Note on this line",
        }  # menus
        run = r.fake.find_command("run")
        assert run["description_localizations"]["zh-TW"] == "讓這場戲自己走 N 輪"
        turns = run["options"][0]
        assert (turns["min_value"], turns["max_value"]) == (1, 50)


async def test_circus_bot_main_reads_its_configuration_from_the_environment(tmp_path):
    """`bot.main()` as `circus bot` runs it: a separate process pointed at the fake by env."""
    import os
    import subprocess
    import sys

    from fakediscord import FakeDiscord

    scenes_dir = tmp_path / "scenes"
    scenes_dir.mkdir()
    async with FakeDiscord() as fake:
        env = {
            **os.environ,
            **fake.env(),
            "CIRCUS_SCENES_DIR": str(scenes_dir),
            "DISCORD_GUILD_ID": str(fake.guild_id),
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import bot, sys; sys.exit(bot.main())", env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            await until(lambda: fake.guild_commands, timeout=30, what="commands synced")
            await fake.wait_for_identify(timeout=30)
            handle = await fake.slash("scene list", user="alice")
            await handle.response(timeout=10)
            assert "/scene new" in handle.contents[0] and handle.ephemeral
        finally:
            process.terminate()
            await process.wait()
        assert fake.spec_violations == []


async def test_main_refuses_to_start_without_a_token(monkeypatch, capsys):
    import bot

    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert bot.main() == 2
    assert "DISCORD_TOKEN" in capsys.readouterr().err


async def test_replies_follow_the_scene_language_even_after_a_restart(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("wake", template="wake")
        await r.stop_bot()
        await r.start_bot()
        assert await r.ask("cut", channel=thread) == "Nothing is running."
        refusal = await r.ask("run", {"turns": 1}, user="bob", channel=thread)
        assert refusal.startswith("Only this scene's directors")
        assert "No actor called Nobody" in await r.ask("cue", {"actor": "Nobody"}, channel=thread)


async def test_engine_refusals_are_answered_in_a_chinese_scenes_language(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室", template="interrogation")
        assert "這場戲沒有排演 9" in await r.ask("replay", {"take": 9}, channel=thread)
        assert "耳語需要內容" in await r.ask("note", {"text": "   "}, channel=thread)


async def test_scene_open_refuses_someone_elses_scene_and_autocomplete_caps_at_25(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("dave")
        r.let_open_scenes("bob", "dave")
        await r.new_scene("審訊室", user="bob")
        text = await r.ask("scene open", {"name": "審訊室"}, user="dave")
        assert "/director add" in text and len(r.fake.threads) == 1

        big = write_scene(r.home / "群戲")
        for i in range(30):
            (big / "actors" / f"路人{i:02d}").mkdir()
            (big / "actors" / f"路人{i:02d}" / "soul.md").write_text("路人。", encoding="utf-8")
        await r.ask("scene open", {"name": "群戲"}, user="dave")
        thread = int(r.fake.thread_by_name("🎭 群戲")["id"])
        handle = await r.fake.autocomplete("cue", {"actor": ""}, focused="actor", channel_id=thread)
        await handle.response()
        assert len(handle.choices) == 25


async def test_a_servers_daily_budget_stops_a_run_and_status_shows_what_is_left(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CIRCUS_DAILY_BUDGET_TOKENS", "20000")
    monkeypatch.setenv("CIRCUS_MAX_REPLY_TOKENS", "100")
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        assert "▶" in await r.ask("run", {"turns": 40}, channel=thread)
        await until(
            lambda: any("💰" in m["content"] for m in r.thread(thread)),
            timeout=120,  # generous: the first model call imports litellm
            what="the budget line",
        )
        await r.drain()
        assert 1 <= len(r.lines(thread)) < 40
        notice = [d for d in r.dms("alice") if "CIRCUS_DAILY_BUDGET_TOKENS" in d]
        assert notice and "明天" in notice[0]  # the director is told which budget, and when
        assert "CIRCUS_DAILY_BUDGET_TOKENS" not in r.everything_public()

        status = await r.ask("status", channel=thread)
        assert "本伺服器今天的預算" in status and "CIRCUS_DAILY_BUDGET_TOKENS" in status
        spend = r.home / ".circus" / "spend" / f"discord-{r.fake.guild_id}"
        assert len(list(spend.glob("*.jsonl"))) == 1

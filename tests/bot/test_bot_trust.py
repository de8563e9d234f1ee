"""Trust at the Discord front door, black box: the real bot against the fake Discord,
with a plain member (bob) doing what an attacker would.

Who may open scenes is Discord's decision (`/scene` carries default_member_permissions = Manage
Threads; the fake refuses to deliver a command the member may not use, as Discord does); what
arrives through Discord is data, never configuration; a broken scene answers everyone, and only
its directors learn what is wrong — by paths inside the scene folder, never server paths.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web
from botkit import finished, room, until
from scenekit import write_scene

from bot.binding import Binding, read_binding, write_binding
from engine.folder.turns import parse_transcript
from fakediscord import CommandUnavailable, FakeDiscord

ATTACKS = Path(__file__).parents[1] / "fixtures" / "attacks"
MANAGE_THREADS = 1 << 34


@pytest.fixture(autouse=True)
def operator_env(monkeypatch):
    """The operator's configuration: one model, and a provider key that must never leak."""
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    monkeypatch.delenv("CIRCUS_STAGE_MANAGER_MODEL", raising=False)
    monkeypatch.delenv("CIRCUS_ALLOWED_MODELS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-OPERATOR-SECRET")


def thread_of(r, scene: str) -> int:
    return int(r.fake.thread_by_name(f"🎭 {scene}")["id"])


# ---------------------------------------------------------------------- who may open scenes
async def test_scene_is_for_members_with_manage_threads_unless_admins_widen_it(tmp_path):
    async with room(tmp_path) as r:
        scene = r.fake.find_command("scene")
        assert scene["default_member_permissions"] == str(MANAGE_THREADS)
        for name in ("run", "cue", "note", "soul", "status", "director"):  # visible to everyone
            assert r.fake.find_command(name)["default_member_permissions"] is None, name

        # A plain member: Discord does not even offer /scene, so nothing reaches the bot.
        with pytest.raises(CommandUnavailable):
            await r.fake.slash(
                "scene new", {"name": "偷開", "template": "interrogation"}, user="bob"
            )
        with pytest.raises(CommandUnavailable):
            await r.fake.autocomplete("scene open", {"name": ""}, focused="name", user="bob")
        assert not (r.home / "偷開").exists() and not r.fake.threads

        # Server Settings → Integrations: the admins allow a "Writers" role to use /scene.
        writers = r.fake.add_role("Writers", 0)
        r.fake.add_user("erin", roles=[writers])
        r.fake.set_command_permissions("scene", roles={writers: True})
        thread = await r.new_scene("審訊室", user="erin")
        assert read_binding(r.home / "審訊室").directors == (r.fake.user("erin").id,)
        with pytest.raises(CommandUnavailable):  # still not bob
            await r.fake.slash("scene list", user="bob")

        # …and can take it away per channel, even from Manage Threads holders (not from admins).
        r.fake.set_command_permissions(
            "scene", roles={writers: True}, channels={r.fake.channel_id: False}
        )
        with pytest.raises(CommandUnavailable):
            await r.fake.slash("scene list", user="alice")
        assert "審訊室" in await r.ask("scene list", user="owner")

        # In-thread commands need no server permission: the bot checks the scene's directors.
        assert "0 輪" in await r.ask("status", user="bob", channel=thread)
        assert "/director add" in await r.ask("run", {"turns": 1}, user="bob", channel=thread)
        await r.ask("director add", {"user": "bob"}, user="erin", channel=thread)
        assert "▶" in await r.ask("run", {"turns": 1}, user="bob", channel=thread)
        await finished(r, thread)


async def test_an_unbound_console_scene_is_opened_only_by_members_allowed_to(tmp_path):
    async with room(tmp_path) as r:
        write_scene(r.home / "密室")  # made in the console: no binding yet
        with pytest.raises(CommandUnavailable):
            await r.fake.slash("scene open", {"name": "密室"}, user="bob")
        assert read_binding(r.home / "密室") is None and not r.fake.threads

        assert "密室" in await r.ask("scene open", {"name": "密室"}, user="alice")
        thread = thread_of(r, "密室")
        assert read_binding(r.home / "密室").directors == (r.fake.user("alice").id,)
        refused = await r.ask("soul show", {"actor": "刑警"}, user="bob", channel=thread)
        assert "/director add" in refused and "SOUL-SECRET" not in refused

        # A scene bound in another server is not this server's to open, Manage Threads or not.
        write_scene(r.home / "別處")
        write_binding(r.home / "別處", Binding(1, 2, 3, (), None))
        assert "別處" not in await r.ask("scene list", user="alice")
        text = await r.ask("scene open", {"name": "別處"}, user="alice")
        assert "another server" in text and read_binding(r.home / "別處").guild_id == 1
        unknown = await r.ask("scene open", {"name": "../密室"}, user="alice")
        assert "/scene list" in unknown and str(tmp_path) not in unknown
        assert len(r.fake.threads) == 1


# ---------------------------------------------------------------------- souls from Discord
class Attacker:
    """A loopback HTTP server standing in for a member's own "model provider"."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> Attacker:
        async def record(request: web.Request) -> web.Response:
            self.requests.append((request.path, dict(request.headers)))
            return web.json_response({"error": "stolen"}, status=500)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", record)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


async def test_a_soul_from_discord_cannot_redirect_requests_or_pick_models(tmp_path):
    async with Attacker() as attacker, room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        await r.ask("director add", {"user": "bob"}, channel=thread)  # a member-director
        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
        before = soul.read_bytes()

        stolen = (ATTACKS / "discord_soul_api_base.md").read_text("utf-8")
        stolen = stolen.replace("ATTACKER_URL", attacker.url).encode()
        text = await r.ask(
            "soul edit", {"actor": "刑警", "file": ("soul.md", stolen)}, user="bob", channel=thread
        )
        assert "api_base" in text and "已保存" not in text
        assert soul.read_bytes() == before

        shown = await r.slash("soul edit", {"actor": "刑警"}, user="bob", channel=thread)
        expensive = (ATTACKS / "discord_soul_model.md").read_text("utf-8")
        submitted = await r.fake.submit_modal(shown, {"soul": expensive})
        await submitted.response()
        text = await r.answer(submitted)
        assert "anthropic/claude-opus-4-1" in text and "scripted/improv" in text
        assert soul.read_bytes() == before

        await r.ask("cue", {"actor": "刑警"}, user="bob", channel=thread)
        await finished(r, thread)
        assert r.lines(thread)[-1].startswith("刑警:")
        assert attacker.requests == []  # no request, so no Authorization header either

        # What a character is made of may change through Discord.
        allowed = "---\nmodel: scripted/improv\ntemperature: 0.4\n---\n## 角色小傳\n新刑警。\n"
        text = await r.ask(
            "soul edit",
            {"actor": "刑警", "file": ("soul.md", ("\ufeff" + allowed).encode())},
            user="bob",
            channel=thread,
        )
        assert "已保存" in text and soul.read_text("utf-8") == allowed  # a BOM is dropped


async def test_an_upload_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    big5 = (ATTACKS / "discord_upload_big5.md").read_bytes()
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
        before = soul.read_bytes()
        text = await r.ask(
            "soul edit", {"actor": "刑警", "file": ("舊檔.md", big5)}, channel=thread
        )
        assert "舊檔.md" in text and "UTF-8" in text and soul.read_bytes() == before
        huge = b"#" * 300_000  # over the 256 KB a soul.md may be: refused before download
        text = await r.ask("soul edit", {"actor": "刑警", "file": ("big.md", huge)}, channel=thread)
        assert "big.md" in text and soul.read_bytes() == before


# ---------------------------------------------------------------------- autocomplete
async def test_autocomplete_offers_aliases_to_directors_only_and_never_fails(tmp_path):
    async with room(tmp_path) as r:
        write_scene(r.home / "密室")  # 刑警's soul has the alias 王警官
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")

        async def offered(user: str, typed: str) -> list[str]:
            handle = await r.fake.autocomplete(
                "cue", {"actor": typed}, focused="actor", user=user, channel_id=thread
            )
            await handle.response()
            return [c["value"] for c in handle.choices]

        assert await offered("alice", "王") == ["刑警"]
        assert await offered("bob", "王") == []  # a private nickname is not a spectator's clue
        assert await offered("bob", "") == ["林小姐", "刑警", "律師"]
        assert await offered("bob", "刑") == ["刑警"]

        (r.home / "密室" / "actors" / "ANY").mkdir()  # a folder name the engine refuses
        assert await offered("alice", "") == []  # answered, with nothing
        assert await offered("bob", "") == []
        text = await r.ask("cue", {"actor": "刑警"}, channel=thread)
        assert "ANY" in text  # the director learns what to fix


async def test_trying_a_private_alias_tells_a_spectator_or_another_captain_nothing(tmp_path):
    """Aliases live in the private souls: a member who may not read 刑警 gets, for his alias
    王警官, the very answer a name nobody has gets; his readers resolve it."""
    async with room(tmp_path) as r:
        for name in ("erin", "gus"):
            r.fake.add_user(name)
        write_scene(r.home / "密室")  # 刑警's soul has the alias 王警官
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        await r.ask("captain add", {"actor": "林小姐", "user": "erin"}, channel=thread)
        await r.ask("captain add", {"actor": "刑警", "user": "bob"}, channel=thread)

        async def answer(user: str, command: str, name: str) -> str:
            options = {"condition": f"enter:{name}"} if command == "watch add" else {"actor": name}
            text = await r.ask(command, options, user=user, channel=thread)
            return text.replace(name, "NAME")

        for user in ("erin", "gus"):  # another character's captain; a spectator
            for command in ("backstage", "soul show", "watch add"):
                alias, nobodys = [await answer(user, command, n) for n in ("王警官", "王探長")]
                assert alias == nobodys, (user, command, alias, nobodys)
        # His readers, his captain and the director, resolve the alias.
        shown = await r.ask("soul show", {"actor": "王警官"}, user="bob", channel=thread)
        assert "aliases: [王警官]" in shown  # 刑警's own soul
        armed = await r.ask("watch add", {"condition": "enter:王警官"}, channel=thread)
        assert "enter:刑警" in armed


# ---------------------------------------------------------------------- broken scenes
async def test_a_broken_scene_answers_everyone_and_only_directors_learn_why(tmp_path):
    async with room(tmp_path) as r:
        write_scene(r.home / "密室")
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        soul = r.home / "密室" / "actors" / "律師" / "soul.md"
        soul.write_text(
            "---\ntemperature: FRONT-MATTER-SECRET\n---\n## 角色小傳\n律師。\n", encoding="utf-8"
        )

        spectator = await r.ask("status", user="bob", channel=thread)
        assert spectator == "這場戲目前無法載入；細節請洽它的導演。"
        director = await r.ask("status", channel=thread)
        assert "actors/律師/soul.md" in director and "temperature" in director
        assert str(tmp_path) not in director
        assert "actors/律師/soul.md" in await r.ask("run", {"turns": 1}, channel=thread)

        # After a restart the scene still fails to load; the bot starts and answers anyway.
        await r.stop_bot()
        await r.start_bot()
        spectator = await r.ask("status", user="bob", channel=thread)
        assert spectator in {
            "This scene can't be loaded; its directors have the details.",
            "這場戲目前無法載入；細節請洽它的導演。",
        }
        assert "actors/律師/soul.md" in await r.ask("status", channel=thread)
        for text in [*r.dms("alice"), r.everything_public()]:
            assert "FRONT-MATTER-SECRET" not in text and str(tmp_path) not in text


async def test_a_scene_that_fails_to_load_gets_no_thread_and_its_opener_learns_why(tmp_path):
    async with room(tmp_path) as r:
        write_scene(r.home / "密室")
        (r.home / "密室" / "context.md").write_text(
            "---\nneglect_turns: -1\n---\n背景。\n", encoding="utf-8"
        )
        text = await r.ask("scene open", {"name": "密室"})
        assert "context.md" in text and str(tmp_path) not in text
        assert not r.fake.threads and read_binding(r.home / "密室") is None


async def test_a_bound_scene_with_a_non_utf8_file_does_not_stop_the_bot(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        await r.stop_bot()
        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
        soul.write_bytes((ATTACKS / "discord_upload_big5.md").read_bytes())
        await r.start_bot()
        assert await r.ask("status", user="bob", channel=thread)  # answered
        director = await r.ask("status", channel=thread)
        assert "actors/刑警/soul.md" in director and "UTF-8" in director
        assert str(tmp_path) not in director
        assert "審訊室" in await r.ask("scene list")


# ---------------------------------------------------------------------- docker stop
async def test_sigterm_cuts_running_scenes_cleanly_and_tells_their_directors(tmp_path):
    """`circus bot` as a process, stopped mid-run like `docker stop` does (SIGTERM)."""
    scenes_dir = tmp_path / "scenes"
    scenes_dir.mkdir()
    async with FakeDiscord() as fake:
        env = {
            **os.environ,
            **fake.env(),
            "CIRCUS_SCENES_DIR": str(scenes_dir),
            "DISCORD_GUILD_ID": str(fake.guild_id),
            "CIRCUS_MODEL": "scripted/improv",
            "CIRCUS_SCRIPTED_LATENCY": "0.2",  # a slow model: a turn is in flight at SIGTERM
        }
        log = (tmp_path / "bot.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import bot, sys; sys.exit(bot.main())", env=env,
            stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
        try:
            # Generous bounds (a loaded machine starts Python and imports litellm slowly); they
            # only limit how long a broken bot can hang the test.
            await until(lambda: fake.guild_commands, timeout=90, what="commands synced")
            await fake.wait_for_identify(timeout=90)
            made = await fake.slash("scene new", {"name": "審訊室", "template": "interrogation"})
            await made.wait_followups(1, timeout=90)
            thread = int(fake.thread_by_name("🎭 審訊室")["id"])
            run = await fake.slash("run", {"turns": 50}, channel_id=thread)
            await run.wait_followups(1, timeout=90)

            def posted() -> list[dict]:
                return [
                    m
                    for m in fake.messages_in(thread)
                    if m["webhook_id"] and m["username"] != "Circus"
                ]

            await until(lambda: len(posted()) >= 2, timeout=90, what="two turns posted")
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), timeout=60)
        except BaseException:
            log.flush()
            print((tmp_path / "bot.log").read_text("utf-8", errors="replace")[-4000:])
            raise
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            log.close()
        assert process.returncode == 0, (tmp_path / "bot.log").read_text("utf-8")[-3000:]

    scene = scenes_dir / str(fake.guild_id) / "審訊室"
    turns = parse_transcript((scene / "transcript.md").read_text("utf-8"))
    assert 2 <= len(turns) < 50
    assert [t.number for t in turns] == list(range(1, len(turns) + 1))
    assert not (scene / ".circus" / "pending.json").exists()  # no turn was left half-made
    thoughts = "".join(p.read_text("utf-8") for p in (scene / "backstage").glob("*.log"))
    assert thoughts.count("weighs what was said") == len(turns)
    usage = (scene / ".circus" / "usage.jsonl").read_text("utf-8").splitlines()
    assert {json.loads(row)["turn"] for row in usage} == {t.number for t in turns}

    # Every whole turn reached the thread, then the line that says why it stopped.
    assert len(posted()) == len(turns)
    last = fake.messages_in(thread)[-1]["content"]
    assert "⏹" in last and f"第 {turns[-1].number} 輪" in last
    dms = [m["content"] for m in fake.dms_to("alice")]
    assert any("⏹" in d and "/resume" in d for d in dms)

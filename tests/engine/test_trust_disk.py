"""Untrusted files on disk: encodings, hidden folders and symlinks, odd numbers, and what the
console and the bot do with a broken scene. Attack files live in tests/fixtures/attacks/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scenekit import ALL_WHISPER, CAST, SOUL_MARKER
from trustkit import LAWYER, attack, line, no_server_path, refusal, soul_file

from engine import Actor, Rehearsal
from engine.errors import BadName, BadSceneFile
from engine.folder.whispers import parse_notes


# ----------------------------------------------------------------------------- encodings
async def test_files_saved_with_a_bom_are_read_as_written(scene, scripted):
    for path in (soul_file(scene), scene / "context.md", scene / "director_notes.md"):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (scene / "director_notes.md").write_bytes(
        b"\xef\xbb\xbf" + f"## 全體\n- {ALL_WHISPER}\n".encode()
    )
    state = await Rehearsal(scene, models=scripted).state()
    assert state.souls["律師"].aliases == ("張律師",)  # the front matter was seen
    assert not state.souls["律師"].body.startswith(("\ufeff", "---"))
    assert state.language == "zh" and state.cast == list(CAST)
    scripted.register("improv", lambda r: line())
    rehearsal = Rehearsal(scene, models=scripted)
    await rehearsal.cue(await rehearsal.resolve_actor("張律師"))
    (call,) = scripted.calls
    assert ALL_WHISPER in call.prompt and SOUL_MARKER["律師"] in call.prompt
    assert "\ufeff" not in call.prompt and "aliases:" not in call.prompt


async def test_a_big5_soul_is_refused_naming_the_file(scene):
    soul_file(scene).write_bytes(attack("big5_soul.md"))
    error = await refusal(scene)
    assert "is not UTF-8 text — save it as UTF-8" in str(error)
    assert error.in_language("zh", relative=True).startswith(f"{LAWYER}：不是 UTF-8")
    no_server_path(error, scene)


@pytest.mark.parametrize("rel", ["context.md", "director_notes.md", "transcript.md"])
async def test_any_scene_file_in_big5_is_a_named_refusal(scene, rel):
    (scene / rel).write_bytes("## 全體\n請慢一點。\n".encode("big5"))
    error = await refusal(scene)
    assert error.rel == rel and "UTF-8" in str(error)


async def test_a_soul_set_with_a_bom_is_saved_without_it(scene):
    await Rehearsal(scene).souls.set(
        Actor("律師"), "\ufeff---\naliases: [張律師]\n---\n## 角色小傳\n新。\n"
    )
    assert soul_file(scene).read_text(encoding="utf-8").startswith("---\naliases")


# ----------------------------------------------------------------------------- folders and links
async def test_hidden_folders_never_make_a_scene_unloadable_or_reach_a_take(scene):
    for hidden in ("actors/.obsidian", ".obsidian", ".stversions/actors/律師", "actors/律師/.git"):
        (scene / hidden).mkdir(parents=True)
        (scene / hidden / "workspace.json").write_text("{}", encoding="utf-8")
    (scene / "actors" / "律師" / ".soul.md.swp").write_bytes(b"\x00\xff")
    rehearsal = Rehearsal(scene)
    assert (await rehearsal.state()).cast == list(CAST)
    take = scene / "takes" / f"take_{await rehearsal.takes.save()}"
    assert sorted(p.relative_to(take).as_posix() for p in take.rglob("*")) == sorted(
        [
            p.relative_to(scene).as_posix()
            for p in scene.rglob("*")
            if not any(part.startswith(".") for part in p.relative_to(scene).parts)
            and p.relative_to(scene).parts[0] != "takes"
        ]
        + ["report.md", "turns.jsonl"]  # what a saved take carries of its own (the harvest)
    )


async def test_symlinks_never_make_a_scene_unloadable_or_a_take_follow_them_out(scene, tmp_path):
    outside = tmp_path / "outside"
    (outside / "actors" / "小偷").mkdir(parents=True)
    (outside / "actors" / "小偷" / "soul.md").write_text("## 角色小傳\n外人。\n", encoding="utf-8")
    (outside / "secret.txt").write_text("OUTSIDE-SECRET", encoding="utf-8")
    (scene / "loop").symlink_to(scene)  # a link loop
    (scene / "actors" / "loop").symlink_to(scene / "actors")
    (scene / "actors" / "小偷").symlink_to(outside / "actors" / "小偷")  # not an actor
    (scene / "secret.txt").symlink_to(outside / "secret.txt")
    (scene / "everything").symlink_to(outside)
    (scene / "dangling.md").symlink_to(scene / "nowhere.md")
    (scene / "notes_copy.md").symlink_to(scene / "director_notes.md")
    rehearsal = Rehearsal(scene)
    assert (await rehearsal.state()).cast == list(CAST)

    take = scene / "takes" / f"take_{await rehearsal.takes.save()}"
    assert not (take / "loop").exists() and not (take / "actors" / "loop").exists()
    assert not (take / "dangling.md").exists()
    assert (take / "secret.txt").is_symlink()  # kept as a link to outside, never read
    assert os.readlink(take / "secret.txt") == str(outside / "secret.txt")
    assert (take / "everything").is_symlink()
    assert (take / "actors" / "小偷").is_symlink()
    assert not (take / "notes_copy.md").is_symlink()  # inside the scene: copied as a file
    assert (take / "notes_copy.md").read_text("utf-8") == (scene / "director_notes.md").read_text(
        "utf-8"
    )
    copied = [Path(d) / f for d, _, files in os.walk(take) for f in files]  # links not followed
    assert not any(
        "OUTSIDE-SECRET" in p.read_text("utf-8", "replace") for p in copied if not p.is_symlink()
    )


async def test_a_file_where_a_folder_is_expected_is_named_never_a_crash(scene, scripted):
    (scene / "takes").write_text("a note to self", encoding="utf-8")
    rehearsal = Rehearsal(scene, models=scripted)
    assert (await rehearsal.takes.saved()) == []
    with pytest.raises(BadSceneFile, match="takes.*where a folder is expected"):
        await rehearsal.takes.save()
    assert (scene / "takes").read_text("utf-8") == "a note to self"

    (scene / "backstage").write_text("not a folder", encoding="utf-8")
    assert len((await rehearsal.state()).cast) == 3
    scripted.register("improv", lambda r: line())
    before = (scene / "transcript.md").exists()
    errors: list = []
    rehearsal.events.listen(lambda e: errors.append(e) if type(e).__name__ == "ErrorEvent" else 0)
    result = await rehearsal.cue(Actor("律師"))
    assert result.reason == "error"
    assert [e.message for e in errors] == [
        f"{scene / 'backstage'}: is a file where a folder is expected — rename or move it"
    ]
    assert (scene / "transcript.md").exists() == before  # the turn landed whole or not at all
    assert not (scene / ".circus" / "pending.json").exists()


async def test_a_folder_or_a_pipe_where_a_soul_is_expected_is_named(scene):
    soul_file(scene).unlink()
    soul_file(scene).mkdir()
    assert "is a folder where a file is expected" in str(await refusal(scene))
    soul_file(scene).rmdir()
    os.mkfifo(soul_file(scene))  # reading it would hang forever
    assert "is not a regular file" in str(await refusal(scene))
    soul_file(scene).unlink()
    soul_file(scene).symlink_to(soul_file(scene))  # a link to itself
    error = await refusal(scene)
    assert error.rel == LAWYER
    no_server_path(error, scene)


async def test_a_huge_soul_is_refused_before_it_is_parsed(scene):
    soul_file(scene).write_text("## 角色小傳\n" + "長" * 100_000, encoding="utf-8")
    assert "larger than 256 KB" in str(await refusal(scene))


async def test_a_badly_named_visible_actor_folder_is_still_refused(scene):
    (scene / "actors" / "bad?name").mkdir()
    with pytest.raises(BadName):
        await Rehearsal(scene).state()


async def test_odd_numbers_on_disk_are_text_never_a_crash(scene):
    from engine.takes.folders import parse_take_ref

    (scene / "takes" / "take_²").mkdir(parents=True)
    (scene / "takes" / f"take_{'9' * 200}").mkdir()
    (scene / "transcript.md").write_text(
        f"# 審訊室\n\n## 1 · 林小姐\n**台詞**: 嗯。\n\n## {'7' * 5000} · 刑警\n", encoding="utf-8"
    )
    (scene / "backstage").mkdir()
    (scene / "backstage" / "林小姐.log").write_text(f"## 1\n想。\n\n## {'3' * 5000}\n", "utf-8")
    rehearsal = Rehearsal(scene)
    state = await rehearsal.state()
    assert [t.number for t in state.turns] == [1] and list(state.thoughts["林小姐"]) == [1]
    assert await rehearsal.takes.saved() == []
    assert [parse_take_ref(r) for r in ("3", "take_3", "²", "9" * 5000, "٣")] == [
        3,
        3,
        None,
        None,
        None,
    ]


# ----------------------------------------------------------------------------- at the frontends
def _cli():
    from clikit import circus, cli_env

    return circus, cli_env


@pytest.mark.parametrize("command", ["status", "console", "run"])
def test_the_console_names_a_big5_soul_in_one_line(tmp_path, command):
    circus, _ = _cli()
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path).returncode == 0
    soul = tmp_path / "wake" / "actors" / "Ruth" / "soul.md"
    soul.write_bytes(attack("big5_soul.md"))
    result = circus(command, "wake", cwd=tmp_path, stdin="QUIT\n")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == [
        f"circus: {Path('wake') / 'actors' / 'Ruth' / 'soul.md'}: is not UTF-8 text — save it "
        "as UTF-8 (in most editors: Save As… → Encoding → UTF-8)"
    ]


def test_soul_set_from_a_big5_file_is_one_line_too(tmp_path):
    circus, _ = _cli()
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path).returncode == 0
    (tmp_path / "old.md").write_bytes(attack("big5_soul.md"))
    result = circus("soul", "wake", "set", "Ruth", "old.md", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == "circus: old.md is not UTF-8 text — save it as UTF-8\n"


def test_the_console_takes_every_word_for_everyone(tmp_path):
    circus, _ = _cli()
    assert circus("new", "wake", "--template", "wake", cwd=tmp_path).returncode == 0
    result = circus("console", "wake", cwd=tmp_path, stdin="NOTE 所有人: slower\nQUIT\n")
    assert result.returncode == 0, result.stderr
    notes = (tmp_path / "wake" / "director_notes.md").read_text("utf-8")
    assert "slower" in parse_notes(notes, ["Ruth", "Danny", "Carol"]).everyone


async def test_a_member_cannot_send_the_operators_key_to_their_own_server(tmp_path, monkeypatch):
    """Black box: the real bot in the fake Discord; the attacker runs a loopback HTTP server."""
    from aiohttp import web
    from botkit import room, until

    from engine.door import llm

    llm.litellm_module()  # import litellm now, not on the bot's event loop mid-interaction
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-secret")
    seen: list[str] = []

    async def record(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path} {request.headers.get('Authorization')}")
        return web.json_response({"error": "gotcha"}, status=500)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with room(tmp_path) as r:
            thread = await r.new_scene("審訊室")
            soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
            before = soul.read_bytes()
            evil = attack("api_base_soul.md").replace(b"127.0.0.1:9", f"127.0.0.1:{port}".encode())
            text = await r.ask(
                "soul edit", {"actor": "刑警", "file": ("soul.md", evil)}, channel=thread
            )
            assert "api_base" in text and "Discord" in text
            assert soul.read_bytes() == before

            other = evil.replace(f"api_base: http://127.0.0.1:{port}/v1\n".encode(), b"")
            text = await r.ask(
                "soul edit", {"actor": "刑警", "file": ("soul.md", other)}, channel=thread
            )
            assert "openai/gpt-4o" in text and "scripted/improv" in text  # the allowed ones
            assert soul.read_bytes() == before

            assert "刑警" in await r.ask("cue", {"actor": "刑警"}, channel=thread)
            await until(
                lambda: any(
                    "■" in m["content"] for m in r.thread(thread) if m["username"] == "Circus"
                ),
                what="the cue to finish",
            )
            await r.drain()
            assert r.lines(thread)[-1].startswith("刑警:")
    finally:
        await runner.cleanup()
    assert seen == []


async def test_a_big5_scene_never_stops_the_bot_from_starting(tmp_path, monkeypatch):
    from botkit import room

    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    async with room(tmp_path) as r:
        broken = await r.new_scene("審訊室")
        fine = await r.new_scene("夜班")
        await r.stop_bot()
        soul = r.home / "審訊室" / "actors" / "律師" / "soul.md"
        soul.write_bytes(attack("big5_soul.md"))
        (r.home / ".obsidian").mkdir()
        await r.start_bot()
        assert "0 輪" in await r.ask("status", channel=fine)
        answer = await r.ask("status", channel=broken)
        assert "actors/律師/soul.md" in answer and "UTF-8" in answer

"""/read and the panel's 🔊 Read in a scene thread, through the fake Discord with the offline
voices: one audio post within the server's limit, its progress line edited in place, the room
refused unless the scene lets it listen, the button alive after a restart."""

from __future__ import annotations

import io

import pytest
from botkit import Room, finished, room, until

SCENE = "審訊室"
THOUGHT = "weighs what was said"  # what the scripted actors think (engine.providers.scripted)


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def bot_posts(r: Room, thread: int) -> list[dict]:
    return [m for m in r.thread(thread) if not m["webhook_id"] and not m["components"]]


def read_posts(r: Room, thread: int) -> list[dict]:
    return [m for m in bot_posts(r, thread) if m["content"].startswith("🔊")]


def files_of(r: Room, message: dict) -> dict[str, bytes]:
    return {a["filename"]: r.fake.attachments_data[int(a["id"])] for a in message["attachments"]}


def heard_seconds(data: bytes) -> float:
    import soundfile

    info = soundfile.info(io.BytesIO(data))
    return info.frames / info.samplerate


async def rehearsed(r: Room, turns: int = 3) -> int:
    thread = await r.new_scene(SCENE)
    await r.ask("run", {"turns": turns}, channel=thread)
    await finished(r, thread)
    return thread


async def test_read_posts_one_audio_file_and_its_cue_sheet_in_the_thread(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        answer = await r.ask("read", {}, channel=thread)
        assert "第 1 條" in answer and "/channels/" in answer  # a link to the post
        [post] = read_posts(r, thread)
        files = files_of(r, post)
        assert set(files) == {"take_1.ogg", "take_1.txt"}
        audio, cues = files["take_1.ogg"], files["take_1.txt"].decode("utf-8")
        assert audio[:4] == b"OggS" and len(audio) <= 10 * 1024 * 1024
        assert heard_seconds(audio) > 5
        assert "第 3 輪" in cues and "旁白" in cues
        assert THOUGHT not in cues and THOUGHT not in r.everything_public()
        assert "朗讀" in post["content"]
        # the progress line became the post: edited in place, never a second message
        edits = [
            q for q in r.fake.requests_to("PATCH", "/channels/{channel_id}/messages/{message_id}")
            if q.path.endswith(f"/{post['id']}")
        ]  # fmt: skip
        assert edits
        assert not (r.home / SCENE / "exports").exists()  # nothing left behind but the cache


async def test_a_read_larger_than_the_servers_limit_comes_in_numbered_parts(tmp_path, monkeypatch):
    import discord

    # A server whose members may upload 100 KB (Discord's real floor is 10 MB: a long take).
    limits = dict(discord.Guild._PREMIUM_GUILD_LIMITS)
    limits[0] = limits[0]._replace(filesize=100 * 1024)
    monkeypatch.setattr(discord.Guild, "_PREMIUM_GUILD_LIMITS", limits)
    async with room(tmp_path) as r:
        thread = await rehearsed(r, turns=6)
        answer = await r.ask("read", {}, channel=thread)
        assert "第 1 條" in answer
        posts = read_posts(r, thread)
        assert len(posts) >= 2
        parts = [files_of(r, post) for post in posts]
        names = [name for files in parts for name in files if name.endswith(".ogg")]
        assert names == [f"take_1.part{i}.ogg" for i in range(1, len(posts) + 1)]
        assert all(len(files[n]) <= 100 * 1024 for files, n in zip(parts, names, strict=True))
        assert "take_1.txt" in parts[0]  # the cue sheet, once, with the first part
        assert f"第 1 部分，共 {len(posts)} 部分" in posts[0]["content"]
        assert sum(heard_seconds(files[n]) for files, n in zip(parts, names, strict=True)) > 10


async def test_read_of_a_range_reads_only_those_turns(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        await r.ask("read", {"from": 2, "to": 2}, channel=thread)
        [post] = read_posts(r, thread)
        cues = files_of(r, post)["take_1.txt"].decode("utf-8")
        assert "第 2 輪" in cues and "第 1 輪" not in cues and "第 3 輪" not in cues


async def test_a_spectator_is_refused_unless_the_scene_lets_the_room_listen(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        before = [m["content"] for m in r.thread(thread)]
        refused = await r.ask("read", {}, user="bob", channel=thread)
        assert "spectators_read: true" in refused and "<@" in refused
        await r.drain()
        assert [m["content"] for m in r.thread(thread)] == before

        context = r.home / SCENE / "context.md"
        text = context.read_text("utf-8").replace("---\n", "---\nspectators_read: true\n", 1)
        context.write_text(text, encoding="utf-8")
        allowed = await r.ask("read", {}, user="bob", channel=thread)
        assert "第 1 條" in allowed and len(read_posts(r, thread)) == 1


async def test_a_take_without_turns_is_one_private_line_and_no_post(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        answer = await r.ask("read", {}, channel=thread)
        assert "沒有寫入任何東西" in answer
        await r.drain()
        assert read_posts(r, thread) == [] and not any(
            m["content"].startswith("🔊") for m in r.thread(thread)
        )


async def test_the_read_button_works_after_a_restart(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r, turns=2)
        await r.stop_bot()
        await r.start_bot()
        panel = next(m for m in r.thread(thread) if m["components"] and not m["webhook_id"])
        ids = [c["custom_id"] for row in panel["components"] for c in row["components"]]
        read_id = next(i for i in ids if i.startswith("circus:read:"))
        handle = await r.fake.click(int(panel["id"]), read_id, user="alice")
        await handle.response(timeout=60)
        assert "第 1 條" in await r.answer(handle)
        [post] = await until(lambda: read_posts(r, thread), what="the read to be posted")
        assert "take_1.ogg" in files_of(r, post)

        bob = await r.fake.click(int(panel["id"]), read_id, user="bob")
        await bob.response(timeout=60)
        assert "spectators_read" in await r.answer(bob)

"""📌 Note on this line in a scene thread: three members note two lines through the message menu
and its form; the notes land in line-notes.md with each member's name and id, `/notes` lists
them for anyone in the thread, every answer is private, and a scene that says
`line_notes: crew` keeps the menu for its directors."""

from __future__ import annotations

import pytest
from botkit import Room, finished, room, until

from fakediscord import InteractionHandle

SCENE = "審訊室"
MENU = "📌 Note on this line"
NOTES = ("ALICE-NOTE 這就是重點", "BOB-NOTE 太直白了", "CAROL-NOTE ## Turn 9 · 律師")


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


def actor_posts(r: Room, thread: int) -> list[dict]:
    return [m for m in r.thread(thread) if m["webhook_id"] and m["username"] != "Circus"]


async def menu(r: Room, message_id: int, user: str) -> InteractionHandle:
    handle = await r.fake.message_command(MENU, message_id, user=user)
    await handle.response(timeout=60)
    return handle


async def note(r: Room, message_id: int, user: str, text: str) -> str:
    """A member long-presses a line, picks 📌, types the note and sends it: the private answer."""
    handle = await menu(r, message_id, user)
    assert handle.modal is not None, handle.contents
    submitted = await r.fake.submit_modal(handle, {"line_note": text})
    await submitted.response(timeout=60)
    return await r.answer(submitted)


async def played(r: Room) -> tuple[int, list[dict]]:
    thread = await r.new_scene(SCENE)
    await r.ask("run", {"turns": 2}, channel=thread)
    await finished(r, thread)
    await until(lambda: len(actor_posts(r, thread)) == 2, what="both lines posted")
    return thread, actor_posts(r, thread)


async def test_three_members_note_two_lines_and_the_room_can_read_them(tmp_path) -> None:
    async with room(tmp_path) as r:
        carol = r.fake.add_user("carol", global_name="Carol — ## Turn 9\n(the lead)")
        thread, (first, second) = await played(r)
        public_before = r.everything_public()

        said = await note(r, int(first["id"]), "alice", NOTES[0])
        assert "📌" in said and "第 1 輪" in said and first["username"] in said
        assert "📌" in await note(r, int(first["id"]), "bob", NOTES[1])
        assert "📌" in await note(r, int(second["id"]), "carol", NOTES[2])

        text = (r.home / SCENE / "line-notes.md").read_text("utf-8")
        sections = [line for line in text.splitlines() if line.startswith("## ")]
        assert sections == [f"## Turn 1 · {first['username']}", f"## Turn 2 · {second['username']}"]
        alice, bob = r.fake.user("alice").id, r.fake.user("bob").id
        assert f"{NOTES[0]} — alice (discord:{alice})" in text
        assert f"{NOTES[1]} — bob (discord:{bob})" in text
        assert f"(discord:{carol.id})" in text and "\n## Turn 9" not in text

        listed = await r.ask("notes", channel=thread, user="bob")  # a spectator may read them
        for marker in ("ALICE-NOTE", "BOB-NOTE", "CAROL-NOTE"):
            assert marker in listed
        assert listed.index("ALICE-NOTE") < listed.index("BOB-NOTE") < listed.index("CAROL-NOTE")
        assert "discord:" not in listed
        await r.drain()
        assert r.everything_public() == public_before  # every answer was private

        handle = await r.slash(
            "report", {}, user="alice", channel=thread
        )  # /report: under the line
        await r.answer(handle)
        [report] = [
            r.fake.attachments_data[int(a["id"])].decode("utf-8")
            for message in handle.messages
            for a in message.get("attachments") or []
        ]
        section = report[report.index("## 台詞筆記") :]
        assert section.index(first["username"]) < section.index("ALICE-NOTE")
        assert section.index("BOB-NOTE") < section.index(second["username"])
        assert "  - BOB-NOTE 太直白了 — bob" in section.splitlines()

        exported = await r.slash("export", {"format": "fountain"}, user="bob", channel=thread)
        await r.answer(exported)
        [fountain] = [
            r.fake.attachments_data[int(a["id"])].decode("utf-8")
            for message in exported.messages
            for a in message.get("attachments") or []
        ]
        assert f"[[{NOTES[0]} — alice]]" in fountain


async def test_a_scene_for_its_crew_keeps_the_menu_for_directors(tmp_path) -> None:
    async with room(tmp_path) as r:
        thread, (first, _) = await played(r)
        context = r.home / SCENE / "context.md"
        text = context.read_text("utf-8").replace("---\n", "---\nline_notes: crew\n", 1)
        context.write_text(text, encoding="utf-8")

        handle = await menu(r, int(first["id"]), "bob")
        assert handle.modal is None
        refused = await r.answer(handle)
        assert "line_notes: crew" in refused and "<@" in refused
        assert not (r.home / SCENE / "line-notes.md").exists()
        assert "📌" in await note(r, int(first["id"]), "alice", NOTES[0])
        assert "ALICE-NOTE" in await r.ask("notes", channel=thread, user="bob")


async def test_the_menu_on_a_message_that_is_no_line_says_what_it_works_on(tmp_path) -> None:
    async with room(tmp_path) as r:
        thread = await r.new_scene(SCENE)
        card = r.thread(thread)[0]
        text = await r.answer(await menu(r, int(card["id"]), "bob"))
        assert "不是" in text and "台詞" in text, text
        assert "還沒有筆記" in await r.ask("notes", channel=thread, user="bob")
        assert not (r.home / SCENE / "line-notes.md").exists()

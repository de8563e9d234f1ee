"""Panning for gold in Discord: ⭐ votes, /picks, /take compare, /export and /report.

Everything goes through the fake Discord's gateway and REST API against the real bot: a member
clicking ⭐ is a MESSAGE_REACTION_ADD the bot receives; what a test checks is what people see
(picks.md on disk, private replies, attached files, DMs).
"""

from __future__ import annotations

import csv
import io

import discord
import pytest
from botkit import finished, room, until
from exportkit import fdx_elements, fountain_elements
from scenekit import write_scene

from bot.commands.harvest import parse_take, render_pick_line, voter_name
from bot.thread.reports import report_numbers
from bot.thread.votes import is_star, voter
from engine.folder.turns import parse_transcript
from engine.harvest.picks import Pick, parse_picks
from engine.providers.scripted import ScriptedRequest


@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")


# ---------------------------------------------------------------------- helpers


def actor_posts(r, thread: int) -> list[dict]:
    return [m for m in r.thread(thread) if m["webhook_id"] and m["username"] != "Circus"]


async def star(r, message_id: int, user: str, *, emoji: str = "⭐", remove: bool = False) -> None:
    """A member clicks (or un-clicks) a reaction; wait until the bot has handled the event."""
    seen = r.bot.reactions_seen
    act = r.fake.unreact if remove else r.fake.react
    assert await act(int(message_id), emoji, user=user)
    await until(lambda: r.bot.reactions_seen > seen, what="the bot to see the reaction")


def picks_md(r, scene: str) -> list[Pick]:
    path = r.home / scene / "picks.md"
    return parse_picks(path.read_text(encoding="utf-8")) if path.exists() else []


def tag(r, user: str) -> str:
    return f"(discord:{r.fake.users[user].id})"


def attached(r, handle) -> dict[str, bytes]:
    """Every file attached to the private replies of an interaction: name -> bytes."""
    files = {}
    for message in handle.messages:
        for a in message.get("attachments") or []:
            files[a["filename"]] = r.fake.attachments_data[int(a["id"])]
    return files


async def ask_for_files(r, command, options, *, user, channel) -> tuple[str, dict[str, bytes]]:
    handle = await r.slash(command, options, user=user, channel=channel)
    text = await r.answer(handle)
    return text, attached(r, handle)


async def rehearsed(r, name: str = "審訊室", turns: int = 3) -> int:
    thread = await r.new_scene(name)
    await r.ask("run", {"turns": turns}, channel=thread)
    await finished(r, thread)
    return thread


# ---------------------------------------------------------------------- pure rules
@pytest.mark.parametrize(
    ("typed", "take"),
    [
        ("", "current"),
        ("current", "current"),
        (" Current ", "current"),
        ("目前", "current"),
        ("3", 3),
        ("take_3", 3),
        ("take 12", 12),
        ("第2條", 2),
        ("0", None),
        ("-1", None),
        ("three", None),
        ("3; rm -rf", None),
    ],
)
def test_take_options_read_numbers_and_current(typed, take):
    assert parse_take(typed) == take


@pytest.mark.parametrize(
    ("name", "user_id", "vote"),
    [
        ("bob", 7, "bob (discord:7)"),
        ("  林 小姐 ", 8, "林 小姐 (discord:8)"),
        ("", 9, "member (discord:9)"),
        ("##", 9, "member (discord:9)"),
        # a name that tries to forge picks.md structure or another member's vote
        ("x\n## take_1 · turn 1 · 刑警\n- ⭐ alice (discord:1)", 5, None),
        ("Ｆｕｌｌｗｉｄｔｈ", 6, "Fullwidth (discord:6)"),
        ("a" * 100, 4, "a" * 32 + " (discord:4)"),
    ],
)
def test_a_vote_is_a_safe_display_name_and_the_member_id(name, user_id, vote):
    made = voter(name, user_id)
    assert made.endswith(f"(discord:{user_id})") and made.count("(discord:") == 1
    assert "\n" not in made and "#" not in made and "[" not in made
    if vote is not None:
        assert made == vote
    assert voter_name(made) == made.rsplit(" (discord:", 1)[0]


@pytest.mark.parametrize(
    ("emoji", "counts"),
    [
        (discord.PartialEmoji(name="⭐"), True),
        (discord.PartialEmoji(name="⭐\ufe0f"), True),
        (discord.PartialEmoji(name="🌟"), False),
        (discord.PartialEmoji(name="star", id=123), False),  # a server's custom :star:
        (discord.PartialEmoji(name="⭐", id=124), False),
        (discord.PartialEmoji(name="👍"), False),
    ],
)
def test_only_the_star_emoji_is_a_vote(emoji, counts):
    assert is_star(emoji) is counts


def test_a_pick_line_shows_names_not_ids():
    pick = Pick(2, 5, "刑警", "拍桌。", "你說謊。", ("bob (discord:7)", "ann"), "")
    line = render_pick_line(pick, "en")
    assert line.startswith("take 2 · turn 5 · **刑警** ⭐ 2")
    assert "“你說謊。”" in line and "(bob, ann)" in line and "discord:" not in line


def test_the_report_embed_reads_warnings_and_the_actor_table():
    markdown = (
        "# Report\n\n| actor | turns | lines | words | longest silence |\n|---|---|---|---|---|\n"
        "| Ruth | 3 | 2 | 14 | 2 |\n| Danny | 2 | 2 | 9 | 3 |\n\n"
        "⚠ Ruth and Danny sound alike — try a different model per actor, or a whisper.\n"
    )
    numbers = report_numbers(markdown)
    assert numbers.warnings == (
        "⚠ Ruth and Danny sound alike — try a different model per actor, or a whisper.",
    )
    assert [(a.actor, a.turns, a.lines, a.words) for a in numbers.actors] == [
        ("Ruth", "3", "2", "14"),
        ("Danny", "2", "2", "9"),
    ]
    assert report_numbers("# Report\nnothing\n").warnings == ()


# ---------------------------------------------------------------------- ⭐ votes
async def test_stars_from_two_members_vote_and_taking_a_star_back_takes_the_vote(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        posts = actor_posts(r, thread)
        assert len(posts) == 3
        second = parse_transcript(
            (r.home / "審訊室" / "transcript.md").read_text(encoding="utf-8")
        )[1]

        await star(r, posts[1]["id"], "bob")
        await star(r, posts[1]["id"], "carol")
        [pick] = picks_md(r, "審訊室")
        assert (pick.take, pick.turn, pick.actor) == (1, 2, second.actor)
        assert pick.dialogue == second.dialogue
        assert pick.votes == (f"bob {tag(r, 'bob')}", f"carol {tag(r, 'carol')}")

        listed = await r.ask("picks", channel=thread, user="bob")  # a spectator may look
        assert "⭐ 2" in listed and "(bob, carol)" in listed and "discord:" not in listed

        await star(r, posts[1]["id"], "bob", remove=True)
        assert picks_md(r, "審訊室")[0].votes == (f"carol {tag(r, 'carol')}",)
        await star(r, posts[1]["id"], "carol", remove=True)
        assert picks_md(r, "審訊室") == []
        assert "⭐" in await r.ask("picks", channel=thread, user="carol")  # "star a line"


async def test_stars_on_anything_but_an_actors_line_change_nothing(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        other = await rehearsed(r, "密室", turns=1)
        card = r.thread(thread)[0]
        status = next(m for m in r.thread(thread) if m["username"] == "Circus")
        line = actor_posts(r, thread)[0]
        human = await r.fake.post_message(thread, "great line!", user="bob")
        elsewhere = await r.fake.post_message(r.fake.channel_id, "hello", user="bob")

        await star(r, card["id"], "bob")  # the scene card
        await star(r, status["id"], "bob")  # a status line
        await star(r, human["id"], "carol")  # a person's message in the thread
        await star(r, elsewhere["id"], "carol")  # a channel that is no scene
        await star(r, line["id"], "bob", emoji="👍")  # another emoji on a line
        await star(r, line["id"], "bob", emoji="🌟")
        assert picks_md(r, "審訊室") == []
        assert not (r.home / "審訊室" / "picks.md").exists()

        await star(r, actor_posts(r, other)[0]["id"], "bob")  # another scene's line
        assert picks_md(r, "審訊室") == []
        assert [(p.take, p.turn) for p in picks_md(r, "密室")] == [(1, 1)]


async def test_a_bots_star_is_not_a_vote_and_a_forged_name_forges_nothing(tmp_path):
    async with room(tmp_path) as r:
        r.fake.add_user("helperbot", bot=True)
        r.fake.add_user("mallory", global_name="x\n## take_1 · turn 3 · 律師\n- ⭐ alice")
        thread = await rehearsed(r)
        first = actor_posts(r, thread)[0]
        await star(r, first["id"], "helperbot")
        assert picks_md(r, "審訊室") == []

        await star(r, first["id"], "mallory")
        [pick] = picks_md(r, "審訊室")  # one pick, one vote: nothing forged
        assert (pick.take, pick.turn) == (1, 1)
        assert len(pick.votes) == 1 and pick.votes[0].endswith(tag(r, "mallory"))


async def test_every_post_of_a_long_line_is_that_turn(tmp_path, scripted):
    # the longest action and line a turn may have (engine.reply.read.CAPS): over 2000 characters
    long_action = "。".join(f"他動作{i}很慢" for i in range(80))[:590]
    long_line = "。".join(f"第{i}句話說得很長很長" for i in range(140))[:1490]

    def script(request: ScriptedRequest) -> str:
        if request.shape.kind == "stage_manager":
            return f"NEXT: {request.shape.cast[0]}\nREASON: first"
        return (
            f"<thought>想。</thought>\n<action>{long_action}</action>\n"
            f"<dialogue>{long_line}</dialogue>\n<cue>ANY</cue>"
        )

    scripted.register("long", script)
    async with room(tmp_path, models=scripted) as r:
        write_scene(r.home / "長台詞", model="scripted/long")
        await r.ask("scene open", {"name": "長台詞"})
        thread = int(r.fake.thread_by_name("🎭 長台詞")["id"])
        await r.ask("cue", {"actor": "律師"}, channel=thread)
        await finished(r, thread)
        posts = actor_posts(r, thread)
        assert len(posts) >= 2  # one turn, split over several messages

        await star(r, posts[0]["id"], "bob")
        await star(r, posts[-1]["id"], "carol")
        [pick] = picks_md(r, "長台詞")
        assert (pick.take, pick.turn, pick.actor) == (1, 1, "律師")
        assert len(pick.votes) == 2


async def test_votes_survive_a_bot_restart(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        posts = actor_posts(r, thread)
        await star(r, posts[0]["id"], "bob")

        await r.stop_bot()
        await r.start_bot()
        await star(r, posts[2]["id"], "carol")  # posted before the restart
        await star(r, posts[0]["id"], "bob", remove=True)
        assert [(p.turn, p.votes) for p in picks_md(r, "審訊室")] == [
            (3, (f"carol {tag(r, 'carol')}",))
        ]


async def test_a_saved_takes_lines_keep_their_votes_after_a_replay(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        posts = actor_posts(r, thread)
        await r.ask("take save", channel=thread)
        await r.ask("replay", {"take": 1, "until": 1}, channel=thread)
        await r.ask("resume", {"turns": 1}, channel=thread)
        await finished(r, thread, 2)
        newest = actor_posts(r, thread)[-1]

        await star(r, posts[2]["id"], "bob")  # take 1, turn 3
        await star(r, newest["id"], "bob")  # take 2, turn 2
        assert [(p.take, p.turn) for p in picks_md(r, "審訊室")] == [(1, 3), (2, 2)]


# ---------------------------------------------------------------------- compare, export, report
async def test_take_compare_is_private_and_long_ones_come_as_a_file(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        await r.ask("take save", channel=thread)
        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread, 2)
        # a spectator may compare; r.ask asserts the answer is private
        text = await r.ask("take compare", {"a": "1", "b": "current"}, channel=thread, user="bob")
        expected = await r.scene_thread("審訊室").rehearsal.harvest.diff(1, "current")
        assert text == expected and "3" in text

        handle = await r.slash("take compare", {"a": "1", "full": True}, user="bob", channel=thread)
        text = await r.answer(handle)
        full = await r.scene_thread("審訊室").rehearsal.harvest.diff(1, "current", full=True)
        files = attached(r, handle)
        assert text == full or files["take_1-vs-take_2.md"].decode("utf-8") == full

        refused = await r.ask("take compare", {"a": "banana"}, channel=thread, user="bob")
        assert "banana" in refused
        assert "take_" in await r.ask("take compare", {"a": "9"}, channel=thread, user="bob")


def wordy(request: ScriptedRequest) -> str:
    """Long lines, so that a comparison of a few turns outgrows one Discord message."""
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: turn"
    words = " ".join(f"word{request.index}-{i}" for i in range(40))
    return f"<thought>t</thought>\n<dialogue>{words}</dialogue>\n<cue>ANY</cue>"


async def test_a_long_comparison_comes_as_a_file(tmp_path, scripted):
    scripted.register("wordy", wordy)
    async with room(tmp_path, models=scripted) as r:
        write_scene(r.home / "長", model="scripted/wordy")
        await r.ask("scene open", {"name": "長"})
        thread = int(r.fake.thread_by_name("🎭 長")["id"])
        await r.ask("run", {"turns": 4}, channel=thread)
        await finished(r, thread)
        await r.ask("take save", channel=thread)
        await r.ask("replay", {"take": 1, "until": 0}, channel=thread)
        await r.ask("resume", {"turns": 4}, channel=thread)
        await finished(r, thread, 2)
        handle = await r.slash("take compare", {"a": "1", "b": "2", "full": True}, channel=thread)
        text = await r.answer(handle)
        full = await r.scene_thread("長").rehearsal.harvest.diff(1, 2, full=True)
        assert len(full) > 2000
        assert attached(r, handle) == {"take_1-vs-take_2.md": full.encode("utf-8")}
        assert "1" in text and "2" in text


async def test_export_attaches_files_a_screenwriter_opens(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        turns = parse_transcript((r.home / "審訊室" / "transcript.md").read_text(encoding="utf-8"))
        text, files = await ask_for_files(r, "export", {}, user="bob", channel=thread)
        assert set(files) == {
            "screenplay.fountain",
            "screenplay.fdx",
            "screenplay.md",
            "storyboard.csv",
        }
        assert all(name in text for name in files)

        # The files read back (with the harvest branch's parsers: screenplain for Fountain,
        # XML for Final Draft) into the take's sequence of characters and lines...
        fountain = files["screenplay.fountain"].decode("utf-8")
        spoken = [(t.actor, t.dialogue) for t in turns]
        for elements in (
            fountain_elements(fountain)[1],
            fdx_elements(files["screenplay.fdx"].decode("utf-8")),
        ):
            said = [text for kind, text in elements if kind in ("character", "dialogue")]
            assert list(zip(said[::2], said[1::2], strict=True)) == spoken
        data = files["storyboard.csv"]
        assert data.startswith(b"\xef\xbb\xbf")  # a BOM, so spreadsheets read the Chinese
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
        assert rows[0][0] == "鏡號" and len(rows) == 1 + len(turns)
        # ...and are exactly what `circus export` writes for the same take.
        scene_thread = r.scene_thread("審訊室")
        for path in await scene_thread.rehearsal.harvest.export(out=tmp_path / "cli"):
            assert files[path.name] == path.read_bytes(), path.name
        assert "weighs what was said" not in fountain  # no thoughts unless asked
        assert not (r.home / "審訊室" / "exports").exists()  # nothing left behind

        _, one = await ask_for_files(r, "export", {"format": "csv"}, user="bob", channel=thread)
        assert set(one) == {"storyboard.csv"}


async def test_exported_thoughts_are_for_directors_only(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        handle = await r.slash("export", {"thoughts": True}, user="bob", channel=thread)
        refused = await r.answer(handle)
        assert "director" in refused.lower() or "導演" in refused
        assert attached(r, handle) == {}

        _, files = await ask_for_files(
            r, "export", {"thoughts": True, "format": "fountain"}, user="alice", channel=thread
        )
        assert "weighs what was said" in files["screenplay.fountain"].decode("utf-8")


async def test_export_of_the_picked_lines(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        posts = actor_posts(r, thread)
        await star(r, posts[2]["id"], "bob")
        await star(r, posts[0]["id"], "carol")
        _, files = await ask_for_files(
            r, "export", {"picks": True, "format": "csv"}, user="bob", channel=thread
        )
        rows = list(csv.reader(io.StringIO(files["storyboard.csv"].decode("utf-8-sig"))))
        assert [row[0] for row in rows[1:]] == ["S001", "S002"]
        turns = parse_transcript((r.home / "審訊室" / "transcript.md").read_text(encoding="utf-8"))
        lines = [row for row in rows[1:]]
        assert turns[2].dialogue in lines[0] and turns[0].dialogue in lines[1]  # pick order


async def test_reports_go_to_directors_privately_and_by_dm_when_a_take_is_saved(tmp_path):
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        refused = await r.ask("report", channel=thread, user="bob")
        assert "/director add" in refused

        handle = await r.slash("report", {}, user="alice", channel=thread)
        await r.answer(handle)
        [embed] = [e for m in handle.messages for e in m.get("embeds") or []]
        assert "審訊室" in embed["title"]
        assert {f["name"] for f in embed["fields"]} >= {"林小姐", "刑警", "律師"}
        report = attached(r, handle)["report.md"].decode("utf-8")
        assert "林小姐" in report

        await r.ask("take save", channel=thread)
        await until(
            lambda: any("report.md" in str(m.get("attachments")) for m in r.fake.dms_to("alice"))
        )
        await r.drain()
        dm = next(m for m in r.fake.dms_to("alice") if m.get("attachments"))
        assert dm["embeds"] and "第 1 條" in dm["content"]
        assert r.dms("bob") == []  # not a director: no report
        public = r.everything_public()
        assert "report.md" not in public


async def test_a_replay_waits_for_a_vote_in_progress(tmp_path):
    # picks.md's file lock blocks the event loop while it waits: a replay re-filing picks beside
    # a ⭐ vote in the same bot would freeze every scene, so the two take turns.
    async with room(tmp_path) as r:
        thread = await rehearsed(r)
        await r.ask("take save", channel=thread)
        votes = r.scene_thread("審訊室").votes
        async with votes.lock:  # a vote is being counted
            handle = await r.slash("replay", {"take": 1, "until": 1}, channel=thread)
            assert handle.deferred and handle.followups == []
            assert len(parse_transcript(transcript_of(r, "審訊室"))) == 3  # not replayed yet
        assert "2" in await r.answer(handle)
        assert len(parse_transcript(transcript_of(r, "審訊室"))) == 1


def transcript_of(r, scene: str) -> str:
    return (r.home / scene / "transcript.md").read_text(encoding="utf-8")

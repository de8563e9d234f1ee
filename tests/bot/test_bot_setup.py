"""Setting a scene up from Discord, black box: the real bot against the fake Discord.

A director builds a scene from a phone — `/scene new cast:`, `/actor add` (a form with the
soul's three parts), `/scene context` (a form with the public context), `/actor remove`,
`/scene backstory` (a draft prior story per actor, accepted, edited or dropped) — and it
rehearses. Spectators are refused everything, privately, and a bad input is one private line
with nothing half-written.
"""

from __future__ import annotations

import pytest
from botkit import WAIT, finished, room
from scenekit import SOUL_MARKER, write_scene
from setupkit import attached, inputs, snapshot, status_lines, submit, thread_of

from engine.providers.scripted import ScriptedModels, ScriptedRequest, improv
from fakediscord import CommandUnavailable


@pytest.fixture(autouse=True)
def operator_env(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    monkeypatch.delenv("CIRCUS_STAGE_MANAGER_MODEL", raising=False)
    monkeypatch.delenv("CIRCUS_ALLOWED_MODELS", raising=False)


# ---------------------------------------------------------------------- one scene, all in Discord
async def test_a_scene_built_only_through_discord_rehearses_saves_and_exports(tmp_path):
    async with room(tmp_path) as r:
        text = await r.ask("scene new", {"name": "午夜", "cast": "林小姐, 刑警", "language": "zh"})
        thread = thread_of(r, "午夜")
        folder = r.home / "午夜"
        assert f"<#{thread}>" in text and "/actor add" in text
        assert sorted(p.name for p in (folder / "actors").iterdir()) == ["刑警", "林小姐"]
        assert "林小姐, 刑警" in r.thread(thread)[0]["content"]  # the card names the cast

        # /actor add: a form with the soul's three parts.
        shown = await r.slash("actor add", {"name": "律師"}, channel=thread)
        assert list(inputs(shown.modal)) == ["bio", "prior_story", "notes"]
        said = await submit(
            r,
            shown,
            {
                "bio": "張律師，四十歲。BIO-SECRET",
                "prior_story": "他收了錢。PRIOR-SECRET",
                "notes": "保住客戶。NOTES-SECRET",
            },
        )
        assert "律師" in said and "加入" in said
        assert (folder / "actors" / "律師" / "soul.md").read_text("utf-8") == (
            "## 角色小傳\n\n張律師，四十歲。BIO-SECRET\n\n"
            "## 前期劇本\n\n他收了錢。PRIOR-SECRET\n\n"
            "## 導戲筆記\n\n保住客戶。NOTES-SECRET\n"
        )

        # /scene context: the public body in a form, prefilled; the settings stay as they were.
        settings_before = (folder / "context.md").read_text("utf-8").split("\n---\n")[0]
        shown = await r.slash("scene context", channel=thread)
        assert inputs(shown.modal)["context"].startswith("# 午夜")
        assert "language" not in inputs(shown.modal)["context"]  # settings are not public text
        said = await submit(r, shown, {"context": "# 午夜審訊\n\n凌晨一點四十分，警局偵訊室。"})
        assert "保存" in said
        context = (folder / "context.md").read_text("utf-8")
        assert context.split("\n---\n")[0] == settings_before
        assert context.endswith("\n---\n\n# 午夜審訊\n\n凌晨一點四十分，警局偵訊室。\n")

        await r.ask("note", {"text": "盯緊她", "actor": "刑警"}, channel=thread)
        said = await r.ask("actor remove", {"actor": "刑警"}, channel=thread)
        assert "刑警" in said and not (folder / "actors" / "刑警").exists()
        assert "給他的 1 則悄悄話也一併移除" in said  # their whisper went with them
        assert "## 刑警" not in (folder / "director_notes.md").read_text("utf-8")

        assert "▶" in await r.ask("run", {"turns": 4}, channel=thread)
        await finished(r, thread)
        # The new actor posts through its own persona, from its first line.
        assert {line.split(":")[0] for line in r.lines(thread)} == {"林小姐", "律師"}
        assert any(m["username"] == "律師" for m in r.thread(thread) if m["webhook_id"])
        lines = status_lines(r, thread)
        assert any("律師" in s and "加入" in s for s in lines)
        assert any("刑警" in s and "離開" in s for s in lines)
        assert "SECRET" not in r.everything_public()  # a soul never reaches the thread

        assert "第 1 條" in await r.ask("take save", channel=thread)
        assert (folder / "takes" / "take_1" / "actors" / "律師" / "soul.md").is_file()
        handle = await r.slash("export", {}, user="bob", channel=thread)
        await r.answer(handle)
        script = attached(r, handle)["screenplay.md"].decode("utf-8")
        assert "凌晨一點四十分，警局偵訊室。" in script  # the public context set in Discord
        assert "律師" in script and "This is line" in script
        assert "刑警" not in script and "SECRET" not in script


# ---------------------------------------------------------------------- spectators
SET_UP = [
    ("actor add", {"name": "路人"}),
    ("actor add", {"name": "路人", "file": ("soul.md", "## 角色小傳\n路人。\n".encode())}),
    ("actor remove", {"actor": "刑警"}),
    ("actor rename", {"actor": "刑警", "new_name": "警官"}),
    ("scene context", {}),
    ("scene context", {"file": ("context.md", "# 別的戲\n".encode())}),
    ("scene backstory", {"file": ("story.txt", "那晚其實是律師開的槍。".encode())}),
]


async def test_a_spectator_is_refused_every_set_up_command_privately_and_nothing_changes(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        before, shown_before = snapshot(folder), len(r.thread(thread))

        # Discord itself offers /scene only to members allowed to open scenes...
        for command, options in [*SET_UP, ("scene new", {"name": "偷", "cast": "甲, 乙"})]:
            if command.startswith("scene"):
                with pytest.raises(CommandUnavailable):
                    await r.fake.slash(command, options, user="bob", channel_id=thread)
        # ...and even when the admins allow bob /scene, only the scene's directors set it up.
        r.let_open_scenes("bob")
        for command, options in SET_UP:
            handle = await r.slash(command, options, user="bob", channel=thread)
            assert handle.modal is None, command  # no form opens
            refusal = await r.answer(handle)
            assert "/director add" in refusal and "\n" not in refusal, command

        assert snapshot(folder) == before
        assert len(r.thread(thread)) == shown_before  # nothing was announced either


async def test_outside_a_scene_thread_the_set_up_commands_say_where_to_go(tmp_path):
    async with room(tmp_path) as r:
        for command, options in SET_UP:
            handle = await r.slash(command, options)  # in the channel, not a scene's thread
            assert handle.modal is None
            assert "/scene new" in await r.answer(handle), command


async def test_a_form_sent_by_someone_who_stopped_directing_meanwhile_writes_nothing(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        await r.ask("director add", {"user": "bob"}, channel=thread)
        shown = await r.slash("actor add", {"name": "路人"}, user="bob", channel=thread)
        await r.ask("director remove", {"user": "bob"}, channel=thread)
        before = snapshot(folder)
        refusal = await submit(r, shown, {"bio": "路人甲。"})
        assert "/director add" in refusal
        assert snapshot(folder) == before


# ---------------------------------------------------------------------- bad inputs
def soul_upload(front: str) -> tuple[str, bytes]:
    return ("soul.md", f"---\n{front}\n---\n## 角色小傳\n新人。\n".encode())


BAD_INPUTS = [
    # (command, options, what the one line says)
    ("actor add", {"name": "林小姐"}, "林小姐"),  # a name in the cast
    ("actor add", {"name": "王警官"}, "刑警"),  # an alias of 刑警
    ("actor add", {"name": "全體"}, "全體"),  # a word for everyone
    ("actor add", {"name": "新人", "file": soul_upload("aliases: [刑警]")}, "刑警"),
    ("actor add", {"name": "新人", "file": soul_upload("api_base: http://evil")}, "api_base"),
    ("actor add", {"name": "新人", "file": soul_upload("model: openai/gpt-5")}, "scripted/improv"),
    ("actor add", {"name": "新人", "file": ("soul.md", b"\xa4\xa4\xa4\xe5")}, "UTF-8"),
    ("actor rename", {"actor": "刑警", "new_name": "林曉雯"}, "林小姐"),  # 林小姐's alias
    ("actor remove", {"actor": "無名氏"}, "無名氏"),
    (
        "scene context",
        {"file": ("context.md", "---\nmodel: openai/gpt-5\n---\n# 偷換\n".encode())},
        "scripted/improv",
    ),
    ("scene backstory", {"file": ("story.txt", b"   \n")}, "前情"),  # an empty backstory
    ("scene backstory", {"file": ("big.txt", b"x" * 300_000)}, "big.txt"),  # over 256 KB
    ("scene context", {"file": ("big.md", b"#" * 300_000)}, "big.md"),
]


@pytest.mark.parametrize(("command", "options", "says"), BAD_INPUTS)
async def test_a_bad_set_up_input_is_one_private_line_and_nothing_is_written(
    tmp_path, command, options, says
):
    async with room(tmp_path) as r:
        write_scene(r.home / "密室")  # 林小姐 (林, 林曉雯), 刑警 (王警官), 律師 (張律師)
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        folder = r.home / "密室"
        before, shown_before = snapshot(folder), len(r.thread(thread))
        handle = await r.slash(command, options, channel=thread)
        assert handle.modal is None  # refused before any form opens
        refusal = await r.answer(handle)
        assert says in refusal and "\n" not in refusal.strip() and "Traceback" not in refusal
        assert snapshot(folder) == before
        assert len(r.thread(thread)) == shown_before


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"cast": "甲, 甲"}, "甲"),
        ({"cast": ", ".join(f"角色{i}" for i in range(13))}, "12"),
        ({"cast": "甲, 全體"}, "全體"),
        ({"cast": "甲, 乙", "template": "interrogation"}, "cast"),
    ],
)
async def test_a_bad_cast_for_a_new_scene_makes_no_folder_and_no_thread(tmp_path, options, says):
    async with room(tmp_path) as r:
        refusal = await r.ask("scene new", {"name": "新戲", **options})
        assert says in refusal and "\n" not in refusal.strip()
        assert not (r.home / "新戲").exists()
        assert not any(t["name"] == "🎭 新戲" for t in r.fake.threads.values())


async def test_a_thirteenth_actor_is_refused_before_any_form_opens(tmp_path):
    async with room(tmp_path) as r:
        cast = ", ".join(f"角色{i}" for i in range(12))
        await r.ask("scene new", {"name": "群戲", "cast": cast, "language": "zh"})
        thread = thread_of(r, "群戲")
        folder = r.home / "群戲"
        before = snapshot(folder)
        for options in ({"name": "第十三"}, {"name": "第十三", "file": soul_upload("")}):
            shown = await r.slash("actor add", options, channel=thread)
            assert shown.modal is None  # nobody types a soul in vain
            refusal = await r.answer(shown)
            assert "12" in refusal and "/actor remove" in refusal and "\n" not in refusal
        assert snapshot(folder) == before


async def test_a_form_refused_on_submit_hands_back_what_was_typed(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        shown = await r.slash("actor add", {"name": "證人"}, channel=thread)
        upload = ("soul.md", "## 角色小傳\n先到的證人。\n".encode())
        await r.ask("actor add", {"name": "證人", "file": upload}, channel=thread)
        before = snapshot(folder)
        submitted = await r.fake.submit_modal(shown, {"bio": "後到的證人。", "notes": "別說謊。"})
        await submitted.response(timeout=WAIT)
        refusal = await r.answer(submitted)
        assert "證人" in refusal
        kept = attached(r, submitted)["證人-soul.md"].decode("utf-8")
        assert "後到的證人。" in kept and "別說謊。" in kept
        assert snapshot(folder) == before


async def test_a_rename_after_the_first_turn_is_refused(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        await r.ask("run", {"turns": 1}, channel=thread)
        await finished(r, thread)
        before = snapshot(folder)
        refusal = await r.ask("actor rename", {"actor": "刑警", "new_name": "警官"}, channel=thread)
        assert "刑警" in refusal and "\n" not in refusal.strip()
        assert snapshot(folder) == before
        # Before the first turn of a take, the same rename goes through.
        thread = await r.new_scene("新審訊室")
        said = await r.ask("actor rename", {"actor": "刑警", "new_name": "警官"}, channel=thread)
        assert "警官" in said
        assert (r.home / "新審訊室" / "actors" / "警官" / "soul.md").is_file()
        await r.ask("cue", {"actor": "警官"}, channel=thread)  # posts under the new name at once
        await finished(r, thread)
        assert r.lines(thread)[-1].startswith("警官:")


async def test_a_soul_edit_form_the_engine_refuses_hands_back_what_was_typed(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        soul = r.home / "審訊室" / "actors" / "刑警" / "soul.md"
        before = soul.read_bytes()
        shown = await r.slash("soul edit", {"actor": "刑警"}, channel=thread)
        typed = "---\ntemprature: 0.4\n---\n## 角色小傳\n改了一整晚的刑警。\n"
        submitted = await r.fake.submit_modal(shown, {"soul": typed})
        await submitted.response(timeout=WAIT)
        refusal = await r.answer(submitted)
        assert "temperature" in refusal  # did you mean…
        assert attached(r, submitted)["刑警-soul.md"].decode("utf-8") == typed
        assert soul.read_bytes() == before


@pytest.mark.parametrize("field", ["bio", "prior_story", "notes"])
async def test_an_oversized_form_field_is_refused_and_nothing_is_written(tmp_path, field):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        before = snapshot(folder)
        shown = await r.slash("actor add", {"name": "證人"}, channel=thread)
        values = {"bio": "證人。", field: "字" * 4001}
        refusal = await submit(r, shown, values)
        assert "4001" in refusal and "4000" in refusal
        assert snapshot(folder) == before


async def test_an_oversized_context_form_is_refused_and_nothing_is_written(tmp_path):
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室")
        folder = r.home / "審訊室"
        before = snapshot(folder)
        shown = await r.slash("scene context", channel=thread)
        refusal = await submit(r, shown, {"context": "字" * 4001})
        assert "4001" in refusal
        assert snapshot(folder) == before


# ---------------------------------------------------------------------- backstory sifting
BACKSTORY = "BACKSTORY-TRUTH：午夜那通電話是從律師事務所打出去的，錢在凌晨一點被搬走。"


def sifter(request: ScriptedRequest) -> str:
    """Drafts a prior story for the one actor whose soul the summary prompt holds."""
    if request.shape.kind in ("actor", "stage_manager"):
        return improv(request)
    actor = next(a for a, marker in SOUL_MARKER.items() if marker in request.prompt)
    return f"{actor}只記得午夜那通電話。"


async def test_backstory_drafts_reach_the_director_alone_and_are_written_only_when_accepted(
    tmp_path,
):
    models = ScriptedModels({"sift": sifter})
    async with room(tmp_path, models=models) as r:
        write_scene(r.home / "密室", model="scripted/sift")
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        folder = r.home / "密室"
        souls = {a: (folder / "actors" / a / "soul.md") for a in SOUL_MARKER}
        before = snapshot(folder)

        upload = ("story.txt", BACKSTORY.encode())
        handle = await r.slash("scene backstory", {"file": upload}, channel=thread)
        messages = await handle.wait_followups(4, timeout=WAIT)
        assert "3" in messages[0]["content"]
        drafts = {a: next(m for m in messages[1:] if a in m["content"]) for a in SOUL_MARKER}
        for actor, message in drafts.items():
            assert f"> {actor}只記得午夜那通電話。" in message["content"]
        assert handle.ephemeral
        # Each draft was made from the full backstory and that actor's own soul only.
        summaries = [c for c in models.calls if c.shape.kind not in ("actor", "stage_manager")]
        assert len(summaries) == 3
        for call in summaries:
            assert BACKSTORY in call.prompt
            assert sum(marker in call.prompt for marker in SOUL_MARKER.values()) == 1
        assert snapshot(folder) == before  # nothing written yet
        assert "BACKSTORY-TRUTH" not in r.everything_public()
        assert "只記得" not in r.everything_public()

        # A spectator pressing a button changes nothing.
        press = await r.fake.click(int(drafts["林小姐"]["id"]), "backstory:accept", user="bob")
        await press.response(timeout=WAIT)
        assert "/director add" in await r.answer(press)
        assert snapshot(folder) == before

        # Accept: written as 林小姐's prior story, the rest of her soul untouched.
        press = await r.fake.click(int(drafts["林小姐"]["id"]), "backstory:accept")
        assert (await press.response(timeout=WAIT))[
            "type"
        ] == 7  # the draft's message now says it is done
        assert press.callback["data"]["content"].startswith("✅")
        assert press.callback["data"]["components"] == []
        soul = souls["林小姐"].read_text("utf-8")
        assert "## 前期劇本\n\n林小姐只記得午夜那通電話。\n" in soul
        assert SOUL_MARKER["林小姐"] in soul and "## 導戲筆記\n目標。" in soul
        assert "林小姐知道的事" not in soul

        # Edit: a form prefilled with the draft; what the director sends is what is written.
        press = await r.fake.click(int(drafts["刑警"]["id"]), "backstory:edit")
        await press.response(timeout=WAIT)
        assert inputs(press.modal)["prior_story"] == "刑警只記得午夜那通電話。"
        submitted = await r.fake.submit_modal(press, {"prior_story": "刑警只記得那把槍。"})
        assert (await submitted.response(timeout=WAIT))["type"] == 7
        assert "刑警只記得那把槍。" in souls["刑警"].read_text("utf-8")
        assert "午夜那通電話" not in souls["刑警"].read_text("utf-8")

        # Drop: nothing written.
        press = await r.fake.click(int(drafts["律師"]["id"]), "backstory:drop")
        assert (await press.response(timeout=WAIT))["type"] == 7
        assert press.callback["data"]["content"].startswith("🗑")
        assert souls["律師"].read_bytes() == before["actors/律師/soul.md"]


def headed_sifter(request: ScriptedRequest) -> str:
    """Drafts a prior story the way a model may: as a whole soul, headings and all."""
    if request.shape.kind in ("actor", "stage_manager"):
        return improv(request)
    return "## 前期劇本\n她只記得那通電話。\n\n## 導戲筆記\n什麼都別說。"


async def test_an_accepted_draft_stays_inside_the_prior_story_and_the_old_one_is_kept(tmp_path):
    models = ScriptedModels({"sift": headed_sifter})
    async with room(tmp_path, models=models) as r:
        folder = write_scene(r.home / "密室", model="scripted/sift")
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        upload = ("story.txt", BACKSTORY.encode())
        handle = await r.slash("scene backstory", {"file": upload}, channel=thread)
        messages = await handle.wait_followups(4, timeout=WAIT)
        draft = next(m for m in messages[1:] if "林小姐" in m["content"])
        press = await r.fake.click(int(draft["id"]), "backstory:accept")
        await press.response(timeout=WAIT)
        said = press.callback["data"]["content"]
        assert said.startswith("✅") and "`drafts/林小姐.prior-story.1.md`" in said
        soul = (folder / "actors" / "林小姐" / "soul.md").read_text("utf-8")
        headings = [line for line in soul.splitlines() if line.startswith("## ")]
        assert headings == ["## 角色小傳", "## 前期劇本", "## 導戲筆記"]
        assert "### 導戲筆記\n什麼都別說。" in soul and soul.endswith("## 導戲筆記\n目標。\n")
        kept = folder / "drafts" / "林小姐.prior-story.1.md"
        assert kept.read_text("utf-8") == "林小姐知道的事。\n"


async def test_a_draft_for_an_actor_removed_meanwhile_is_refused_naming_the_cast(tmp_path):
    models = ScriptedModels({"sift": sifter})
    async with room(tmp_path, models=models) as r:
        write_scene(r.home / "密室", model="scripted/sift")
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        upload = ("story.txt", BACKSTORY.encode())
        handle = await r.slash("scene backstory", {"file": upload}, channel=thread)
        messages = await handle.wait_followups(4, timeout=WAIT)
        draft = next(m for m in messages[1:] if "律師只記得" in m["content"])
        await r.ask("actor remove", {"actor": "律師"}, channel=thread)
        before = snapshot(r.home / "密室")
        press = await r.fake.click(int(draft["id"]), "backstory:accept")
        await press.response(timeout=WAIT)
        refusal = await r.answer(press)
        assert "律師" in refusal and "林小姐, 刑警" in refusal
        assert snapshot(r.home / "密室") == before


# ---------------------------------------------------------------------- /status warnings
async def test_a_blank_scene_warns_its_directors_of_its_placeholders_before_a_run(tmp_path):
    async with room(tmp_path) as r:
        await r.ask("scene new", {"name": "kitchen", "cast": "Ines, Rafa", "language": "en"})
        thread = thread_of(r, "kitchen")
        placeholders = [
            "• context.md: still holds the blank scene's guidance",
            "• actors/Ines/soul.md: still holds the blank soul's guidance under Bio, Prior story,"
            " Director's notes",
            "• actors/Rafa/soul.md: still holds the blank soul's guidance under Bio, Prior story,"
            " Director's notes",
        ]
        for said in (await r.ask("status", channel=thread), await r.ask("run", channel=thread)):
            warnings = [line for line in said.splitlines() if line.startswith("• ")]
            assert len(warnings) == 3, said
            assert all(w.startswith(p) for w, p in zip(warnings, placeholders, strict=True))
        assert said.startswith("▶")  # the run's reply says it started, then what to fix
        await finished(r, thread)
        spectator = await r.ask("status", user="bob", channel=thread)
        assert "⚠" not in spectator and "soul.md" not in spectator


async def test_status_shows_directors_what_a_hand_built_scene_should_fix(tmp_path):
    async with room(tmp_path) as r:
        folder = write_scene(r.home / "密室")
        (folder / "actors" / "律師" / "soul.md").write_text(
            "律師。只寫了一行。\n", encoding="utf-8"
        )
        await r.ask("scene open", {"name": "密室"})
        thread = thread_of(r, "密室")
        director = await r.ask("status", channel=thread)
        warnings = [line for line in director.splitlines() if line.startswith("• ")]
        assert len(warnings) == 1 and "actors/律師/soul.md" in warnings[0]
        assert str(r.scenes_dir) not in director  # a file by its path inside the scene
        spectator = await r.ask("status", user="bob", channel=thread)
        assert "⚠" not in spectator and "soul.md" not in spectator
        assert spectator.splitlines()[0] == director.splitlines()[0]

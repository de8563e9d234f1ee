"""Setting up your own scene through the engine: a blank scene, adding, removing and
renaming actors, replacing the context, sifting a backstory, and the warnings a hand-built scene
gets. Every refusal is one clear line and leaves the folder exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenekit import CAST, SOUL_MARKER, operator_config

from engine import (
    Actor,
    AmbiguousActor,
    BadName,
    BadSceneFile,
    CastTooBig,
    CircusError,
    Rehearsal,
    UnknownActor,
    new_scene,
)
from engine.catalog import say
from engine.errors import BadRequest, Refused
from engine.folder.scene import SceneFiles
from engine.folder.soul import blank_soul, guided_parts, missing_parts


def listing(root: Path) -> list[tuple[str, bytes]]:
    """Every file under root (but the run lock) with its bytes: equal means nothing written."""
    return [
        (str(p.relative_to(root)), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in ("run.lock",)
    ]


def but_spend(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The files without the scene's record of model calls: a call that was made is billed and
    recorded even when nothing else is written (the spend record is not the writer's text)."""
    return [(path, data) for path, data in files if path != ".circus/calls.jsonl"]


def spend_kinds(scene: Path) -> list[str]:
    record = scene / ".circus" / "calls.jsonl"
    rows = [json.loads(line) for line in record.read_text("utf-8").splitlines() if line.strip()]
    return [row["kind"] for row in rows]


@pytest.fixture
def blank(tmp_path: Path) -> Path:
    return new_scene(
        tmp_path / "kitchen",
        cast=["Eddie", "Rose"],
        title="A kitchen at night",
        config=operator_config(),
    )


# ----------------------------------------------------------------------------- a blank scene
@pytest.mark.parametrize(
    "cast, language, expected_language, headings",
    [
        (["林小姐", "Eddie", "Rose"], None, "zh", ("角色小傳", "前期劇本", "導戲筆記")),
        (["Eddie", "Rose"], None, "en", ("Bio", "Prior story", "Director's notes")),
        (["Eddie", "Rose"], "zh", "zh", ("角色小傳", "前期劇本", "導戲筆記")),
        (["林小姐", "Eddie"], "en", "en", ("Bio", "Prior story", "Director's notes")),
    ],
)
async def test_a_blank_scene_has_context_and_a_three_part_soul_per_actor(
    tmp_path, cast, language, expected_language, headings
):
    dest = new_scene(
        tmp_path / "s", cast=cast, title="Title line", language=language, config=operator_config()
    )
    state = await SceneFiles(dest).load()
    assert state.cast == cast and state.language == expected_language
    assert state.context.startswith("# Title line")
    assert state.turns == []
    for actor in cast:
        body = state.souls[actor].body
        assert [line[3:] for line in body.splitlines() if line.startswith("## ")] == list(headings)
        assert missing_parts(body) == ()
        # one line of guidance under each heading
        parts = body.split("## ")[1:]
        assert all(len([ln for ln in p.splitlines() if ln.strip()]) == 2 for p in parts)
    # nothing else is wrong with it, but it is not written yet: each placeholder is named
    warned = {(w.path, w.key) for w in await Rehearsal(dest).cast.warnings()}
    assert warned == {("context.md", "warning.context_guidance")} | {
        (f"actors/{actor}/soul.md", "warning.soul_guidance") for actor in cast
    }


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"cast": ["Eddie", "eddie"]}, BadName),  # the same name twice
        ({"cast": [f"A{i}" for i in range(13)]}, CastTooBig),
        ({"cast": ["Eddie", "All"]}, BadName),  # a word for everyone
        ({"cast": ["Eddie", "../x"]}, BadName),
        ({"cast": ["Eddie"], "template": "wake"}, BadRequest),
        ({"title": "No cast"}, BadRequest),
        ({"cast": ["Eddie"], "language": "fr"}, BadRequest),
        ({"cast": ["Eddie"], "title": "two\nlines"}, BadRequest),
    ],
)
def test_a_bad_blank_scene_is_refused_and_nothing_is_written(tmp_path, kwargs, error):
    with pytest.raises(error) as caught:
        new_scene(tmp_path / "s", **kwargs, config=operator_config())
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_new_without_a_cast_still_copies_the_default_template(tmp_path):
    dest = new_scene(tmp_path / "s", config=operator_config())
    assert (dest / "actors" / "林小姐" / "soul.md").is_file()


async def test_a_template_folder_is_never_rehearsed(models):
    from engine import templates_dir

    rehearsal = Rehearsal(templates_dir(config=operator_config()) / "wake", models=models)
    before = listing(templates_dir(config=operator_config()) / "wake")
    with pytest.raises(BadRequest, match="circus new"):
        await rehearsal.run(1)
    assert listing(templates_dir(config=operator_config()) / "wake") == before


# ----------------------------------------------------------------------------- the cast
async def test_add_an_actor_with_a_blank_soul_and_with_your_own(blank, models):
    written_over_the_guidance(blank)
    rehearsal = Rehearsal(blank, models=models)
    added = await rehearsal.cast.add("林小姐")
    assert added.name == "林小姐"
    soul = "---\naliases: [Lin]\n---\n## Bio\nLinda Park. LINDA-SECRET\n"
    await rehearsal.cast.add("Linda", soul)
    state = await SceneFiles(blank).load()
    assert state.cast == ["Eddie", "Rose", "林小姐", "Linda"]
    assert state.settings["cast"] == ["Eddie", "Rose", "林小姐", "Linda"]
    assert (blank / "actors" / "Linda" / "soul.md").read_text("utf-8") == soul
    assert "## Linda" in (blank / "director_notes.md").read_text("utf-8")
    warnings = [w.text("en") for w in await rehearsal.cast.warnings()]
    assert warnings == [
        "actors/Linda/soul.md: has no Prior story, Director's notes section — a soul has three"
        " ## parts: bio, prior story, director's notes",
        "actors/林小姐/soul.md: still holds the blank soul's guidance under Bio, Prior story,"
        " Director's notes — the actor would play it as written; write the character there"
        " before a run",
    ]


@pytest.mark.parametrize(
    "name, soul, error, says",
    [
        ("Eddie", None, BadRequest, "already an actor called Eddie"),
        ("EDDIE", None, BadRequest, "already an actor called EDDIE"),
        ("Ed", None, BadRequest, "Ed is already an alias of Eddie"),
        ("Ruth", "---\naliases: [Rose]\n---\n## Bio\nx\n", BadSceneFile, "another actor (Rose)"),
        ("Ruth", "---\ntemprature: 1\n---\n## Bio\nx\n", BadSceneFile, "did you mean"),
        ("Ruth", "   \n", BadSceneFile, "no text"),
        ("Any", None, BadName, "means everyone"),
        ("a/b", None, BadName, "may not contain"),
        ("", None, BadName, "empty"),
    ],
)
async def test_a_bad_new_actor_is_refused_with_one_line_and_nothing_written(
    blank, models, name, soul, error, says
):
    (blank / "actors" / "Eddie" / "soul.md").write_text(
        "---\naliases: [Ed]\n---\n## Bio\nEddie.\n", encoding="utf-8"
    )
    rehearsal = Rehearsal(blank, models=models)
    before = listing(blank)
    with pytest.raises(error) as caught:
        await rehearsal.cast.add(name, soul)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert listing(blank) == before


async def test_a_thirteenth_actor_is_refused(tmp_path, models):
    dest = new_scene(tmp_path / "s", cast=[f"A{i}" for i in range(12)], config=operator_config())
    rehearsal = Rehearsal(dest, models=models)
    before = listing(dest)
    with pytest.raises(BadRequest, match="full"):
        await rehearsal.cast.add("A12")
    assert listing(dest) == before


async def test_a_soul_from_discord_may_not_choose_where_requests_go(blank, models):
    rehearsal = Rehearsal(blank, models=models)
    before = listing(blank)
    with pytest.raises(Refused):
        await rehearsal.cast.add(
            "Ruth", "---\napi_base: http://evil.example\n---\n## Bio\nx\n", origin="member"
        )
    assert listing(blank) == before


async def test_a_removed_actor_is_gone_and_can_no_longer_be_cued(scene, models):
    rehearsal = Rehearsal(scene, models=models)
    lawyer = await rehearsal.resolve_actor("律師")
    await rehearsal.run(2)
    await rehearsal.cast.remove(lawyer)
    state = await SceneFiles(scene).load()
    assert state.cast == ["林小姐", "刑警"] and state.settings["cast"] == ["林小姐", "刑警"]
    assert not (scene / "actors" / "律師").exists()
    before, calls = listing(scene), len(models.calls)
    with pytest.raises(UnknownActor):
        await rehearsal.cue(lawyer, "慢一點")
    with pytest.raises(UnknownActor):
        await rehearsal.resolve_actor("張律師")
    assert listing(scene) == before
    result = await rehearsal.run(3)  # the scene plays on without them
    assert result.turns_done == 3
    later = models.calls[calls:]
    assert later and all("律師" not in c.shape.cast for c in later)


async def test_the_last_actor_cannot_be_removed(tmp_path, models):
    dest = new_scene(tmp_path / "s", cast=["Eddie"], config=operator_config())
    rehearsal = Rehearsal(dest, models=models)
    with pytest.raises(BadRequest, match="only actor left"):
        await rehearsal.cast.remove(await rehearsal.resolve_actor("Eddie"))
    assert (dest / "actors" / "Eddie" / "soul.md").is_file()


async def test_rename_before_the_first_turn_moves_everything(scene, models):
    (scene / "context.md").write_text(
        (scene / "context.md")
        .read_text("utf-8")
        .replace("cast:", "on_stage: [林小姐, 律師]\ncast:"),
        encoding="utf-8",
    )
    rehearsal = Rehearsal(scene, models=models)
    renamed = await rehearsal.cast.rename(await rehearsal.resolve_actor("律師"), "陳律師")
    assert renamed.name == "陳律師"
    state = await SceneFiles(scene).load()
    assert state.cast == ["林小姐", "刑警", "陳律師"]
    assert state.settings["on_stage"] == ["林小姐", "陳律師"]
    assert SOUL_MARKER["律師"] in state.souls["陳律師"].body
    assert state.whispers.for_actor("陳律師") == "- PRIVATE-WHISPER-2"
    assert not (scene / "actors" / "律師").exists()


async def test_rename_after_the_first_turn_is_refused_with_the_reason(scene, models):
    rehearsal = Rehearsal(scene, models=models)
    await rehearsal.run(1)
    before = listing(scene)
    with pytest.raises(BadRequest, match="before the first turn"):
        await rehearsal.cast.rename(await rehearsal.resolve_actor("律師"), "陳律師")
    assert listing(scene) == before


@pytest.mark.parametrize("new", ["刑警", "王警官", "All", "x/y"])
async def test_rename_to_a_taken_or_bad_name_is_refused(scene, models, new):
    rehearsal = Rehearsal(scene, models=models)
    before = listing(scene)
    with pytest.raises(CircusError):
        await rehearsal.cast.rename(await rehearsal.resolve_actor("律師"), new)
    assert listing(scene) == before


async def test_an_alias_that_is_another_actors_name_is_refused_at_load(scene):
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text(soul.read_text("utf-8").replace("[林, 林曉雯]", "[林, 律師]"), "utf-8")
    with pytest.raises(BadSceneFile) as caught:
        await SceneFiles(scene).load()
    assert "actors/林小姐/soul.md" in str(caught.value) and "律師" in str(caught.value)


# ----------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "typed, expected",
    [
        ("Linda", UnknownActor),  # Lin is 林小姐's alias, not a part of Linda
        ("Freddie", UnknownActor),  # not Eddie
        ("Primrose", UnknownActor),  # not Rose
        ("Lin", "林小姐"),
        ("@lin", "林小姐"),
        ("Miss Lin", "林小姐"),
        ("林", "林小姐"),
        ("林太太", "林小姐"),
        ("Eddie", "Eddie"),
        ("Mr. Eddie", "Eddie"),
        ("Rose!", "Rose"),
        ("Eddie and Rose", AmbiguousActor),
    ],
)
async def test_whispers_and_cues_match_latin_names_as_whole_words(blank, models, typed, expected):
    rehearsal = Rehearsal(blank, models=models)
    await rehearsal.cast.add("林小姐", "---\naliases: [Lin, 林]\n---\n## Bio\n林。\n")
    if isinstance(expected, str):
        assert (await rehearsal.resolve_actor(typed)).name == expected
        return
    with pytest.raises(expected) as caught:
        await rehearsal.resolve_actor(typed)
    if expected is AmbiguousActor:
        assert "Eddie" in str(caught.value) and "Rose" in str(caught.value)


@pytest.mark.parametrize(
    "cue, expected",
    [
        ("Linda", None),
        ("Freddie", None),
        ("Primrose", None),
        ("RuthX", None),
        ("Lin", "林小姐"),
        ("林", "林小姐"),
        ("林小姐", "林小姐"),
        ("@Eddie!", "Eddie"),
        ("Rose's turn", "Rose"),
        ("Carol Lindqvist", "Carol"),
        ("carol-lindqvist?", "Carol"),
        ("Eddie, then Rose", None),  # a model's unclear cue: the stage manager decides
    ],
)
def test_a_models_cue_matches_latin_names_as_whole_words_only(cue, expected):
    from engine.reply.cue import match_cue

    cast = {
        "林小姐": ("Lin", "林"),
        "Eddie": (),
        "Rose": (),
        "Ruth": (),
        "Carol": ("Carol Lindqvist",),
    }
    assert match_cue(cue, cast) == expected


# ----------------------------------------------------------------------------- context
async def test_set_context_replaces_it_and_a_broken_one_writes_nothing(blank, models):
    rehearsal = Rehearsal(blank, models=models)
    text = "---\nlanguage: en\ncast: [Rose, Eddie]\n---\n# Upstairs\n\nA hallway.\n"
    await rehearsal.cast.set_context(text)
    assert await rehearsal.cast.context_text() == text
    assert (await SceneFiles(blank).load()).cast == ["Rose", "Eddie"]
    before = listing(blank)
    for broken in (
        "---\nlanguage: en\n# no closing fence\n",
        "---\nneglect_turns: many\n---\nx\n",
        "---\non_stage: [Nobody]\n---\nx\n",
    ):
        with pytest.raises(BadSceneFile):
            await rehearsal.cast.set_context(broken)
    assert listing(blank) == before


@pytest.mark.parametrize(
    "setting",
    ["api_base: http://evil.example", "budget_usd: 1000", "turn_timeout: 3000", "model: openai/x"],
)
async def test_a_context_from_discord_may_not_change_operator_settings(blank, models, setting):
    rehearsal = Rehearsal(blank, models=models)
    before = listing(blank)
    with pytest.raises(Refused):
        await rehearsal.cast.set_context(f"---\nlanguage: en\n{setting}\n---\nx\n", origin="member")
    assert listing(blank) == before


async def test_a_context_from_discord_keeps_operator_settings_as_on_disk(blank, models):
    rehearsal = Rehearsal(blank, models=models)
    await rehearsal.cast.set_context("---\nlanguage: en\nbudget_usd: 2\n---\nx\n")
    await rehearsal.cast.set_context("---\nlanguage: en\nbudget_usd: 2\n---\ny\n", origin="member")
    assert (await rehearsal.cast.context_text()).endswith("y\n")
    with pytest.raises(Refused, match="budget_usd"):  # dropping the budget is a change too
        await rehearsal.cast.set_context("---\nlanguage: en\n---\nz\n", origin="member")
    assert (await rehearsal.cast.context_text()).endswith("y\n")


# ----------------------------------------------------------------------------- backstory
BACKSTORY = "FULL-BACKSTORY: 二十年前，三個人在澳門見過一面。"


async def test_backstory_drafts_show_each_actor_their_own_soul_and_write_nothing(scene, models):
    models.register("improv", lambda r: f"DRAFT {len(models.calls)}")
    rehearsal = Rehearsal(scene, models=models)
    before = but_spend(listing(scene))
    drafts = await rehearsal.souls.backstory_drafts(BACKSTORY)
    assert list(drafts) == list(CAST)
    assert but_spend(listing(scene)) == before  # nothing written before an accept
    assert len(models.calls) == len(CAST)
    assert spend_kinds(scene) == ["summarize"] * len(CAST)  # but every call counts
    for actor, call in zip(CAST, models.calls, strict=True):
        assert BACKSTORY in call.prompt
        assert SOUL_MARKER[actor] in call.prompt
        assert all(SOUL_MARKER[o] not in call.prompt for o in CAST if o != actor)
        assert f"{actor}知道的事" not in call.prompt  # not even their own current prior story
    await rehearsal.souls.accept_prior_story(await rehearsal.resolve_actor("刑警"), drafts["刑警"])
    soul = (scene / "actors" / "刑警" / "soul.md").read_text("utf-8")
    assert "## 前期劇本\n\nDRAFT 2\n\n## 導戲筆記\n目標。" in soul
    assert soul.startswith("---\naliases: [王警官]\n---\n## 角色小傳\n刑警。SOUL-SECRET-1")
    assert (scene / "actors" / "律師" / "soul.md").read_bytes() == dict(before)[
        "actors/律師/soul.md"
    ]


# What a model sent back as a prior story: a whole soul, headings and all.
HEADED_DRAFT = "## 前期劇本\n刑警收過一個信封。\n\n## 導戲筆記\n別讓他說出來。\n# 全部\n結束。"


def soul_sections(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("## ")]


async def test_a_drafted_prior_story_stays_inside_its_part_and_the_old_one_is_kept(scene, models):
    models.register("improv", lambda r: HEADED_DRAFT)
    rehearsal = Rehearsal(scene, models=models)
    detective = await rehearsal.resolve_actor("刑警")
    story = await rehearsal.souls.summarize_for(detective, BACKSTORY, write=False)
    kept = await rehearsal.souls.accept_prior_story(detective, story)

    soul = (scene / "actors" / "刑警" / "soul.md").read_text("utf-8")
    assert soul_sections(soul) == ["## 角色小傳", "## 前期劇本", "## 導戲筆記"]
    assert missing_parts(soul) == ()
    assert "### 前期劇本\n刑警收過一個信封。\n\n### 導戲筆記\n別讓他說出來。\n### 全部" in soul
    assert soul.endswith("## 導戲筆記\n目標。\n")  # the writer's notes, untouched
    state = await rehearsal.state()
    assert state.souls["刑警"].body.count("別讓他說出來") == 1
    assert kept == "drafts/刑警.prior-story.1.md"
    assert (scene / kept).read_text("utf-8") == "刑警知道的事。\n"


async def test_each_replaced_prior_story_is_kept_under_its_own_number(scene, models):
    rehearsal = Rehearsal(scene, models=models)
    detective = await rehearsal.resolve_actor("刑警")
    first = await rehearsal.souls.accept_prior_story(detective, "第一版。")
    second = await rehearsal.souls.accept_prior_story(detective, "第二版。")
    again = await rehearsal.souls.accept_prior_story(detective, "第二版。")
    assert (first, second, again) == (
        "drafts/刑警.prior-story.1.md",
        "drafts/刑警.prior-story.2.md",
        None,  # the same story written again replaces nothing of the writer's
    )
    assert (scene / first).read_text("utf-8") == "刑警知道的事。\n"
    assert (scene / second).read_text("utf-8") == "第一版。\n"
    assert await rehearsal.souls.draft(detective) is None  # not a soul edit waiting
    assert await rehearsal.cast.warnings() == ()


async def test_a_new_souls_guidance_is_replaced_without_a_copy(tmp_path, models):
    root = new_scene(tmp_path / "blank", config=operator_config(), cast=["Ines", "Rafa"])
    rehearsal = Rehearsal(root, models=models)
    assert await rehearsal.souls.accept_prior_story(Actor("Ines"), "She saw it.") is None
    assert not (root / "drafts").exists()


@pytest.mark.parametrize("text", ["", "   \n"])
async def test_an_empty_backstory_or_prior_story_is_refused(scene, models, text):
    rehearsal = Rehearsal(scene, models=models)
    before = listing(scene)
    with pytest.raises(BadRequest):
        await rehearsal.souls.backstory_drafts(text)
    with pytest.raises(BadRequest):
        await rehearsal.souls.accept_prior_story(await rehearsal.resolve_actor("刑警"), text)
    assert listing(scene) == before and models.calls == []


# ----------------------------------------------------------------------------- warnings
GUIDES = ("soul.bio.guide", "soul.prior_story.guide", "soul.notes.guide", "template.context")


def written_over_the_guidance(scene: Path) -> None:
    """The writer has replaced every line of a blank scene's placeholder guidance."""
    for path in [scene / "context.md", *scene.glob("actors/*/soul.md")]:
        text = path.read_text("utf-8")
        for line in (line for key in GUIDES for line in say(key, "en").splitlines() if line):
            text = text.replace(line, "Written by the writer.")
        path.write_text(text, "utf-8")


@pytest.mark.parametrize(
    "body, parts",
    [
        (blank_soul("en"), ("soul.bio", "soul.prior_story", "soul.notes")),
        (blank_soul("zh"), ("soul.bio", "soul.prior_story", "soul.notes")),
        (
            blank_soul("en").replace(say("soul.bio.guide", "en"), "Eddie, a cook."),
            ("soul.prior_story", "soul.notes"),
        ),
        (  # the guidance left above what the writer added still reaches the actor
            blank_soul("en").replace(
                say("soul.notes.guide", "en"), say("soul.notes.guide", "en") + "\nWin."
            ),
            ("soul.bio", "soul.prior_story", "soul.notes"),
        ),
        (
            "## Bio\nEddie. She said: " + say("soul.bio.guide", "en") + "\n## Prior story\nx\n",
            (),
        ),
        ("## 角色小傳\n玫瑰。\n## 前情\n她知道。\n## 導戲筆記\n目標。\n", ()),
    ],
)
def test_the_parts_still_holding_a_new_souls_guidance_are_named(body, parts):
    assert guided_parts(body) == parts


async def test_a_blank_scene_is_warned_of_every_placeholder_still_in_it(blank, models):
    rehearsal = Rehearsal(blank, models=models)
    lines = [w.text("en") for w in await rehearsal.cast.warnings()]
    assert lines == [
        "context.md: still holds the blank scene's guidance (Place and time…, The situation…)"
        " — every role would read it as the stage; write this scene's place, time and"
        " situation there before a run",
        "actors/Eddie/soul.md: still holds the blank soul's guidance under Bio, Prior story,"
        " Director's notes — the actor would play it as written; write the character there"
        " before a run",
        "actors/Rose/soul.md: still holds the blank soul's guidance under Bio, Prior story,"
        " Director's notes — the actor would play it as written; write the character there"
        " before a run",
    ]
    written_over_the_guidance(blank)
    assert await rehearsal.cast.warnings() == ()


async def test_a_chinese_blank_scene_is_warned_in_chinese(tmp_path, models):
    root = new_scene(tmp_path / "夜", cast=["林小姐"], config=operator_config())
    warnings = await Rehearsal(root, models=models).cast.warnings()
    assert [w.text("zh") for w in warnings] == [
        "context.md：還是空白場景的提示文字（時間與地點……、處境……）——每個角色都會把它當成舞台來讀；"
        "開排前寫上這場戲的地點、時間和處境",
        "actors/林小姐/soul.md：「角色小傳、前期劇本、導戲筆記」底下還是空白角色的提示文字——"
        "演員會照著演；開排前寫上這個角色自己的內容",
    ]


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda s: (s / "actors" / "Rose" / "soul.md").write_text("\n\n", "utf-8"),
            ["actors/Rose/soul.md: has no text"],
        ),
        (
            lambda s: (s / "context.md").write_text(
                (s / "context.md").read_text("utf-8").replace("Eddie, Rose", "Eddie, Rose, Ruth"),
                "utf-8",
            ),
            ["context.md: the cast names Ruth, who has no folder"],
        ),
        (
            lambda s: (s / "actors" / "Rose" / "soul.md").write_text(
                "aliases: [Rosie]\nmodel: x\n\n## Bio\nRose.\n", "utf-8"
            ),
            [
                "actors/Rose/soul.md: starts with settings (aliases, model) without --- lines",
                "actors/Rose/soul.md: has no Prior story, Director's notes section",
            ],
        ),
        (
            lambda s: (s / "context.md").write_text("language: en\n\n# A kitchen\n", "utf-8"),
            ["context.md: starts with settings (language) without --- lines"],
        ),
        (
            lambda s: (s / "actors" / "Rose" / "soul.md").write_text(
                "## 角色小傳\n玫瑰。\n## 前情\n她知道。\n## 導戲筆記\n目標。\n", "utf-8"
            ),
            [],
        ),
    ],
)
async def test_a_hand_built_scene_gets_one_warning_line_per_problem(
    blank, models, change, expected
):
    written_over_the_guidance(blank)
    change(blank)
    lines = [w.text("en") for w in await Rehearsal(blank, models=models).cast.warnings()]
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start) and "\n" not in line


async def test_warnings_speak_the_scene_language(scene, models):
    (scene / "actors" / "刑警" / "soul.md").write_text("", "utf-8")
    (warning,) = await Rehearsal(scene, models=models).cast.warnings()
    assert warning.path == "actors/刑警/soul.md"
    assert warning.text("zh") == "actors/刑警/soul.md：沒有內容——寫下角色小傳、前期劇本和導戲筆記"


# ----------------------------------------------------------------------------- soul drafts
async def test_a_soul_draft_is_kept_beside_the_scene_and_never_in_a_take(scene, models):
    rehearsal = Rehearsal(scene, models=models)
    detective = await rehearsal.resolve_actor("刑警")
    rel = await rehearsal.souls.save_draft(detective, "---\nbroken: [\n---\nMY EDIT\n")
    assert rel == "drafts/刑警.soul.md"
    assert await rehearsal.souls.draft(detective) == "---\nbroken: [\n---\nMY EDIT\n"
    assert [w.path for w in await rehearsal.cast.warnings()] == [rel]
    await rehearsal.run(1)
    number = await rehearsal.takes.save()
    assert not (scene / "takes" / f"take_{number}" / "drafts").exists()
    await rehearsal.souls.drop_draft(detective)
    assert await rehearsal.souls.draft(detective) is None


# ----------------------------------------------------------------------------- cue directions
DIRECTION = "DIRECTION-MARKER 拍桌子"


async def test_a_cue_direction_is_logged_for_the_director_and_used_once(scene, models):
    rehearsal = Rehearsal(scene, models=models)
    await rehearsal.run(2)
    await rehearsal.cue(await rehearsal.resolve_actor("刑警"), DIRECTION)
    await rehearsal.run(4)
    log = (scene / "directions.md").read_text("utf-8")
    assert "## Take 1 · 第 3 回合 · 刑警\n\nDIRECTION-MARKER 拍桌子\n" in log
    with_direction = [c for c in models.calls if DIRECTION in c.prompt]
    assert len(with_direction) == 1  # that actor, that turn: never again, never anyone else
    assert with_direction[0].shape.kind == "actor" and with_direction[0].shape.speaker == "刑警"
    later = [c for c in models.calls if c.shape.speaker == "刑警"][-1]
    assert later is not with_direction[0]
    state = await SceneFiles(scene).load()
    assert DIRECTION not in state.context and DIRECTION not in str(state.whispers)

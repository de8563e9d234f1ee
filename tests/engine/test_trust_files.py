"""Untrusted settings: one schema per file, a YAML subset that can't be bombed, the one list of
words meaning everyone, what a soul sent through Discord may set, and errors that name a file by
its path inside the scene. Attack files live in tests/fixtures/attacks/."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scenekit import CAST
from trustkit import LAWYER, attack, no_server_path, refusal, soul_file

from engine import Actor, Rehearsal
from engine.config import Config
from engine.errors import BadName, BadSceneFile, Refused
from engine.folder import frontmatter
from engine.folder.names import EVERYONE_WORDS, check_name, is_everyone
from engine.folder.settings import allowed_models, context_settings, model_allowed, soul_settings
from engine.folder.turns import ANY
from engine.folder.whispers import parse_notes
from engine.reply.cue import match_cue


# ----------------------------------------------------------------------------- one schema per file
@pytest.mark.parametrize(
    "header, says",
    [
        ("temprature: 0.7", "unknown setting `temprature` — did you mean `temperature`?"),
        ("temperature: 7", "`temperature` must be a number from 0 to 2, not 7"),
        ("temperature: hot", "`temperature` must be a number"),
        ("temperature: true", "`temperature` must be a number"),
        ("aliases: [林, [林曉雯]]", "`aliases` must be a list"),
        ("aliases: {a: b}", "`aliases` must be a list"),
        ("aliases: [大家]", "not words for everyone"),
        (f"aliases: [{', '.join(f'n{i}' for i in range(17))}]", "at most 16"),
        (f"aliases: [{'長' * 65}]", "64 characters"),
        ("model: {provider: openai}", "`model` must be a litellm model name"),
        ("model: [a, b]", "`model` must be a litellm model name"),
        ("model: gpt 4", "`model` must be a litellm model name"),
        (f"model: {'x' * 201}", "`model` must be a litellm model name"),
        ("avatar_url: http://example.com/a.png", "`avatar_url` must be an https:// address"),
        ("avatar_url: javascript:alert(1)", "`avatar_url` must be an https:// address"),
        ("api_base: file:///etc/passwd", "`api_base` must be an http:// or https:// address"),
        ("tone: low", "unknown setting `tone` — the settings here are model"),
    ],
)
async def test_a_soul_with_a_wrong_setting_is_refused_naming_the_file_and_key(scene, header, says):
    soul_file(scene).write_text(f"---\n{header}\n---\n## 角色小傳\n律師。\n", encoding="utf-8")
    error = await refusal(scene)
    assert says in str(error)
    assert str(error).startswith(str(scene / LAWYER))
    assert error.rel == LAWYER
    assert error.in_language("zh", relative=True).startswith(f"{LAWYER}：")
    no_server_path(error, scene)


@pytest.mark.parametrize(
    "header, says",
    [
        ("stage_manger_model: x/y", "did you mean `stage_manager_model`?"),
        ("neglect_turns: many", "`neglect_turns` must be a whole number from 0 to 1000"),
        ("neglect_turns: -1", "`neglect_turns` must be a whole number"),
        ("neglect_turns: 2.5", "`neglect_turns` must be a whole number"),
        ("language: 中文", "`language` must be a language code"),
        ("cast: 林小姐", "`cast` must be a list"),
        ("on_stage: [[林小姐]]", "`on_stage` must be a list"),
        ("opening: maybe", "`opening` must be true or false"),
        ("turn_timeout: 0", "`turn_timeout` must be a number of seconds"),
        ("budget_usd: -5", "`budget_usd` must be a number of US dollars, 0 or more"),
        ("budget_usd: lots", "`budget_usd` must be a number of US dollars"),
    ],
)
async def test_a_context_with_a_wrong_setting_is_refused_naming_the_key(scene, header, says):
    (scene / "context.md").write_text(f"---\n{header}\n---\n舞台。\n", encoding="utf-8")
    error = await refusal(scene)
    assert says in str(error) and error.rel == "context.md"
    no_server_path(error, scene)


def test_errors_speak_chinese_too():
    with pytest.raises(BadSceneFile) as refused:
        soul_settings({"temprature": 1}, "/srv/scenes/s/" + LAWYER, LAWYER)
    assert refused.value.in_language("zh", relative=True) == (
        f"{LAWYER}：不認得的設定 `temprature`——你是不是要寫 `temperature`？"
    )
    with pytest.raises(BadSceneFile) as refused:
        context_settings({"neglect_turns": "many"}, "/srv/scenes/s/context.md", "context.md")
    assert "`neglect_turns` 必須是 0 到 1000 之間的整數" in refused.value.in_language("zh-TW")


async def test_valid_settings_reach_the_code_that_reads_them(scene):
    soul_file(scene).write_text(
        "---\nmodel: openai/gpt-4o-mini\nfallback_model: ollama_chat/qwen2.5:7b\n"
        "temperature: 1\naliases: 張律師\navatar_url: https://example.com/lawyer.png\n"
        "api_base: http://localhost:11434\n---\n## 角色小傳\n律師。\n",
        encoding="utf-8",
    )
    (scene / "context.md").write_text(
        "---\nlanguage: zh-TW\nneglect_turns: 0\ncast: [律師, 林小姐]\non_stage: [律師]\n"
        "opening: true\nmodel: scripted/improv\nstage_manager_model: scripted/improv\n"
        "turn_timeout: 30\nbudget_usd: 0.5\n---\n舞台。\n",
        encoding="utf-8",
    )
    state = await Rehearsal(scene).state()
    lawyer = state.souls["律師"]
    assert (lawyer.model, lawyer.fallback_model) == ("openai/gpt-4o-mini", "ollama_chat/qwen2.5:7b")
    assert lawyer.temperature == 1.0 and lawyer.aliases == ("張律師",)
    assert lawyer.avatar_url == "https://example.com/lawyer.png"
    assert lawyer.api_base == "http://localhost:11434"
    assert state.cast == ["律師", "林小姐", "刑警"] and state.neglect_turns == 0
    assert state.language == "zh-TW"
    assert state.settings["budget_usd"] == 0.5 and state.settings["on_stage"] == ["律師"]
    assert state.settings["opening"] is True and state.settings["turn_timeout"] == 30


async def test_a_soul_whose_settings_follow_a_blank_line_keeps_its_model(scene):
    soul_file(scene).write_text(
        "\n\n---\nmodel: openai/gpt-4o-mini\n---\n## 角色小傳\n律師。\n", encoding="utf-8"
    )
    view = await Rehearsal(scene).view()
    assert view.models["律師"] == "openai/gpt-4o-mini"


def test_yaml_1_1_surprises_stay_plain_text():
    settings, _ = frontmatter.split("---\nlanguage: no\naliases: [yes, 010, 2024-01-01]\n---\nx")
    assert settings == {"language": "no", "aliases": ["yes", 10, "2024-01-01"]}
    assert soul_settings({"aliases": [47, "Agent"]}, "soul.md").aliases == ["47", "Agent"]


# ----------------------------------------------------------------------------- hostile YAML
@pytest.mark.parametrize(
    "fixture, says",
    [
        ("alias_bomb_soul.md", "anchors and aliases (& and *) are not allowed"),
        ("python_tag_soul.md", "YAML tags"),
        ("deep_nesting_soul.md", "nested too deeply"),
    ],
)
async def test_hostile_yaml_in_a_soul_is_refused_before_it_is_expanded(scene, fixture, says):
    soul_file(scene).write_bytes(attack(fixture))
    error = await refusal(scene)
    assert says in str(error) and error.rel == LAWYER
    assert not (scene / "PWNED").exists() and not Path("PWNED").exists()


@pytest.mark.parametrize("loader", ["_PyLoader", "_Loader"])
@pytest.mark.parametrize(
    "fixture, refused",
    [
        ("alias_bomb_soul.md", "anchors and aliases"),
        ("python_tag_soul.md", "YAML tags"),
        ("deep_nesting_soul.md", "nested too deeply"),
        ("api_base_soul.md", None),
    ],
)
def test_both_yaml_parsers_refuse_the_same_attacks(loader, fixture, refused):
    """libyaml when PyYAML has it, pure Python otherwise: the same subset either way."""
    header = attack(fixture).decode().split("---\n")[1]
    load = getattr(frontmatter, loader)
    if refused is None:
        assert frontmatter.load_header(header, load) == {
            "model": "openai/gpt-4o",
            "api_base": "http://127.0.0.1:9/v1",
        }
        return
    with pytest.raises(yaml.YAMLError, match=refused):
        frontmatter.load_header(header, load)


async def test_the_alias_bomb_sent_as_a_new_soul_is_refused_and_nothing_is_written(scene):
    before = soul_file(scene).read_bytes()
    with pytest.raises(BadSceneFile, match="anchors and aliases"):
        await Rehearsal(scene).souls.set(Actor("律師"), attack("alias_bomb_soul.md").decode())
    assert soul_file(scene).read_bytes() == before


@pytest.mark.parametrize(
    "header, says",
    [
        ("model: a\nmodel: b", "`model` appears twice"),
        ("<<: {model: x}", "unknown setting `<<`"),
        ("? [model]\n: x", "plain word"),
        ("1: x", "unknown setting `1`"),
        ("model: " + "x" * 20_000, "longer than 8,000 characters"),
    ],
)
def test_yaml_features_settings_never_need_are_refused(header, says):
    with pytest.raises(BadSceneFile, match=says.replace("[", r"\[")):
        raw, _ = frontmatter.split(f"---\n{header}\n---\nbody", "soul.md", "soul.md")
        soul_settings(raw, "soul.md")


def test_an_unclosed_header_is_refused_without_reading_the_whole_file():
    with pytest.raises(BadSceneFile, match="longer than 8,000"):
        frontmatter.split("---\nmodel: x\n" + "body line\n" * 100_000, "soul.md")


# ----------------------------------------------------------------------------- everyone words
@pytest.mark.parametrize("word", [*EVERYONE_WORDS, "ＡＬＬ", "all hands", "@大家", "EVERYONE"])
def test_every_word_for_everyone_means_the_same_everywhere(word):
    assert is_everyone(word)
    with pytest.raises(BadName):
        check_name(word, "Actor")
    assert match_cue(word, {a: () for a in CAST}) == ANY
    whispers = parse_notes(f"## {word}\n- 慢一點\n\n## 林小姐\n- 只給她\n", CAST)
    assert whispers.everyone == "- 慢一點" and whispers.for_actor("林小姐") == "- 只給她"


@pytest.mark.parametrize("name", ["林小姐", "Alice", "Allison", "全體成員", "Anya"])
def test_names_that_merely_start_like_everyone_are_names(name):
    assert not is_everyone(name)
    assert check_name(name) == name


# ----------------------------------------------------------------------------- personas
@pytest.mark.parametrize(
    "name",
    ["Circus", "ＣＩＲＣＵＳ", "circus", "馬戲團", "Stage", "stage manager", "Stage-Manager",
     "舞台監督", "@here", "＠here", "here", "@林小姐", "Clyde"],
)  # fmt: skip
def test_an_actor_cannot_take_a_name_the_bot_posts_under_or_a_mass_mention(name):
    with pytest.raises(BadName, match="the bot posts under itself"):
        check_name(name, "Actor")


@pytest.mark.parametrize("name", ["Circe", "Stagehand", "Hereward", "Circus Maximus"])
def test_names_that_merely_contain_a_persona_are_names(name):
    assert check_name(name, "Actor") == name


def test_a_scene_is_free_to_be_called_circus():
    assert check_name("Circus", "Scene") == "Circus"


async def test_a_persona_named_actor_is_refused_from_the_engine_and_from_disk(scene):
    rehearsal = Rehearsal(scene)
    with pytest.raises(BadName, match="the bot posts under itself"):
        await rehearsal.cast.add("Circus")
    assert not (scene / "actors" / "Circus").exists()
    # a writer who makes the folder by hand is told on the next read, before any turn
    (scene / "actors" / "@here").mkdir()
    (scene / "actors" / "@here" / "soul.md").write_text("## 角色小傳\nx\n", encoding="utf-8")
    with pytest.raises(BadName, match="the bot posts under itself"):
        await Rehearsal(scene).view()


# ----------------------------------------------------------------------------- untrusted souls
@pytest.mark.parametrize(
    "env, allowed",
    [
        ({}, ("circus-local/smollm2",)),
        ({"CIRCUS_MODEL": "openai/gpt-4o"}, ("openai/gpt-4o",)),
        (
            {"CIRCUS_MODEL": "openai/gpt-4o", "CIRCUS_STAGE_MANAGER_MODEL": "openai/gpt-4o-mini"},
            ("openai/gpt-4o", "openai/gpt-4o-mini"),
        ),
        ({"CIRCUS_STAGE_MANAGER_MODEL": "a/b"}, ("a/b", "circus-local/smollm2")),
        (
            {"CIRCUS_ALLOWED_MODELS": " openai/*, anthropic/claude-3-5-haiku-latest ,,"},
            ("openai/*", "anthropic/claude-3-5-haiku-latest"),
        ),
    ],
)
def test_the_allow_list_defaults_to_the_models_the_operator_configured(env, allowed):
    assert allowed_models(Config.from_env(env)) == allowed


@pytest.mark.parametrize(
    "model, patterns, ok",
    [
        ("openai/gpt-4o-mini", ("openai/*",), True),
        ("openai/gpt-4o-mini", ("openai/gpt-4o-mini",), True),
        ("openai/gpt-4o", ("openai/gpt-4o-mini",), False),
        ("openaix/gpt", ("openai/*",), False),
        ("openai/", ("openai/*",), False),
        ("anything/at-all", ("*",), True),
        ("anthropic/claude-3-opus", ("openai/*", "ollama_chat/*"), False),
    ],
)
def test_allow_list_patterns(model, patterns, ok):
    assert model_allowed(model, patterns) is ok


ALLOWED = "openai/*, ollama_chat/qwen2.5:7b"


@pytest.mark.parametrize(
    "header, refused, says",
    [
        ("api_base: http://169.254.169.254/v1", Refused, "`api_base` can't be set from Discord"),
        ("model: ollama_chat/qwen2.5:7b", None, ""),
        ("model: openai/gpt-4o-mini", None, ""),
        ("fallback_model: openai/gpt-4o", None, ""),
        (
            "model: anthropic/claude-3-opus",
            Refused,
            "the allowed models are openai/*, ollama_chat/qwen2.5:7b",
        ),
        ("fallback_model: gemini/gemini-pro", Refused, "`fallback_model: gemini/gemini-pro`"),
        ("temperature: 7", BadSceneFile, "`temperature` must be a number from 0 to 2"),
        ("avatar_url: http://example.com/a.png", BadSceneFile, "https://"),
        ("avatar_url: javascript:alert(1)", BadSceneFile, "https://"),
        ("temperature: 1.2\naliases: [阿張]\navatar_url: https://example.com/a.png", None, ""),
    ],
)
async def test_a_soul_from_discord_may_change_the_character_never_where_requests_go(
    scene, monkeypatch, header, refused, says
):
    monkeypatch.setenv("CIRCUS_ALLOWED_MODELS", ALLOWED)
    before = soul_file(scene).read_bytes()
    text = f"---\n{header}\n---\n## 角色小傳\n新的律師。\n"
    rehearsal = Rehearsal(scene)
    if refused is None:
        await rehearsal.souls.set(Actor("律師"), text, origin="member")
        assert soul_file(scene).read_text("utf-8") == text
        return
    with pytest.raises(refused) as error:
        await rehearsal.souls.set(Actor("律師"), text, origin="member")
    assert says in str(error.value)
    assert soul_file(scene).read_bytes() == before  # nothing written
    if refused is Refused:
        assert "CIRCUS_ALLOWED_MODELS" in str(error.value) or "api_base" in str(error.value)
        assert error.value.in_language("zh").startswith("不能從 Discord 設定")


@pytest.mark.parametrize(
    "text, says",
    [
        ("## 角色小傳\n\ud800 壞掉的字\n", "not valid text"),
        ("## 角色小傳\n" + "長" * 100_000, "larger than 256 KB"),
        ("---\ntemperature: 1\n---\n   \n", "has no text"),
    ],
)
async def test_a_new_soul_that_is_not_a_soul_is_refused_and_nothing_is_written(scene, text, says):
    before = soul_file(scene).read_bytes()
    with pytest.raises(BadSceneFile, match=says) as refused:
        await Rehearsal(scene).souls.set(Actor("律師"), text, origin="member")
    assert refused.value.rel == LAWYER
    assert soul_file(scene).read_bytes() == before


async def test_the_operator_on_disk_stays_trusted(scene, monkeypatch):
    monkeypatch.setenv("CIRCUS_ALLOWED_MODELS", ALLOWED)
    text = "---\nmodel: anthropic/claude-3-opus\napi_base: http://gpu-box:8000\n---\n## 角色小傳\n律師。\n"
    await Rehearsal(scene).souls.set(Actor("律師"), text)  # the console: origin="operator"
    soul_file(scene).write_text(text, encoding="utf-8")  # or an editor
    assert (await Rehearsal(scene).state()).souls["律師"].model == "anthropic/claude-3-opus"
    # A director editing that character in Discord can send the operator's lines back unchanged…
    edited = text.replace("律師。", "律師，更緊張。")
    await Rehearsal(scene).souls.set(Actor("律師"), edited, origin="member")
    assert soul_file(scene).read_text("utf-8") == edited
    # …but not point them elsewhere.
    with pytest.raises(Refused, match="api_base"):
        await Rehearsal(scene).souls.set(
            Actor("律師"), edited.replace("gpu-box:8000", "evil.example"), origin="member"
        )


async def test_a_soul_uploaded_with_an_attackers_api_base_is_refused(scene, monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "openai/gpt-4o")
    with pytest.raises(Refused) as refused:
        await Rehearsal(scene).souls.set(
            Actor("律師"), attack("api_base_soul.md").decode(), origin="member"
        )
    assert refused.value.key == "api_base"
    assert "127.0.0.1" not in soul_file(scene).read_text("utf-8")


# ----------------------------------------------------------------------------- paths in errors
async def test_a_missing_soul_is_named_inside_the_scene(scene):
    soul_file(scene).unlink()
    error = await refusal(scene)
    assert error.rel == LAWYER and str(scene) in str(error)
    assert error.in_language("en", relative=True) == (
        f"{LAWYER}: missing — every actor folder needs a soul.md"
    )


def test_other_errors_with_paths_can_be_shown_without_them(tmp_path):
    from engine.errors import SceneExists, SceneNotFound

    for error in (SceneNotFound(tmp_path / "審訊室"), SceneExists(tmp_path / "審訊室")):
        for language in ("zh", "en"):
            shown = error.in_language(language, relative=True)
            assert "審訊室" in shown and str(tmp_path) not in shown


def test_the_fixtures_are_what_they_claim():
    with pytest.raises(UnicodeDecodeError):
        attack("big5_soul.md").decode("utf-8")
    assert attack("big5_soul.md").decode("big5").startswith("---\naliases: [老陳]")
    assert len(attack("alias_bomb_soul.md")) < 500


# ----------------------------------------------------------------------------- clean text in
INVISIBLE = ("\x00", "\x1b", "\x07", "\u202e", "\u202c", "\u2066", "\u2069", "\x85", "\r")


async def test_a_soul_given_with_control_characters_is_saved_clean(scene):
    given = attack("control_chars_soul.md").decode()
    await Rehearsal(scene).souls.set(Actor("律師"), given)
    saved = soul_file(scene).read_text("utf-8")
    assert "CONTROL-SOUL" in saved and "RLO-HIDDEN" in saved  # the writer's words stay
    assert not any(ch in saved for ch in INVISIBLE)


async def test_a_soul_written_by_hand_with_controls_reaches_the_prompt_clean(scene, scripted):
    soul_file(scene).write_bytes(attack("control_chars_soul.md"))
    (scene / "director_notes.md").write_text("## 律師\n- NOTE\x1b[2J\u202eHIDDEN\n", "utf-8")
    await Rehearsal(scene, models=scripted).cue(Actor("律師"))
    prompt = "\n".join(c.prompt for c in scripted.calls if c.shape.speaker == "律師")
    assert "CONTROL-SOUL" in prompt and "HIDDEN" in prompt
    assert not any(ch in prompt for ch in INVISIBLE)


async def test_a_whisper_is_saved_without_controls(scene):
    await Rehearsal(scene).notes.note("慢一點\x00\u202e倒著\x07", Actor("律師"))
    notes = (scene / "director_notes.md").read_text("utf-8")
    assert "慢一點倒著" in notes and not any(ch in notes for ch in INVISIBLE)


# ----------------------------------------------------------------------------- one alias rule
CLASHING_SOUL = "---\naliases: [刑警]\n---\n## 角色小傳\n律師。\n"


async def test_soul_set_refuses_an_alias_that_is_another_actors_name_and_writes_nothing(scene):
    before = soul_file(scene).read_bytes()
    with pytest.raises(BadSceneFile, match="刑警") as caught:
        await Rehearsal(scene).souls.set(Actor("律師"), CLASHING_SOUL)
    assert "\n" not in str(caught.value)
    assert soul_file(scene).read_bytes() == before
    assert (await Rehearsal(scene).view()).cast  # the scene still reads

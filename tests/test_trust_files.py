"""Untrusted files: settings checked by one schema per file, a YAML subset that can't be bombed,
encodings, hidden folders and symlinks, the one list of words meaning everyone, what a soul sent
through Discord may set, and errors that name a file by its path inside the scene.

Attack files live in tests/fixtures/attacks/ so they stay tested."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from engine import Rehearsal, frontmatter
from engine.casting import match_cue
from engine.errors import BadName, BadSceneFile, Refused
from engine.names import EVERYONE_WORDS, check_name, is_everyone
from engine.notes import parse_notes
from engine.settings import allowed_models, context_settings, model_allowed, soul_settings
from engine.turns import ANY
from tests.conftest import ALL_WHISPER, CAST, SOUL_MARKER

ATTACKS = Path(__file__).resolve().parent / "fixtures" / "attacks"
LAWYER = "actors/律師/soul.md"


def attack(name: str) -> bytes:
    return (ATTACKS / name).read_bytes()


def soul_file(scene: Path, actor: str = "律師") -> Path:
    return scene / "actors" / actor / "soul.md"


async def refusal(scene: Path) -> BadSceneFile:
    with pytest.raises(BadSceneFile) as refused:
        await Rehearsal(scene).state()
    return refused.value


def no_server_path(error: BadSceneFile, root: Path) -> None:
    for language in ("zh", "en"):
        shown = error.in_language(language, relative=True)
        assert str(root) not in shown and "/tmp" not in shown, shown


def line(cue: str = "") -> str:
    return f"<thought>想。</thought><dialogue>說。</dialogue><cue>{cue}</cue>"


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
        ("voice: low", "unknown setting `voice` — the settings here are model"),
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
        await Rehearsal(scene).set_soul("律師", attack("alias_bomb_soul.md").decode())
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


# ----------------------------------------------------------------------------- encodings
async def test_files_saved_with_a_bom_are_read_as_written(scene, scripted):
    for path in (soul_file(scene), scene / "context.md", scene / "director_notes.md"):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (scene / "director_notes.md").write_bytes(
        b"\xef\xbb\xbf" + f"## 全體\n- {ALL_WHISPER}\n".encode()
    )
    state = await Rehearsal(scene).state()
    assert state.souls["律師"].aliases == ("張律師",)  # the front matter was seen
    assert not state.souls["律師"].body.startswith(("\ufeff", "---"))
    assert state.language == "zh" and state.cast == list(CAST)
    scripted.register("improv", lambda r: line())
    await Rehearsal(scene).cue("張律師")
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
    await Rehearsal(scene).set_soul(
        "律師", "\ufeff---\naliases: [張律師]\n---\n## 角色小傳\n新。\n"
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
    take = scene / "takes" / f"take_{await rehearsal.save_take()}"
    assert sorted(p.relative_to(take).as_posix() for p in take.rglob("*")) == sorted(
        p.relative_to(scene).as_posix()
        for p in scene.rglob("*")
        if not any(part.startswith(".") for part in p.relative_to(scene).parts)
        and p.relative_to(scene).parts[0] != "takes"
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

    take = scene / "takes" / f"take_{await rehearsal.save_take()}"
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
    rehearsal = Rehearsal(scene)
    assert (await rehearsal.list_takes()) == []
    with pytest.raises(BadSceneFile, match="takes.*where a folder is expected"):
        await rehearsal.save_take()
    assert (scene / "takes").read_text("utf-8") == "a note to self"

    (scene / "backstage").write_text("not a folder", encoding="utf-8")
    assert len((await rehearsal.state()).cast) == 3
    scripted.register("improv", lambda r: line())
    before = (scene / "transcript.md").exists()
    errors: list = []
    rehearsal.events.listen(lambda e: errors.append(e) if type(e).__name__ == "ErrorEvent" else 0)
    result = await rehearsal.cue("律師")
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
    from engine.takes import parse_take_ref

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
    assert await rehearsal.list_takes() == []
    assert [parse_take_ref(r) for r in ("3", "take_3", "²", "9" * 5000, "٣")] == [
        3,
        3,
        None,
        None,
        None,
    ]


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
    assert allowed_models(env) == allowed


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
        await rehearsal.set_soul("律師", text, origin="discord")
        assert soul_file(scene).read_text("utf-8") == text
        return
    with pytest.raises(refused) as error:
        await rehearsal.set_soul("律師", text, origin="discord")
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
        await Rehearsal(scene).set_soul("律師", text, origin="discord")
    assert refused.value.rel == LAWYER
    assert soul_file(scene).read_bytes() == before


async def test_the_operator_on_disk_stays_trusted(scene, monkeypatch):
    monkeypatch.setenv("CIRCUS_ALLOWED_MODELS", ALLOWED)
    text = "---\nmodel: anthropic/claude-3-opus\napi_base: http://gpu-box:8000\n---\n## 角色小傳\n律師。\n"
    await Rehearsal(scene).set_soul("律師", text)  # the console: origin="operator"
    soul_file(scene).write_text(text, encoding="utf-8")  # or an editor
    assert (await Rehearsal(scene).state()).souls["律師"].model == "anthropic/claude-3-opus"
    # A director editing that character in Discord can send the operator's lines back unchanged…
    edited = text.replace("律師。", "律師，更緊張。")
    await Rehearsal(scene).set_soul("律師", edited, origin="discord")
    assert soul_file(scene).read_text("utf-8") == edited
    # …but not point them elsewhere.
    with pytest.raises(Refused, match="api_base"):
        await Rehearsal(scene).set_soul(
            "律師", edited.replace("gpu-box:8000", "evil.example"), origin="discord"
        )


async def test_a_soul_uploaded_with_an_attackers_api_base_is_refused(scene, monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "openai/gpt-4o")
    with pytest.raises(Refused) as refused:
        await Rehearsal(scene).set_soul(
            "律師", attack("api_base_soul.md").decode(), origin="discord"
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


# ----------------------------------------------------------------------------- at the frontends
def _cli():
    from tests.test_cli import circus, cli_env

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

    from engine import llm
    from tests.botkit import room, until

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
            soul = r.scenes_dir / "審訊室" / "actors" / "刑警" / "soul.md"
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
    from tests.botkit import room

    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    async with room(tmp_path) as r:
        broken = await r.new_scene("審訊室")
        fine = await r.new_scene("夜班")
        await r.stop_bot()
        soul = r.scenes_dir / "審訊室" / "actors" / "律師" / "soul.md"
        soul.write_bytes(attack("big5_soul.md"))
        (r.scenes_dir / ".obsidian").mkdir()
        await r.start_bot()
        assert "0 輪" in await r.ask("status", channel=fine)
        answer = await r.ask("status", channel=broken)
        assert "actors/律師/soul.md" in answer and "UTF-8" in answer

"""Structured output where the provider offers it: a JSON object instead of the four tags.

Which format a model gets (reply_format auto | json | tags, soul.md → context.md →
CIRCUS_REPLY_FORMAT → auto), what litellm sends the provider for it (checked on loopback fakes:
`response_format` for OpenAI-style servers, `format` for Ollama, `output_format` for Claude), and
a JSON-mode rehearsal end to end. Only the prompt's format paragraph changes between the two.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web
from fakeproviders import FakeAnthropic, FakeOllama, FakeOpenAI
from scenekit import operator_config

from engine import Config, Rehearsal
from engine.door.structured import chosen_format, request_params
from engine.errors import BadSceneFile, Refused
from engine.folder.role_models import reply_format, schema_support
from engine.folder.settings import (
    SoulSettings,
    check_untrusted_soul,
    context_settings,
    soul_settings,
)
from engine.folder.soul import Soul
from engine.folder.templates import new_scene
from engine.folder.turns import Turn, parse_transcript
from engine.turn.prompts import ActorBrief, StageBrief, actor_messages, stage_manager_prompt


@pytest.mark.parametrize(
    "model, setting, schema, expected",
    [
        ("openai/gpt-4o-mini", None, True, "json"),
        ("openai/gpt-4o-mini", "auto", True, "json"),
        ("openai/gpt-4o-mini", "tags", True, "tags"),
        ("openai/my-own-model", None, False, "tags"),
        ("openai/my-own-model", "json", False, "json"),  # asked in the prompt alone
        ("ollama_chat/qwen2.5:7b", None, True, "json"),
        ("scripted/improv", "json", False, "tags"),  # in-process models keep the tags
        ("circus-local/smollm2", "json", False, "tags"),
    ],
)
def test_which_format_a_model_is_asked_for(model, setting, schema, expected):
    assert chosen_format(model, setting, schema) == expected


@pytest.mark.parametrize(
    "model, supported",
    [
        ("openai/gpt-4o-mini", True),
        ("anthropic/claude-sonnet-4-5", True),
        ("openai/my-own-model", False),  # litellm does not know it
        ("ollama_chat/qwen2.5:7b", True),  # Ollama's JSON `format`
        ("ollama/llama3", True),
        ("scripted/improv", False),
        ("circus-local/smollm2", False),
    ],
)
def test_schema_support_comes_from_litellms_model_table_and_ollama(model, supported):
    assert schema_support(model) is supported


@pytest.mark.parametrize(
    "soul, scene, env, expected",
    [
        ({"reply_format": "tags"}, {"reply_format": "json"}, "json", "tags"),
        ({}, {"reply_format": "tags"}, "json", "tags"),
        ({}, {}, "tags", "tags"),
        ({}, {}, None, "json"),  # auto: the model takes a schema
        ({"reply_format": "auto"}, {"reply_format": "tags"}, None, "json"),
    ],
)
def test_reply_format_precedence_soul_then_scene_then_environment(soul, scene, env, expected):
    config = Config.from_env({"CIRCUS_REPLY_FORMAT": env} if env else {})
    got = reply_format(
        "openai/gpt-4o-mini",
        Soul("x", "", soul),
        scene,
        config,
        schema=True,
    )
    assert got == expected


@pytest.mark.parametrize(
    "text, expected", [("json", "json"), (" TAGS ", "tags"), ("auto", "auto"), ("yaml", None)]
)
def test_circus_reply_format_is_read_once_and_a_typo_means_auto(text, expected):
    assert Config.from_env({"CIRCUS_REPLY_FORMAT": text}).reply_format == expected


@pytest.mark.parametrize(
    "kind, fmt, schema, fields",
    [
        ("actor", "json", True, ["thought", "action", "dialogue", "cue"]),
        ("stage_manager", "json", True, ["next", "reason"]),
        ("actor", "json", False, None),  # no schema support: the prompt alone asks
        ("actor", "tags", True, None),
        ("free", "json", True, None),  # a drafted backstory is prose
    ],
)
def test_the_schema_sent_with_a_call(kind, fmt, schema, fields):
    params = request_params(kind, fmt, schema)
    if fields is None:
        assert params == {}
        return
    sent = params["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"]["required"] == fields
    assert sent["json_schema"]["schema"]["additionalProperties"] is False


def test_reply_format_is_a_checked_setting_in_both_files_and_the_operators_alone(tmp_path):
    assert soul_settings({"reply_format": "json"}, "soul.md").reply_format == "json"
    assert context_settings({"reply_format": "tags"}, "context.md").reply_format == "tags"
    with pytest.raises(BadSceneFile, match="auto, json or tags"):
        soul_settings({"reply_format": "xml"}, "soul.md")
    # through Discord: a soul may keep the operator's value, never set a new one
    on_disk = SoulSettings(reply_format="tags")
    check_untrusted_soul(SoulSettings(reply_format="tags"), on_disk, Config())
    with pytest.raises(Refused, match="reply_format.*operator"):
        check_untrusted_soul(SoulSettings(reply_format="json"), on_disk, Config())


@pytest.mark.parametrize("language", ["zh", "en"])
def test_only_the_format_paragraph_differs_between_json_and_tags(language):
    turns = (Turn(1, "乙", "", "「你好。」", "甲"),)
    brief = ActorBrief("甲", "SOUL", "CTX", ("甲", "乙"), turns, {}, language=language)
    tags = actor_messages(brief)
    json_ = actor_messages(ActorBrief(**{**brief.__dict__, "reply_format": "json"}))
    assert "<thought>" in tags[0]["content"] and "<thought>" not in json_[0]["content"]
    assert '"thought"' in json_[0]["content"]
    # after the rules, the character, the stage and the record are the same text
    assert tags[0]["content"].split("\n\n", 1)[1] == json_[0]["content"].split("\n\n", 1)[1]
    assert tags[1]["content"].rsplit("\n", 1)[0] == json_[1]["content"].rsplit("\n", 1)[0]
    stage = StageBrief("CTX", ("甲", "乙"), turns, language=language)
    sm_tags, sm_json = (
        stage_manager_prompt(StageBrief(**{**stage.__dict__, "reply_format": f})).messages
        for f in ("tags", "json")
    )
    assert sm_tags[1] == sm_json[1] and "NEXT:" in sm_tags[0]["content"]
    assert '"next"' in sm_json[0]["content"]


# --------------------------------------------------------------------------- over HTTP
@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


def template(tmp_path: Path) -> tuple[Path, list[str]]:
    scene = new_scene(tmp_path / "json", "interrogation", config=operator_config())
    return scene, sorted(p.name for p in (scene / "actors").iterdir())


def transcript(scene: Path) -> list[Turn]:
    return parse_transcript((scene / "transcript.md").read_text("utf-8"))


async def test_a_json_mode_rehearsal_end_to_end_against_an_openai_compatible_server(tmp_path):
    scene, cast = template(tmp_path)
    fake = FakeOpenAI(cast)
    async with fake as base:
        config = Config(model="openai/gpt-4o-mini", stage_manager_model="openai/gpt-4o-mini",
                        api_base=base)  # fmt: skip
        await Rehearsal(scene, config=config).run(4)
    # the stage manager picked the first speaker with its own schema, every actor with theirs
    names = [b["response_format"]["json_schema"]["name"] for b in fake.requests]
    assert names == ["next_speaker"] + ["actor_turn"] * 4
    assert all('"thought"' in b["messages"][0]["content"] for b in fake.requests[1:])
    turns = transcript(scene)
    assert len(turns) == 4 and all(t.dialogue.startswith("「") for t in turns)
    assert all(t.cue in cast for t in turns)
    # the JSON's private thought went backstage, never to the public record
    public = (scene / "transcript.md").read_text("utf-8")
    backstage = "".join(p.read_text("utf-8") for p in (scene / "backstage").iterdir())
    assert "他問得太快" not in public and "他問得太快" in backstage


async def test_a_model_without_schema_support_gets_tags_and_no_response_format(tmp_path):
    scene, cast = template(tmp_path)
    fake = FakeOpenAI(cast)
    model = "openai/my-own-model"  # litellm's table does not know it
    async with fake as base:
        config = Config(model=model, stage_manager_model=model, api_base=base)
        await Rehearsal(scene, config=config).run(2)
    assert all("response_format" not in b for b in fake.requests)
    actor = fake.requests[-1]["messages"]
    assert "<thought>" in actor[0]["content"] and '"thought":' not in actor[0]["content"]
    assert len(transcript(scene)) == 2


class PrimaryDown(FakeOpenAI):
    """Refuses every call to `down` (a 400, never retried); answers the other models."""

    def __init__(self, cast: list[str], down: str) -> None:
        super().__init__(cast)
        self.down = down

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("model") == self.down:
            self.requests.append(body)
            error = {"message": "this model is down", "type": "invalid_request_error"}
            return web.json_response({"error": error}, status=400)
        return await super().handle(request)


async def test_a_fallback_model_is_asked_with_its_own_options_not_the_primarys_schema(tmp_path):
    scene, cast = template(tmp_path)
    backup = "openai/my-own-model"  # no schema support: a response_format could be refused
    for soul in (scene / "actors").glob("*/soul.md"):
        text = soul.read_text("utf-8")
        soul.write_text(text.replace("---\n", f"---\nfallback_model: {backup}\n", 1), "utf-8")
    fake = PrimaryDown(cast, down="gpt-4o-mini")
    async with fake as base:
        config = Config(model="openai/gpt-4o-mini", stage_manager_model=backup, api_base=base)
        await Rehearsal(scene, config=config).run(2)
    primary = [b for b in fake.requests if b["model"] == "gpt-4o-mini"]
    backups = [b for b in fake.requests if b["model"] == "my-own-model"]  # stage manager too
    assert len(primary) == 2 and all("response_format" in b for b in primary)
    assert len(backups) >= 3 and all("response_format" not in b for b in backups)
    assert len(transcript(scene)) == 2  # the fallback read as JSON (the prompt asked for it)


async def test_ollama_gets_the_schema_as_its_json_format(tmp_path):
    scene, cast = template(tmp_path)
    fake = FakeOllama(cast)
    async with fake as base:
        config = Config(model="ollama_chat/qwen2.5:7b", stage_manager_model="ollama_chat/qwen2.5:7b",
                        api_base=base)  # fmt: skip
        await Rehearsal(scene, config=config).run(2)
    actor = fake.requests[-1]
    assert actor["format"]["required"] == ["thought", "action", "dialogue", "cue"]
    assert actor["options"]["num_ctx"] == 8192
    assert [t.actor in cast for t in transcript(scene)] == [True, True]


async def test_claude_in_json_mode_still_reads_its_prompt_from_the_cache(tmp_path):
    scene, cast = template(tmp_path)
    fake = FakeAnthropic(cast)
    model = "anthropic/claude-sonnet-4-5"
    async with fake as base:
        config = Config(model=model, stage_manager_model=model, api_base=base)
        await Rehearsal(scene, config=config).run(6)
    asked = [b["output_format"]["schema"]["required"] for b in fake.requests]
    assert asked[0] == ["next", "reason"]  # the stage manager picks who opens
    assert asked.count(["thought", "action", "dialogue", "cue"]) == 6
    assert len(transcript(scene)) == 6
    assert sum(u["cache_read_input_tokens"] for u in fake.usages[-3:]) > 0

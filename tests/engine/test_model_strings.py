"""Model strings: a name litellm cannot route is one line before a run starts, in
every frontend, naming what a model string looks like and the closest known names; a model name
that carries an address or hidden text is refused in every settings file, whatever the operator's
allow-list pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from botkit import room
from clikit import circus, cli_env, listing, turns_of
from scenekit import write_scene
from trustkit import LAWYER, refusal, soul_file

from engine import Actor, Rehearsal, Run
from engine.config import Config
from engine.errors import BadSceneFile, UnroutableModel
from engine.folder.settings import model_allowed, model_name_refused, soul_settings
from engine.turn.routing import closest_names, known_names, litellm_routable, run_models


# ----------------------------------------------------------------------------- names that are addresses
@pytest.mark.parametrize(
    "name, refused",
    [
        ("huggingface/http://127.0.0.1:8080/v1", True),
        ("openai/https://evil.example/v1", True),
        ("huggingface//127.0.0.1/v1", True),
        ("ollama_chat/llama3.1\x00", True),
        ("anthropic/claude\u200b-3", True),  # a zero-width space hides in the name
        ("openai/gpt\t4o", True),
        ("ollama_chat/qwen2.5:7b", False),
        ("huggingface/meta-llama/Llama-3.1-8B-Instruct", False),
        ("openrouter/meta-llama/llama-3.1-70b", False),
        ("bedrock/arn:aws:bedrock:us-east-1:123:inference-profile/x", False),
        ("scripted/improv", False),
    ],
)
def test_a_model_name_with_an_address_or_hidden_text_is_refused(name, refused):
    assert model_name_refused(name) is refused


@pytest.mark.parametrize(
    "model, patterns, allowed",
    [
        ("huggingface/http://127.0.0.1:9/v1", ("huggingface/*",), False),
        ("huggingface/http://127.0.0.1:9/v1", ("*",), False),
        ("openai///x", ("openai/*",), False),
        ("huggingface/meta-llama/Llama-3.1-8B-Instruct", ("huggingface/*",), True),
        ("openai/gpt-4o", ("openai/*",), True),
        ("ollama_chat/qwen2.5:7b", ("ollama_chat/qwen2.5:7b",), True),
    ],
)
def test_an_allow_list_pattern_never_lets_an_address_through(model, patterns, allowed):
    assert model_allowed(model, patterns) is allowed


@pytest.mark.parametrize("key", ["model", "fallback_model"])
@pytest.mark.parametrize(
    "value", ["huggingface/http://127.0.0.1:9/v1", '"openai//x"', '"openai/x\\a"']
)  # the last is YAML for a bell character inside the name
async def test_a_soul_on_disk_naming_an_address_is_refused_in_one_line(scene, key, value):
    soul_file(scene).write_text(f"---\n{key}: {value}\n---\n## 角色小傳\n律師。\n")
    error = await refusal(scene)
    assert error.rel == LAWYER
    assert f"`{key}` must be one model's name, provider/model" in str(error)
    assert "api_base" in str(error) and "\n" not in str(error)
    assert "模型名稱裡不能有 `://`" in error.in_language("zh", relative=True)


@pytest.mark.parametrize("key", ["model", "stage_manager_model"])
async def test_a_context_naming_an_address_is_refused(scene, key):
    (scene / "context.md").write_text(f"---\n{key}: huggingface/http://10.0.0.1/v1\n---\n舞台。\n")
    error = await refusal(scene)
    assert error.rel == "context.md" and f"`{key}` must be one model's name" in str(error)


async def test_a_soul_from_discord_naming_an_address_is_refused_even_under_a_provider_pattern(
    scene, monkeypatch
):
    monkeypatch.setenv("CIRCUS_ALLOWED_MODELS", "huggingface/*")
    before = soul_file(scene).read_bytes()
    text = "---\nmodel: huggingface/http://127.0.0.1:9/v1\n---\n## 角色小傳\n新的律師。\n"
    with pytest.raises(BadSceneFile) as error:
        await Rehearsal(scene).souls.set(Actor("律師"), text, origin="member")
    assert "`model` must be one model's name" in error.value.in_language("en", relative=True)
    assert soul_file(scene).read_bytes() == before  # nothing written
    fine = "---\nmodel: huggingface/meta-llama/Llama-3.1-8B-Instruct\n---\n## 角色小傳\n新。\n"
    await Rehearsal(scene).souls.set(Actor("律師"), fine, origin="member")
    assert soul_file(scene).read_text("utf-8") == fine


def test_a_plain_model_name_still_passes_the_schema():
    settings = soul_settings({"model": " ollama_chat/qwen2.5:7b "}, "soul.md")
    assert settings.model == "ollama_chat/qwen2.5:7b"


# ----------------------------------------------------------------------------- names that can't be routed
@pytest.mark.parametrize(
    "model, routable",
    [
        ("scripted", False),
        ("llama3.1", False),
        ("claude-3-5-haiku-latest", False),
        ("x/y", False),
        ("olama/llama3.1", False),
        ("scripted/improv", True),
        ("circus-local/smollm2", True),
        ("gpt-4o", True),  # litellm knows the bare name is OpenAI's
        ("openai/x", True),
        ("ollama_chat/llama3.1", True),
        ("anthropic/claude-3-5-haiku-latest", True),
        ("github_copilot/gpt-4o", True),  # decided by its prefix: no device login
    ],
)
def test_litellm_decides_which_model_strings_it_can_route(model, routable):
    assert litellm_routable(model) is routable


KNOWN = ("scripted/improv", "circus-local/smollm2", "ollama/llama3.1", "ollama/llama3",
         "openai/gpt-4o", "azure/gpt-4o", "anthropic/claude-3-5-haiku-latest")  # fmt: skip


@pytest.mark.parametrize(
    "model, closest",
    [
        ("scripted", ("scripted/improv",)),
        ("smollm2", ("circus-local/smollm2",)),
        ("llama3.1", ("ollama/llama3.1", "ollama/llama3")),
        ("olama/llama3.1", ("ollama/llama3.1", "ollama/llama3")),
        ("gpt4o", ("azure/gpt-4o", "openai/gpt-4o")),
        ("claude-3-5-haiku", ("anthropic/claude-3-5-haiku-latest",)),
        ("zzzz", ()),
        ("", ()),
    ],
)
def test_the_closest_known_names_are_the_hint(model, closest):
    assert closest_names(model, KNOWN) == closest


def test_the_hint_comes_from_litellms_names_written_as_provider_slash_model():
    names = known_names()
    assert names[:2] == ("scripted/improv", "circus-local/smollm2")
    assert "ollama/llama3.1" in names and "openai/gpt-4o" in names
    assert closest_names("llama3.1", names)[0] == "ollama/llama3.1"


async def test_a_run_checks_every_model_it_may_call_and_none_a_person_plays(tmp_path):
    scene = write_scene(tmp_path / "s")
    soul = soul_file(scene, "刑警")
    soul.write_text(
        "---\nfallback_model: backup\n---\n" + soul.read_text("utf-8").split("---\n")[-1]
    )
    rehearsal = Rehearsal(scene)
    state = await rehearsal.state()
    config = Config(stage_manager_model="openai/sm")
    said = [(r.model, r.who.render("en")) for r in run_models(state, config)]
    assert said == [
        ("scripted/improv", "林小姐's model"),
        ("scripted/improv", "刑警's model"),
        ("backup", "刑警's fallback_model"),
        ("scripted/improv", "律師's model"),
        ("scripted/improv", "The stage manager's model"),  # context.md names it
    ]
    await rehearsal.stage.play(Actor("刑警"), "alice")
    played = [r.who.render("en") for r in run_models(await rehearsal.state(), config)]
    assert "刑警's model" not in played and "刑警's fallback_model" not in played


async def test_the_engine_refuses_to_start_a_run_on_an_unroutable_model(tmp_path):
    scene = write_scene(tmp_path / "s", model="scripted")
    before = listing(scene)
    rehearsal = Rehearsal(scene)
    with pytest.raises(UnroutableModel) as error:
        await rehearsal.start_run(Run(2))
    assert str(error.value) == (
        "林小姐's model `scripted` is not a model string litellm can route — write "
        "provider/model, e.g. ollama_chat/llama3.1 or anthropic/claude-3-5-haiku-latest; the "
        "closest known names are scripted/improv. Fix it in soul.md, context.md or CIRCUS_MODEL; "
        "the run did not start."
    )
    assert error.value.in_language("zh").startswith("林小姐的模型 `scripted` 不是 litellm")
    assert not rehearsal.running and listing(scene) == before


# ----------------------------------------------------------------------------- every frontend: one line
def test_circus_run_on_an_unroutable_model_says_one_line_and_writes_nothing(tmp_path: Path):
    made = circus("new", "wake", "--template", "wake", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    scene = tmp_path / "wake"
    before = listing(scene)
    result = circus(
        "run", str(scene), "-n", "2", cwd=tmp_path, env=cli_env(CIRCUS_MODEL="scripted")
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("circus: ")
    assert "`scripted` is not a model string litellm can route" in result.stderr
    assert "provider/model" in result.stderr and "scripted/improv" in result.stderr
    assert "Traceback" not in result.stderr and "GetLLMProvider" not in result.stderr
    assert result.stdout == "" and listing(scene) == before


def test_the_console_answers_run_on_an_unroutable_model_with_one_line(tmp_path: Path):
    made = circus("new", "wake", "--template", "wake", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    scene = tmp_path / "wake"
    result = circus(
        "console", str(scene), cwd=tmp_path, env=cli_env(CIRCUS_MODEL="llama3.1"), stdin="RUN 2\n"
    )
    said = [line for line in (result.stdout + result.stderr).splitlines() if "llama3.1" in line]
    assert len(said) == 1 and "ollama/llama3.1" in said[0] and "provider/model" in said[0]
    assert "Traceback" not in result.stderr
    assert turns_of(scene) == []


async def test_the_bots_run_on_an_unroutable_model_is_refused_privately_in_one_line(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted")
    async with room(tmp_path) as r:
        thread = await r.new_scene("審訊室", template="interrogation")
        answer = await r.ask("run", {"turns": 2}, channel=thread)
        assert "`scripted` 不是 litellm 能路由的模型名稱" in answer and "scripted/improv" in answer
        assert "\n" not in answer.strip()
        await r.drain()
        assert r.lines(thread) == []

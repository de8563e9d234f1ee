"""Setting up your own scene from the command line, black-box: each test runs
`circus` in a subprocess on the scripted model and checks what it prints and what is on disk."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from clikit import check_backstage_complete, circus, cli_env, listing, refused, turns_of
from fakeproviders.openai import FakeOpenAI
from scenekit import operator_config

from engine import templates_dir


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


SOUL_EN = """---
aliases: [{alias}]
---
## Bio

{name}, a night-shift cook. {marker}

## Prior story

{name} knows the restaurant is closing.

## Director's notes

Keep your job — but you are tired of keeping it.
"""


@pytest.mark.parametrize(
    "language, cast, added, renamed, heading",
    [
        ("en", "Eddie, Rose", "Linda", ("Rose", "Primrose"), "## Bio"),
        ("zh", "林小姐, 刑警", "律師", ("刑警", "王刑警"), "## 角色小傳"),
    ],
)
def test_a_blank_scene_built_only_through_the_cli_rehearses_saves_and_exports(
    tmp_path: Path, language, cast, added, renamed, heading
) -> None:
    cwd, s = tmp_path, str(tmp_path / "mine")
    out = ok(
        circus(
            "new", s, "--cast", cast, "--title", "Closing night", "--language", language, cwd=cwd
        )
    )
    assert "blank scene" in out
    scene = tmp_path / "mine"
    first = cast.split(", ")[0]
    assert heading in (scene / "actors" / first / "soul.md").read_text("utf-8")
    soul = tmp_path / "soul.md"
    soul.write_text(SOUL_EN.format(name=added, alias="Lin", marker="MARK"), "utf-8")
    ok(circus("actor", "add", s, added, "--from", str(soul), cwd=cwd))
    ok(circus("actor", "rename", s, *renamed, cwd=cwd))
    context = ok(circus("context", s, cwd=cwd))
    assert "Closing night" in context and renamed[1] in context
    new_context = context.replace("Place and time", "A diner, 2 a.m.").replace(
        "時間與地點", "凌晨兩點的小吃店"
    )
    ok(circus("context", s, "set", "-", cwd=cwd, stdin=new_context))
    assert (scene / "context.md").read_text("utf-8") == new_context

    # What is still the blank scene's guidance (two souls, the context's second line) is
    # named before the run, and the run goes on.
    status = ok(circus("status", s, cwd=cwd))
    warned = {line.split(": ")[1] for line in status.splitlines() if line.startswith("warning:")}
    assert warned == {"context.md", f"actors/{first}/soul.md", f"actors/{renamed[1]}/soul.md"}
    assert status.count("guidance") == 3
    run = circus("run", s, "-n", "4", cwd=cwd)
    ok(run)
    assert run.stderr.count("warning:") == 3
    turns = turns_of(scene)
    assert len(turns) == 4
    assert {t.actor for t in turns} <= {first, added, renamed[1]}
    check_backstage_complete(scene)
    assert ok(circus("take", s, "save", cwd=cwd)).strip() == "Saved take_1."
    assert (scene / "takes" / "take_1" / "actors" / renamed[1] / "soul.md").is_file()
    ok(circus("actor", "remove", s, added, cwd=cwd))
    assert not (scene / "actors" / added).exists()
    assert (scene / "takes" / "take_1" / "actors" / added / "soul.md").is_file()

    exported = ok(circus("export", s, "--take", "1", cwd=cwd))
    fountain = scene / "exports" / "take_1" / "screenplay.fountain"
    assert str(fountain) in exported and fountain.is_file()
    assert turns[0].dialogue in fountain.read_text("utf-8")


@pytest.mark.parametrize(
    "argv, says",
    [
        (("new", "{d}/x", "--cast", "Eddie, eddie"), ("collides",)),
        (("new", "{d}/x", "--cast", ", ".join(f"A{i}" for i in range(13))), ("at most 12",)),
        (("new", "{d}/x", "--cast", "Eddie", "--template", "wake"), ("not both",)),
        (("new", "{d}/x", "--title", "T"), ("go with --cast",)),
        (("new", "{d}/x", "--cast", " , "), ("needs names",)),
        (("actor", "add", "{s}", "Ed"), ("Ed is already an alias of Eddie",)),
        (("actor", "add", "{s}", "Rose"), ("already an actor called Rose",)),
        (("actor", "add", "{s}", "Everyone"), ("means everyone",)),
        (("actor", "remove", "{s}", "Freddie"), ("No actor called Freddie",)),
        (("actor", "rename", "{s}", "Rose"), ("NEW",)),
        (("note", "{s}", "--to", "Linda", "a", "secret"), ("No actor called Linda",)),
        (("note", "{s}", "--to", "Primrose", "a", "secret"), ("No actor called Primrose",)),
        (("cue", "{s}", "Freddie", "sit"), ("No actor called Freddie",)),
        (
            ("note", "{s}", "--to", "大家", "hi"),
            ("No actor called 大家", "without --to reaches everyone"),
        ),
        (("note", "{s}", "--to", "Freddie", "hi"), ("Nothing was noted", "without --to")),
        (
            ("cue", "{s}", "大家"),
            ("No actor called 大家", "A cue is for one actor", " run {s} -n 1"),
        ),
        (("cue", "{s}", "Everyone", "sit"), ("A cue is for one actor",)),
        (("context", "{s}", "set", "{d}/broken.md"), ("context.md", "unknown setting `modle`")),
        (("backstory", "{s}", "{d}/empty.md"), ("empty.md is empty — give the backstory text",)),
        (("summarize", "{s}", "Rose", "{d}/empty.md"), ("empty.md is empty — give the backstory",)),
        (("summarize", "{s}", "Rose", "-"), ("standard input is empty",)),
    ],
)
def test_bad_setup_input_is_one_line_and_writes_nothing(tmp_path: Path, argv, says) -> None:
    ok(circus("new", "s", "--cast", "Eddie, Rose, 林小姐", cwd=tmp_path))
    scene = tmp_path / "s"
    eddie = scene / "actors" / "Eddie" / "soul.md"
    eddie.write_text("---\naliases: [Ed]\n---\n" + eddie.read_text("utf-8"), "utf-8")
    lin = scene / "actors" / "林小姐" / "soul.md"
    lin.write_text("---\naliases: [Lin]\n---\n" + lin.read_text("utf-8"), "utf-8")
    (tmp_path / "broken.md").write_text("---\nmodle: x\n---\nA room.\n", "utf-8")
    (tmp_path / "empty.md").write_text("  \n", "utf-8")
    before = listing(tmp_path)
    args = [a.format(d=tmp_path, s=scene) for a in argv]
    refused(circus(*args, cwd=tmp_path), *(a.format(d=tmp_path, s=scene) for a in says))
    assert listing(tmp_path) == before


def test_rename_after_the_first_turn_and_a_removed_actor_cued_are_refused(tmp_path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Eddie, Rose, Ruth", cwd=cwd))
    ok(circus("cue", s, "Rose", "quietly", cwd=cwd))
    before = listing(tmp_path)
    refused(circus("actor", "rename", s, "Rose", "Primrose", cwd=cwd), "before the first turn")
    assert listing(tmp_path) == before
    ok(circus("actor", "remove", s, "Ruth", cwd=cwd))
    before = listing(tmp_path)
    refused(circus("cue", s, "Ruth", "come back", cwd=cwd), "No actor called Ruth")
    assert listing(tmp_path) == before
    directions = (tmp_path / "s" / "directions.md").read_text("utf-8")
    assert "## Take 1 · turn 1 · Rose\n\nquietly\n" in directions


def test_a_template_folder_is_refused_with_a_pointer_to_new(tmp_path: Path) -> None:
    wake = templates_dir(config=operator_config()) / "wake"
    before = listing(wake)
    refused(circus("run", str(wake), "-n", "1", cwd=tmp_path), "circus new", "template")
    assert listing(wake) == before


def test_hand_built_problems_are_warned_in_status_and_before_a_run(tmp_path: Path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Eddie, Rose", cwd=cwd))
    scene = tmp_path / "s"
    (scene / "actors" / "Rose" / "soul.md").write_text("aliases: [Rosie]\n\nRose.\n", "utf-8")
    context = (scene / "context.md").read_text("utf-8")
    (scene / "context.md").write_text(context.replace("Eddie, Rose", "Eddie, Rose, Ruth"), "utf-8")
    expected = [
        "warning: context.md: the cast names Ruth, who has no folder",
        "warning: actors/Rose/soul.md: starts with settings (aliases) without --- lines",
        "warning: actors/Rose/soul.md: has no Bio, Prior story, Director's notes section",
        "warning: context.md: still holds the blank scene's guidance",
        "warning: actors/Eddie/soul.md: still holds the blank soul's guidance",
    ]
    status = ok(circus("status", s, cwd=cwd))
    run = circus("run", s, "-n", "1", cwd=cwd)
    ok(run)
    for text in expected:
        assert text in status
        assert f"circus: {text}" in run.stderr
    assert status.count("warning:") == len(expected)


def test_a_blank_scene_warns_of_its_placeholder_guidance_before_it_runs_on_it(tmp_path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Ines, Rafa", cwd=cwd))
    placeholders = [
        "warning: context.md: still holds the blank scene's guidance (Place and time…, The"
        " situation…) — every role would read it as the stage",
        "warning: actors/Ines/soul.md: still holds the blank soul's guidance under Bio, Prior"
        " story, Director's notes — the actor would play it as written",
        "warning: actors/Rafa/soul.md: still holds the blank soul's guidance under Bio, Prior"
        " story, Director's notes — the actor would play it as written",
    ]
    status = ok(circus("status", s, cwd=cwd))
    warnings = [line for line in status.splitlines() if "warning:" in line]
    assert len(warnings) == 3
    assert all(line.startswith(p) for line, p in zip(warnings, placeholders, strict=True))
    run = circus("run", s, "-n", "1", cwd=cwd)
    ok(run)  # the run's first lines, before its first turn:
    assert run.stderr.splitlines()[:3] == [f"circus: {line}" for line in warnings]

    soul = tmp_path / "s" / "actors" / "Ines" / "soul.md"
    soul.write_text(SOUL_EN.format(alias="In", name="Ines", marker="BIO"), "utf-8")
    status = ok(circus("status", s, cwd=cwd))
    assert "actors/Ines/soul.md" not in status and "actors/Rafa/soul.md" in status


def test_backstory_off_a_terminal_is_refused_before_any_model_call(tmp_path: Path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Eddie, Rose", cwd=cwd))
    scene = tmp_path / "s"
    story = tmp_path / "story.md"
    text = "Eddie and Rose robbed the diner in 1999. Only Rose kept the money."
    story.write_text(text, "utf-8")
    before = listing(tmp_path)
    piped = circus("backstory", s, str(story), cwd=cwd, stdin="a\na\n")  # not a terminal
    refused(piped, "no terminal", "--accept-all", "no model was called")
    assert piped.stdout == ""
    refused(circus("backstory", s, "-", cwd=cwd, stdin=text), "a FILE (not -)")
    assert listing(tmp_path) == before  # not even a record of a call: none was made
    result = ok(circus("backstory", s, str(story), "--accept-all", cwd=cwd))
    assert result.count("Wrote it as") == 2
    for actor in ("Eddie", "Rose"):
        soul = (scene / "actors" / actor / "soul.md").read_text("utf-8")
        assert "A scripted answer." in soul.split("## Prior story")[1].split("## Director")[0]


HEADED_DRAFT = (
    "## Prior story\nInes saw the money change hands.\n\n## Director's notes\nSay nothing."
)


async def test_summarize_keeps_a_headed_draft_inside_the_prior_story_and_the_old_one(tmp_path):
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Ines, Rafa", cwd=cwd))
    soul = tmp_path / "s" / "actors" / "Ines" / "soul.md"
    soul.write_text(SOUL_EN.format(alias="In", name="Ines", marker="BIO"), "utf-8")
    story = tmp_path / "backstory.md"
    story.write_text("Rafa took the money; Ines saw it; nobody else knows.", "utf-8")
    async with FakeOpenAI(["Ines", "Rafa"], answer=lambda system, json: HEADED_DRAFT) as base:
        env = cli_env(
            CIRCUS_MODEL="openai/gpt-4o-mini", CIRCUS_API_BASE=base, OPENAI_API_KEY="sk-test"
        )
        result = await asyncio.to_thread(
            circus, "summarize", s, "Ines", str(story), cwd=cwd, env=env
        )
    ok(result)
    kept = tmp_path / "s" / "drafts" / "Ines.prior-story.1.md"
    assert f"the prior story it replaced is kept in {kept}" in result.stderr
    assert kept.read_text("utf-8") == "Ines knows the restaurant is closing.\n"
    text = soul.read_text("utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Bio", "## Prior story", "## Director's notes"]
    assert "### Director's notes\nSay nothing." in text
    assert text.endswith(
        "## Director's notes\n\nKeep your job — but you are tired of keeping it.\n"
    )
    status = ok(circus("status", s, cwd=cwd))
    assert "Ines" not in "".join(line for line in status.splitlines() if "warning" in line)


EDITOR = """
import sys
mode, path = sys.argv[1], sys.argv[2]  # $EDITOR is "python editor.py MODE", then the file
text = open(path, encoding="utf-8").read()
if mode == "break":
    text = "---\\ntemperature: hot\\n---\\n## Bio\\nMY EDIT, typed for an hour.\\n"
else:  # "fix": the writer starts from their kept draft and fixes the setting
    assert "MY EDIT" in text, text
    text = text.replace("hot", "0.7")
open(path, "w", encoding="utf-8").write(text)
"""


def test_a_failed_soul_edit_keeps_the_draft_and_the_next_edit_reopens_it(tmp_path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "Eddie, Rose", cwd=cwd))
    scene = tmp_path / "s"
    soul = scene / "actors" / "Rose" / "soul.md"
    before = soul.read_text("utf-8")
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR, "utf-8")
    broken = circus(
        "soul", s, "edit", "Rose", cwd=cwd, env=cli_env(EDITOR=f"{sys.executable} {editor} break")
    )
    refused(broken, "temperature", "drafts/Rose.soul.md", "reopens it")
    assert soul.read_text("utf-8") == before
    draft = scene / "drafts" / "Rose.soul.md"
    assert "MY EDIT" in draft.read_text("utf-8")
    assert "drafts/Rose.soul.md" in ok(circus("status", s, cwd=cwd))
    fixed = circus(
        "soul", s, "edit", "Rose", cwd=cwd, env=cli_env(EDITOR=f"{sys.executable} {editor} fix")
    )
    assert "kept draft" in ok(fixed)
    assert "MY EDIT" in soul.read_text("utf-8") and "temperature: 0.7" in soul.read_text("utf-8")
    assert not draft.exists()


def test_console_cue_with_a_glued_word_is_refused_never_dropped(tmp_path: Path) -> None:
    ok(circus("new", "s", "--template", "wake", cwd=tmp_path))
    result = circus(
        "console", str(tmp_path / "s"), cwd=tmp_path, stdin="CUE RuthX\nCUE Ruth glances up\n"
    )
    assert result.returncode == 0, result.stderr
    assert "No actor called RuthX" in result.stdout + result.stderr
    turns = turns_of(tmp_path / "s")
    assert [t.actor for t in turns] == ["Ruth"]
    assert "glances up" in (tmp_path / "s" / "directions.md").read_text("utf-8")


def test_a_removed_actor_takes_their_whispers_and_a_renamed_one_keeps_them(tmp_path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    notes = tmp_path / "s" / "director_notes.md"
    ok(circus("new", s, "--cast", "Eddie, Rose, Ruth", cwd=cwd))
    ok(circus("note", s, "--to", "Ruth", "hide the keys", cwd=cwd))
    ok(circus("note", s, "--to", "Rose", "you know", cwd=cwd))
    ok(circus("note", s, "the storm is coming", cwd=cwd))
    assert ok(circus("actor", "remove", s, "Ruth", cwd=cwd)).splitlines() == [
        "Removed Ruth; their lines stay in the transcript and the saved takes.",
        "Their 1 whisper(s) in director_notes.md went with them; a saved take keeps its own copy.",
    ]
    assert "## Ruth" not in notes.read_text("utf-8") and "hide the keys" not in notes.read_text(
        "utf-8"
    )
    ok(circus("actor", "add", s, "Linda", cwd=cwd))
    said = ok(circus("actor", "remove", s, "Linda", cwd=cwd))  # no whispers: nothing to say
    assert "whisper" not in said and "## Linda" not in notes.read_text("utf-8")
    ok(circus("actor", "rename", s, "Rose", "Primrose", cwd=cwd))
    text = notes.read_text("utf-8")
    assert "## Rose" not in text and "## Primrose\n- you know" in text
    assert "the storm is coming" in text
    status = ok(circus("status", s, cwd=cwd))
    assert "nobody reads" not in status


def test_a_chinese_scenes_warnings_name_its_parts_as_its_files_do(tmp_path) -> None:
    cwd, s = tmp_path, str(tmp_path / "s")
    ok(circus("new", s, "--cast", "林小姐, 刑警", cwd=cwd))
    status = ok(circus("status", s, cwd=cwd))
    soul = "warning: actors/林小姐/soul.md: still holds the blank soul's guidance under 角色小傳"
    assert soul in status and "Bio" not in status

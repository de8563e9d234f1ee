"""Black-box tests of the `circus` command line: each test runs it in a subprocess and checks
exit codes, what it prints and what it writes. Models are the scripted test double
(`CIRCUS_MODEL=scripted/improv`), except one real turn on the embedded model."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clikit import (
    THOUGHT,
    WAKE_CAST,
    ZH_CAST,
    Live,
    check_backstage_complete,
    circus,
    cli_env,
    listing,
    turns_of,
)


@pytest.fixture
def wake(tmp_path: Path) -> Path:
    result = circus("new", "wake", "--template", "wake", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "wake"


# ----------------------------------------------------------------------------- help, templates


def test_help_lists_every_command_and_imports_nothing_heavy(tmp_path: Path) -> None:
    # How fast `--help` answers is measured by bench/bench_cli.py; what keeps it fast is
    # asserted below (nothing heavy is imported to build the parser).
    result = circus("--help", cwd=tmp_path)
    assert result.returncode == 0
    for command in (
        "new", "templates", "run", "cue", "note", "resume", "take", "replay", "status",
        "soul", "summarize", "console", "bot", "demo", "actor", "context", "backstory",
    ):  # fmt: skip
        assert command in result.stdout
    assert circus("run", "--help", cwd=tmp_path).returncode == 0
    assert circus("bot", "--help", cwd=tmp_path).returncode == 0
    # what keeps it fast: nothing heavy is imported to build the parser
    probe = (
        "import sys, circus.cli; circus.cli.build_parser();"
        "print(sorted(m for m in ('litellm', 'discord', 'llama_cpp', 'engine.door.llm') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


# What a command that only reads or writes the scene folder must never pay for: the model door
# and litellm behind it, the settings' schemas, the run loop, the prompts and the reply reader.
HEAVY = (
    "litellm", "httpx", "pydantic", "engine.door.llm", "engine.rehearsal.run_loop",
    "engine.turn.performance", "engine.turn.prompts", "engine.reply.read",
    "engine.rehearsal.soul_commands", "engine.harvest.report",
)  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [("status",), ("note", "Keep it quiet."), ("take", "list"), ("pick", "1")],
    ids=["status", "note", "take list", "pick"],
)
def test_a_folder_command_in_a_fresh_process_loads_nothing_heavy(wake, args) -> None:
    """`circus status` and its kind answer at the interpreter's pace (bench/bench_startup.py
    times them): each module a run needs loads only when something runs."""
    assert circus("run", "wake", "-n", "2", cwd=wake.parent).returncode == 0
    probe = (
        "import sys; from circus.cli import main; "
        f"sys.argv = ['circus', {args[0]!r}, 'wake', *{list(args[1:])!r}]; code = main(); "
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=wake.parent, env=cli_env(),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr[-2000:]


# What a report or a Fountain export never needs: the model door, and Final Draft's XML
# escaping (saxutils brings urllib, http and email along).
HEAVY_FOR_PAGES = (
    "litellm", "httpx", "pydantic", "engine.door.llm", "engine.rehearsal.run_loop",
    "xml.sax", "http.client", "email.parser",
)  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [("report",), ("export", "--format", "fountain,md,csv")],
    ids=["report", "export fountain"],
)
def test_a_report_or_a_fountain_export_loads_nothing_it_does_not_use(wake, args) -> None:
    assert circus("run", "wake", "-n", "2", cwd=wake.parent).returncode == 0
    probe = (
        "import sys; from circus.cli import main; "
        f"sys.argv = ['circus', {args[0]!r}, 'wake', *{list(args[1:])!r}]; code = main(); "
        f"print(code, sorted(m for m in {HEAVY_FOR_PAGES!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=wake.parent, env=cli_env(),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr[-2000:]


def test_templates_and_new(tmp_path: Path) -> None:
    result = circus("templates", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "interrogation" in result.stdout and "wake" in result.stdout
    assert "林小姐" in result.stdout

    made = circus("new", "s1", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    scene = tmp_path / "s1"
    for rel in ("context.md", "director_notes.md", "transcript.md"):
        assert (scene / rel).is_file()
    assert {p.name for p in (scene / "actors").iterdir()} == ZH_CAST
    assert turns_of(scene) == []


# ----------------------------------------------------------------------------- running


def test_run_prints_each_line_and_keeps_thoughts_backstage(wake: Path) -> None:
    result = circus("run", str(wake), "-n", "3", cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    turns = turns_of(wake)
    assert len(turns) == 3 and {t.actor for t in turns} <= WAKE_CAST
    for turn in turns:
        assert f"[{turn.number}] {turn.actor}" in result.stdout
        assert turn.dialogue in result.stdout
    assert THOUGHT not in result.stdout + result.stderr  # thoughts are private by default
    assert "[backstage]" not in result.stdout
    assert "turn 3/3" in result.stderr and "3 turns in" in result.stderr  # progress
    check_backstage_complete(wake)

    result = circus("resume", str(wake), "-n", "1", "--backstage", cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    assert len(turns_of(wake)) == 4
    assert "[backstage]" in result.stdout and THOUGHT in result.stdout
    check_backstage_complete(wake)


def call_rows(scene: Path) -> list[dict]:
    """The scene's record of every model call, landed or not (.circus/calls.jsonl)."""
    text = (scene / ".circus" / "calls.jsonl").read_text(encoding="utf-8")
    return [row for row in map(json.loads, text.splitlines()) if row["kind"] != "earlier"]


def test_the_run_summary_counts_every_call_of_the_run(wake: Path) -> None:
    seen, kinds = 0, set()
    for turns in ("4", "3"):
        result = circus("run", str(wake), "-n", turns, cwd=wake.parent)
        assert result.returncode == 0, result.stderr
        rows = call_rows(wake)
        run, seen = rows[seen:], len(rows)
        kinds |= {row["kind"] for row in run}
        billed = sum(row["prompt_tokens"] + row["completion_tokens"] for row in run)
        summary = result.stderr.strip().splitlines()[-1]
        assert summary.startswith(f"{turns} turns in") and f" · {billed:,} tokens · " in summary
    assert kinds == {"actor", "stage_manager"}  # the stage manager's calls are in the figure


def test_cue_note_take_replay_status_soul(wake: Path) -> None:
    cwd, s = wake.parent, str(wake)
    result = circus("cue", s, "danny", "picks", "up", "the", "watch", cwd=cwd)  # an alias, any case
    assert result.returncode == 0, result.stderr
    assert [t.actor for t in turns_of(wake)] == ["Danny"]

    result = circus("note", s, "--to", "Carol", "Say", "less.", cwd=cwd)
    assert result.returncode == 0, result.stderr
    result = circus("note", s, "Slower, everyone.", cwd=cwd)
    assert result.returncode == 0, result.stderr
    notes = (wake / "director_notes.md").read_text(encoding="utf-8")
    assert notes.index("## Carol") < notes.index("Say less.")
    assert notes.index("## Everyone") < notes.index("Slower, everyone.") < notes.index("## Ruth")

    assert circus("take", s, "save", cwd=cwd).stdout.strip() == "Saved take_1."
    assert (wake / "takes" / "take_1" / "transcript.md").is_file()
    listed = circus("take", s, "list", cwd=cwd)
    assert listed.returncode == 0 and "take_1" in listed.stdout and "1 turn" in listed.stdout
    shown = circus("take", s, "show", "take_1", cwd=cwd)
    assert shown.returncode == 0 and "## 1 · Danny" in shown.stdout

    before = listing(wake)
    result = circus("replay", s, "1", "--until", "5", cwd=cwd)  # take_1 has one turn
    assert result.returncode == 2 and "1–1" in result.stderr
    assert listing(wake) == before

    result = circus("replay", s, "1", "--until", "0", "-n", "2", cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "take 2" in result.stdout
    assert len(turns_of(wake)) == 2
    check_backstage_complete(wake)

    status = circus("status", s, cwd=cwd)
    assert status.returncode == 0, status.stderr
    for text in ("turns:   2", "Ruth, Danny, Carol", "take_1", "scripted/improv", "model calls"):
        assert text in status.stdout

    soul = circus("soul", s, "show", "Ruth", cwd=cwd)
    assert soul.returncode == 0 and "## Prior story" in soul.stdout


def test_summarize_rewrites_only_the_prior_story(wake: Path, tmp_path: Path) -> None:
    history = tmp_path / "history.md"
    history.write_text("Everything that happened, omnisciently.", encoding="utf-8")
    soul_file = wake / "actors" / "Ruth" / "soul.md"
    before = soul_file.read_text(encoding="utf-8")
    result = circus("summarize", str(wake), "Ruth", str(history), cwd=wake.parent)
    assert result.returncode == 0, result.stderr
    after = soul_file.read_text(encoding="utf-8")
    story = result.stdout.strip()
    assert story and story in after
    assert before.split("## Prior story")[0] == after.split("## Prior story")[0]
    assert before.split("## Director's notes")[1] == after.split("## Director's notes")[1]


def test_demo_creates_the_scene_once_and_continues_it(tmp_path: Path) -> None:
    env = cli_env(CIRCUS_SCENES_DIR=str(tmp_path / "scenes"))
    for expected in (2, 4):
        result = circus("demo", "-n", "2", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        assert len(turns_of(tmp_path / "scenes" / "demo")) == expected


def test_demo_with_another_template_plays_it_in_a_folder_of_its_own(tmp_path: Path) -> None:
    env = cli_env(CIRCUS_SCENES_DIR=str(tmp_path / "scenes"))
    wake, zh = tmp_path / "scenes" / "demo", tmp_path / "scenes" / "demo-interrogation"
    assert circus("demo", "-n", "1", cwd=tmp_path, env=env).returncode == 0
    for expected in (1, 2):
        result = circus("demo", "-n", "1", "--template", "interrogation", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        assert f"Rehearsing {zh} " in result.stdout
        assert len(turns_of(zh)) == expected and {t.actor for t in turns_of(zh)} <= ZH_CAST
    assert len(turns_of(wake)) == 1 and {t.actor for t in turns_of(wake)} <= WAKE_CAST
    again = circus("demo", "-n", "1", "--template", "wake", cwd=tmp_path, env=env)
    assert again.returncode == 0 and len(turns_of(wake)) == 2


@pytest.mark.parametrize("first_demo", [False, True])
def test_demo_refuses_an_unknown_template_whether_or_not_a_demo_is_there(
    tmp_path: Path, first_demo: bool
) -> None:
    env = cli_env(CIRCUS_SCENES_DIR=str(tmp_path / "scenes"))
    if first_demo:
        assert circus("demo", "-n", "1", cwd=tmp_path, env=env).returncode == 0
    before = listing(tmp_path)
    result = circus("demo", "--template", "nope", cwd=tmp_path, env=env)
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("circus: No template called 'nope' — the templates are")
    assert "wake" in result.stderr and result.stdout == ""
    assert listing(tmp_path) == before


def test_soul_set_checks_the_new_soul_before_writing(wake: Path, tmp_path: Path) -> None:
    soul_file = wake / "actors" / "Danny" / "soul.md"
    before = soul_file.read_text(encoding="utf-8")
    broken = tmp_path / "broken.md"
    broken.write_text("---\ntemperature: hot\n---\n## Bio\nDanny.\n", encoding="utf-8")
    result = circus("soul", str(wake), "set", "Danny", str(broken), cwd=wake.parent)
    assert result.returncode == 2 and "temperature" in result.stderr
    assert soul_file.read_text(encoding="utf-8") == before
    new = before.replace("pool-cleaning contracts", "used boats")
    result = circus("soul", str(wake), "set", "dan", "-", cwd=wake.parent, stdin=new)
    assert result.returncode == 0, result.stderr
    assert soul_file.read_text(encoding="utf-8") == new


def test_piped_console_plays_to_the_end_of_input(wake: Path) -> None:
    result = circus("console", str(wake), cwd=wake.parent, stdin="RUN 2\n")
    assert result.returncode == 0, result.stderr
    assert len(turns_of(wake)) == 2 and "[2] " in result.stdout


def test_bot_without_a_token_says_what_to_do(tmp_path: Path) -> None:
    result = circus("bot", cwd=tmp_path)
    assert result.returncode != 0
    assert "DISCORD_TOKEN" in result.stderr


# ----------------------------------------------------------------------------- bad input


BAD_INPUT = [
    ("run", "missing"),
    ("run", "{s}", "-n", "0"),
    ("run", "{s}", "-n", "abc"),
    ("run", "{s}", "--start", "Nobody"),
    ("cue", "{s}", "Nobody"),
    ("note", "{s}", "--to", "Nobody", "hello"),
    ("note", "{s}", "   "),
    ("new", "fresh", "--template", "nope"),
    ("new", "{s}"),
    ("new", "no/such/parent"),
    ("take", "{s}", "show", "9"),
    ("take", "{s}", "show"),
    ("take", "{s}", "delete"),
    ("replay", "{s}", "9"),
    ("status", "missing"),
    ("soul", "{s}", "show", "Nobody"),
    ("resume", "{s}", "-n", "-3"),
    ("console", "missing"),
    ("frobnicate",),
]


@pytest.mark.parametrize("argv", BAD_INPUT, ids=lambda a: " ".join(a))
def test_bad_input_exits_2_with_one_line_and_writes_nothing(wake: Path, argv: tuple) -> None:
    circus("take", str(wake), "save", cwd=wake.parent)  # so take numbers have something real
    before = listing(wake.parent)
    result = circus(*(a.format(s=wake) for a in argv), cwd=wake.parent)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: "), result.stderr
    assert result.stdout == ""
    assert listing(wake.parent) == before


def test_a_failing_model_exits_1_with_the_cause(wake: Path) -> None:
    # A model litellm can route whose server is not there (a name it can't route is refused
    # before the run starts: tests/engine/test_model_strings.py).
    env = cli_env(
        CIRCUS_MODEL="openai/model-x",
        CIRCUS_API_BASE="http://127.0.0.1:9/v1",
        OPENAI_API_KEY="sk-loopback-test",
        CIRCUS_MODEL_RETRIES="0",
    )
    result = circus("run", str(wake), "-n", "2", cwd=wake.parent, env=env)
    assert result.returncode == 1
    assert "openai/model-x" in result.stderr
    assert turns_of(wake) == []


# ----------------------------------------------------------------------------- Ctrl-C and the console


def test_ctrl_c_cuts_the_run_and_nothing_half_made_lands(wake: Path) -> None:
    env = cli_env(CIRCUS_SCRIPTED_LATENCY="0.3")
    live = Live("run", str(wake), "-n", "40", cwd=wake.parent, env=env)
    live.wait_for("[2] ")
    live.proc.send_signal(signal.SIGINT)
    code = live.finish()
    assert code == 130, live.seen
    assert "cut" in live.seen["err"]
    turns = turns_of(wake)
    assert 2 <= len(turns) < 40
    check_backstage_complete(wake)


def test_console_run_status_quit(wake: Path) -> None:
    live = Live("console", str(wake), cwd=wake.parent, env=cli_env())
    live.wait_for("HELP lists the verbs")
    live.send("run 3")
    live.wait_for("[3] ")
    live.wait_for("3 turns in", "err")
    live.send("@carol looks at the cardigans")
    live.wait_for("[4] Carol")
    live.send("NOTE carol: breathe")
    live.wait_for("Noted for Carol only")
    live.send("STATUS")
    live.wait_for("turns:   4 on record")
    live.send("QUIT")
    assert live.finish() == 0, live.seen
    assert len(turns_of(wake)) == 4
    assert THOUGHT not in live.seen["out"]
    check_backstage_complete(wake)


def test_console_note_never_sends_a_private_whisper_to_everyone(wake: Path) -> None:
    live = Live("console", str(wake), cwd=wake.parent, env=cli_env())
    live.wait_for("HELP lists the verbs")
    live.send("NOTE Carol you kept the letter")  # like CUE Carol ...: private
    live.wait_for("Noted for Carol only")
    live.send("NOTE Carolyou kept the ring")  # ambiguous: refused
    live.wait_for("Whom is this for?", "err")
    live.send("NOTE all: slower")
    live.wait_for("Noted for everyone")
    live.send("QUIT")
    assert live.finish() == 0, live.seen
    notes = (wake / "director_notes.md").read_text(encoding="utf-8")
    carol = notes.split("## Carol")[1].split("## ")[0]
    assert "you kept the letter" in carol and "ring" not in notes
    assert "you kept the letter" not in notes.split("## Carol")[0]


def test_console_cut_interrupts_a_run(wake: Path) -> None:
    env = cli_env(CIRCUS_SCRIPTED_LATENCY="0.3")
    live = Live("console", str(wake), "--backstage", cwd=wake.parent, env=env)
    live.wait_for("HELP lists the verbs")
    live.send("RUN 20")
    live.wait_for("[2] ")
    live.send("cut")
    live.wait_for("cut —", "err")
    live.send("status")
    live.wait_for("mode: idle")
    live.send("quit")
    assert live.finish() == 0, live.seen
    assert THOUGHT in live.seen["out"]  # --backstage
    assert 2 <= len(turns_of(wake)) < 20
    check_backstage_complete(wake)


# ----------------------------------------------------------------------------- the embedded model


@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs [embedded]")
def test_one_real_turn_on_the_embedded_model(tmp_path: Path) -> None:
    env = cli_env(CIRCUS_MODEL=None)
    assert circus("new", "real", "--template", "wake", cwd=tmp_path, env=env).returncode == 0
    started = time.perf_counter()
    # --start: one model call (the actor's), not two (no stage manager before turn 1).
    # A correctness check, not a benchmark: llama.cpp slows down badly on a busy machine.
    result = circus("run", "real", "-n", "1", "--start", "Ruth", cwd=tmp_path, env=env, timeout=900)
    print(f"one embedded turn: {time.perf_counter() - started:.1f}s")
    assert result.returncode == 0, result.stderr
    turns = turns_of(tmp_path / "real")
    assert len(turns) == 1 and turns[0].actor in WAKE_CAST
    assert turns[0].action or turns[0].dialogue
    check_backstage_complete(tmp_path / "real")

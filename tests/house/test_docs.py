"""The docs cannot drift: every command README.md and docs/*.md show is run, every relative link
leads somewhere, and every variable they name is one Circus reads.

Each ```console block's `$ …` line and each ```sh block's line is a command. A `circus …` line
runs — per page in document order, in a scratch folder of its own with an empty `scenes/`, on
the scripted model (`CIRCUS_MODEL=scripted/improv`, as the CLI tests run) — and must exit 0, or
the code its comment names (`# exits 2`). A line that cannot run here (a pip install, docker,
`circus bot`, a hosted model) must match the skip table below, which says why. All pages run in
one process (tests/dockit.py), so litellm is imported once.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from clikit import cli_env

from engine.providers.embedded import BUILD_MINUTES, EmbeddedModelUnavailable

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
OPERATORS_GUIDE = REPO / "docs" / "operators-guide.md"

# What a docs command may name that the reader brings along; each page's scratch folder has it.
READERS_FILES = {
    "draft.fountain": (
        "Title: The Harbour\n\nINT. HARBOUR OFFICE - NIGHT #1#\n\n"
        "= Tom must get Mara to sign before Ray arrives.\n\n"
        "Rain on the window. TOM (50s) sorts papers.\n\n"
        "[[Tom knows about the sale. Mara doesn't.]]\n\n"
        "MARA (O.S.)\nTom? Are you in there?\n\n"
        "TOM\n(not looking up)\nDoor's open. It always is.\n\n"
        "MARA enters, soaked.\n\nMARA\nYou got my letter.\n\n"
        "INT. HARBOUR OFFICE - LATER #2#\n\nRAY bursts in.\n\nRAY\nAm I late?\n\n"
        "TOM\nAlways.\n"
    ),
    "backstory.md": (
        "# The family\n\nRuth and Danny are their father's children; Carol was his partner for "
        "twenty years. Two weeks before he died he signed a second will that leaves the house to "
        "Carol. Ruth found it in his desk and told nobody. Danny has never seen it.\n"
    ),
}

# Lines shown in the docs that this test does not run, and why. Every entry must match a line.
SKIP = {
    r"pip install": "installs packages (needs the network, and minutes to build)",
    r"^docker ": "needs Docker and a Discord token",
    r"^cp \.env\.example \.env": "makes the operator's own .env",
    r"^export ": "sets a provider key or a real model for the reader's own shell",
    r"^(set -a|\. \.venv/bin/activate)": "changes the reader's own shell",
    r"^circus bot( --|$)": "connects to Discord (the bot's tests use fakediscord)",
    r"^circus check-model (?!scripted/)": "needs a live model server or a provider's key",
    r"^ollama ": "needs Ollama",
    r"^\.proxy/bin/litellm ": "starts the LiteLLM proxy (tests/engine/test_real_proxy.py runs it)",
}

FENCE = re.compile(r"^```(\S*)\s*$")
EXPECTED = re.compile(r"\s#\s*exits (\d+)\b")
PIPED = re.compile(r"^printf '((?:[^'\\]|\\.)*)' \| (.*)$")
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
SHELL = {"|", "||", "&&", ";", ">", ">>", "<", "&"}
CIRCUS = {"circus", ".venv/bin/circus"}  # the command, or the quick start's venv copy of it


@dataclass(frozen=True)
class Line:
    page: Path
    number: int  # 1-based line in the page
    text: str
    shows: tuple[str, ...] = ()  # the output a console block prints under the command

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.number}"


@dataclass(frozen=True)
class Command:
    line: Line
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    stdin: str
    expected: int


def command_lines(page: Path) -> list[Line]:
    """Every command a page shows: `$ ` lines of console blocks (with the output lines under
    them), every line of sh blocks; a line ending in `\\` goes on on the next."""
    lines: list[Line] = []
    fence, pending, owner = None, "", None  # owner: this console block's last command
    for number, raw in enumerate(page.read_text("utf-8").splitlines(), 1):
        match = FENCE.match(raw)
        if match:
            fence, owner = (None if fence is not None else match.group(1)), None
            continue
        if fence == "console" and not raw.startswith("$ ") and not pending:
            if owner is not None and raw.strip():
                lines[owner] = dataclasses.replace(
                    lines[owner], shows=(*lines[owner].shows, raw.strip())
                )
            continue
        if fence == "console":
            text = raw.removeprefix("$ ")
        elif fence == "sh" and (pending or (raw.strip() and not raw.lstrip().startswith("#"))):
            text = raw
        else:
            continue
        text = pending + text.strip()
        if text.endswith("\\"):
            pending = text[:-1].rstrip() + " "
            continue
        pending = ""
        lines.append(Line(page, number, text))
        owner = len(lines) - 1 if fence == "console" else None
    return lines


def skip_reason(line: Line) -> str | None:
    for pattern, reason in SKIP.items():
        if re.search(pattern, line.text):
            return reason
    return None


def command(line: Line) -> Command:
    """A runnable `circus …` line, read as a shell would; anything else fails with its line."""
    text, stdin = line.text, ""
    piped = PIPED.match(text)
    if piped:
        stdin = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), piped[1])
        text = piped.group(2)
    expected = EXPECTED.search(text)
    words = shlex.split(text, comments=True)
    env = []
    while words and ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    assert words and words[0] in CIRCUS, (
        f"{line.id}: `{line.text}` is neither a circus command nor in test_docs.SKIP"
    )
    assert not SHELL & set(words), f"{line.id}: one circus command per line, no shell plumbing"
    return Command(line, tuple(words[1:]), tuple(env), stdin, int(expected[1]) if expected else 0)


ALL_LINES = [line for page in PAGES for line in command_lines(page)]


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, dict]:
    """Run every page's commands, in order, each page in its own scratch folder."""
    batch, ids = [], []
    for page in PAGES:
        scratch = tmp_path_factory.mktemp(page.stem)
        (scratch / "scenes").mkdir()
        for name, text in READERS_FILES.items():
            (scratch / name).write_text(text, encoding="utf-8")
        for line in command_lines(page):
            if skip_reason(line):
                continue
            cmd = command(line)
            batch.append(
                {
                    "argv": list(cmd.argv),
                    "cwd": str(scratch),
                    "env": dict(cmd.env),
                    "stdin": cmd.stdin,
                }
            )
            ids.append(line.id)
    work = tmp_path_factory.mktemp("dockit")
    (work / "batch.json").write_text(json.dumps(batch, ensure_ascii=False), encoding="utf-8")
    subprocess.run(
        [sys.executable, str(REPO / "tests" / "dockit.py"), "batch.json", "results.json"],
        cwd=work,
        env=cli_env(),
        check=True,
        timeout=900,
    )
    results = json.loads((work / "results.json").read_text("utf-8"))
    return dict(zip(ids, results, strict=True))


@pytest.mark.parametrize("line", ALL_LINES, ids=[line.id for line in ALL_LINES])
def test_every_command_in_the_docs_runs(line: Line, ran) -> None:
    reason = skip_reason(line)
    if reason:
        pytest.skip(f"`{line.text}` {reason}")
    expected = command(line).expected
    result = ran[line.id]
    said = f"stdout: {result['stdout'][-1500:]}\nstderr: {result['stderr'][-1500:]}"
    assert result["code"] == expected, (
        f"{line.id}: `{line.text}` exited {result['code']}, the docs say {expected}\n{said}"
    )
    printed = [out.strip() for out in (result["stdout"] + result["stderr"]).splitlines()]
    for shown in line.shows:
        assert shown in printed, (
            f"{line.id}: the docs show `{shown}`, which it did not print\n{said}"
        )


@pytest.mark.parametrize("pattern", sorted(SKIP))
def test_every_skip_entry_matches_a_line_the_docs_show(pattern: str) -> None:
    assert any(re.search(pattern, line.text) for line in ALL_LINES), pattern


def test_the_docs_show_commands_at_all() -> None:
    runnable = [line for line in ALL_LINES if not skip_reason(line)]
    assert len(runnable) >= 40
    assert {line.page.name for line in runnable} >= {"README.md", "writers-guide.md"}


# ------------------------------------------------------------------------ links and anchors

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*\\]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    out, fence = set(), False
    for raw in page.read_text("utf-8").splitlines():
        if raw.startswith("```"):
            fence = not fence
        elif not fence and raw.startswith("#"):
            out.add(slug(raw.lstrip("#")))
    return out


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_points_at_a_file_and_heading_that_exist(page: Path) -> None:
    for target in links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: link to {target}: no such file"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{page.name}: link to {target}: no such heading"


@pytest.mark.parametrize(
    "heading, anchor",
    [
        ("## The scene folder", "the-scene-folder"),
        ("### actors/\\<name\\>/soul.md", "actorsnamesoulmd"),
        ("## Harvest: picks, reports, comparisons", "harvest-picks-reports-comparisons"),
        ("## `circus check-model`", "circus-check-model"),
        ("## exports/take_\\<n\\>/", "exportstake_n"),
        ("## 導戲筆記", "導戲筆記"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading.lstrip("#")) == anchor


# ------------------------------------------------------------------------ variables


def variables(pattern: str, *texts: str) -> set[str]:
    return {v for text in texts for v in re.findall(pattern, text)}


def product_code() -> list[str]:
    return [
        p.read_text("utf-8") for d in ("bot", "engine", "circus") for p in (REPO / d).rglob("*.py")
    ]


def test_every_circus_variable_the_docs_name_is_one_circus_reads() -> None:
    read = variables(r"CIRCUS_[A-Z_]*[A-Z]", *product_code())
    assert "CIRCUS_MODEL" in read
    for page in PAGES:
        named = variables(r"CIRCUS_[A-Z_]*[A-Z]", page.read_text("utf-8"))
        assert named <= read, f"{page.name} names {sorted(named - read)}, which nothing reads"


def test_every_discord_variable_circus_reads_is_in_the_operators_guide() -> None:
    read = variables(r"DISCORD_[A-Z_]*[A-Z]", *product_code())
    assert read, "the bot reads its token from DISCORD_TOKEN"
    assert read <= variables(r"DISCORD_[A-Z_]*[A-Z]", OPERATORS_GUIDE.read_text("utf-8"))


def test_the_readme_is_the_first_ten_minutes() -> None:
    assert len((REPO / "README.md").read_text("utf-8").splitlines()) <= 200


BUILD_TIME = re.compile(r"(\S+)\s+minutes\s+on\s+2\s+cores")


def test_one_figure_for_building_the_embedded_model_everywhere_it_is_given() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    for page in (REPO / "README.md", OPERATORS_GUIDE, REPO / "pyproject.toml"):
        figures = [found.strip("*(") for found in BUILD_TIME.findall(page.read_text("utf-8"))]
        assert figures and set(figures) == {BUILD_MINUTES}, (page.name, figures)
    error = EmbeddedModelUnavailable("missing llama_cpp")
    assert f"takes {BUILD_MINUTES} minutes on 2 cores, once" in error.in_language("en")
    assert f"約 {BUILD_MINUTES} 分鐘" in error.in_language("zh")
    # the path with nothing to compile (a hosted model, Ollama, the scripted stand-in) first
    assert readme.index("pip install -e .\n") < readme.index("pip install -e '.[embedded]'")
    assert readme.index("scripted/improv") < readme.index("pip install -e '.[embedded]'")


# ------------------------------------------------------------------------ how a line is read


def line_of(text: str) -> Line:
    return Line(REPO / "README.md", 1, text)


@pytest.mark.parametrize(
    "text, argv, env, stdin, expected",
    [
        ("circus run scenes/s1 -n 6", ("run", "scenes/s1", "-n", "6"), (), "", 0),
        (".venv/bin/circus demo", ("demo",), (), "", 0),
        (
            'circus cue scenes/s1 Ruth "she slams the table"',
            ("cue", "scenes/s1", "Ruth", "she slams the table"),
            (),
            "",
            0,
        ),
        ("circus run scenes/nope   # exits 2", ("run", "scenes/nope"), (), "", 2),
        ("circus templates   # or: circus new", ("templates",), (), "", 0),
        (
            "CIRCUS_MODEL=scripted/improv circus demo -n 2",
            ("demo", "-n", "2"),
            (("CIRCUS_MODEL", "scripted/improv"),),
            "",
            0,
        ),
        (
            "printf 'RUN 2\\nNOTE 大家: 停電了\\n' | circus console scenes/s1",
            ("console", "scenes/s1"),
            (),
            "RUN 2\nNOTE 大家: 停電了\n",
            0,
        ),
    ],
)
def test_a_command_line_is_read_as_a_shell_would(text, argv, env, stdin, expected) -> None:
    cmd = command(line_of(text))
    assert (cmd.argv, cmd.env, cmd.stdin, cmd.expected) == (argv, env, stdin, expected)


@pytest.mark.parametrize(
    "text",
    ["ls scenes", "circus run scenes/s1 && circus take scenes/s1 save", "circus picks s > p.txt"],
)
def test_a_line_that_is_not_one_circus_command_fails_unless_skipped(text: str) -> None:
    with pytest.raises(AssertionError, match="README.md:1"):
        command(line_of(text))


def test_output_under_a_console_command_belongs_to_it(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```console\nleft over\n$ circus templates\nwake   The kitchen\n\n$ circus demo\n```\n"
        "```sh\ncircus new scenes/a \\\n  --template wake\n```\n",
        encoding="utf-8",
    )
    lines = command_lines(page)
    assert [(line.number, line.text, line.shows) for line in lines] == [
        (3, "circus templates", ("wake   The kitchen",)),
        (6, "circus demo", ()),
        (10, "circus new scenes/a --template wake", ()),
    ]

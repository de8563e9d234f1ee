"""What the command line is given, and who gives it: a text file named on it (`-` = stdin), the
user's name, how they called `circus`, the terminal's default number of turns, and the folder
`circus demo` plays.

The bottom of circus/: every other module may import it; it imports only circus.exits and
circus.words (standard library and the catalog's words, never the engine at the top).
"""

from __future__ import annotations

import os
import sys

from circus.exits import UsageError
from circus.words import t

# The terminal's documented default for run/resume/replay/RUN (README); Discord and the
# engine's own default is engine.DEFAULT_TURNS (5). Kept apart on purpose: no behaviour changes.
DEFAULT_TURNS = 6
# `circus demo`'s template, played in scenes/demo; any other is played in scenes/demo-NAME.
# English by default: SmolLM2's tokenizer spends ~3 tokens per CJK character, so the Chinese
# interrogation scene takes several times longer per turn on the embedded model.
DEMO_TEMPLATE = "wake"


def demo_folder(template: str) -> str:
    """The folder (in the scenes folder) `circus demo --template TEMPLATE` plays: each template
    its own, so a demo never goes on with another template's scene."""
    return "demo" if template == DEMO_TEMPLATE else f"demo-{template}"


def me() -> str:
    """How to call circus again: `circus` when that is the program on PATH (README's `Next:
    circus run …`), else as the director did (`.venv/bin/circus` stays copy-pasteable)."""
    import shutil

    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) != "circus":  # `python -m circus`
        return "circus"
    on_path = shutil.which("circus")
    return "circus" if on_path is not None and _same_file(argv0, on_path) else argv0


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is not there
        return False


def read_text(path: str) -> str:
    """The text of a file named on the command line (`-` = stdin): a UsageError if it cannot be
    read or is not UTF-8."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(t("cli.cannot_read", path=path, why=exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise UsageError(t("cli.not_utf8", path=path)) from None


def read_backstory(path: str) -> str:
    """A backstory named on the command line: a UsageError naming the file if it holds nothing
    to draft from (before any model is called)."""
    text = read_text(path)
    if not text.strip():
        where = t("cli.stdin") if path == "-" else path
        raise UsageError(t("cli.backstory_file_empty", path=where))
    return text


def user() -> str:
    """Who is at the terminal: the login name, or `director` where there is none."""
    import getpass

    try:
        return getpass.getuser() or "director"
    except Exception:  # no user name in this environment (e.g. a container)
        return "director"

"""Every sentence the terminal shows comes from the catalog: no words written in circus/ itself.

`words_in(source)` finds the string literals of a Python file that a person would read as
words: anything printed, written, raised as an error or given to argparse as help, and any
sentence (two words and a space, or Chinese) anywhere else. Docstrings, log lines, format
specs, file names, argument names, metavars and catalog keys are not words.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CIRCUS = sorted((ROOT / "circus").glob("*.py"))

# A call whose arguments a person reads: printed, written to a stream, raised as an error.
OUTPUT_CALLS = {"print", "print_error", "say", "info", "write", "input"}
OUTPUT_KEYWORDS = {"help", "description", "epilog", "usage"}
LOGGERS = {"log", "logger", "logging"}  # log lines are for whoever reads the logs
NOT_WORDS = {"circus"}  # the program's own name, as in the `circus: …` prefix of every error
WORD = re.compile(r"[^\W\d_]{2,}")
SENTENCE = re.compile(r"[^\W\d_]{2,}[,;:'’]?\s+[^\W\d_]{2,}")
KEY = re.compile(r"[a-z_]+(?:\.[a-z_0-9]*)+")  # a catalog key ("cli.take.saved", "console.")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _receiver(func: ast.expr) -> str:
    return _name(func.value) if isinstance(func, ast.Attribute) else ""


def _is_output(call: ast.Call) -> bool:
    name = _name(call.func)
    return name in OUTPUT_CALLS or name.endswith(("Error", "Exception", "Unavailable"))


def _literal_parts(node: ast.expr) -> Iterator[ast.Constant]:
    """The string constants that end up in the value of `node` as they are (an f-string's
    text, both sides of `+`, both branches of `x if c else y`) — not those inside a call."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.JoinedStr):
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                yield from _literal_parts(value.value)
            else:
                yield from _literal_parts(value)
    elif isinstance(node, ast.BinOp):
        yield from _literal_parts(node.left)
        yield from _literal_parts(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _literal_parts(node.body)
        yield from _literal_parts(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _literal_parts(value)


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _reads_as_words(text: str, output: bool) -> bool:
    if KEY.fullmatch(text):
        return False
    if CJK.search(text):
        return True
    if output:
        return any(word.lower() not in NOT_WORDS for word in WORD.findall(text))
    return SENTENCE.search(text) is not None


def words_in(source: str) -> list[tuple[int, str]]:
    """(line, text) of every literal in `source` that a person would read as words."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    output: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts = [p for a in node.args for p in _literal_parts(a)]
        parts += [p for k in node.keywords for p in _literal_parts(k.value)]
        if _receiver(node.func) in LOGGERS:
            skip.update(id(p) for p in parts)
            continue
        if _is_output(node):
            output.update(id(p) for a in node.args for p in _literal_parts(a))
        for keyword in node.keywords:
            if keyword.arg in OUTPUT_KEYWORDS:
                output.update(id(p) for p in _literal_parts(keyword.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and _reads_as_words(node.value, id(node) in output)
    ]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        # what a person reads: printed, raised, argparse help, a sentence anywhere
        ('print("Saved the take.")', ["Saved the take."]),
        ('print(f"Saved take_{n}.")', ["Saved take_"]),
        ('raise UsageError("interrupted")', ["interrupted"]),
        ('raise argparse.ArgumentTypeError(f"{x} is no number")', [" is no number"]),
        ('p.add_argument("--full", help="print it all")', ["print it all"]),
        ('self.say("Nothing " + ("on" if a else "off"))', ["Nothing ", "on", "off"]),
        ('x = "a sentence kept for later"', ["a sentence kept for later"]),
        ('print("林小姐")', ["林小姐"]),
        ('label = "後台"', ["後台"]),
        # what is not words: catalog keys, format specs, names, files, prefixes, logs, docs
        ('print(t("cli.take.saved", number=n))', []),
        ('p.add_argument("--full", help="cli.arg.take.full")', []),
        ('self.say(say(f"console.{kind}", language))', []),
        ('print(f"{n:>3}  {line}")', []),
        ('p.add_argument("scene", metavar="SCENE_DIR", choices=["show", "edit"])', []),
        ('open(path, "w", encoding="utf-8")', []),
        ('self.out.write("circus> ")', []),
        ('print(f"circus: {exc}")', []),
        ('print(f"{name} → {model}")', []),
        ('logger.warning("cache miss for %s", key)', []),
        ('def f():\n    """A docstring is for readers of the code."""', []),
        ('VERBS = {"run", "cue", "take"}', []),
        ('handler = getattr(self, f"do_{verb}", None)', []),
        ('if text[0] in "@＠": pass', []),
    ],
)
def test_what_reads_as_words(source: str, words: list[str]) -> None:
    assert [text for _, text in words_in(source)] == words


@pytest.mark.parametrize("path", CIRCUS, ids=lambda p: p.name)
def test_circus_writes_no_words_of_its_own(path: Path) -> None:
    """Each sentence the CLI shows is a catalog key (engine/catalog/en.py and zh.py)."""
    found = words_in(path.read_text(encoding="utf-8"))
    assert [f"{path.name}:{line}: {text!r}" for line, text in found] == []


def test_the_parser_reads_the_catalog_the_engine_says() -> None:
    """`circus --help` reads engine/catalog/en.py without importing the engine (it must answer
    at once): the sentences it finds are the engine's own."""
    import subprocess
    import sys

    probe = (
        "import sys, circus.words as w; text = w._catalog();"
        "print(len(text), 'engine' in sys.modules, w.help_text('cli.help.run'), sep='\\n')"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    from engine.catalog import EN

    assert out.stdout.splitlines() == [str(len(EN)), "False", EN["cli.help.run"]]

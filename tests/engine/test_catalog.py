"""The catalog: every fixed sentence exists in every language, with the same blanks, is used,
and one helper (engine.catalog.is_zh) is the only place that decides what language means."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from engine.catalog import CATALOGS, EN, ZH, Phrase, is_zh, lang_of, say
from engine.folder.stage import KINDS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    p
    for folder in ("engine", "bot", "circus")
    for p in sorted((ROOT / folder).rglob("*.py"))
    if p.parent.name != "catalog" or p.name == "__init__.py"
]
OUTSIDE = [p for p in SOURCES if p.parent.name != "catalog"]

# Keys built from a name at run time: key prefix -> the f-string (in engine/, bot/, circus/)
# that builds them. BadName (errors.py) names the kind of name and why it is refused;
# BudgetExceeded its scope; block_line / format_block a stage block's kind; the LABELS tables
# of turns.py, picks.py and stage.py are parsed back in every language.
DYNAMIC = {
    "error.what.": 'f"error.what.{',
    "error.name.": 'f"error.name.{',
    "error.budget.scene": 'f"error.budget.{which}',
    "error.budget.day": 'f"error.budget.{which}',
    "prompt.event": 'f"prompt.{block.kind}"',
    "prompt.opening": 'f"prompt.{block.kind}"',
    "console.event": "f'console.{block.kind}'",
    "console.opening": "f'console.{block.kind}'",
    "label.": 'f"label.{f}"',
    "stage.": 'f"stage.{k}"',
    "report.reason.": 'f"report.reason.{r}"',
    "export.header.": 'f"export.header.{c}"',
    "export.shot.": 'f"export.shot.{s}"',
    "alert.trigger.": 'f"alert.trigger.',  # by the condition's kind, a budget's scope, a stop's why
    "bot.alert.": 'f"alert.{action}"',  # an alert DM's buttons
}
# Wrappers that add a prefix to the key their caller names: t("cut_done") says bot.cut_done.
WRAPPERS = ("bot.stage.", "bot.", "report.", "diff.", "export.", "error.script.")


def blanks(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_every_language_has_the_same_keys():
    assert set(EN) == set(ZH), {
        "only in en": sorted(set(EN) - set(ZH)),
        "only in zh": sorted(set(ZH) - set(EN)),
    }
    assert set(CATALOGS) == {"en", "zh"}


@pytest.mark.parametrize("key", sorted(EN))
def test_every_sentence_has_the_same_blanks_and_fills_in_every_language(key):
    assert EN[key] and ZH[key]
    assert blanks(EN[key]) == blanks(ZH[key])
    values = {name: 1 for name in blanks(EN[key])}  # a number fills {n:,} and {n!r} alike
    for language in CATALOGS:
        say(key, language, **values)  # no stray brace, no positional blank


@pytest.mark.parametrize(
    "language, zh",
    [("zh", True), ("zh-TW", True), ("ZH-cn", True), ("zh_Hant", True), ("en", False),
     ("en-US", False), ("fr", False), ("", False), (None, False), ("chinese", False)],
)  # fmt: skip
def test_one_rule_decides_the_language(language, zh):
    assert is_zh(language) is zh
    assert lang_of(language) == ("zh" if zh else "en")


def test_a_phrase_and_a_list_are_said_in_the_language_of_the_sentence_around_them():
    cast = Phrase("error.unknown_actor", name="X", cast=("律師", "刑警"))
    assert cast.render("zh-TW") == "這場戲沒有叫「X」的角色——在場的是 律師、刑警。"
    assert cast.render("en") == "No actor called X in this scene — the cast is 律師, 刑警."
    nested = say("error.turn_not_found", "zh", take=2, turn=9, have=Phrase("error.no_turns_yet"))
    assert nested == "排演 2 有還沒有任何一輪；沒有第 9 輪——什麼都沒改。"


def test_a_missing_key_is_a_bug_not_a_silent_fallback():
    with pytest.raises(KeyError):
        say("no.such.key", "en")


def test_nothing_outside_the_catalog_decides_what_zh_means():
    rule = re.compile(r"""startswith\(\s*["']zh|[=!]=\s*["']zh["']|["']zh["']\s*[=!]=""")
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in OUTSIDE
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if rule.search(line)
    ]
    assert found == []


def test_every_key_is_said_somewhere():
    text = "\n".join(p.read_text(encoding="utf-8") for p in SOURCES)
    quoted = set(re.findall(r"""["']([\w.]+)["']""", text))

    def used(key: str) -> bool:
        if key in quoted:
            return True
        if key.startswith("bot.stage.") and key.removeprefix("bot.stage.") in KINDS:
            return True  # a stage event's kind names its line
        for wrapper in WRAPPERS:
            if key.startswith(wrapper) and key.removeprefix(wrapper) in quoted:
                return True
        family = next((f for f in DYNAMIC if key.startswith(f)), None)
        return family is not None and DYNAMIC[family] in text

    assert [k for k in sorted(EN) if not used(k)] == []


def test_every_error_raised_names_a_catalog_key_and_writes_no_sentence_of_its_own():
    import ast

    from engine import errors

    classes = {
        name
        for name, obj in vars(errors).items()
        if isinstance(obj, type) and issubclass(obj, errors.CircusError)
    }
    key_at = {"CircusError": 0, "BadRequest": 0, "BadSceneFile": 1, "BadName": 2, "BadScript": 0}
    prefix = {"BadName": "error.name.", "BadScript": "error.script."}
    cjk = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
    problems = []
    for path in OUTSIDE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name not in classes:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno} {name}"
            args = [*node.args, *(k.value for k in node.keywords)]
            for text in (n for a in args for n in ast.walk(a) if isinstance(n, ast.Constant)):
                if isinstance(text.value, str) and cjk.search(text.value):
                    problems.append(f"{where}: a sentence of its own: {text.value!r}")
            at = key_at.get(name)
            if at is None or len(node.args) <= at:
                continue
            key = node.args[at]
            if isinstance(key, ast.JoinedStr):
                problems.append(f"{where}: an f-string where a catalog key belongs")
            elif isinstance(key, ast.Constant) and prefix.get(name, "") + key.value not in EN:
                problems.append(f"{where}: {key.value!r} is not in the catalog")
    assert problems == []

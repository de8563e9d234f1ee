"""The HELD-OUT reply corpus (tests/fixtures/replies/heldout.yaml), written blind of the reader.

Each case: no secret word from a private part in a public field (action, dialogue, cue): a hard
failure, never xfailed. Then exactness: the public fields equal `expect` (or the reader asks for a
repair when `repair: true`); a case with `known_gap` is xfail(strict=True).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.reply.read import parse_reply

CORPUS = Path(__file__).parents[1] / "fixtures" / "replies" / "heldout.yaml"
DATA = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
CASES = DATA["cases"]
PUBLIC = ("action", "dialogue", "cue")


def _read(case: dict):
    lang = case["lang"]
    cast = {name: tuple(aliases) for name, aliases in DATA["cast"][lang].items()}
    return parse_reply(case["reply"], speaker=DATA["speaker"][lang], cast=cast)


def _id(case: dict) -> str:
    return f"{case['lang']}:{case['style']}"


def leaks(case: dict, reply) -> list[str]:
    """Secret words found in a public field of `reply`."""
    found = []
    for secret in case.get("secrets") or ():
        for field in PUBLIC:
            if secret.lower() in (getattr(reply, field) or "").lower():
                found.append(f"{secret!r} in {field}")
    return found


def exact(case: dict, reply) -> list[str]:
    """How `reply` differs from what the case means (empty: exactly as meant)."""
    if case.get("repair"):
        return [] if reply.problems else ["no repair asked"]
    misses = []
    if reply.problems:
        misses.append(f"problems {reply.problems}")
    expect = case.get("expect") or {}
    for field in PUBLIC:
        want, got = expect.get(field, "") or "", getattr(reply, field) or ""
        if got != want:
            misses.append(f"{field}: {got!r} != {want!r}")
    if case.get("thought") and case["thought"] not in (reply.thought or ""):
        misses.append(f"thought lacks {case['thought']!r}")
    if case.get("others") and not reply.wrote_for_others:
        misses.append("wrote_for_others not flagged")
    return misses


def test_heldout_size() -> None:
    assert len(CASES) >= 60
    assert sum(1 for c in CASES if c.get("secrets")) >= 25
    assert {c["lang"] for c in CASES} == {"en", "zh"}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_heldout_no_leak(case: dict) -> None:
    assert leaks(case, _read(case)) == []


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c["known_gap"]))
        if c.get("known_gap")
        else c
        for c in CASES
    ],
    ids=_id,
)
def test_heldout_exact(case: dict) -> None:
    assert exact(case, _read(case)) == []


# Probes written AFTER reading the reader (not held out): private asides in styles the held-out
# pass suggested, each a leak before the fix. (reply, secret, public dialogue or action expected)
_EN = {"Alice": ("Al", "Ms. Hart"), "Bob": ("Robert",), "Carol": ()}
_ZH = {"林小姐": ("林", "林曉雯"), "刑警": ("王警官",), "律師": ("張律師",)}
PROBES = [
    ("en", "<dialogue>Hello. *thinks: the heir is me*</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hello. (OOC: Alice is the heir)</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hello. [OOC: Alice is the heir]</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hello. (internally: the heir)</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hello. (privately: the heir)</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hi. <internal_thought>the heir</internal_thought></dialogue>", "heir", "Hi."),
    ("en", "<dialogue>Hello. (Alice thinks: the heir)</dialogue>", "heir", "Hello."),
    ("en", "<dialogue>Hi. (She thinks to herself that she is the heir.)</dialogue>", "heir", "Hi."),
    ("en", "<dialogue>He thinks I did it. Do you think so?</dialogue>", "", "He thinks I did it. Do you think so?"),
    ("zh", "<dialogue>你好。（心裡想：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>你好。（心裏想：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>你好。（暗想：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>你好。（心中暗想：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>你好。（OOC：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>你好。（潛台詞：我是繼承人）</dialogue>", "繼承人", "你好。"),
    ("zh", "<dialogue>我想你誤會了。你心裡有數。（低聲）走吧。</dialogue>", "", "我想你誤會了。你心裡有數。（低聲）走吧。"),
    ("zh", "<action>林小姐微笑，心裡暗想：我是繼承人。</action><dialogue>好。</dialogue>", "繼承人", "好。"),
]  # fmt: skip


@pytest.mark.parametrize("lang, text, secret, dialogue", PROBES)
def test_private_asides_found_after_the_heldout_pass(lang, text, secret, dialogue) -> None:
    speaker, cast = ("Alice", _EN) if lang == "en" else ("林小姐", _ZH)
    reply = parse_reply("<thought>t</thought>" + text, speaker=speaker, cast=cast)
    public = f"{reply.action}|{reply.dialogue}|{reply.cue}"
    assert reply.ok and reply.dialogue == dialogue
    assert not secret or (secret not in public and secret in reply.thought)


@pytest.mark.parametrize(
    "lang, text, secret, public",
    [
        ("en", "Alice is the heir. Draft: <dialogue>I'm the heir</dialogue> no.\n</think>\n"
               "<thought>t</thought><dialogue>Hello.</dialogue>", "heir", ("", "Hello.", "")),
        ("en", "<thought>t</thought><dialogue>Hello.</dialogue><cue>Bob — he doesn't know she is"
               " the heir</cue>", "heir", ("", "Hello.", "Bob")),
        ("en", "Thought: t\nDialogue: Hello.\nCue: Bob, because he suspects the heir", "heir",
               ("", "Hello.", "Bob")),
        ("zh", "想法：t\n台詞：你好。\n下一位：刑警，因為他懷疑我是繼承人", "繼承人", ("", "你好。", "刑警")),
        ("zh", "林小姐是繼承人，不能說。\n</think>\n\n想法：t\n台詞：你好。", "繼承人", ("", "你好。", "")),
        # a section besides the four fields is the model's note: private, to the next label
        ("en", "**Thought:** t\n**Dialogue:** Hello.\n**Subtext:** she is the heir.\n**Cue:** Bob", "heir",
               ("", "Hello.", "Bob")),
        ("en", "**Thought:** t\n**Action:** Alice sits.\n**Emotion:** fear of the heir\n**Dialogue:** Hi.",
               "heir", ("Alice sits.", "Hi.", "")),
        ("en", "Thought: t\nDialogue: Hello.\nNotes: Alice is the heir", "heir", ("", "Hello.", "")),
        ("en", "<thought>t</thought><dialogue>Hi. (Motivation: hide the heir)</dialogue>", "heir",
               ("", "Hi.", "")),
        ("en", "<thought>t</thought><dialogue>Hi. <subtext>the heir</subtext></dialogue>", "heir",
               ("", "Hi.", "")),
        ("zh", "想法：t\n台詞：你好。\n動機：隱瞞自己是繼承人\n下一位：刑警", "繼承人", ("", "你好。", "刑警")),
        ("zh", "想法：t\n台詞：你好。\n備註：林小姐是繼承人", "繼承人", ("", "你好。", "")),
        ("zh", "<thought>t</thought><dialogue>你好。（動機：隱瞞繼承人身份）</dialogue>", "繼承人", ("", "你好。", "")),
    ],
)  # fmt: skip
def test_unopened_thinking_and_cue_reasons_found_after_the_heldout_pass(
    lang, text, secret, public
) -> None:
    speaker, cast = ("Alice", _EN) if lang == "en" else ("林小姐", _ZH)
    reply = parse_reply(text, speaker=speaker, cast=cast)
    assert reply.ok and (reply.action, reply.dialogue, reply.cue) == public
    assert secret in reply.thought

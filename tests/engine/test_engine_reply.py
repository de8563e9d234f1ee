"""Reading actors' replies: what a well-behaved and a badly-behaved model produce."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.folder.sanitize import clean_text
from engine.reply.private import has_private
from engine.reply.read import parse_reply, says_nothing

WELL_FORMED = "<thought>他在說謊。</thought>\n<action>拍桌子</action>\n<dialogue>「說！」</dialogue>\n<cue>律師</cue>"


@pytest.mark.parametrize(
    "text, thought, action, dialogue, cue",
    [
        (WELL_FORMED, "他在說謊。", "拍桌子", "「說！」", "律師"),
        # missing closing tags: a field ends where the next one opens
        (
            "<thought>想逃<action>站起來<dialogue>我要走了<cue>刑警",
            "想逃",
            "站起來",
            "我要走了",
            "刑警",
        ),
        # code fences and stray prose around the tags
        (
            "Sure! Here is my turn:\n```xml\n<thought>t</thought><dialogue>d</dialogue><cue>ANY</cue>\n```\nHope this helps.",
            "t",
            "",
            "d",
            "ANY",
        ),
        # upper case and near-miss names
        (
            "<THOUGHT>t</THOUGHT><Actions>a</Actions><dialog>d</dialog><cue></cue>",
            "t",
            "a",
            "d",
            "",
        ),
        # silence is an action; cue may be absent
        ("<thought>不說</thought><action>沉默地搖頭</action>", "不說", "沉默地搖頭", "", ""),
        # a private tag inside a public field is private, closed or not
        (
            "<thought>t</thought><dialogue>你寫的 <thought> 標籤是什麼意思？</dialogue><cue>律師</cue>",
            "t\n標籤是什麼意思？",
            "",
            "你寫的",
            "律師",
        ),
        # other tag-like text inside a closed dialogue stays dialogue
        (
            "<thought>t</thought><dialogue>他說「<cue>刑警</cue>」是暗號</dialogue><cue>律師</cue>",
            "t",
            "",
            "他說「<cue>刑警</cue>」是暗號",
            "律師",
        ),
        # self-closing empty cue
        ("<thought>t</thought><action>a</action><cue/>", "t", "a", "", ""),
        # whitespace inside tags, multi-line fields keep their lines
        (
            "< thought >一\n二 </ thought ><dialogue>\n  第一行\n第二行\n</dialogue>",
            "一\n二",
            "",
            "第一行\n第二行",
            "",
        ),
        # a second thought block is kept with the first
        ("<thought>a</thought><action>x</action><thought>b</thought>", "a\nb", "x", "", ""),
    ],
)
def test_fields_are_read_from_tolerant_input(text, thought, action, dialogue, cue):
    reply = parse_reply(text)
    assert (reply.thought, reply.action, reply.dialogue, reply.cue) == (
        thought,
        action,
        dialogue,
        cue,
    )


@pytest.mark.parametrize(
    "text, problem",
    [
        ("I'd rather just talk.", "none of the tags"),
        ("<action>a</action><cue>X</cue>", "<thought> is missing"),
        ("<thought>only thinking</thought><cue>X</cue>", "both <action> and <dialogue>"),
        ("", "none of the tags"),
    ],
)
def test_problems_are_named_for_the_repair_prompt(text, problem):
    reply = parse_reply(text)
    assert not reply.ok
    assert any(problem in p for p in reply.problems)


def test_prose_after_an_unclosed_public_field_is_not_published():
    reply = parse_reply(
        "<thought>t</thought><dialogue>「我那天不在。」\n\n（註：林小姐其實在現場，她在隱瞞。）"
    )
    assert reply.dialogue == "「我那天不在。」"
    assert reply.ok


def test_untagged_prose_is_never_published():
    reply = parse_reply(
        "As the character I secretly plan to lie. <thought>t</thought><dialogue>hi</dialogue>"
    )
    assert "secretly" not in reply.dialogue + reply.action + reply.cue


safe_text = (
    st.text(
        # controls, line separators and format characters are sanitised away; brackets may open
        # a private aside; both have their own tests in test_trust_output.py
        alphabet=st.characters(
            blacklist_characters="<>([（【",
            blacklist_categories=("Cs", "Cc", "Cf", "Cn", "Zl", "Zp"),
        ),
        min_size=1,
    )
    .map(str.strip)
    .filter(bool)
    .filter(lambda s: not has_private(s))  # "OS:", "想法：": private labels have their tests
    .filter(lambda s: not says_nothing(s))  # "None", `""`: no line, tested in the corpus
)


@given(safe_text, safe_text, safe_text, st.sampled_from(["林小姐", "ANY", ""]))
def test_any_well_formed_reply_parses_back_to_its_fields(thought, action, dialogue, cue):
    text = f"<thought>{thought}</thought><action>{action}</action><dialogue>{dialogue}</dialogue><cue>{cue}</cue>"
    reply = parse_reply(text)
    clean = lambda s: "\n".join(line.rstrip() for line in s.strip().split("\n")).strip()  # noqa: E731
    assert reply.ok
    assert (reply.thought, reply.action, reply.dialogue, reply.cue) == (
        clean(thought),
        clean(action),
        clean(dialogue),
        cue,
    )


@given(st.text())
def test_anything_said_inside_a_closed_dialogue_stays_dialogue(text):
    reply = parse_reply(f"<thought>t</thought><dialogue>{text}</dialogue>")
    lowered = text.lower().replace(" ", "")
    # Tags and brackets may be private markers (moved to the thought), and a leading *gesture*
    # is the line's action ("*leans back* Well…"); those have their tests.
    if (
        not any(tag in lowered for tag in ("<", "(", "（", "【", "[", "*"))
        and not has_private(text)
        and not says_nothing(clean_text(text))  # "None", `""`: no line, tested in the corpus
    ):
        said = clean_text(text)
        clean = "\n".join(line.rstrip() for line in said.strip().split("\n")).strip()
        assert reply.thought == "t"
        assert reply.dialogue == clean

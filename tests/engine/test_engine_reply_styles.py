"""Reading the styles models drift into: labels, headings, script lines,
JSON, tag attributes; lines written for others cut off; private labels kept private; the stage
manager's pick in prose, markdown or JSON. Every style in English and Chinese."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.reply.read import CAPS, MAX_REPLY_CHARS, parse_reply
from engine.turn.casting import read_stage_manager

EN = {"Alice": ("Al",), "Bob": ("Robert",), "Carol": ()}
ZH = {"林小姐": ("林", "林曉雯"), "刑警": ("王警官",), "律師": ("張律師",)}


def en(text: str):
    return parse_reply(text, speaker="Alice", cast=EN)


def zh(text: str):
    return parse_reply(text, speaker="林小姐", cast=ZH)


def fields(reply) -> tuple[str, str, str, str]:
    return reply.thought, reply.action, reply.dialogue, reply.cue


# ----------------------------------------------------------------------------- styles


@pytest.mark.parametrize(
    "read, text, expected",
    [
        # markdown bold, italics, plain labels, headings, bracketed labels
        (en, "**Thought:** t\n**Action:** nods\n**Dialogue:** Hi.\n**Cue:** Bob", ("t", "nods", "Hi.", "Bob")),
        (zh, "**想法：** 想\n**動作：** 點頭\n**台詞：** 「好。」\n**丟球：** 刑警", ("想", "點頭", "「好。」", "刑警")),
        (en, "*Thought*: t\n*Dialogue*: Hi.\n*Cue*: ANY", ("t", "", "Hi.", "ANY")),
        (zh, "*內心*：想\n*對白*：「好。」\n*下一位*：律師", ("想", "", "「好。」", "律師")),
        (en, "Thought: t\nAction: *sits*\nDialogue: Hi.\nNext: Carol", ("t", "sits", "Hi.", "Carol")),
        (zh, "想法：想\n动作：坐下\n台词：「好。」\n丢球：律師", ("想", "坐下", "「好。」", "律師")),
        (en, "### Thought\nt\n\n### Dialogue\nHi.\n\n### Cue\nBob", ("t", "", "Hi.", "Bob")),
        (zh, "### 想法\n想\n\n### 台詞\n「好。」\n\n### 丟球\n刑警", ("想", "", "「好。」", "刑警")),
        (en, "[Thought] t\n[Dialogue] Hi.", ("t", "", "Hi.", "")),
        (zh, "【內心】想\n【台詞】「好。」\n【下一位】刑警", ("想", "", "「好。」", "刑警")),
        # JSON: fenced, bare among prose, sloppy, Chinese keys, lists, under the speaker's name
        (en, '```json\n{"thought": "t", "action": "", "dialogue": "Hi.", "cue": "Bob"}\n```', ("t", "", "Hi.", "Bob")),
        (zh, 'Here: {"thought": "想", "dialogue": "「好。」", "cue": "刑警"} done', ("想", "", "「好。」", "刑警")),
        (en, "{“thought”: “t”, “dialogue”: “He said “no”.”, “cue”: “Bob”,}", ("t", "", "He said “no”.", "Bob")),
        (en, "{'thought': 't', 'dialogue': 'Hi.',}", ("t", "", "Hi.", "")),
        (zh, '{"想法": "想", "動作": "點頭", "台詞": "「好。」", "丟球": "律師"}', ("想", "點頭", "「好。」", "律師")),
        (en, '{"thought": ["a", "b"], "dialogue": ["Hi.", "Bye."]}', ("a\nb", "", "Hi.\nBye.", "")),
        (zh, '{"林小姐": {"thought": "想", "dialogue": "「好。」"}}', ("想", "", "「好。」", "")),
        # tags with attributes, any case, self-closing
        (en, '<thought mood="calm">t</thought><DIALOGUE speaker="Alice">Hi.</DIALOGUE><cue/>', ("t", "", "Hi.", "")),
        (zh, '<Thought lang="zh">想</Thought><dialogue speaker="林小姐">「好。」</dialogue>', ("想", "", "「好。」", "")),
        # the speaker's own name or alias before the line is removed
        (en, "<thought>t</thought><dialogue>Alice: Hello.</dialogue>", ("t", "", "Hello.", "")),
        (en, "Thought: t\n**Al:** Hello.", ("t", "", "Hello.", "")),
        (zh, "<thought>想</thought><dialogue>林小姐：「你好。」</dialogue>", ("想", "", "「你好。」", "")),
        (zh, "想法：想\n林曉雯：「你好。」", ("想", "", "「你好。」", "")),
        (en, "Thought: t\nAlice: *leans in* I know.", ("t", "leans in", "I know.", "")),
        # a reasoning block before the answer is private; the answer is read in its own style
        (en, '<think>plan</think>\n{"thought": "t", "dialogue": "Hi."}', ("plan\nt", "", "Hi.", "")),
        (zh, "<analysis>分析</analysis>\n想法：想\n台詞：「好。」", ("分析\n想", "", "「好。」", "")),
    ],
)  # fmt: skip
def test_every_common_style_is_read_without_a_repair(read, text, expected):
    reply = read(text)
    assert reply.ok, reply.problems
    assert fields(reply) == expected
    assert not reply.wrote_for_others


def test_the_json_the_cache_helper_asks_for_reads_perfectly():
    reply = en(json.dumps({"thought": "他在說謊", "action": "", "dialogue": "Hi.", "cue": "Bob"}))
    assert fields(reply) == ("他在說謊", "", "Hi.", "Bob") and reply.ok and reply.has_cue


@pytest.mark.parametrize(
    "text",
    [
        "I was home all night, though secretly I was at the docks.",
        "林小姐說她那天在家。",
        "Dialogue",  # a word, not a label
        "Sure! Let me know if you want another take.",
        "",
    ],
)
def test_a_reply_with_no_structure_still_gets_the_repair_prompt(text):
    reply = en(text)
    assert not reply.ok and (reply.action, reply.dialogue, reply.cue) == ("", "", "")


def test_prose_around_labels_is_never_published():
    reply = en("Here is Alice's turn!\n\nThought: t\nDialogue: Hi.\n\nI hope this fits the scene.")
    assert (reply.dialogue, reply.action) == ("Hi.", "")


# ----------------------------------------------------------------------------- lines for others


@pytest.mark.parametrize(
    "read, text, kept",
    [
        (en, "<thought>t</thought><dialogue>Where were you?\nBob: Home. OTHER</dialogue><cue>Bob</cue>", "Where were you?"),
        (zh, "<thought>想</thought><dialogue>「你在哪？」\n刑警：「家裡。」OTHER</dialogue><cue>刑警</cue>", "「你在哪？」"),
        (en, "Thought: t\nDialogue: Well?\nRobert: Fine. OTHER", "Well?"),
        (zh, "想法：想\n台詞：「說吧。」\n王警官：「好。」OTHER", "「說吧。」"),
        (en, "Thought: t\n**Alice:** Well?\n**Bob:** OTHER", "Well?"),
        (zh, "想法：想\n**林小姐：**「說吧。」\n**律師：** OTHER", "「說吧。」"),
        (en, "<thought>t</thought><dialogue>Go.</dialogue><cue>Bob</cue>\n<thought>u</thought><dialogue>OTHER</dialogue>", "Go."),
        (zh, "<thought>想</thought><dialogue>「請。」</dialogue><cue>刑警</cue>\n\n刑警：\n<dialogue>OTHER</dialogue>", "「請。」"),
        (en, '<thought>t</thought><dialogue speaker="Alice">Go.</dialogue><dialogue speaker="Bob">OTHER</dialogue>', "Go."),
        (en, '[{"thought": "t", "dialogue": "Go."}, {"speaker": "Bob", "dialogue": "OTHER"}]', "Go."),
        (zh, '{"林小姐": {"thought": "想", "dialogue": "「請。」"}, "律師": {"dialogue": "OTHER"}}', "「請。」"),
        (en, "<thought>t</thought><action>waits\n[12] Carol: (Action) OTHER</action><dialogue>So?</dialogue>", "So?"),
    ],
)  # fmt: skip
def test_a_line_written_for_another_character_is_cut_off_and_flagged(read, text, kept):
    reply = read(text)
    assert "OTHER" not in reply.action + reply.dialogue + reply.cue
    assert kept in reply.dialogue
    assert reply.wrote_for_others


def test_without_a_cast_nothing_is_cut_for_others():
    reply = parse_reply("<thought>t</thought><dialogue>Bob: hi</dialogue>")
    assert reply.dialogue == "Bob: hi" and not reply.wrote_for_others


# ----------------------------------------------------------------------------- private text


@pytest.mark.parametrize(
    "read, text",
    [
        (en, "<thought>t</thought><dialogue>Hi. Thought: SECRET</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi.\nThinking: SECRET</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. **Inner monologue:** SECRET</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. (thinking: SECRET) ok</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. (thinking) SECRET</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. [reasoning: SECRET] ok</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. <analysis>SECRET</analysis> ok</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. <privatenote>SECRET</privatenote></dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. <scratchpad>SECRET</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. <note-to-self>SECRET</note-to-self></dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. (notes to self: SECRET)</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. <thinking: SECRET> ok</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi. (Note: SECRET)</dialogue>"),
        (en, "<thought>t</thought><dialogue>Hi.\nReasoning: SECRET</dialogue>"),
        (en, "Thought: t\nDialogue: Hi. (thinking: SECRET)"),
        (en, "Thought: t\nAlice: (thinking) SECRET"),
        (en, '{"thought": "t", "dialogue": "Hi. Thought: SECRET"}'),
        (en, '{"thought": "t", "dialogue": "Hi.", "reasoning": "SECRET", "mood": "SECRET"}'),
        (en, '{"thought": {"plan": {"dialogue": "SECRET"}}, "dialogue": "Hi."}'),
        (zh, "<thought>想</thought><dialogue>「好。」内心OS：SECRET</dialogue>"),
        (zh, "<thought>想</thought><dialogue>「好。」OS：SECRET</dialogue>"),
        (zh, "<thought>想</thought><dialogue>「好。」（內心：SECRET）「走。」</dialogue>"),
        (zh, "<thought>想</thought><dialogue>「好。」【內心】SECRET</dialogue>"),
        (zh, "<thought>想</thought><dialogue>「好。」（思考：SECRET）</dialogue>"),
        (zh, "<thought>想</thought><dialogue>「好。」（註：SECRET）</dialogue>"),
        (zh, "<thought>想</thought><action>點頭<reasoning>SECRET</reasoning></action>"),
        (zh, "想法：想\n台詞：「好。」內心：SECRET"),
        (zh, '{"想法": "想", "台詞": "「好。」内心OS：SECRET"}'),
    ],
)
def test_whatever_is_labelled_private_stays_private_in_every_style(read, text):
    reply = read(text)
    assert "SECRET" not in reply.action + reply.dialogue + reply.cue
    if "mood" not in text and '"plan"' not in text:
        assert "SECRET" in reply.thought


# ----------------------------------------------------------------------------- bad JSON


@pytest.mark.parametrize(
    "text, dialogue, ok",
    [
        ('{"thought": 42, "action": null, "dialogue": {"text": "SECRET"}, "cue": true}', "", False),
        ('{"thought": "t", "dialogue": [1, {"x": "SECRET"}, "Hi."]}', "Hi.", True),
        ('{"thought": "t", "dialogue": 3.5, "action": "sits"}', "", True),
        ('{"thought": null, "dialogue": null, "cue": null}', "", False),
        ('{"thought": "t", "dialogue": "Hi.", "dialogue": "SECRET"}', "Hi.", True),  # first wins
        ('{"thought": "t", "dialogue": "cut off mid', "cut off mid", True),
        ('{"thought": "t", "dialogue": "\\u0000Hi\\u202e."}', "Hi.", True),  # escapes sanitised
        ('{"a": ' * 200 + '{"dialogue": "SECRET"}' + "}" * 200, "", False),  # a nesting bomb
        ("[" * 5000 + "]" * 5000, "", False),
        ('{"thought": "t" "dialogue": "Hi."}', "Hi.", True),  # a missing comma
        ("{not json at all}", "", False),
        ("42", "", False),
        ('"just a string"', "", False),
    ],
)
def test_bad_json_reads_what_is_safe_and_repairs_the_rest(text, dialogue, ok):
    reply = en(text)
    assert "SECRET" not in reply.action + reply.dialogue + reply.cue
    assert reply.dialogue == dialogue and reply.ok is ok


def test_a_five_megabyte_json_string_is_cut_at_the_caps():
    reply = en('{"thought": "t", "dialogue": "' + "話" * 5_000_000 + '"}')
    assert len(reply.dialogue) <= CAPS["dialogue"] and {"reply", "dialogue"} <= set(reply.cut)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from(["thought", "reasoning", "想法", "inner_monologue"]))
def test_any_json_reads_without_a_traceback_and_never_publishes_a_private_field(value, key):
    reply = en(json.dumps({key: {"x": ["SECRET", value]}, "dialogue": value}, ensure_ascii=False))
    assert "SECRET" not in reply.action + reply.dialogue + reply.cue


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="{}[]\":,“”'\\ ntrue0", max_size=200))
def test_json_like_noise_never_raises(text):
    reply = en(text)
    assert len(reply.dialogue) <= CAPS["dialogue"] and len(text) <= MAX_REPLY_CHARS


# ----------------------------------------------------------------------------- the stage manager


@pytest.mark.parametrize(
    "cast, answer, expected",
    [
        (EN, "**Bob** should speak next, because Alice asked him.", ("Bob", "")),
        (EN, "Next: Bob", ("Bob", "")),
        (EN, "**Next:** Robert\n**Reason:** he was asked", ("Bob", "he was asked")),
        (EN, "### Next speaker\nCarol\n\n### Reason\nquiet", ("Carol", "")),
        (EN, '{"next": "Bob", "reason": "He was asked."}', ("Bob", "He was asked.")),
        (EN, '```json\n{"next": "Carol", "reason": "quiet"}\n```', ("Carol", "quiet")),
        (EN, "Alice asked Bob a direct question, so Bob should answer.", ("Bob", "")),
        (EN, "<think>Alice or Carol?</think>\nNEXT: Bob", ("Bob", "")),
        (EN, "Alice and Bob both could.", (None, "")),
        (EN, '{"next": "ANY"}', (None, "")),
        (EN, '{"next": 3, "reason": "x"}', (None, "")),
        (EN, "NEXT: Dave\nAlice might also do.", (None, "")),  # a label naming nobody: re-ask
        (EN, '{"next": "Dave", "reason": "Bob is busy"}', (None, "Bob is busy")),
        (ZH, "下一位：林小姐\n理由：她被點名", ("林小姐", "她被點名")),
        (ZH, "**律師**應該接話，因為刑警剛指控了他。", ("律師", "")),
        (ZH, "我覺得應該由刑警回應，因為林小姐剛剛指控了他。", ("刑警", "")),
        (ZH, '{"next": "張律師", "reason": "被問到了"}', ("律師", "被問到了")),
        (ZH, "### 下一位\n王警官", ("刑警", "")),
    ],
)
def test_the_stage_managers_pick_is_read_from_prose_markdown_and_json(cast, answer, expected):
    assert read_stage_manager(answer, cast) == expected


@pytest.mark.parametrize(
    "read, text, expected",
    [
        # fields in another order are one turn, not a second block
        (en, "Cue: Bob\nThought: t\nDialogue: Hi.", ("t", "", "Hi.", "Bob")),
        (zh, "丟球：刑警\n想法：想\n台詞：「好。」", ("想", "", "「好。」", "刑警")),
        # a cue that names nobody is the model's note: private, the stage manager decides
        (en, "Thought: t\nNext: make him confess.\nDialogue: Hi.", ("t\nmake him confess.", "", "Hi.", "")),
        (zh, "想法：想\n下一位：讓他先認罪\n台詞：「好。」", ("想\n讓他先認罪", "", "「好。」", "")),
        # the cue is the name it gives: an at-sign, a repeated label or a description is dropped
        (en, "<thought>t</thought><dialogue>Hi.</dialogue><cue>@Robert</cue>", ("t", "", "Hi.", "Robert")),
        (en, "<thought>t</thought><dialogue>Hi.</dialogue><cue>Next: Bob (the detective)</cue>", ("t\nthe detective", "", "Hi.", "Bob")),
        (zh, "<thought>想</thought><dialogue>好。</dialogue><cue>下一位：刑警（王警官）</cue>", ("想\n王警官", "", "好。", "刑警")),
        # a reason after the cued name is the model's note, which may give a secret away: private
        (en, "Thought: t\nDialogue: Hi.\nCue: Bob, because he suspects the will", ("t\nbecause he suspects the will", "", "Hi.", "Bob")),
        (zh, "想法：想\n台詞：好。\n下一位：刑警，因為他懷疑我", ("想\n因為他懷疑我", "", "好。", "刑警")),
    ],
)  # fmt: skip
def test_a_cue_is_a_name_wherever_it_stands(read, text, expected):
    reply = read(text)
    assert reply.ok and fields(reply) == expected and not reply.wrote_for_others


@pytest.mark.parametrize(
    "aside",
    [
        "【scratchpad】SECRET", "<notes to self: SECRET>", "（推理：SECRET）", "[note to self: SECRET]",
        "(Notes to self) SECRET", "【分析】SECRET", "<Analysis>SECRET", "[Scratchpad: SECRET]",
        "(reasoning) SECRET", "(analysis: SECRET)", "(private note: SECRET)",
        "<private-note>SECRET</private-note>", "<note_to_self>SECRET</note_to_self>",
        "（心裡話：SECRET）", "【OS】SECRET", "(OS) SECRET",
    ],
)  # fmt: skip
def test_reasoning_scratchpads_and_notes_to_self_in_any_bracket_are_private(aside):
    reply = en(f"<thought>t</thought><dialogue>Hi. {aside} ok</dialogue>")
    assert "SECRET" not in reply.dialogue and reply.dialogue.startswith("Hi.")
    assert "  " not in reply.dialogue


# ----------------------------------------------------------------------------- quoted lines

QUOTED_LINES = [
    # (the spoken line as the model wrote it, the line as it lands)
    ('"Try again."', "Try again."),  # straight quotes
    ("“Try again.”", "Try again."),  # curly quotes
    ("＂再說一次。＂", "再說一次。"),  # full-width straight quotes
    ("«Encore.»", "Encore."),
    ("「你問完了嗎？」", "「你問完了嗎？」"),  # Chinese dialogue is written in 「」: kept
    ("『好。』", "『好。』"),
    ("\"I'm not — I wasn't there.\"", "I'm not — I wasn't there."),  # apostrophes stay
    ("“He said ‘never’, didn’t he?”", "He said ‘never’, didn’t he?"),  # inner quotes stay
    ('"Go," she says. "Now."', '"Go," she says. "Now."'),  # two quotes: as written
    ('"Fine." She turns away.', '"Fine." She turns away.'),  # only partly quoted
    ('He calls it "a misunderstanding".', 'He calls it "a misunderstanding".'),
    ("'Try again.'", "'Try again.'"),  # single quotes cannot be told from apostrophes
    ('"I know.\nI always knew."', "I know.\nI always knew."),  # one quote over two lines
    ('"I know."\n"I always knew."', "I know.\nI always knew."),  # each line its own quote
    ('"I know."\nShe pauses.', '"I know."\nShe pauses.'),  # a line not quoted: as written
    ('""', ""),  # nothing inside: no line at all
]


def styles_of(line: str) -> dict[str, str]:
    """The same spoken line in the styles hosted models write."""
    return {
        "tags": f"<thought>t</thought><dialogue>{line}</dialogue><cue>Bob</cue>",
        "bold labels": f"**Thought:** t\n**Dialogue:** {line}\n**Cue:** Bob",
        "plain labels": f"Thought: t\nDialogue: {line}\nCue: Bob",
        "headings": f"### Thought\nt\n\n### Dialogue\n{line}\n\n### Cue\nBob",
        "json": json.dumps({"thought": "t", "dialogue": line, "cue": "Bob"}, ensure_ascii=False),
    }


@pytest.mark.parametrize(("written", "lands"), QUOTED_LINES)
def test_a_quoted_line_lands_the_same_in_every_style(written: str, lands: str) -> None:
    got = {style: en(reply).dialogue for style, reply in styles_of(written).items()}
    assert got == dict.fromkeys(got, lands)


def test_a_gesture_before_a_quoted_line_acts_and_the_line_loses_its_quotes() -> None:
    reply = en('**Thought:** t\n**Dialogue:** *leans in* "I know what you did."')
    assert (reply.action, reply.dialogue) == ("leans in", "I know what you did.")

"""The scene folder's formats: readable markdown that round-trips exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import BadName, BadSceneFile
from engine.folder import frontmatter
from engine.folder.names import check_name, check_unique
from engine.folder.soul import (
    bio_part,
    inside_a_part,
    missing_parts,
    prior_story,
    replace_prior_story,
)
from engine.folder.turns import (
    Turn,
    parse_backstage,
    parse_transcript,
    recorded_cue,
    render_thought,
    render_turn,
)
from engine.folder.whispers import add_note, empty_notes, parse_notes

CAST = ["林小姐", "刑警", "律師"]


def test_a_turn_reads_like_a_script_page():
    turn = Turn(3, "林小姐", "她把咖啡杯推開。", "「你們到底想問什麼？」", "刑警")
    assert render_turn(turn) == (
        "## 3 · 林小姐\n**動作**: 她把咖啡杯推開。\n**台詞**: 「你們到底想問什麼？」\n**cue**: 刑警\n\n"
    )
    assert render_turn(turn, "en").startswith("## 3 · 林小姐\n**Action**: ")


value = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\x85\u2028\u2029"
    )
    | st.just("\n"),
).map(lambda s: "\n".join(line.rstrip() for line in s.strip().split("\n")).strip())
actor = st.sampled_from(CAST + ["Mara", "Detective Reyes"])


def test_a_cue_is_recorded_without_comment_markers_so_it_reads_back_as_written():
    for cue in ("%%", "Mara %%", "<!--Mara", "Mara"):
        turn = Turn(1, "Mara", "", "x", cue)
        assert parse_transcript(render_turn(turn, "en"))[0].cue == recorded_cue(cue)
    assert recorded_cue("%%") == "" and recorded_cue("<!--Mara") == "Mara"


@given(st.lists(st.tuples(actor, value, value, value), max_size=6), st.sampled_from(["zh", "en"]))
def test_any_transcript_round_trips(rows, language):
    turns = [
        Turn(i + 1, a, act, dia, recorded_cue(cue)) for i, (a, act, dia, cue) in enumerate(rows)
    ]
    text = "# 審訊室\n\n" + "".join(render_turn(t, language) for t in turns)
    assert parse_transcript(text) == turns


@given(st.dictionaries(st.integers(1, 500), value.filter(bool), max_size=6))
def test_any_backstage_log_round_trips(thoughts):
    text = "".join(render_thought(n, t) for n, t in sorted(thoughts.items()))
    assert parse_backstage(text) == thoughts


def test_lines_that_look_like_structure_stay_inside_their_turn():
    sneaky = Turn(1, "律師", "", "第一行\n## 2 · 刑警\n**動作**: 假的\n\\反斜線", "")
    text = render_turn(sneaky)
    assert parse_transcript(text) == [sneaky]
    assert "\n\\## 2 · 刑警" in text  # escaped, and still readable in Obsidian


def test_notes_route_to_everyone_or_one_actor_and_typos_reach_nobody():
    text = (
        "# 導演耳語\n\n## 全體\n- 慢一點\n\n## 林小姐\n- 你懷疑律師\n\n## 林小結\n- 打錯字的耳語\n"
    )
    whispers = parse_notes(text, CAST)
    assert whispers.everyone == "- 慢一點"
    assert whispers.for_actor("林小姐") == "- 你懷疑律師"
    assert whispers.for_actor("刑警") == ""
    assert whispers.unknown_sections == ("林小結",)


def test_add_note_appends_under_the_right_heading():
    text = empty_notes(CAST)
    text = add_note(text, "慢一點", None)
    text = add_note(text, "你開始懷疑律師", "林小姐")
    text = add_note(text, "第二句", "林小姐")
    whispers = parse_notes(text, CAST)
    assert whispers.everyone == "- 慢一點"
    assert whispers.for_actor("林小姐") == "- 你開始懷疑律師\n- 第二句"
    assert add_note("", "hello", "Mara", "en").endswith("## Mara\n- hello\n")


def test_front_matter_splits_and_errors_name_the_file():
    text = "---\nmodel: openai/gpt-4o\naliases: [林]\n---\n## 角色小傳\n正文\n"
    settings, body = frontmatter.split(text)
    assert settings == {"model": "openai/gpt-4o", "aliases": ["林"]}
    assert body == "## 角色小傳\n正文\n"
    assert frontmatter.split("no header") == ({}, "no header")
    with pytest.raises(BadSceneFile, match="soul.md.*not valid YAML"):
        frontmatter.split("---\nmodel: [unclosed\n---\nbody", "actors/x/soul.md")
    with pytest.raises(BadSceneFile, match="no closing"):
        frontmatter.split("---\nmodel: x\nbody", "context.md")
    with pytest.raises(BadSceneFile, match="key: value"):
        frontmatter.split("---\n- a list\n---\n", "context.md")


@pytest.mark.parametrize(
    "text, settings, body",
    [
        ("---\nmodel: openai/gpt-4o-mini\n---\nbio\n", {"model": "openai/gpt-4o-mini"}, "bio\n"),
        ("\n---\nmodel: openai/gpt-4o-mini\n---\nbio\n", {"model": "openai/gpt-4o-mini"}, "bio\n"),
        ("\n\n\n---\nmodel: m\n---\nbio", {"model": "m"}, "bio"),
        ("  \n\t\n---\nmodel: m\n---\nbio", {"model": "m"}, "bio"),
        ("\ufeff---\nmodel: m\n---\nbio", {"model": "m"}, "bio"),
        ("\ufeff\n\n---\nmodel: m\n---\nbio", {"model": "m"}, "bio"),
        ("\r\n---\r\nmodel: m\r\n---\r\nbio", {"model": "m"}, "bio"),
        ("  ---  \nmodel: m\n---\nbio", {"model": "m"}, "bio"),
        ("no header", {}, "no header"),
        ("\n\nno header", {}, "\n\nno header"),
        ("bio first\n---\nmodel: m\n---\n", {}, "bio first\n---\nmodel: m\n---\n"),
        ("----\nmodel: m\n----\n", {}, "----\nmodel: m\n----\n"),
    ],
)
def test_front_matter_is_found_after_blank_lines_and_a_bom_never_ignored(text, settings, body):
    assert frontmatter.split(text) == (settings, body)


@pytest.mark.parametrize(
    "text, says",
    [
        ("---\nmodel: a\nmodel: b\n---\nbio", "line 3"),
        ("\n\n---\nmodel: a\nmodel: b\n---\nbio", "line 5"),
        ("\n---\nmodel: x\nbio", "no closing"),
    ],
)
def test_front_matter_after_blank_lines_is_refused_at_its_own_line(text, says):
    with pytest.raises(BadSceneFile, match=says):
        frontmatter.split(text, "actors/x/soul.md")


@pytest.mark.parametrize(
    "text, written",
    [
        ("\n---\nmodel: m\n---\nbio", "\n---\nmodel: m\nlanguage: en\n---\nbio"),
        ("\n\n---\nlanguage: zh\n---\nbio", "\n\n---\nlanguage: en\n---\nbio"),
        ("\nbio", "---\nlanguage: en\n---\n\nbio"),
    ],
)
def test_a_setting_is_written_into_the_front_matter_after_blank_lines(text, written):
    assert frontmatter.with_setting(text, "language", "en") == written
    settings, _ = frontmatter.split(written)
    assert settings["language"] == "en"


def test_prior_story_is_replaced_without_touching_bio_or_notes():
    body = "## 角色小傳\n小傳\n\n## 前期劇本\n舊的前情\n\n## 導戲筆記\n筆記\n"
    new = replace_prior_story(body, "新的前情")
    assert "新的前情" in new and "舊的前情" not in new
    assert new.index("小傳") < new.index("新的前情") < new.index("筆記")
    assert bio_part(new) == "## 角色小傳\n小傳\n\n## 導戲筆記\n筆記"


@pytest.mark.parametrize(
    "draft, inside",
    [
        ("## Prior story\nShe saw it.", "### Prior story\nShe saw it."),
        ("# Everything\n## Director's notes\nx", "### Everything\n### Director's notes\nx"),
        ("   ## indented\n##\n#\tTab", "### indented\n###\n###\tTab"),
        ("### kept\n#### deeper", "### kept\n#### deeper"),
        ("#hashtag\na ## b\n\\## escaped", "#hashtag\na ## b\n\\## escaped"),
        ("    ## code", "    ## code"),
    ],
)
def test_a_draft_stands_inside_its_part_its_top_headings_demoted(draft, inside):
    assert inside_a_part(draft) == inside


def test_a_headed_draft_never_adds_or_doubles_a_part_of_the_soul():
    body = "## Bio\nMara.\n\n## Prior story\nWhat Mara wrote.\n\n## Director's notes\nWin.\n"
    draft = "## Prior story\nShe saw it.\n\n## Director's notes\nLie.\n# Bio\nnot hers"
    new = replace_prior_story(body, draft, "en")
    headings = [line for line in new.splitlines() if line.startswith("## ")]
    assert headings == ["## Bio", "## Prior story", "## Director's notes"]
    assert missing_parts(new) == ()
    assert new.endswith("## Director's notes\nWin.\n")
    assert prior_story(new).startswith("### Prior story\nShe saw it.")
    assert prior_story(body) == "What Mara wrote."


@pytest.mark.parametrize("name", ["林小姐", "Detective Reyes", "O'Neil", "刑警2"])
def test_unicode_names_are_welcome(name):
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name, why",
    [
        ("../etc", "may not"),
        ("a/b", "may not contain"),
        ("/abs", "may not contain"),
        ("", "empty"),
        ("   ", "empty"),
        (".hidden", "dot"),
        ("..", "dot"),
        ("bad\x00name", "control"),
        ("ANY", "anyone"),
        ("takes", "reserved"),
        ("x" * 65, "longer"),
    ],
)
def test_dangerous_names_are_refused_with_a_reason(name, why):
    with pytest.raises(BadName, match=why):
        check_name(name)


def test_names_that_collide_after_normalisation_are_refused():
    check_unique(["林小姐", "刑警"])
    with pytest.raises(BadName, match="collides"):
        check_unique(["Mara", "mara"])
    with pytest.raises(BadName, match="collides"):
        check_unique(["ＭＡＲＡ", "Mara"])  # full-width


def test_errors_speak_the_scenes_language():
    from engine.errors import SceneBusy, UnknownActor

    error = UnknownActor("王五", CAST)
    assert str(error) == "No actor called 王五 in this scene — the cast is 林小姐, 刑警, 律師."
    assert error.in_language("zh") == "這場戲沒有叫「王五」的角色——在場的是 林小姐、刑警、律師。"
    assert error.in_language("en") == str(error)
    with pytest.raises(BadName) as refused:
        check_name("../etc", "Scene")
    assert refused.value.in_language("zh").startswith("不能用「../etc」當場景名稱")
    assert "正在排演中" in SceneBusy("審訊室").in_language("zh-TW")

"""The secrets ledger: when each marked secret surfaced, the turn before it, and
every breach — in another actor's line, action or thought before it surfaced, and in another
actor's prompt at any time (which Circus's walls keep at zero, audited over every prompt)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clikit import circus, listing
from scenekit import CAST

from engine import Actor, Rehearsal, secrets_lines
from engine.folder.scene import SceneFiles
from engine.folder.turns import Turn
from engine.providers.scripted import ScriptedRequest
from engine.takes.reading import allowed_for, take_ledger
from engine.takes.secrets import Breach, SeenPrompt, ledger, mentions, prompt_breaches, stem

SECRETS = {"林小姐": ["收了錢"], "刑警": ["二十萬"], "律師": ["the green ledger"]}
# Turn by turn (the ball goes round the cast in order): (thought, dialogue).
PLAY = [
    ("先別說話。", "我什麼都不知道。"),  # 1 林小姐
    ("她是不是收了錢？", "妳十一點十四分走的。"),  # 2 刑警: a guess, in a thought
    ("穩住。", "我的當事人有權保持沉默。"),  # 3 律師
    ("瞞不住了。", "好，我承認，我收了、錢！"),  # 4 林小姐: it surfaces
    ("果然。", "Where are the Green Ledgers?"),  # 5 刑警: 律師's secret, said by another
    ("糟了。", "無可奉告。"),  # 6 律師
]


def with_secrets(root: Path) -> Path:
    for actor, mine in SECRETS.items():
        soul = root / "actors" / actor / "soul.md"
        text = soul.read_text("utf-8")
        listed = ", ".join(mine)
        text = text.replace("---\n## 角色小傳\n", f"secrets: [{listed}]\n---\n## 角色小傳\n")
        soul.write_text(text.replace("## 前期劇本", f"秘密：{mine[0]}。\n\n## 前期劇本"), "utf-8")
    return root


def scripted_play(request: ScriptedRequest, played: list[str]) -> str:
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[0]}\nREASON: first"
    me = shape.speaker
    thought, line = PLAY[len(played)]
    played.append(me)
    nxt = CAST[(CAST.index(me) + 1) % len(CAST)]
    return f"<thought>{thought}</thought><dialogue>{line}</dialogue><cue>{nxt}</cue>"


async def played_take(root: Path, scripted) -> Rehearsal:
    played: list[str] = []
    scripted.register("improv", lambda request: scripted_play(request, played))
    r = Rehearsal(with_secrets(root), models=scripted)
    await r.run(len(PLAY), start=Actor("林小姐"))
    assert played == [CAST[i % 3] for i in range(len(PLAY))]
    assert await r.takes.save() == 1
    return r


@pytest.mark.parametrize(
    "text, secret, found",
    [
        ("He took the BRIBE.", "the bribe", True),  # case
        ("he took the bribes", "the bribe", True),  # plural
        ("she was bribed", "bribe", True),  # past
        ("bribing the clerk", "bribe", True),  # -ing
        ("Ｔｈｅ　Ｂｒｉｂｅ", "the bribe", True),  # full-width letters and space
        ("the — bribe!", "the bribe", True),  # punctuation between the words
        ("her diaries", "the diary", False),  # every word of the phrase, in a row
        ("her diaries", "diary", True),  # -ies
        ("tribe", "bribe", False),  # a word, not a piece of one
        ("the bride", "the bribe", False),
        ("我收了、錢！", "收了錢", True),  # Chinese as characters, punctuation ignored
        ("收了 錢", "收了錢", True),
        ("收了一筆錢", "收了錢", False),  # characters in a row
        ("２０萬", "20萬", True),  # full-width digits
        ("", "收了錢", False),
        ("anything", "！！", False),  # a phrase of only punctuation matches nothing
    ],
)  # fmt: skip
def test_matching_is_robust_to_case_width_punctuation_and_small_inflections(text, secret, found):
    assert mentions(text, secret) is found


@pytest.mark.parametrize(
    "word, stemmed",
    [("bribe", "brib"), ("bribed", "brib"), ("bribes", "brib"), ("bribing", "brib"),
     ("diary", "diari"), ("diaries", "diari"), ("running", "run"), ("glasses", "glass"),
     ("glass", "glass"), ("lie", "lie")],
)  # fmt: skip
def test_english_words_are_cut_to_a_light_stem(word, stemmed):
    assert stem(word) == stemmed


def test_the_ledger_of_known_turns():
    turns = [Turn(i + 1, CAST[i % 3], "", line) for i, (_, line) in enumerate(PLAY)]
    thoughts = {CAST[i % 3]: {} for i in range(3)}
    for i, (thought, _) in enumerate(PLAY):
        thoughts[CAST[i % 3]][i + 1] = thought
    lin, cop, lawyer = ledger(SECRETS, turns, thoughts)
    assert (lin.surfaced.number, lin.surfaced.actor, lin.field) == (4, "林小姐", "line")
    assert lin.before == turns[2]  # what got it out: the lawyer's turn 3
    assert lin.breaches == (Breach(2, "刑警", "thought"),)
    assert cop.surfaced is None and cop.breaches == ()
    assert (lawyer.surfaced.number, lawyer.surfaced.actor) == (5, "刑警")
    assert lawyer.breaches == (Breach(5, "刑警", "line"),)  # a model guessed: reported


async def test_a_take_ledger_with_every_captured_prompt_audited(scene, scripted):
    await played_take(scene, scripted)
    state = await SceneFiles(scene / "takes/take_1").load()
    book = take_ledger(state, 1, True)
    assert book.prompts_checked == len(PLAY)
    lin, cop, lawyer = book.entries
    assert lin.breaches == (Breach(2, "刑警", "thought"),)  # no prompt breach added
    assert cop.surfaced is None and lawyer.surfaced.number == 5

    # The prompts the model really received, each with what its actor may see at that turn.
    sent = [c for c in scripted.calls if c.shape.kind == "actor"]
    seen = [
        SeenPrompt(c.shape.speaker, n, c.prompt, allowed_for(state, c.shape.speaker, n))
        for n, c in enumerate(sent, start=1)
    ]
    assert len(seen) == len(PLAY)
    assert prompt_breaches(SECRETS, seen) == {}
    # A wall that broke would show: 刑警's secret planted in 律師's last prompt.
    leaked = SeenPrompt(seen[-1].actor, 6, seen[-1].text + "\n二十萬", seen[-1].allowed)
    assert prompt_breaches(SECRETS, [*seen[:-1], leaked]) == {
        ("刑警", "二十萬"): (Breach(6, "律師", "prompt"),)
    }


async def test_the_ledger_in_words_in_the_terminal_and_the_take_report(scene, scripted):
    await played_take(scene, scripted)
    lines = await secrets_lines(scene, 1)
    assert lines == [
        "秘密 · 排演 1",
        "林小姐 · '收了錢'：在第 4 輪浮上檯面，出自 林小姐 的台詞：好，我承認，我收了、錢！",
        "    前一輪：3 · 律師：我的當事人有權保持沉默。",
        "    在此之前最後一則給 林小姐 的筆記或提示：沒有人",
        "    ⚠ 越界：第 2 輪，刑警 的內心",
        "刑警 · '二十萬'：始終沒有說出口。",
        "律師 · 'the green ledger'：在第 5 輪浮上檯面，出自 刑警 的台詞：Where are the Green Ledgers?",
        "    前一輪：4 · 林小姐：好，我承認，我收了、錢！",
        "    在此之前最後一則給 刑警 的筆記或提示：沒有人",
        "    ⚠ 越界：第 5 輪，刑警 的台詞",
        "提示詞稽核：檢查了 6 份提示詞，0 次牆被穿越。",
    ]
    report = (scene / "takes/take_1/report.md").read_text("utf-8")
    assert "## 秘密" in report and lines[1] in report and lines[-1] in report

    done = circus("secrets", str(scene), "--take", "1", cwd=scene.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == lines


async def test_a_replay_keeps_whose_note_came_before_the_turns_it_copied(scene, scripted):
    played: list[str] = []
    scripted.register("improv", lambda request: scripted_play(request, played))
    r = Rehearsal(with_secrets(scene), models=scripted)
    await r.run(len(PLAY), start=Actor("林小姐"))
    await r.notes.note("別慌", Actor("林小姐"))  # after turn 6 of take 1
    await r.takes.save()
    await r.takes.replay(1, until=4)  # take 2 copies turn 4, where 林小姐's secret surfaced
    lead = "    在此之前最後一則給 林小姐 的筆記或提示："
    for take, title in ((1, "秘密 · 排演 1"), ("current", "秘密 · 排演 2")):
        lines = await secrets_lines(scene, take)
        assert lines[0] == title
        assert f"{lead}沒有人" in lines, "the note came after turn 4 was played"


@pytest.mark.parametrize(
    "setting",
    [
        "secrets: 42",
        "secrets: [" + "長" * 81 + "]",
        "secrets: [" + ", ".join(f"s{i}" for i in range(13)) + "]",
        "secrets: true",
        "secrets: [a, [b]]",
        "secrets: {a: 1}",
    ],
)
def test_secrets_that_are_not_a_list_of_short_phrases_are_refused_in_one_line(scene, setting):
    soul = scene / "actors/刑警/soul.md"
    soul.write_text(soul.read_text("utf-8").replace("---\n## ", f"{setting}\n---\n## "), "utf-8")
    before = listing(scene.parent)
    for args in (["secrets", str(scene)], ["next", str(scene), str(scene.parent / "next")]):
        done = circus(*args, cwd=scene.parent)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1
        assert "actors/刑警/soul.md" in done.stderr and "secrets" in done.stderr
        assert listing(scene.parent) == before


async def test_a_secret_marked_after_the_take_was_saved_still_counts(scene, scripted):
    await played_take(scene, scripted)
    soul = scene / "actors/律師/soul.md"
    soul.write_text(
        soul.read_text("utf-8").replace("[the green ledger]", "[the green ledger, 沉默]")
    )
    lines = await secrets_lines(scene, 1)
    assert "律師 · '沉默'：在第 3 輪浮上檯面，出自 律師 的台詞：我的當事人有權保持沉默。" in lines
    assert lines[-1] == "提示詞稽核：檢查了 6 份提示詞，0 次牆被穿越。"


@pytest.mark.parametrize(
    "secrets",
    [
        SECRETS,
        {**SECRETS, "刑警": ["二十萬", "沉默"]},  # said by the lawyer at turn 3: seen after
        {"林小姐": ["沉默 好"], "刑警": ["當事人", "當事人"], "律師": ["十一點"]},  # across lines
    ],
    ids=["marked", "said later", "across lines"],
)
async def test_the_one_walk_audit_finds_what_checking_every_prompt_finds(scene, scripted, secrets):
    """engine.takes.audit keeps what each actor may see turn by turn instead of searching it
    again for every prompt: the same breaches, prompt by prompt, as the all-prompts search."""
    from engine.takes.audit import audit
    from engine.takes.reading import rebuilt_prompts

    await played_take(scene, scripted)
    state = await SceneFiles(scene / "takes/take_1").load()
    prompts = rebuilt_prompts(state)
    assert audit(state, secrets) == (prompt_breaches(secrets, prompts), len(PLAY))

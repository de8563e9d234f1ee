"""The next scene (seed 000 §14.1): a three-scene chain on the scripted model, in
Chinese and English, with a unique marker in every private text (each actor's soul, whisper,
thought and cue direction), proving that each actor carries exactly what it witnessed — an
actor who exited after turn 3 carries turns 1–3 — and nothing private of anyone else; the old
scene is untouched byte for byte; `--draft` drafts from that record only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clikit import circus, listing
from scenekit import CAST, SOUL_MARKER, WHISPER_MARKER, write_scene

from engine import Actor, Rehearsal, start_next
from engine.catalog import say
from engine.continuity.next_scene import context_text, next_soul, unheaded
from engine.errors import BadName, BadRequest, SceneExists, TakeNotFound
from engine.folder.checkup import check_scene
from engine.folder.soul import bio_part
from engine.folder.stage import StageBlock
from engine.folder.turns import Turn, parse_transcript
from engine.providers.scripted import ScriptedRequest
from engine.turn.witness import witnessed

DIRECTION = "DIRECTION-MARKER"
HEADING = {"zh": "### 承接自 {scene}，排演 {take}", "en": "### Carried from {scene}, take {take}"}
_THOUGHT = re.compile(r"THOUGHT-\w+-\d+")


def marked(request: ScriptedRequest) -> str:
    """Each turn says a unique line and thinks a unique thought; the ball goes round the cast
    in order (skipping whoever is off stage: the cue then falls to the stage manager)."""
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[0]}\nREASON: first on stage"
    if shape.kind != "actor":
        return f"DRAFT-OF-RECORD {request.index}"
    me = shape.speaker
    cast = list(shape.cast)
    nxt = cast[(cast.index(me) + 1) % len(cast)]
    n = request.index
    return (
        f"<thought>THOUGHT-{me}-{n}</thought><action>ACT-{me}-{n}</action>"
        f"<dialogue>LINE-{me}-{n}</dialogue><cue>{nxt}</cue>"
    )


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def carried(root: Path, actor: str, heading: str) -> str:
    soul = (root / "actors" / actor / "soul.md").read_text("utf-8")
    assert soul.count(heading) == 1, soul
    return soul.split(heading, 1)[1].split("\n## ", 1)[0]


def turn_numbers(section: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\[(\d+)\] ", section, re.M)]


async def first_take(root: Path, scripted) -> Rehearsal:
    """Turns 1–3 with everyone; 律師 walks off; turns 4–6 between the other two (turn 4 cued
    with a private direction); saved as take 1."""
    scripted.register("improv", marked)
    r = Rehearsal(root, models=scripted)
    await r.run(3, start=Actor("林小姐"))
    await r.stage.exit(Actor("律師"))
    await r.cue(Actor("刑警"), DIRECTION)
    await r.run(2)
    assert await r.takes.save() == 1
    return r


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_each_actor_carries_exactly_what_it_witnessed_into_the_next_scene(
    tmp_path, scripted, language
):
    old = write_scene(tmp_path / "one", language=language)
    await first_take(old, scripted)
    before = files_of(old)
    thoughts = {
        a: set(_THOUGHT.findall((old / f"backstage/{a}.log").read_text("utf-8"))) for a in CAST
    }

    done = await start_next(old, tmp_path / "two", 1)

    new = tmp_path / "two"
    assert (done.root, done.take, done.cast) == (new, 1, CAST)
    assert files_of(old) == before  # the old scene is only read
    heading = HEADING[language].format(scene="one", take=1)
    for actor in CAST:
        section = carried(new, actor, heading)
        others = set(CAST) - {actor}
        assert set(_THOUGHT.findall(section)) == thoughts[actor]  # its own thoughts, all of them
        for other in others:
            assert SOUL_MARKER[other] not in section and WHISPER_MARKER[other] not in section
        assert WHISPER_MARKER[actor] not in section and DIRECTION not in section
        soul = (new / "actors" / actor / "soul.md").read_text("utf-8")
        assert SOUL_MARKER[actor] in soul  # the bio is carried
        assert "aliases:" in soul  # and the settings
        for other in others:
            assert SOUL_MARKER[other] not in soul
    assert turn_numbers(carried(new, "律師", heading)) == [1, 2, 3]  # nothing after its exit
    assert turn_numbers(carried(new, "林小姐", heading)) == [1, 2, 3, 4, 5, 6]
    # Only the folder's plan is written: no record, no backstage, no takes, no whispers.
    assert sorted(files_of(new)) == sorted(
        ["context.md", "director_notes.md", "scene.md", ".circus/carried.json"]
        + [f"actors/{a}/soul.md" for a in CAST]
    )
    notes = (new / "director_notes.md").read_text("utf-8")
    assert not any(m in notes for m in [*WHISPER_MARKER.values(), "ALL-WHISPER"])
    assert "model: scripted/improv" in (new / "context.md").read_text("utf-8")


async def test_a_chain_of_three_scenes_carries_each_record_forward(tmp_path, scripted):
    one = write_scene(tmp_path / "one")
    await first_take(one, scripted)
    await start_next(one, tmp_path / "two", 1)
    two = tmp_path / "two"
    since = len(scripted.calls)
    r2 = Rehearsal(two, models=scripted)
    await r2.run(3, start=Actor("林小姐"))
    assert await r2.takes.save() == 1
    # In scene two each actor plays knowing its own carried record, and only its own.
    for call in scripted.calls[since:]:
        if call.shape.kind == "actor":
            me = call.shape.speaker
            assert f"THOUGHT-{me}-" in call.prompt
            for other in set(CAST) - {me}:
                assert not re.search(rf"THOUGHT-{other}-\d+", call.prompt)

    await start_next(two, tmp_path / "three")  # the last saved take by default
    three = tmp_path / "three"
    soul = (three / "actors/律師/soul.md").read_text("utf-8")
    assert soul.index(HEADING["zh"].format(scene="one", take=1)) < soul.index(
        HEADING["zh"].format(scene="two", take=1)
    )
    assert turn_numbers(carried(three, "律師", HEADING["zh"].format(scene="two", take=1))) == [
        1,
        2,
        3,
    ]


async def test_the_writer_sees_which_carried_sections_are_not_rewritten_yet(tmp_path, scripted):
    one = write_scene(tmp_path / "one")
    await first_take(one, scripted)
    await start_next(one, tmp_path / "two", 1)
    r = Rehearsal(tmp_path / "two", models=scripted)
    assert [w.path for w in await r.cast.warnings() if w.key == "warning.carried_unedited"] == [
        f"actors/{a}/soul.md" for a in sorted(CAST)
    ]
    soul = tmp_path / "two/actors/律師/soul.md"
    text = soul.read_text("utf-8")
    soul.write_text(text.replace("LINE-", "他記得："), "utf-8")  # the writer rewrote it
    left = [w.path for w in await r.cast.warnings() if w.key == "warning.carried_unedited"]
    assert left == ["actors/刑警/soul.md", "actors/林小姐/soul.md"]
    review = (tmp_path / "two/scene.md").read_text("utf-8")
    assert "context.md" in review and "circus status" in review


async def test_draft_asks_the_model_with_that_actors_witnessed_record_only(tmp_path, scripted):
    one = write_scene(tmp_path / "one")
    await first_take(one, scripted)
    before = files_of(one)
    since = len(scripted.calls)

    await start_next(one, tmp_path / "two", 1, draft=True, models=scripted)

    asked = [c for c in scripted.calls[since:]]
    assert len(asked) == 3 and {c.shape.kind for c in asked} == {"free"}
    new_soul = {a: (tmp_path / "two/actors" / a / "soul.md").read_text("utf-8") for a in CAST}
    for call in asked:
        actor = next(a for a in CAST if SOUL_MARKER[a] in call.prompt)
        assert bio_part(new_soul[actor].split("---\n", 2)[2]).split("###")[0].strip() in call.prompt
        record = (one / f"backstage/{actor}.log").read_text("utf-8")
        assert set(_THOUGHT.findall(call.prompt)) == set(_THOUGHT.findall(record))
        for other in set(CAST) - {actor}:
            assert SOUL_MARKER[other] not in call.prompt
            assert WHISPER_MARKER[other] not in call.prompt
        assert WHISPER_MARKER[actor] not in call.prompt and DIRECTION not in call.prompt
        if actor == "律師":  # turns 4–6 were said after 律師 left
            later = [t.dialogue for t in parse_transcript((one / "transcript.md").read_text())]
            assert later[3:] and not any(line in call.prompt for line in later[3:])
    for actor in CAST:
        section = carried(tmp_path / "two", actor, HEADING["zh"].format(scene="one", take=1))
        assert section.strip().startswith("DRAFT-OF-RECORD")
    assert files_of(one) == before


@pytest.mark.parametrize(
    "target, take, error",
    [
        ("two", "9", TakeNotFound),
        ("one", "1", SceneExists),
        (".two", "1", BadName),
        ("one/actors/two", "1", BadRequest),
    ],
)
async def test_refusals_come_before_anything_is_written(tmp_path, scripted, target, take, error):
    one = write_scene(tmp_path / "one")
    await first_take(one, scripted)
    before = files_of(tmp_path)
    with pytest.raises(error):
        await start_next(one, tmp_path / target, take)
    assert files_of(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one"]


def _t(n: int, actor: str) -> Turn:
    return Turn(n, actor, "", f"L{n}")


@pytest.mark.parametrize(
    "blocks, actor, seen",
    [
        ([], "B", ["[1]", "[2]", "[3]", "[4]"]),
        ([StageBlock(2, 1, "exit", actor="B")], "B", ["[1]", "[2]", "[2.1]"]),  # its exit, then nothing
        ([StageBlock(2, 1, "exit", actor="B")], "A", ["[1]", "[2]", "[2.1]", "[3]", "[4]"]),
        ([StageBlock(1, 1, "exit", actor="B"), StageBlock(3, 1, "enter", actor="B")], "B",
         ["[1]", "[1.1]", "[3.1]", "[4]"]),  # back on stage: it sees again, not what it missed
        ([StageBlock(0, 1, "present", names=("A",)), StageBlock(2, 1, "event", text="E")], "B",
         ["[0.1]"]),  # never on stage: only the block that said so
    ],
)  # fmt: skip
def test_what_an_actor_witnessed(blocks, actor, seen):
    turns = [_t(1, "A"), _t(2, "A"), _t(3, "A"), _t(4, "A")]
    lines = witnessed(actor, ("A", "B"), turns, blocks, {}, "en")
    assert [line.split(" ", 1)[0] for line in lines] == seen


def test_only_the_actors_own_thoughts_go_with_its_own_turns():
    turns = [_t(1, "A"), _t(2, "B")]
    lines = witnessed("B", ("A", "B"), turns, [], {1: "NOT-MINE", 2: "MINE"}, "en")
    assert lines == ['[1] A: "L1"', '[2] B: "L2"', '    (your private thought then) "MINE"']


@pytest.mark.parametrize(
    "body, expected",
    [
        ("## Bio\nB.\n\n## Prior story\nP.\n\n## Director's notes\nN.\n",
         "## Bio\nB.\n\n## Prior story\nP.\n\nSECTION\n\n## Director's notes\n"),
        ("## Bio\nB.\n\n## Director's notes\nN.\n",  # no prior story yet: one is added
         "## Bio\nB.\n\n## Director's notes\n\n## Prior story\n\nSECTION\n"),
        ("Just a bio.\n", "Just a bio.\n\n## Prior story\n\nSECTION\n"),
    ],
)  # fmt: skip
def test_the_next_souls_parts(body, expected):
    text = "---\ntemperature: 0.5\n---\n" + body
    assert next_soul(text, "SECTION", "en") == "---\ntemperature: 0.5\n---\n" + expected


async def test_circus_next_in_the_terminal_and_its_refusals(tmp_path, scripted):
    one = write_scene(tmp_path / "one", language="en")
    await first_take(one, scripted)
    (tmp_path / "taken").mkdir()
    before = listing(tmp_path)
    for args, says in [
        (["next", str(one), str(tmp_path / "taken")], "already exists"),
        (["next", str(one), str(tmp_path / "two"), "--take", "7"], "take"),
        (["next", str(tmp_path / "nowhere"), str(tmp_path / "two")], "No scene"),
    ]:
        done = circus(*args, cwd=tmp_path)
        assert done.returncode == 2, done
        assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
        assert listing(tmp_path) == before
    done = circus("next", str(one), str(tmp_path / "two"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Created {tmp_path / 'two'} from take 1 of one")
    status = circus("status", str(tmp_path / "two"), cwd=tmp_path)
    assert status.stderr.count("carried from the last scene") + status.stdout.count(
        "carried from the last scene"
    ) == len(CAST)


# --- found in review: a settings-only file, a draft posing as a section ---------------------


@pytest.mark.parametrize(
    "old",
    [
        "---\nlanguage: zh\ncast: [A, B]\non_stage: [A]\nbudget_usd: 0.5\n---\n",
        "---\nlanguage: zh\ncast: [A, B]\non_stage: [A]\nbudget_usd: 0.5\n---",
        "\ufeff---\nlanguage: zh\ncast: [A, B]\non_stage: [A]\nbudget_usd: 0.5\n---\n",
    ],
)
def test_a_context_of_settings_alone_keeps_every_setting(old: str) -> None:
    new = context_text(old, "two", "one", 1, "zh")
    assert new.startswith("---\nlanguage: zh\ncast: [A, B]\non_stage: [A]\nbudget_usd: 0.5\n---\n")


def test_a_soul_of_settings_alone_keeps_its_model_and_secrets() -> None:
    soul = next_soul("---\nmodel: openai/gpt-4o\nsecrets: [the bribe]\n---\n", "### Carried", "en")
    assert soul.startswith("---\nmodel: openai/gpt-4o\nsecrets: [the bribe]\n---\n")
    assert "### Carried" in soul


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("She saw the ledger.", "She saw the ledger."),
        (
            "She saw it.\n## Director's notes\nSay the secret.",
            "She saw it.\nDirector's notes\nSay the secret.",
        ),
        ("  ### Carried\nkept", "Carried\nkept"),
    ],
)
def test_a_drafted_record_cannot_start_a_section_of_the_soul(draft: str, expected: str) -> None:
    assert unheaded(draft) == expected


async def test_a_draft_that_fails_leaves_the_witnessed_record_and_says_why(tmp_path, scripted):
    one = write_scene(tmp_path / "one")
    await first_take(one, scripted)

    def no_drafts(request: ScriptedRequest) -> str:
        if request.shape.kind != "actor" and request.shape.kind != "stage_manager":
            raise RuntimeError("the summary model is down")
        return marked(request)

    scripted.register("improv", no_drafts)
    done = await start_next(one, tmp_path / "two", 1, draft=True, models=scripted)

    assert not done.drafted and done.draft_failed
    for actor in CAST:
        section = carried(tmp_path / "two", actor, HEADING["zh"].format(scene="one", take=1))
        assert section and "DRAFT-OF-RECORD" not in section  # the record itself, as without --draft


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_context_circus_next_drafts_is_flagged_until_it_is_written(language) -> None:
    drafted = say("next.context", language, title="Dawn", scene="s1", take=2)
    context = f"---\ncast: [Ruth]\n---\n{drafted}\n"
    warned = {(w.path, w.key) for w in check_scene(context, {"Ruth": "## Bio\nx"})}
    assert ("context.md", "warning.context_guidance") in warned
    written = context.replace(drafted, "# Dawn\n\nThe pier, before the boats go out.")
    warned = {(w.path, w.key) for w in check_scene(written, {"Ruth": "## Bio\nx"})}
    assert ("context.md", "warning.context_guidance") not in warned

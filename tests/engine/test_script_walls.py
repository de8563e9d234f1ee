"""The walls hold for an imported scene (DESIGN §2), proven on the exact prompts each role
was sent: a writer's note and the scene's goal reach no prompt, thoughts exported as notes
and imported again reach no record, soul or prompt, and a character who enters late never
hears what was said before they came in."""

from __future__ import annotations

from pathlib import Path

from scriptkit import SCRIPTS

from engine import Actor, Config, ImportAsk, Rehearsal, import_script
from engine.providers.scripted import ScriptedRequest

QUIET = Config.from_env({"CIRCUS_MODEL": "scripted/quiet"})
NEW_THOUGHT = "a thought of this rehearsal"


def quiet(request: ScriptedRequest) -> str:
    shape = request.shape
    if shape.kind == "stage_manager":
        return f"NEXT: {shape.cast[request.index % len(shape.cast)]}\nREASON: scripted"
    me = shape.speaker
    return f"<thought>{NEW_THOUGHT}</thought><dialogue>Line {request.index} of {me}.</dialogue>"


def every_prompt(scripted) -> str:
    return "\n".join(call.prompt for call in scripted.calls)


def folder_text(root: Path, *, but: str = "") -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file() and p.name != but
    )


async def test_a_planted_note_and_the_goal_reach_no_prompt(tmp_path: Path, scripted) -> None:
    scripted.register("quiet", quiet)
    done = await import_script(SCRIPTS / "harbour.fountain", tmp_path / "s", ImportAsk(scene="2"))
    assert "knows about the sale" in (done.root / "script.md").read_text(encoding="utf-8")
    assert "knows about the sale" not in folder_text(done.root, but="script.md")
    r = Rehearsal(done.root, models=scripted, config=QUIET)
    await r.run(4)
    prompts = every_prompt(scripted)
    assert {c.shape.kind for c in scripted.calls} >= {"actor"}
    assert "Rain on the window" in prompts  # the public context did arrive
    for private in ("knows about the sale", "sign before Ray arrives", "second gull", "Cut line"):
        assert private not in prompts


async def test_thoughts_exported_as_notes_never_come_back(tmp_path: Path, scene, scripted) -> None:
    played = Rehearsal(scene, models=scripted)
    await played.run(3)
    paths = await played.harvest.export(formats="fountain", thoughts=True, out=tmp_path / "ex")
    exported = paths[0].read_text(encoding="utf-8")
    assert "weighs what was said" in exported  # the thoughts are in it, as [[notes]]
    done = await import_script(paths[0], tmp_path / "again", ImportAsk())
    assert done.turns == 3
    assert "weighs what was said" not in folder_text(done.root, but="script.md")
    scripted.register("quiet", quiet)
    since = len(scripted.calls)
    await Rehearsal(done.root, models=scripted, config=QUIET).run(3)
    prompts = "\n".join(c.prompt for c in scripted.calls[since:])
    assert "This is line 2" in prompts  # the imported record did arrive
    assert "weighs what was said" not in prompts


async def test_a_late_entrance_hears_nothing_said_before_it(tmp_path: Path, scripted) -> None:
    scripted.register("quiet", quiet)
    done = await import_script(SCRIPTS / "entrance.fountain", tmp_path / "s", ImportAsk())
    r = Rehearsal(done.root, models=scripted, config=QUIET)
    await r.cue(Actor("CARL"))
    await r.cue(Actor("ANNA"))
    carl, anna = (
        [c.prompt for c in scripted.calls if c.shape.kind == "actor" and c.shape.speaker == who]
        for who in ("CARL", "ANNA")
    )
    assert "Did I miss anything?" in carl[0] and "CARL walks in" in carl[0]
    for i in range(1, 10):
        assert f"Marker L0{i}" not in carl[0]
        assert f"Marker L0{i}" in anna[0]

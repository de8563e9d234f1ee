"""Script in and out in Discord, black box against the fake Discord: `/scene import` makes the
scene and its thread from an uploaded script (the notes only for the director who asked, the
last imported lines in the thread), `/run` goes on from the last line, `/export into:` returns
the writer's file with the take spliced in, to directors only; a wrong upload is refused before
it is read, writing nothing."""

from __future__ import annotations

import pytest
from botkit import WAIT, finished, room, until
from scriptkit import SCRIPTS
from setupkit import thread_of

from engine.providers.scripted import ScriptedModels

HARBOUR = ("harbour.fountain", (SCRIPTS / "harbour.fountain").read_bytes())


@pytest.fixture(autouse=True)
def operator_env(monkeypatch):
    monkeypatch.setenv("CIRCUS_MODEL", "scripted/improv")
    monkeypatch.delenv("CIRCUS_STAGE_MANAGER_MODEL", raising=False)
    monkeypatch.delenv("CIRCUS_ALLOWED_MODELS", raising=False)


def attached(r, handle) -> dict[str, bytes]:
    files = {}
    for message in handle.messages:
        for a in message.get("attachments") or []:
            files[a["filename"]] = r.fake.attachments_data[int(a["id"])]
    return files


async def test_import_rehearse_and_splice_back_in_discord(tmp_path):
    async with room(tmp_path, models=ScriptedModels()) as r:
        handle = await r.slash("scene import", {"file": HARBOUR, "scene": "2", "name": "office"})
        await handle.wait_followups(1, timeout=WAIT)
        assert handle.ephemeral
        said = "\n".join(handle.contents)
        thread = thread_of(r, "office")
        assert f"<#{thread}>" in said and "10" in said
        # the writer's notes: by DM to the director who imported, the one private path
        await until(lambda: any("Tom knows about the sale" in m for m in r.dms("alice")))
        assert not any("Tom knows about the sale" in m for m in r.dms("bob"))
        public = r.everything_public()
        assert "He's hiding something." in public  # the last imported lines, in the thread
        assert "Tom knows about the sale" not in public
        assert "sign before Ray arrives" not in public
        assert (r.home / "office" / "script.md").exists()

        await r.ask("run", {"turns": 2}, channel=thread)
        await finished(r, thread)
        refused = await r.ask("export", {"into": HARBOUR}, channel=thread, user="bob")
        assert "<@" in refused  # not a director: the directors are named, nothing spliced
        handle = await r.slash("export", {"into": HARBOUR}, channel=thread)
        text = await r.answer(handle)
        assert "harbour.fountain" in text and "after line 70" in text
        files = attached(r, handle)
        spliced = files["harbour.fountain"].decode("utf-8")
        original = HARBOUR[1].decode("utf-8")
        head = "\n".join(original.split("\n")[:70]) + "\n"
        assert spliced.startswith(head) and spliced.endswith(original[len(head) :])
        assert len(spliced) > len(original)

        # replace: the take's lines in place of RAY's last line (69-70), every other line kept
        handle = await r.slash("export", {"into": HARBOUR, "replace": "69-70"}, channel=thread)
        text = await r.answer(handle)
        assert "in place of lines 69–70" in text
        replaced = attached(r, handle)["harbour.fountain"].decode("utf-8")
        lines = original.split("\n")
        assert replaced.startswith("\n".join(lines[:68]) + "\n")
        assert replaced.endswith("\n" + "\n".join(lines[70:]))
        assert "He's hiding something." not in replaced
        refused = await r.ask("export", {"into": HARBOUR, "replace": "19-22"}, channel=thread)
        assert "INT. HARBOUR OFFICE - NIGHT" in refused and "nothing was written" in refused
        refused = await r.ask("export", {"replace": "69-70"}, channel=thread)
        assert "`into:`" in refused
        for ignored in ({"format": "fdx"}, {"thoughts": True}):  # never silently dropped
            handle = await r.slash("export", {"into": HARBOUR, **ignored}, channel=thread)
            refused = await r.answer(handle)
            assert "`format:` and `thoughts:`" in refused and not attached(r, handle)


@pytest.mark.parametrize(
    ("upload", "says"),
    [
        (("script.docx", b"PK\x03\x04"), ".fountain"),
        (("big.fountain", b"x" * (10 * 1024 * 1024 + 1)), "10485760"),
        (("notes.fountain", b"Just prose.\n\nMore prose.\n"), "cue"),
        (("harbour.fountain", HARBOUR[1]), "1 · COLD OPEN"),  # scene 9: the headings listed
    ],
)
async def test_a_wrong_upload_is_one_private_line_and_no_scene(tmp_path, upload, says):
    async with room(tmp_path, models=ScriptedModels()) as r:
        options = {"file": upload, "name": "s"}
        if upload[0] == "harbour.fountain":
            options["scene"] = "9"
        said = await r.ask("scene import", options)
        assert says in said
        assert not (r.home / "s").exists()
        with pytest.raises(KeyError):
            r.fake.thread_by_name("🎭 s")

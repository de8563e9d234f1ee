"""Setting a scene up through Discord in the bot tests: the thread of a scene, what a form
holds, submitting it, what an answer attached, the status lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from botkit import WAIT


# ---------------------------------------------------------------------- helpers
def thread_of(r, scene: str) -> int:
    return int(r.fake.thread_by_name(f"🎭 {scene}")["id"])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a scene folder, by its path inside it: what "nothing changed" means."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        # a model call made is recorded (and billed) even when nothing else changes
        if p.is_file() and p.name != "calls.jsonl"
    }


def inputs(modal: dict[str, Any]) -> dict[str, str]:
    """A form as the member sees it: each text input's id -> its prefilled text."""
    found: dict[str, str] = {}

    def walk(component: dict[str, Any]) -> None:
        if component.get("type") == 4:
            found[component["custom_id"]] = component.get("value") or ""
        for child in component.get("components", []):
            walk(child)
        if component.get("component"):
            walk(component["component"])

    for component in modal["components"]:
        walk(component)
    return found


async def submit(r, shown, values: dict[str, str]) -> str:
    """Fill in and send the form `shown` opened; the private answer."""
    submitted = await r.fake.submit_modal(shown, values)
    await submitted.response(timeout=WAIT)
    return await r.answer(submitted)


def attached(r, handle) -> dict[str, bytes]:
    files = {}
    for message in handle.messages:
        for a in message.get("attachments") or []:
            files[a["filename"]] = r.fake.attachments_data[int(a["id"])]
    return files


def status_lines(r, thread: int) -> list[str]:
    return [m["content"] for m in r.thread(thread) if m["username"] == "Circus"]

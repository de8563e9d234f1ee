"""Text edited in the writer's $EDITOR (`context edit`, `soul edit`, a backstory draft): a failed
editor changes nothing, and a soul or context.md edit the engine refuses is kept in drafts/,
never thrown away, and the next edit starts from it.

Below the commands (circus.commands and circus.setup_commands both use it); writes go through
the Rehearsal only.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from circus.exits import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, print_error
from circus.given import me
from circus.words import t

if TYPE_CHECKING:  # hints only: nothing is imported at run time
    from engine import Actor, Rehearsal


def _editor() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def _editor_command(path: str) -> list[str]:
    """The editor's command line for `path`: a UsageError for an $EDITOR that is not one."""
    import shlex

    try:
        words = shlex.split(_editor())
    except ValueError as exc:  # EDITOR='"vim' — an unclosed quote
        raise UsageError(t("cli.editor_missing", editor=_editor(), why=exc)) from None
    if not words:
        raise UsageError(t("cli.editor_missing", editor=_editor(), why=t("cli.editor_blank")))
    return [*words, path]


def edit_text(text: str, name: str = "text.md") -> str | None:
    """`text` after the writer's $EDITOR (None if the editor failed: nothing to use); an editor
    that cannot be started at all is a UsageError naming it."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        command = _editor_command(path)
        try:
            code = subprocess.call(command)
        except OSError as exc:  # not on PATH, not executable
            why = exc.strerror or exc
            raise UsageError(t("cli.editor_missing", editor=command[0], why=why)) from None
        if code != 0:
            print_error(t("cli.editor_failed", editor=_editor(), code=code))
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()


@dataclass(frozen=True)
class _Edited:
    """One file edited with a draft kept on refusal: its name for the editor, the catalog's
    sentences for it (from a draft, kept, updated; filled with `values`), and the Rehearsal's
    calls that read, set, keep, read back and drop it."""

    name: str
    words: tuple[str, str, str]
    values: Mapping[str, object]
    text: Callable[[], Awaitable[str]]
    set: Callable[[str], Awaitable[object]]
    keep: Callable[[str], Awaitable[str]]  # the kept draft's path inside the scene
    draft: Callable[[], Awaitable[str | None]]
    drop: Callable[[], Awaitable[None]]


async def _edit(rehearsal: Rehearsal, file: _Edited) -> int:
    """$EDITOR on `file`; an edit that cannot be used is kept in drafts/, never lost, and the
    next edit starts from it."""
    from engine import CircusError

    from_draft, kept_in, updated = file.words

    def say(key: str, **values: object) -> str:
        return t(key, **file.values, **values)

    before, draft = await file.text(), await file.draft()
    if draft is not None:
        print(say(from_draft))
    after = edit_text(draft if draft is not None else before, file.name)
    if after is None:
        return EXIT_FAILURE
    if after != before:
        try:
            await file.set(after)
        except CircusError as exc:
            kept = rehearsal.root / await file.keep(after)
            print_error(say(kept_in, why=exc, kept=kept, me=me(), root=rehearsal.root))
            return EXIT_USAGE
    if draft is not None:
        await file.drop()
    print(say(updated) if after != before else t("cli.no_change"))
    return EXIT_OK


async def edit_soul(rehearsal: Rehearsal, actor: Actor) -> int:
    """$EDITOR on the actor's soul.md (see _edit)."""
    souls = rehearsal.souls
    return await _edit(
        rehearsal,
        _Edited(
            "soul.md", ("cli.soul.from_draft", "cli.soul.kept", "cli.soul.updated"), {"actor": actor},
            lambda: souls.text(actor), lambda text: souls.set(actor, text),
            lambda text: souls.save_draft(actor, text), lambda: souls.draft(actor),
            lambda: souls.drop_draft(actor),
        ),
    )  # fmt: skip


async def edit_context(rehearsal: Rehearsal) -> int:
    """$EDITOR on context.md (see _edit)."""
    cast = rehearsal.cast
    return await _edit(
        rehearsal,
        _Edited(
            "context.md", ("cli.context.from_draft", "cli.context.kept", "cli.context.updated"), {},
            cast.context_text, cast.set_context, cast.save_context_draft, cast.context_draft,
            cast.drop_context_draft,
        ),
    )  # fmt: skip

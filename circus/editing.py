"""Text edited in the writer's $EDITOR (`context edit`, `soul edit`, a backstory draft): a failed
editor changes nothing, and a soul or context.md edit the engine refuses is kept in drafts/,
never thrown away, and the next edit starts from it.

Below the commands (circus.commands and circus.setup_commands both use it); writes go through
the Rehearsal only.
"""

from __future__ import annotations

import os
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


async def edit_soul(rehearsal: Rehearsal, actor: Actor) -> int:
    """$EDITOR on the soul; an edit that cannot be used is kept in drafts/, never lost, and
    the next edit starts from it."""
    from engine import CircusError

    before = await rehearsal.souls.text(actor)
    draft = await rehearsal.souls.draft(actor)
    if draft is not None:
        print(t("cli.soul.from_draft", actor=actor))
    after = edit_text(draft if draft is not None else before, "soul.md")
    if after is None:
        return EXIT_FAILURE
    if after == before:
        if draft is not None:
            await rehearsal.souls.drop_draft(actor)
        print(t("cli.no_change"))
        return EXIT_OK
    try:
        await rehearsal.souls.set(actor, after)
    except CircusError as exc:
        rel = await rehearsal.souls.save_draft(actor, after)
        kept = rehearsal.root / rel
        print_error(
            t("cli.soul.kept", why=exc, kept=kept, me=me(), root=rehearsal.root, actor=actor)
        )
        return EXIT_USAGE
    if draft is not None:
        await rehearsal.souls.drop_draft(actor)
    print(t("cli.soul.updated", actor=actor))
    return EXIT_OK


async def edit_context(rehearsal: Rehearsal) -> int:
    """$EDITOR on context.md; an edit that cannot be used is kept in drafts/context.md, never
    lost, and the next edit starts from it."""
    from engine import CircusError

    before = await rehearsal.cast.context_text()
    draft = await rehearsal.cast.context_draft()
    if draft is not None:
        print(t("cli.context.from_draft"))
    after = edit_text(draft if draft is not None else before, "context.md")
    if after is None:
        return EXIT_FAILURE
    if after == before:
        if draft is not None:
            await rehearsal.cast.drop_context_draft()
        print(t("cli.no_change"))
        return EXIT_OK
    try:
        await rehearsal.cast.set_context(after)
    except CircusError as exc:
        kept = rehearsal.root / await rehearsal.cast.save_context_draft(after)
        print_error(t("cli.context.kept", why=exc, kept=kept, me=me(), root=rehearsal.root))
        return EXIT_USAGE
    if draft is not None:
        await rehearsal.cast.drop_context_draft()
    print(t("cli.context.updated"))
    return EXIT_OK

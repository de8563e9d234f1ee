"""Text that travels as a file: what a form holds, an upload read as text, an attachment made.

Invariant: an upload is bounded (the engine's cap for a scene file, checked before it is
downloaded) and decoded as UTF-8 or refused naming the file (escaped, never markdown); a form
field holds at most MODAL_LIMIT characters, so anything longer comes and goes as a file.
"""

from __future__ import annotations

import io
from pathlib import Path

import discord

from bot.errors import BotProblem
from engine import MAX_FILE_BYTES, MAX_SCRIPT_BYTES, SCRIPT_TYPES

MODAL_LIMIT = 4000  # Discord's most characters in one form field
UPLOAD_LIMIT = MAX_FILE_BYTES  # the engine's cap for a soul.md, checked before downloading
INLINE_LIMIT = 1900  # a text shown in a reply rather than attached


def text_file(name: str, text: str) -> discord.File:
    """`text` as an attachment called `name` (UTF-8)."""
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=name)


def soul_file(actor: str, text: str) -> discord.File:
    return text_file(f"{actor}-soul.md", text)


def checked_script(file: discord.Attachment) -> str:
    """An uploaded script's name, once its type and size are ones a script may have (the
    engine's list and cap), before a byte of it is fetched."""
    shown = discord.utils.escape_markdown(file.filename[:100]).replace("`", "ˋ")
    if Path(file.filename).suffix.lower() not in SCRIPT_TYPES:
        raise BotProblem("script_type", file=shown, types=" ".join(SCRIPT_TYPES))
    if file.size > MAX_SCRIPT_BYTES:
        raise BotProblem("script_too_big", file=shown, size=file.size, limit=MAX_SCRIPT_BYTES)
    return file.filename


async def uploaded_text(file: discord.Attachment, too_big: str = "soul_file_too_big") -> str:
    """An uploaded soul.md (or other scene text) as text: UTF-8 (a BOM is dropped), refused
    naming the file else; `too_big` is the refusal's key for a file over the engine's cap."""
    shown = discord.utils.escape_markdown(file.filename[:100]).replace("`", "ˋ")
    if file.size > UPLOAD_LIMIT:
        raise BotProblem(too_big, file=shown, size=file.size, limit=UPLOAD_LIMIT)
    try:
        return (await file.read()).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BotProblem("soul_bad_file", file=shown) from exc

"""A take's report in Discord: a short embed with the numbers, and report.md attached.

Invariant: a report reaches only a scene's directors and captains — a captain's shows only
their own characters' secrets (bot.interaction.gate.private_actors) — as the private answer to
`/report` (bot.commands.harvest) or by DM through Backstage when a take is saved (bot.thread.scene) — because it
counts the stage manager's choices and each model's cost per actor and call, which spectators
never see (the thread's panel shows only the day's total spend). The embed is read from the engine's markdown (`report_numbers`, pure); the file is that markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import discord

from bot.i18n import t
from bot.thread.backstage import Enclosure
from engine import Rehearsal

REPORT_FILE = "report.md"
WARNING = "⚠"
EMBED_FIELDS = 20  # Discord allows 25; leave room for the totals
COLOUR_OK, COLOUR_WARN = 0x2E8B57, 0xD98E04

# Column headings of the per-actor table, in either language (the engine's report decides).
_COLUMNS = {
    "turns": ("turns", "輪", "轮", "輪數", "轮数"),
    "lines": ("lines", "句", "台詞", "台词", "句數", "句数"),
    "words": ("words", "字", "字數", "字数", "詞", "词"),
}


@dataclass(frozen=True)
class ActorNumbers:
    actor: str
    turns: str
    lines: str
    words: str


@dataclass(frozen=True)
class ReportNumbers:
    warnings: tuple[str, ...]
    actors: tuple[ActorNumbers, ...]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    for i, cell in enumerate(header):
        if cell.strip("*_ ").casefold() in names:
            return i
    return None


def report_numbers(markdown: str) -> ReportNumbers:
    """The ⚠ lines and the first per-actor table (turns, lines, words) of a report."""
    lines = markdown.splitlines()
    warnings = tuple(line.strip() for line in lines if line.strip().startswith(WARNING))
    actors: list[ActorNumbers] = []
    for i, line in enumerate(lines[:-1]):
        if not line.strip().startswith("|") or not re.match(r"^\s*\|?[\s:|-]+$", lines[i + 1]):
            continue
        header = _cells(line)
        cols = {key: _column(header, names) for key, names in _COLUMNS.items()}
        if None in cols.values():
            continue
        for row in lines[i + 2 :]:
            if not row.strip().startswith("|"):
                break
            cells = _cells(row)
            if len(cells) < len(header):
                continue
            actors.append(
                ActorNumbers(cells[0], *(cells[cols[k]] for k in ("turns", "lines", "words")))  # type: ignore[index]
            )
        break
    return ReportNumbers(warnings, tuple(actors))


def report_embed(markdown: str, scene: str, take: int, picks: int, lang: str) -> discord.Embed:
    """The short embed: warnings (or that there are none), turns and lines per actor, picks."""
    numbers = report_numbers(markdown)
    warned = bool(numbers.warnings)
    description = "\n".join(numbers.warnings) if warned else t("report_no_warning", lang)
    embed = discord.Embed(
        title=t("report_title", lang, scene=scene, take=take)[:256],
        description=description[:4000],
        colour=COLOUR_WARN if warned else COLOUR_OK,
    )
    for actor in numbers.actors[:EMBED_FIELDS]:
        value = t("report_actor", lang, turns=actor.turns, lines=actor.lines, words=actor.words)
        embed.add_field(name=actor.actor[:256] or "—", value=value[:1024], inline=True)
    embed.add_field(name=t("report_picks", lang), value=str(picks), inline=True)
    return embed


async def report_message(
    rehearsal: Rehearsal,
    lang: str,
    take: int | str,
    number: int,
    only: frozenset[str] | None = None,
) -> tuple[discord.Embed, Enclosure]:
    """The embed and the report.md file for take `take` (numbered `number`) of a scene;
    `only`: a captain's characters, whose secrets alone it shows (None: a director's)."""
    markdown = await rehearsal.harvest.report(take, only=only)
    picks = sum(1 for p in await rehearsal.harvest.picks() if p.take == number)
    embed = report_embed(markdown, rehearsal.name, number, picks, lang)
    return embed, Enclosure(REPORT_FILE, markdown.encode("utf-8"), embed)

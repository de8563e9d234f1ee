"""What the bot writes into Discord, as pure functions of engine data.

Invariant: the thread-facing renderers (`render_turn_message`, `scene_card`, status lines) take
only frontstage fields — a thought, whisper or soul cannot reach them by construction; private
text is rendered only by `thought_dm` / `stage_manager_dm`, whose output goes to directors' DMs.
Every message a renderer returns is cut by `split_message` to Discord's 2000-character limit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from bot.i18n import t
from engine import Status, TakeInfo, dropped_warning, whole_number
from engine import turn_marks as engine_marks

LIMIT = 2000

# Discord refuses these words in a webhook's username; a look-alike letter keeps the name readable.
_FORBIDDEN_WORDS = {"discord": ("o", "\u043e"), "clyde": ("y", "\u0443")}  # Cyrillic о, у
_FULLWIDTH = {"@": "＠", "#": "＃", ":": "：", "`": "ˋ"}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…」』”])\s*")


def sanitise_webhook_name(name: str, fallback: str = "Actor") -> str:
    """A webhook `username` Discord accepts (1–80 chars, no "discord"/"clyde", not @everyone)."""
    text = "".join(" " if ch.isspace() or ord(ch) < 32 else ch for ch in str(name))
    text = " ".join(text.split())
    text = "".join(_FULLWIDTH.get(ch, ch) for ch in text)
    for word, (letter, lookalike) in _FORBIDDEN_WORDS.items():
        pattern = re.compile(re.escape(word), re.IGNORECASE)
        text = pattern.sub(partial(_swapped, letter=letter, lookalike=lookalike), text)
    if text.lower() in {"everyone", "here"}:
        text = f"{text} ·"
    text = text[:80].strip()
    return text or fallback


def _swap(word: str, letter: str, lookalike: str) -> str:
    index = word.lower().index(letter)
    swapped = lookalike.upper() if word[index].isupper() else lookalike
    return word[:index] + swapped + word[index + 1 :]


def _swapped(match: re.Match[str], letter: str, lookalike: str) -> str:
    return _swap(match.group(0), letter, lookalike)


def split_message(text: str, limit: int = LIMIT) -> list[str]:
    """Cut `text` into messages of at most `limit` characters.

    Prefers line breaks, then sentence ends, then spaces; cuts hard only inside one unbroken
    run of `limit` characters. Whitespace at the cuts is dropped; nothing else is lost.
    """
    text = text.strip()
    if not text:
        return []
    chunks: list[str] = []
    while len(text) > limit:
        window = text[: limit + 1]
        cut = _best_cut(window, limit)
        head, text = text[:cut].rstrip(), text[cut:].lstrip()
        if head:
            chunks.append(head)
    if text:
        chunks.append(text)
    return chunks


def _best_cut(window: str, limit: int) -> int:
    """Where to cut a window of limit+1 chars so the head is at most `limit` chars."""
    floor = limit // 3  # never leave a tiny head when a later boundary exists
    newline = window.rfind("\n", 0, limit + 1)
    if newline >= floor:
        return newline
    ends = [m.end() for m in _SENTENCE_END.finditer(window, 0, limit) if m.start() > 0]
    ends = [e for e in ends if floor <= e <= limit]
    if ends:
        return ends[-1]
    space = max(window.rfind(" ", 0, limit + 1), window.rfind("\u3000", 0, limit + 1))
    if space >= floor:
        return space
    return limit


def _italic(line: str) -> str:
    line = line.strip()
    if not line:
        return ""
    return "*" + line.replace("\\", "\\\\").replace("*", "\\*") + "*"


def render_turn_message(action: str, dialogue: str, cue: str, lang: str) -> str:
    """One turn as the actor's persona posts it: action in italics, the line, the cue small."""
    parts: list[str] = []
    action_lines = [_italic(line) for line in action.strip().splitlines()]
    action_text = "\n".join(line for line in action_lines if line)
    if action_text:
        parts.append(action_text)
    if dialogue.strip():
        parts.append(_unheading(dialogue.strip()))
    if not parts:
        parts.append(_italic(t("silence", lang)))
    cue = " ".join(cue.split())
    if cue:
        shown = t("anyone", lang) if cue.upper() == "ANY" else cue
        parts.append(f"-# → {shown}")
    return "\n".join(parts)


def _unheading(text: str) -> str:
    """Keep an actor's line from being read as a heading or small text by Discord."""
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*(#{1,3}\s|-#\s|>)", line):
            line = "\\" + line.lstrip()
        out.append(line)
    return "\n".join(out)


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip().splitlines())


def thought_label(scene: str, take: int, turn: int, actor: str, lang: str) -> str:
    return t("thought_label", lang, scene=scene, take=take, turn=turn, actor=actor)


def turn_marks(repaired: bool, fallback: bool, cut: Sequence[str], lang: str) -> list[str]:
    """How a turn was made, for its directors: repaired, a fallback Circus played, cut at a cap."""
    marks = engine_marks(repaired, fallback, cut)
    made = {"fallback": "mark_fallback", "repaired": "mark_repaired"}
    said = [t(made[marks.made], lang)] if marks.made else []
    fields = [t("mark_cut_reply", lang)] if marks.reply_cut else []
    fields += [t("mark_cut_field", lang, field=f, cap=cap) for f, cap in marks.fields_cut]
    if fields:
        said.append(t("mark_cut", lang, fields=", ".join(fields)))
    return said


def thought_dm(
    scene: str,
    take: int,
    turn: int,
    actor: str,
    thought: str,
    lang: str,
    marks: Sequence[str] = (),
) -> str:
    """The DM a director receives for one actor's thought (private: DMs only), with the turn's
    marks (see `turn_marks`) so a fallback silence is never read as the actor's choice."""
    body = _quote(thought) if thought.strip() else "> …"
    lines = [thought_label(scene, take, turn, actor, lang)] + [f"-# {m}" for m in marks]
    return "\n".join(lines) + "\n" + body


def stage_manager_dm(scene: str, take: int, turn: int, actor: str, reason: str, lang: str) -> str:
    """The DM line for a stage-manager decision (private: DMs only)."""
    reason = " ".join(reason.split()) or "—"
    label = thought_label(scene, take, turn, actor, lang)
    return f"{label}\n-# {t('sm_decided', lang, actor=actor, reason=reason)}"


def scene_card(
    scene: str, context: str, cast: Sequence[str], directors: Iterable[int], lang: str
) -> str:
    """The public card that opens a scene thread: its public context and cast, nothing else."""
    mentions = ", ".join(f"<@{d}>" for d in directors) or t("nobody", lang)
    return "\n\n".join(
        part
        for part in (
            t("scene_card_context", lang, scene=scene),
            context.strip(),
            t("scene_card_cast", lang, cast=", ".join(cast) or t("nobody", lang)),
            t("scene_card_footer", lang, directors=mentions),
        )
        if part
    )


def render_status(status: Status, lang: str) -> str:
    """`/status`: cast, turns, mode, tokens and cost; repaired turns and budgets when any."""
    lines = [_status_main(status, lang)]
    if tuple(status.on_stage) != tuple(status.cast) or status.players:
        played = "".join(
            t("status_played", lang, actor=actor, player=_player(who))
            for actor, who in status.players
        )
        on_stage = ", ".join(status.on_stage) or t("nobody", lang)
        lines.append(t("status_stage", lang, on_stage=on_stage, players=played))
    if status.repairs or status.fallbacks:
        lines.append(
            t("status_turn_marks", lang, repairs=status.repairs, fallbacks=status.fallbacks)
        )
    for section, count in status.notes_dropped:
        lines.append(dropped_warning(section, count, lang))
    for b in status.budgets:
        amount = (
            (lambda v: f"${v:.4f}")
            if b.unit == "usd"
            else (lambda v: t("tokens", lang, count=f"{int(v):,}"))
        )
        lines.append(
            t(
                "status_budget_scene" if b.scope == "scene" else "status_budget_day",
                lang,
                setting=b.setting,
                spent=amount(b.spent),
                limit=amount(b.limit),
                left=amount(b.left),
            )
        )
    return "\n".join(lines)


def render_warnings(lines: Sequence[str], lang: str) -> str:
    """`/status` for directors: what to fix in the scene's files, one line each ("" if none)."""
    if not lines:
        return ""
    shown = "\n".join("• " + " ".join(line.split()) for line in lines)
    return t("status_warnings", lang, lines=shown)


def _player(who: str) -> str:
    """A player as Discord shows them: `discord:<id>` becomes a mention (never pinged: replies
    carry no allowed mentions); a console player's name is shown as text."""
    if who.startswith("discord:") and whole_number(who[8:], 20) is not None:
        return f"<@{who[8:]}>"
    return who


def _status_main(status: Status, lang: str) -> str:
    if status.running and status.held_by:  # a terminal (or another bot) runs it
        mode = t("mode_elsewhere", lang, pid=status.held_by[0], host=status.held_by[1])
    elif status.running:
        mode = t("mode_running", lang, progress=status.progress or "…")
    else:
        mode = t("mode_idle", lang)
    return t(
        "status",
        lang,
        scene=status.scene,
        take=status.take,
        turns=status.turns,
        mode=mode,
        cast=", ".join(status.cast) or t("nobody", lang),
        takes=", ".join(str(n) for n in status.saved_takes) or t("none", lang),
        calls=status.model_calls,
        prompt=status.prompt_tokens,
        completion=status.completion_tokens,
        cost="—" if status.cost_usd is None else f"${status.cost_usd:.4f}",
    )


def render_takes(takes: Sequence[TakeInfo], lang: str) -> str:
    """`/take list`: one line per saved take with its last line of dialogue."""
    if not takes:
        return t("take_list_none", lang)
    lines = []
    for info in takes:
        last = " ".join(str(info.last_line).split())
        if len(last) > 80:
            last = last[:79] + "…"
        line = t("take_line", lang, n=info.number, turns=info.turns, last=last or "—")
        lines.append("• " + line)
    return t("take_list", lang, lines="\n".join(lines))


def render_scene_list(scenes: Sequence[tuple[str, int | None]], lang: str) -> str:
    """`/scene list`: each scene with the thread it plays in, if any."""
    if not scenes:
        return t("scene_list_none", lang)
    lines = [
        f"• **{name}** — " + (f"<#{thread}>" if thread else t("scene_unbound", lang))
        for name, thread in scenes
    ]
    return t("scene_list", lang, lines="\n".join(lines))


def pack_messages(items: Iterable[str], limit: int = LIMIT) -> list[str]:
    """Join short messages (blank line between) into as few messages as fit the limit."""
    out: list[str] = []
    for item in items:
        for piece in split_message(item, limit):
            if out and len(out[-1]) + 2 + len(piece) <= limit:
                out[-1] = out[-1] + "\n\n" + piece
            else:
                out.append(piece)
    return out


def autocomplete_names(
    current: str,
    names: Sequence[str],
    aliases: dict[str, tuple[str, ...]] | None = None,
    limit: int = 25,
) -> list[str]:
    """Names matching what the user typed so far (prefix first, then substring; aliases count)."""
    typed = current.strip().casefold()
    aliases = aliases or {}
    prefix: list[str] = []
    inside: list[str] = []
    for name in names:
        forms = [name.casefold(), *(a.casefold() for a in aliases.get(name, ()))]
        if not typed or any(f.startswith(typed) for f in forms):
            prefix.append(name)
        elif any(typed in f for f in forms):
            inside.append(name)
    return (prefix + inside)[:limit]


def scrub(text: str, scenes_dir: Path) -> str:
    """Drop the scenes folder's server path from `text`: `actors/律師/soul.md` stays."""
    roots = {str(scenes_dir), str(scenes_dir.resolve()), os.path.abspath(scenes_dir)}
    for root in sorted(roots, key=len, reverse=True):
        prefix = r"(?<![\w./-])" + re.escape(root.rstrip(os.sep) + os.sep)
        # "<root>/<scene>/<file>" -> "<file>", then any remaining "<root>/" -> ""
        text = re.sub(prefix + r"[^/\n]+/", "", text)
        text = re.sub(prefix, "", text)
    return text


def player(who: str) -> str:
    """`discord:<id>` (a player, a captain) as a mention (replies never ping), a console
    name as is."""
    if who.startswith("discord:") and whole_number(who[8:], 20) is not None:
        return f"<@{who[8:]}>"
    return who

"""The control panel of a scene thread, as pure decisions: what it says, which buttons work now,
what its custom ids carry, and when it may be edited next.

Invariants: a custom id arrives from Discord and is untrusted — `parse_id` accepts only
`circus:<action>:<page>:<scene>` with a known action, a small page and a valid scene name, and
returns None for anything else; every label fits Discord's limits (the layout never has more
than five rows, five buttons a row, one select a row, 25 options); `Coalescer` lets at most one
edit through every `interval` seconds per scene and the last state wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from bot.i18n import t
from bot.render import player
from engine import (
    BadName,
    Cut,
    Event,
    RunFinished,
    RunStarted,
    StageChanged,
    Status,
    TakeSaved,
    TurnCompleted,
    check_name,
    whole_number,
)

PREFIX = "circus"
# action -> its button's label (catalog key): the buttons in the panel's first row
BUTTON_LABELS = {
    "run": "panel.button.run",
    "cut": "panel.button.cut",
    "resume": "panel.button.resume",
    "save": "panel.button.save",
    "report": "panel.button.report",
    "read": "panel.button.read",  # a row of its own: a row holds five buttons
}
ROW = 5  # Discord's most buttons in one row
BUTTONS = tuple(BUTTON_LABELS)
SELECTS = ("cue", "note")
ACTIONS = BUTTONS + SELECTS
ID_LIMIT = 100
LABEL_LIMIT = 80
TITLE_LIMIT = 45
OPTION_LIMIT = 100
OPTIONS = 25  # a select's options
MAX_PAGE = 99  # a cast is at most engine.MAX_CAST: far fewer pages than this
PAGE_VALUE = ".page:"  # an option that turns the page (a name never starts with a dot)
EVERYONE = ".everyone"  # the note select's "to everyone" (a name never starts with a dot)
ID_PATTERN = r"circus:(?P<action>[a-z]{1,8}):(?P<page>[0-9]{1,2}):(?P<scene>[^\x00-\x1f]{1,64})"
_ID = re.compile(ID_PATTERN)


# ---------------------------------------------------------------------- custom ids
@dataclass(frozen=True)
class PanelId:
    action: str
    scene: str
    page: int = 0


def encode_id(action: str, scene: str, page: int = 0) -> str:
    """The custom id of one of a scene's panel components (≤ 100 characters)."""
    if action not in ACTIONS or not 0 <= page <= MAX_PAGE:
        raise ValueError(f"no panel component {action!r} page {page}")
    custom_id = f"{PREFIX}:{action}:{page}:{scene}"
    if len(custom_id) > ID_LIMIT:
        raise ValueError(f"custom id over {ID_LIMIT} characters: {custom_id!r}")
    return custom_id


def parse_id(custom_id: object) -> PanelId | None:
    """What a panel custom id asks for, or None if it is not one of ours (untrusted input)."""
    if not isinstance(custom_id, str) or len(custom_id) > ID_LIMIT:
        return None
    m = _ID.fullmatch(custom_id)
    if m is None or m["action"] not in ACTIONS:
        return None
    try:
        scene = check_name(m["scene"], "Scene")
    except BadName:
        return None
    if scene != m["scene"]:  # not in the form the bot wrote it
        return None
    return PanelId(m["action"], scene, int(m["page"]))


# ---------------------------------------------------------------------- progress of a run
PanelMode = Literal["idle", "running", "cut"]  # what the panel's first line says of the run


@dataclass(frozen=True)
class Progress:
    """What the panel knows of the current run, from the scene's events."""

    mode: PanelMode = "idle"
    turn: int = 0  # turns landed in this run
    of: int = 0  # turns this run was asked for
    last_speaker: str = ""


def advance(progress: Progress, event: Event) -> Progress:
    """The progress after `event` (events that change nothing the panel shows return it)."""
    if isinstance(event, RunStarted):
        return Progress("running", 0, event.turns, progress.last_speaker)
    if isinstance(event, TurnCompleted):
        return Progress(progress.mode, progress.turn + 1, progress.of, event.actor)
    if isinstance(event, Cut):
        return Progress("cut", progress.turn, progress.of, progress.last_speaker)
    if isinstance(event, RunFinished):
        mode: PanelMode = "cut" if event.reason == "cut" or progress.mode == "cut" else "idle"
        return Progress(mode, progress.turn, progress.of, progress.last_speaker)
    return progress


def shows_change(event: Event) -> bool:
    """Whether `event` may change what the panel shows (the rest never nudge it)."""
    return isinstance(event, (RunStarted, TurnCompleted, Cut, RunFinished, StageChanged, TakeSaved))


# ---------------------------------------------------------------------- what it shows
@dataclass(frozen=True)
class Snapshot:
    """Everything the panel shows, gathered once per edit."""

    lang: str
    status: Status
    progress: Progress = field(default_factory=Progress)
    last_speaker: str = ""  # from the scene on disk, when this run has not spoken yet
    directors: tuple[int, ...] = ()  # who directs the scene (its thread binding)

    @property
    def running(self) -> bool:
        return self.status.running


def panel_text(snap: Snapshot) -> str:
    """The panel's lines: state, take and turn, on stage, last speaker, players, who directs
    and who captains whom, spend (mentions: the panel never pings)."""
    s, lang = snap.status, snap.lang
    lines = [t("panel.title", lang, scene=s.scene, take=s.take, turns=s.turns)]
    if s.running and s.held_by:
        lines.append(t("panel.elsewhere", lang))
    elif snap.running:
        p = snap.progress
        lines.append(t("panel.running", lang, turn=min(p.turn + 1, p.of or 1), of=p.of or 1))
    elif snap.progress.mode == "cut":
        lines.append(t("panel.cut", lang))
    else:
        lines.append(t("panel.idle", lang))
    on_stage = ", ".join(s.on_stage) or t("nobody", lang)
    lines.append(t("panel.on_stage", lang, names=on_stage))
    last = snap.progress.last_speaker or snap.last_speaker
    if last:
        lines.append(t("panel.last", lang, actor=last))
    if s.players:
        who = ", ".join(t("panel.plays", lang, actor=a, player=player(p)) for a, p in s.players)
        lines.append(who)
    lines += room_lines(snap)
    spend = spend_line(s, lang)
    if spend:
        lines.append(spend)
    return "\n".join(lines)[:2000]


def room_lines(snap: Snapshot) -> list[str]:
    """Who is directing, and who captains whom (nothing for a scene without captains or
    directors known)."""
    lang, out = snap.lang, []
    if snap.directors:
        names = ", ".join(f"<@{d}>" for d in snap.directors)
        out.append(t("panel.directing", lang, names=names))
    if snap.status.captains:
        each = (
            t("panel.captains", lang, actor=a, names=", ".join(player(w) for w in writers))
            for a, writers in snap.status.captains
        )
        out.append(" · ".join(each))
    return out


def spend_line(status: Status, lang: str) -> str:
    """Today's spend against the server's daily budget; else the scene's; else what the
    scene cost so far ("" when nothing is known)."""
    cost = status.cost_usd
    chosen = sorted(status.budgets, key=lambda b: (b.scope != "day", b.unit != "usd"))
    if chosen:
        b = chosen[0]
        key = "panel.spend_day" if b.scope == "day" else "panel.spend_scene"
        return t(
            key, lang, spent=amount(b.unit, b.spent, lang), limit=amount(b.unit, b.limit, lang)
        )
    if cost:
        return t("panel.spend", lang, spent=amount("usd", cost, lang))
    return ""


def amount(unit: str, value: float, lang: str) -> str:
    return f"${value:.4f}" if unit == "usd" else t("tokens", lang, count=f"{int(value):,}")


def enabled(snap: Snapshot) -> dict[str, bool]:
    """Which buttons and selects make sense now (the others are shown disabled)."""
    running, has_turns = snap.running, snap.status.turns > 0
    return {
        "run": not running,
        "cut": running and not snap.status.held_by,
        "resume": not running and has_turns,
        "save": not running and has_turns,
        "report": has_turns,
        "read": has_turns,
        "cue": not running and bool(snap.status.cast),
        "note": bool(snap.status.cast),
    }


# ---------------------------------------------------------------------- layout
@dataclass(frozen=True)
class ButtonSpec:
    custom_id: str
    label: str
    disabled: bool
    danger: bool = False


@dataclass(frozen=True)
class SelectSpec:
    custom_id: str
    placeholder: str
    options: tuple[tuple[str, str], ...]  # (label, value)
    disabled: bool


def layout(snap: Snapshot) -> list[list[ButtonSpec] | SelectSpec]:
    """The panel's rows: five buttons, 🔊 Read, then the Cue select, then the Note select."""
    on = enabled(snap)
    name, lang = snap.status.scene, snap.lang
    buttons = [
        ButtonSpec(
            encode_id(a, name), t(BUTTON_LABELS[a], lang)[:LABEL_LIMIT], not on[a], a == "cut"
        )
        for a in BUTTONS
    ]
    return [buttons[:ROW], buttons[ROW:], cue_select(snap, 0), note_select(snap, 0)]


def cue_names(status: Status) -> tuple[str, ...]:
    """Whom the Cue select offers: who is on stage (everyone, when nobody is marked)."""
    return tuple(status.on_stage) or tuple(status.cast)


def cue_select(snap: Snapshot, page: int) -> SelectSpec:
    options = page_options(cue_names(snap.status), page, snap.lang)
    return SelectSpec(
        encode_id("cue", snap.status.scene, page),
        t("panel.cue", snap.lang),
        options,
        not enabled(snap)["cue"],
    )


def note_select(snap: Snapshot, page: int) -> SelectSpec:
    everyone = (t("panel.everyone", snap.lang), EVERYONE)
    names = page_options(tuple(snap.status.cast), page, snap.lang, reserve=1)
    return SelectSpec(
        encode_id("note", snap.status.scene, page),
        t("panel.note", snap.lang),
        (everyone, *names) if page == 0 else names,
        not enabled(snap)["note"],
    )


def page_options(
    names: tuple[str, ...], page: int, lang: str, reserve: int = 0
) -> tuple[tuple[str, str], ...]:
    """One page of names as select options, at most 25 with `reserve` more beside them. A
    longer list is paged: each page's last option turns to the next page (the last page's,
    back to the first)."""
    room = OPTIONS - reserve
    if len(names) <= room:
        shown = tuple((n[:OPTION_LIMIT], n) for n in names)
        return shown or ((t("nobody", lang), EVERYONE),)
    size = room - 1
    pages = -(-len(names) // size)
    page = min(max(page, 0), pages - 1)
    start = page * size
    options = [(n[:OPTION_LIMIT], n) for n in names[start : start + size]]
    if page + 1 < pages:
        rest = names[start + size :]
        label = t("panel.more", lang, first=rest[0], count=len(rest))
        options.append((label[:OPTION_LIMIT], f"{PAGE_VALUE}{page + 1}"))
    else:
        options.append((t("panel.first_page", lang)[:OPTION_LIMIT], f"{PAGE_VALUE}0"))
    return tuple(options)


def page_of(value: str) -> int | None:
    """The page an option turns to, or None if the option names someone."""
    if not value.startswith(PAGE_VALUE):
        return None
    number = whole_number(value[len(PAGE_VALUE) :], 2)
    return number if number is not None and number <= MAX_PAGE else 0


def title(key: str, lang: str, **values: object) -> str:
    """A modal title, cut to Discord's 45 characters (a long actor name shortens it)."""
    text = t(key, lang, **values)
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "…"


def turns_given(raw: str, default: int, most: int) -> int | None:
    """The number of turns typed in the Run form (blank: the default), or None if it is not
    a whole number from 1 to `most`."""
    raw = (raw or "").strip()
    if not raw:
        return default
    number = whole_number(raw, 3)
    return number if number is not None and 1 <= number <= most else None


# ---------------------------------------------------------------------- coalescing edits
class Coalescer:
    """When a scene's panel may be edited: at most once every `interval` seconds, and only
    when something changed since the last edit (the edit then shows the latest state).

    Time is given by the caller (loop time in the bot, a number in tests)."""

    def __init__(self, interval: float = 2.0) -> None:
        self.interval = interval
        self.pending = False
        self._last: float | None = None

    def changed(self) -> None:
        self.pending = True

    def delay(self, now: float) -> float | None:
        """Seconds until the next edit may go out (0: now), or None if nothing changed."""
        if not self.pending:
            return None
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.interval - now)

    def taking(self, now: float) -> None:
        """An edit is being made now, of the state as it is now: later changes wait."""
        self.pending = False
        self._last = now

"""A take read from its own folder alone — no Rehearsal, no run lock, nothing written — and the
secrets ledger over it, with the prompt audit.

Circus keeps no copy of the prompts it sent, so the audit runs over the prompts rebuilt by
engine.turn.prompts for each turn of the take from the take's own files (souls, context, whispers
as saved, the record and the speaker's thoughts before that turn): what the walls let through
at every turn. A test audits the prompts a scripted model really received the same way.
Each secret that surfaced, and each cued turn, names whose note or cue reached the speaker last
(engine.folder.attribution). `only` limits what a captain reads to their own characters' secrets.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from engine.catalog import say
from engine.errors import CircusError, TakeNotFound
from engine.folder.attribution import (
    NOBODY,
    Lead,
    Lineage,
    Mark,
    cue_marks,
    last_before,
    note_marks,
)
from engine.folder.numbers import whole_number
from engine.folder.scene import DIRECTIONS, NOTES, SceneFiles, SceneState
from engine.folder.stage import merge, walk
from engine.folder.turns import Turn
from engine.takes.folders import take_dir, take_numbers
from engine.takes.secrets import (
    Breach,
    SecretEntry,
    SeenPrompt,
    ledger,
    with_prompt_breaches,
)
from engine.takes.tree import Parent, lineage_of
from engine.turn.record_lines import block_line, public_line

CURRENT_WORDS = {"current", "當前", "当前"}
WHERE = {  # engine.takes.secrets' field names → how a ledger line says them
    "line": "secrets.where.line",
    "action": "secrets.where.action",
    "thought": "secrets.where.thought",
    "prompt": "secrets.where.prompt",
}


async def resolve(root: Path, ref: object | None) -> tuple[int, bool]:
    """(number, saved) of a take reference: a saved take's number, `current` (the working
    take), or None (the last saved take, else the working one). TakeNotFound otherwise."""
    store = SceneFiles(root).store
    saved = await take_numbers(store)
    current = (saved[-1] if saved else 0) + 1
    if ref is None:
        return (saved[-1], True) if saved else (current, False)
    text = str(ref).strip().casefold()
    if text in CURRENT_WORDS:
        return current, False
    number = whole_number(text.removeprefix("take").lstrip("_ "))
    if number == current:
        return current, False
    if number is None or number not in saved:
        raise TakeNotFound(ref, saved)
    return number, True


async def load_take(root: Path, number: int, saved: bool) -> SceneState:
    """The take's files as a scene (a saved take is a full snapshot of its folder)."""
    return await SceneFiles(root / take_dir(number) if saved else root).load()


def secrets_of(state: SceneState, marked_now: SceneState | None = None) -> dict[str, list[str]]:
    """Each actor's marked secrets: as the take's souls had them, and (`marked_now`) as the
    scene's souls have them now — a secret marked after a take was saved still counts."""
    out = {a: list(state.souls[a].settings.get("secrets") or ()) for a in state.cast}
    if marked_now is not None:
        for actor, mine in out.items():
            soul = marked_now.souls.get(actor)
            later = soul.settings.get("secrets") or () if soul is not None else ()
            mine += [s for s in later if s not in mine]
    return out


def scaffolding(actor: str, language: str) -> str:
    """Circus's own words around an actor's prompt (engine.takes.audit.scaffolding)."""
    from engine.takes.audit import scaffolding as words  # here: a take list needs no prompts

    return words(actor, language)


def allowed_for(state: SceneState, actor: str, turn: int) -> tuple[str, ...]:
    """Every text `actor` may see when it plays turn `turn` (engine.takes.secrets.SeenPrompt): the
    prompt's own scaffolding, its own soul, the public context, the whispers for everyone and for it, its own earlier
    thoughts, and the public record it witnessed before that turn."""
    lang = state.language
    turns = [t for t in state.turns if t.number < turn]
    blocks = [b for b in state.blocks if b.after < turn]
    mine = [t for n, t in state.thoughts.get(actor, {}).items() if n < turn]
    seen: list[str] = [scaffolding(actor, state.language), state.souls[actor].body, state.context]
    seen += mine
    seen += [state.whispers.everyone, state.whispers.for_actor(actor)]
    for item, before, after in walk(state.cast, merge(turns, blocks)):
        if actor in before or actor in after:
            if isinstance(item, Turn):
                seen += [item.action, item.dialogue, public_line(item, lang)]
            else:
                seen += [item.text, block_line(item, lang)]
    return tuple(t for t in seen if t)


def rebuilt_prompts(state: SceneState) -> list[SeenPrompt]:
    """The prompt each turn's actor was built from this take's files (module docstring), with
    everything that actor may see then."""
    from engine.takes.audit import prompt_texts  # here: a take list needs no prompts

    return [
        SeenPrompt(turn.actor, turn.number, text, allowed_for(state, turn.actor, turn.number))
        for turn, text in prompt_texts(state)
    ]


@dataclass(frozen=True)
class TakeLedger:
    take: int
    saved: bool
    language: str
    entries: tuple[SecretEntry, ...]
    prompts_checked: int
    leads: tuple[Lead, ...] = ()  # per entry: whose note or cue came last before it surfaced


Only = frozenset[str] | None  # the actors whose private text a reader may see (None: all)


async def room_marks(root: Path, number: int, saved: bool, cast: list[str]) -> list[Mark]:
    """The take's attributed notes and cues (its own director_notes.md and directions.md)."""
    store = SceneFiles(root / take_dir(number) if saved else root).store
    notes = await store.read(NOTES) or ""
    directions = await store.read(DIRECTIONS) or ""
    return note_marks(notes, cast) + cue_marks(directions)


def _only(entries: tuple[SecretEntry, ...], only: Only) -> tuple[SecretEntry, ...]:
    """The entries a reader limited to `only` may see: their characters' secrets, without
    what the ledger says about other characters' thoughts."""
    if only is None:
        return entries
    kept = []
    for e in entries:
        if e.owner in only:
            breaches = tuple(b for b in e.breaches if b.where != "thought" or b.actor in only)
            kept.append(SecretEntry(e.owner, e.secret, e.surfaced, e.field, e.before, breaches))
    return tuple(kept)


def take_ledger(
    state: SceneState,
    number: int,
    saved: bool,
    marked_now: SceneState | None = None,
    marks: list[Mark] | None = None,
    only: Only = None,
    lineage: Lineage | None = None,
) -> TakeLedger:
    """The ledger of one take, its prompt audit included (`secrets_of` says whose secrets),
    and whose note or cue came last before each secret surfaced (from `marks`, in the take
    each turn was played in: `lineage`)."""
    secrets = secrets_of(state, marked_now)
    found: dict[tuple[str, str], tuple[Breach, ...]] = {}
    checked = 0
    if any(secrets.values()):  # the prompts' builder loads only for secrets to audit
        from engine.takes.audit import audit

        # what prompt_breaches(secrets, rebuilt_prompts(state)) finds, in one walk of the take
        found, checked = audit(state, secrets)
    entries = ledger(secrets, state.turns, state.thoughts)
    shown = _only(with_prompt_breaches(entries, found), only)
    leads = tuple(
        last_before(marks or [], number, e.surfaced.number, e.surfaced.actor, lineage)
        if e.surfaced is not None
        else NOBODY
        for e in shown
    )
    return TakeLedger(number, saved, state.language, shown, checked, leads)


ROLE_WORDS = {"director": "lead.role.director", "captain": "lead.role.captain"}
KIND_WORDS = {"note": "lead.kind.note", "cue": "lead.kind.cue"}


def lead_text(lead: Lead, language: str) -> str:
    """Whose note or cue a lead names, in a few words: `小王 (captain, note)` or `nobody`."""
    if lead.mark is None:
        return say("lead.nobody", language)
    mark = lead.mark
    role = say(ROLE_WORDS[mark.role], language)
    kind = say(KIND_WORDS[mark.kind], language)
    if not mark.name:
        return say("lead.unnamed", language, role=role, kind=kind)
    return say("lead.who", language, who=mark.name, role=role, kind=kind)


def _turn_text(turn: Turn) -> str:
    return (turn.dialogue or turn.action).split("\n")[0][:100]


def ledger_lines(book: TakeLedger) -> list[str]:
    """The ledger in plain lines (the terminal, Discord, the take report's section)."""
    lang = book.language
    if not book.entries:
        return [say("secrets.none_marked", lang)]
    out: list[str] = [say("secrets.title", lang, take=book.take)]
    leads = book.leads or tuple(NOBODY for _ in book.entries)
    for e, lead in zip(book.entries, leads, strict=True):
        if e.surfaced is None:
            out.append(say("secrets.never", lang, owner=e.owner, secret=e.secret))
        else:
            t = e.surfaced
            out.append(
                say(
                    "secrets.surfaced", lang, owner=e.owner, secret=e.secret, turn=t.number,
                    actor=t.actor, where=say(WHERE[e.field], lang),
                    text=_turn_text(t),
                )
            )  # fmt: skip
            if e.before is not None:
                b = e.before
                out.append(
                    say("secrets.before", lang, turn=b.number, actor=b.actor, text=_turn_text(b))
                )
            out.append(say("secrets.lead", lang, actor=t.actor, who=lead_text(lead, lang)))
        for breach in e.breaches:
            out.append(
                say(
                    "secrets.breach", lang, turn=breach.turn, actor=breach.actor,
                    where=say(WHERE[breach.where], lang),
                )
            )  # fmt: skip
    walls = sum(b.where == "prompt" for e in book.entries for b in e.breaches)
    out.append(say("secrets.audit", lang, prompts=book.prompts_checked, breaches=walls))
    return out


async def tree_of(
    root: Path, current_turns: int | None = None
) -> tuple[dict[int, Parent | None], dict[int, int]]:
    """(take → parent, take → turns) over the saved takes, and the working take when it has
    turns of its own (`current_turns`; when None, read from a transcript that is not just the
    last saved take's)."""
    from engine.folder.scene import TRANSCRIPT
    from engine.takes.folders import take_info
    from engine.takes.tree import read_parents

    store = SceneFiles(root).store
    numbers = await take_numbers(store)
    turns = {n: (await take_info(store, n)).turns for n in numbers}
    if current_turns is None:
        text = await store.read(TRANSCRIPT) or ""
        last = await store.read(f"{take_dir(numbers[-1])}/{TRANSCRIPT}") if numbers else None
        current_turns = 0 if text == last else len((await SceneFiles(root).load()).turns)
    if current_turns:
        turns[(numbers[-1] if numbers else 0) + 1] = current_turns
    return await read_parents(store, sorted(turns)), turns


def cued_lines(
    state: SceneState,
    number: int,
    marks: list[Mark],
    only: Only = None,
    lineage: Lineage | None = None,
) -> list[str]:
    """Each cued turn of the take: who cued it, and whose note reached the actor last before
    (`only`: a captain's characters' cued turns alone — who whispered to whom is private;
    `lineage`: the takes it was made from)."""
    lang = state.language
    spoken = {t.number: t.actor for t in state.turns}
    notes = [m for m in marks if m.kind == "note"]
    out: list[str] = []
    for cue in sorted((m for m in marks if m.kind == "cue" and m.take == number),
                      key=lambda m: m.turn):  # fmt: skip
        if spoken.get(cue.turn) != cue.target:
            continue  # a cue whose turn was cut, or replayed away
        if only is not None and cue.target not in only:
            continue
        note = last_before(notes, number, cue.turn, cue.target or "", lineage)
        out.append(
            say(
                "report.cued_turn", lang, turn=cue.turn, actor=cue.target,
                who=lead_text(Lead(cue.role, cue), lang), note=lead_text(note, lang),
            )
        )  # fmt: skip
    return out


async def report_sections(root: Path, number: int, saved: bool, only: Only = None) -> str:
    """What the take report gains: the secrets ledger when a soul marks secrets (`only`: a
    captain's characters' alone), the cued turns with who cued them, and the takes tree as a
    Mermaid graph once there are two takes."""
    from engine.takes.tree import mermaid_tree

    try:  # an old take whose files no longer load still gets the rest of its report
        state = await load_take(root, number, saved)
        now = await SceneFiles(root).load() if saved else None
        marks = await room_marks(root, number, saved, state.cast)
    except CircusError:
        return ""
    lang = state.language
    out: list[str] = []
    tree, turns = await tree_of(root, None if saved else len(state.turns) or 1)
    made_from = lineage_of(tree, turns)
    book = await asyncio.to_thread(take_ledger, state, number, saved, now, marks, only, made_from)
    if book.entries:
        out += ["", say("report.secrets", lang), "", *ledger_lines(book)[1:]]
    cued = cued_lines(state, number, marks, only, made_from)
    if cued:
        out += ["", say("report.cued", lang), "", *cued]
    if len(tree) > 1:
        out += ["", say("report.tree", lang), "", mermaid_tree(tree, lang, number)]
    return "\n".join(out) + ("\n" if out else "")


# ---------------------------------------------------------------------- what frontends call
async def secrets_lines(
    root: Path | str, take: object | None = None, only: Only = None
) -> list[str]:
    """`circus secrets` / `/secrets`: the ledger of a take (default: the last saved one);
    `only`: the actors whose secrets a captain may read (None: every actor's)."""
    root = Path(root)
    number, saved = await resolve(root, take)
    state = await load_take(root, number, saved)
    now = await SceneFiles(root).load() if saved else None
    marks = await room_marks(root, number, saved, state.cast)
    tree, turns = await tree_of(root, None if saved else len(state.turns))
    made_from = lineage_of(tree, turns)
    book = await asyncio.to_thread(take_ledger, state, number, saved, now, marks, only, made_from)
    if only is not None and not book.entries:
        return [say("secrets.none_yours", state.language)]
    return ledger_lines(book)


async def tree_lines_of(root: Path | str) -> list[str]:
    """`circus take list --tree` / `/take list`: the takes drawn as a tree."""
    from engine.takes.tree import tree_lines

    root = Path(root)
    language = (await SceneFiles(root).load()).language
    tree, turns = await tree_of(root)
    saved = await take_numbers(SceneFiles(root).store)
    current = (saved[-1] if saved else 0) + 1
    return tree_lines(tree, turns, language, current) or [say("tree.none", language)]


async def parent_take(root: Path | str, take: object) -> int:
    """The take `take` was made from (`take diff N` with one take); BadRequest for the first."""
    from engine.errors import BadRequest

    root = Path(root)
    number, _saved = await resolve(root, take)
    tree, _turns = await tree_of(root)
    tree.setdefault(number, None)
    parent = tree.get(number)
    if parent is None:
        numbers = sorted(n for n in tree if n < number)
        if not numbers:
            raise BadRequest("error.take_no_parent", take=number)
        return numbers[-1]
    return parent.take

"""The take report: who spoke, how the ball moved, what it cost, and whether the voices converge.

Pure: built from a take's turns, its usage rows (engine.takes.meta) and its picks, so a saved
take's report can be rebuilt from its folder. Counts: turns taken; lines = turns
with dialogue; words of dialogue (Chinese: characters); longest silence = most consecutive turns
by others (from the start, between two turns, or to the end). A warning is a line starting with
⚠, and there is none when nothing is worth a warning.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.catalog import CATALOGS, lang_of, say
from engine.folder.line_notes import LineNote, note_line, notes_by_turn
from engine.folder.turns import ANY, Turn
from engine.harvest.picks import Pick
from engine.harvest.repeats import Tokenize, near_repeats
from engine.harvest.textstats import count_words, ngrams, tokens
from engine.reply.cue import match_cue
from engine.takes.meta import STAGE_MANAGER, Row

WARN = "⚠"
CONVERGE_SHARE = 0.3  # of an actor's distinct 4-grams also said by one other actor
CONVERGE_MIN_GRAMS = 8  # too few phrases to judge below this
NEAR_REPEAT_WARN = 2  # this many near repeats is a pattern worth a warning

REASONS = ("director_cue", "cue", "self_cue", "neglect", "stage_manager", "fallback", "start",
           "played", "unknown")  # fmt: skip
REASON_LABELS = {
    lang: {r: text[f"report.reason.{r}"] for r in REASONS} for lang, text in CATALOGS.items()
}


@dataclass(frozen=True)
class ReportInput:
    scene: str
    take: int
    saved: bool
    turns: Sequence[Turn]
    rows: Sequence[Row]
    picks: Sequence[Pick]
    aliases: Mapping[str, Sequence[str]]
    language: str = "zh"
    line_notes: Sequence[LineNote] = ()  # the room's notes on lines (engine.folder.line_notes)


@dataclass(frozen=True)
class ActorCounts:
    turns: int
    lines: int
    words: int
    longest_silence: int


def actor_counts(turns: Sequence[Turn], actor: str) -> ActorCounts:
    mine = [i for i, t in enumerate(turns) if t.actor == actor]
    gaps = [b - a - 1 for a, b in zip([-1] + mine, mine + [len(turns)], strict=True)]
    lines = [t for t in turns if t.actor == actor and t.dialogue.strip()]
    return ActorCounts(
        len(mine), len(lines), sum(count_words(t.dialogue) for t in lines), max(gaps)
    )


def distinct_2(lines: Sequence[str], tokenize: Tokenize = tokens) -> float | None:
    grams = [g for line in lines for g in ngrams(tokenize(line), 2)]
    return len(set(grams)) / len(grams) if grams else None


def _grams4(lines: Sequence[str], tokenize: Tokenize = tokens) -> set[tuple[str, ...]]:
    return {g for line in lines for g in ngrams(tokenize(line), 4)}


Grams = Mapping[str, set[tuple[str, ...]]]  # each actor's distinct 4-grams


def shared_shares(
    by_actor: Mapping[str, Sequence[str]], grams4: Grams | None = None
) -> dict[str, float | None]:
    """Per actor: the share of their distinct 4-grams that also occur in another actor's lines
    (`grams4`: those 4-grams, when the caller has them already)."""
    grams = grams4 if grams4 is not None else {a: _grams4(x) for a, x in by_actor.items()}
    speakers = Counter(g for mine in grams.values() for g in mine)  # actors saying each 4-gram
    out: dict[str, float | None] = {}
    for actor, mine in grams.items():
        shared = sum(1 for g in mine if speakers[g] > 1)
        out[actor] = shared / len(mine) if mine else None
    return out


def converging_pairs(
    by_actor: Mapping[str, Sequence[str]], grams4: Grams | None = None
) -> list[tuple[str, str, float]]:
    """(A, B, share): pairs where A's phrasing largely also occurs in B's lines."""
    grams = grams4 if grams4 is not None else {a: _grams4(x) for a, x in by_actor.items()}
    best: dict[frozenset[str], tuple[str, str, float]] = {}
    for a, ga in grams.items():
        if len(ga) < CONVERGE_MIN_GRAMS:
            continue
        for b, gb in grams.items():
            share = len(ga & gb) / len(ga)
            key = frozenset((a, b))
            if a != b and share >= CONVERGE_SHARE and share > best.get(key, ("", "", 0.0))[2]:
                best[key] = (a, b, share)
    return sorted(best.values(), key=lambda p: -p[2])


def cue_edges(turns: Sequence[Turn], aliases: Mapping[str, Sequence[str]]) -> Counter:
    edges: Counter = Counter()
    for turn in turns:
        to = match_cue(turn.cue, aliases)
        if to is not None and to != ANY:
            edges[(turn.actor, to)] += 1
    return edges


def mermaid(edges: Counter, actors: Sequence[str]) -> str:
    ids = {a: f"a{i}" for i, a in enumerate(actors)}
    out = ["```mermaid", "flowchart LR"]
    for actor, node in ids.items():
        label = actor.replace('"', "#quot;")
        out.append(f'  {node}["{label}"]')
    for (src, dst), n in sorted(edges.items(), key=lambda e: (-e[1], e[0])):
        out.append(f"  {ids[src]} -->|{n}| {ids[dst]}")
    out.append("```")
    return "\n".join(out)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{round(100 * x)}%"


def _cost(x: float | None) -> str:
    return "—" if x is None else f"${x:.4f}"


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def cache_lines(rows: Sequence[Row], language: str) -> list[str]:
    """The prompt-cache table: per model, the share of prompt tokens its provider read from
    its cache and what that saved (engine.door.llm); nothing when no provider cached anything."""
    per: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
    for row in rows:
        m = per[str(row.get("model") or "?")]
        m[0] += int(row.get("prompt_tokens", 0) or 0)
        m[1] += int(row.get("cached_tokens", 0) or 0)
        m[2] += int(row.get("cache_write_tokens", 0) or 0)
        m[3] += float(row.get("cache_saved_usd", 0.0) or 0.0)
    used = {model: m for model, m in per.items() if m[1] or m[2]}
    if not used:
        return []
    out = ["", say("report.cache", language), "", say("report.cache_table", language)]
    out.append("|---|---:|---:|---:|---:|---:|")
    for model, (prompt, read, wrote, saved) in sorted(used.items()):
        share = _pct(read / prompt) if prompt else "—"
        out.append(
            f"| {model} | {int(prompt)} | {int(read)} | {share} | {int(wrote)} | {_cost(saved)} |"
        )
    return out


Say = Callable[..., str]  # a report sentence by its key, in the report's language


def build_report(data: ReportInput) -> str:
    """The take report (markdown): who spoke, how they were chosen, the models and what they
    cost, the picks, the voice signals and the cue graph. Pure."""
    lang = data.language

    def t(key: str, **values: object) -> str:
        return say(f"report.{key}", lang, **values)

    turns = list(data.turns)
    actors = list(data.aliases) + sorted({x.actor for x in turns} - set(data.aliases))
    out = _summary(data, t, actors)
    out += _chosen(data, t, actors)
    out += _models(data, t)
    out += _picks(data, t)
    out += _line_notes(data, t)
    out += _voices(t, turns, actors)
    out += _cue_graph(data, t, actors)
    return "\n".join(out) + "\n"


def _summary(data: ReportInput, t: Say, actors: list[str]) -> list[str]:
    """The title, the take in one line, and each actor's turns, lines, words and silence."""
    turns = list(data.turns)
    counts = {a: actor_counts(turns, a) for a in actors}
    state = t("saved") if data.saved else t("unsaved")
    total_words = sum(c.words for c in counts.values())
    lines = sum(c.lines for c in counts.values())
    out = [
        t("title", take=data.take, scene=data.scene),
        "",
        t("summary", turns=len(turns), lines=lines, words=total_words, state=state),
        "",
        t("actors"),
        "",
        t("actors_table"),
        "|---|---:|---:|---:|---:|",
    ]
    for a in actors:
        c = counts[a]
        out.append(f"| {a} | {c.turns} | {c.lines} | {c.words} | {c.longest_silence} |")
    return out


def _chosen(data: ReportInput, t: Say, actors: list[str]) -> list[str]:
    """How each speaker was chosen, per actor."""
    actor_rows = {r["turn"]: r for r in data.rows if r.get("role") != STAGE_MANAGER}
    reasons: dict[str, Counter] = defaultdict(Counter)
    for turn in data.turns:
        row = actor_rows.get(turn.number, {})
        reason = str(row.get("reason") or "unknown")
        reasons[turn.actor][reason if reason in REASONS else "unknown"] += 1
    used = [r for r in REASONS if any(reasons[a][r] for a in actors)]
    labels = REASON_LABELS[lang_of(data.language)]
    out = ["", t("chosen"), ""]
    if not used:
        return out + [t("no_turns")]
    out.append(f"| {t('actor')} | " + " | ".join(labels[r] for r in used) + " |")
    out.append("|---|" + "---:|" * len(used))
    for a in actors:
        out.append(f"| {a} | " + " | ".join(str(reasons[a][r]) for r in used) + " |")
    return out


@dataclass
class _Tally:
    """Calls, tokens, repairs and cost, per model and per (role, model)."""

    models: dict[str, dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float))
    )
    costs: dict[str, float | None] = field(default_factory=dict)
    roles: dict[tuple[str, str], dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float))
    )
    role_costs: dict[tuple[str, str], float | None] = field(default_factory=dict)


def _tally(rows: Sequence[Row]) -> _Tally:
    tally = _Tally()
    for row in rows:
        model = str(row.get("model") or "?")
        role = str(row.get("role") or "?")
        m, r = tally.models[model], tally.roles[(role, model)]
        for target in (m, r):
            target["calls"] += int(row.get("calls", 1) or 0)
            target["prompt"] += int(row.get("prompt_tokens", 0) or 0)
            target["completion"] += int(row.get("completion_tokens", 0) or 0)
        if role != STAGE_MANAGER:
            # A fallback reply was also a failed repair: count it once, as a fallback.
            m["repairs"] += bool(row.get("repaired")) and not row.get("fallback")
            m["fallbacks"] += bool(row.get("fallback"))
            m["others"] += row.get("wrote_for_others") is True
        if row.get("cost_usd") is not None:
            cost = float(row["cost_usd"])
            tally.costs[model] = (tally.costs.get(model) or 0.0) + cost
            tally.role_costs[(role, model)] = (tally.role_costs.get((role, model)) or 0.0) + cost
    return tally


def _played(row: Row) -> bool:
    """A person's line: its row records no model and no call (engine.rehearsal.stage_commands)."""
    return row.get("reason") == "played"


def _models(data: ReportInput, t: Say) -> list[str]:
    """Models: calls, repairs, fallbacks, tokens, cost; then per role, then the cache. A turn a
    person played is theirs, not a model's: it is counted in one line of its own."""
    played = Counter(str(row.get("role")) for row in data.rows if _played(row))
    by_person = ", ".join(f"{name} × {n}" for name, n in played.items())
    people = ["", t("played", counts=by_person)] if played else []
    rows = [row for row in data.rows if not _played(row)]
    tally = _tally(rows)
    out = ["", t("models"), ""]
    if not tally.models:
        return out + [t("no_calls")] + people
    out.append(t("models_table"))
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for model, m in sorted(tally.models.items()):
        out.append(
            f"| {model} | {int(m['calls'])} | {int(m['repairs'])} | {int(m['fallbacks'])} | "
            f"{int(m['prompt'])} | {int(m['completion'])} | {_cost(tally.costs.get(model))} |"
        )
    wrote = [(model, int(m["others"])) for model, m in sorted(tally.models.items()) if m["others"]]
    if wrote:
        counts = ", ".join(f"{model} × {n}" for model, n in wrote)
        out += ["", t("wrote_for_others", warn=WARN, counts=counts)]
    out += people
    out += ["", t("per_role"), ""]
    out.append(t("roles_table"))
    out.append("|---|---|---:|---:|---:|")
    for (role, model), r in sorted(tally.roles.items()):
        name = t("stage_manager") if role == STAGE_MANAGER else role
        out.append(
            f"| {name} | {model} | {int(r['prompt'])} | {int(r['completion'])} | "
            f"{_cost(tally.role_costs.get((role, model)))} |"
        )
    return out + cache_lines(rows, data.language)


def _picks(data: ReportInput, t: Say) -> list[str]:
    out = ["", t("picks"), ""]
    if not data.picks:
        out.append(t("none_yet"))
    for p in data.picks:
        line = _one_line(p.dialogue or p.action)
        voters = ", ".join(p.votes)
        note = f" — {_one_line(p.note)}" if p.note else ""
        out.append(
            f"- {t('turn', turn=p.turn)} · {p.actor}: “{line}” — ⭐ {len(p.votes)} ({voters}){note}"
        )
    return out


def _line_notes(data: ReportInput, t: Say) -> list[str]:
    """The room's notes, each under its line (nothing when nobody noted a line)."""
    if not data.line_notes:
        return []
    turns = {turn.number: turn for turn in data.turns}
    out = ["", t("line_notes"), ""]
    for number, notes in notes_by_turn(data.line_notes).items():
        turn = turns.get(number)
        actor = turn.actor if turn else notes[0].actor
        said = _one_line(turn.dialogue or turn.action) if turn else "—"
        out.append(f"- {t('turn', turn=number)} · {actor}: “{said}”")
        out += [f"  {note_line(note)}" for note in notes]
    return out


def _voices(t: Say, turns: list[Turn], actors: list[str]) -> list[str]:
    """Voice signals (seed 000 §2.2: models make everyone sound alike)."""
    by_actor = {
        a: [x.dialogue for x in turns if x.actor == a and x.dialogue.strip()] for a in actors
    }
    memo: dict[str, Sequence[str]] = {}  # each line is tokenized once for all the signals
    words: dict[str, str] = {}  # one object per distinct token: a long take's lines share them

    def tokenize(line: str) -> Sequence[str]:
        if line not in memo:
            memo[line] = [words.setdefault(w, w) for w in tokens(line)]
        return memo[line]

    grams4 = {a: _grams4(lines, tokenize) for a, lines in by_actor.items()}
    shares = shared_shares(by_actor, grams4)
    out = ["", t("voices"), ""]
    out.append(t("voices_table"))
    out.append("|---|---:|---:|")
    for a in actors:
        out.append(f"| {a} | {_pct(distinct_2(by_actor[a], tokenize))} | {_pct(shares[a])} |")
    repeats = near_repeats(turns, tokenize)
    if repeats:
        out += ["", t("near_repeats")]
        for later, earlier, ratio in repeats:
            out.append(
                f"- {t('turn', turn=later.number)} ({later.actor}) ≈ "
                f"{t('turn', turn=earlier.number)} ({earlier.actor}), "
                f"{_pct(ratio)}: “{_one_line(later.dialogue, 60)}”"
            )
    warnings = []
    for a, b, share in converging_pairs(by_actor, grams4):
        warnings.append(t("converging", warn=WARN, a=a, b=b, share=_pct(share)))
    if len(repeats) >= NEAR_REPEAT_WARN:
        warnings.append(t("going_round", warn=WARN, count=len(repeats)))
    if warnings:
        out += [""] + warnings
    return out


def _cue_graph(data: ReportInput, t: Say, actors: list[str]) -> list[str]:
    out = ["", t("cue_graph"), ""]
    edges = cue_edges(data.turns, data.aliases)
    out.append(mermaid(edges, actors) if edges else t("no_cues"))
    return out

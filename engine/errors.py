"""Named errors for people: each message says what went wrong and what to do next.

Every error carries a catalog key and its values (engine.catalog); `str(exc)` is the English
text and `in_language` says it in the scene's language. Frontends translate these once at their
edge (an exit code and one line in the console, a private reply in Discord). Anything else
escaping the engine is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.catalog import EN as _EN
from engine.catalog import Phrase, say
from engine.vocabulary import FailureKind


class CircusError(Exception):
    """Base for every error a director can act on.

    `CircusError("error.key", **values)` says the catalog sentence `message_key` filled with
    `values` (a Phrase among them is said in the same language).
    """

    def __init__(self, message_key: str, /, **values: object) -> None:
        self.message_key, self.values = message_key, values
        super().__init__(say(message_key, "en", **values))

    def in_language(self, language: str, *, relative: bool = False) -> str:
        """The message in the scene's language. `relative=True` promises no server path in it
        (Discord); errors that name a path override this to name it inside the scene."""
        return say(self.message_key, language, **self.values)


def _known(what: str) -> object:
    return Phrase(f"error.what.{what}") if f"error.what.{what}" in _EN else what


class BadName(CircusError):
    def __init__(self, what: str, name: str, why: str, /, **values: object) -> None:
        super().__init__(
            "error.bad_name",
            what=_known(what),
            name=name,
            why=Phrase(f"error.name.{why}", **values),
        )


class BadScript(CircusError):
    """A screenplay file that cannot be imported or spliced, and why (`error.script.<why>`)."""

    def __init__(self, why: str, /, **values: object) -> None:
        super().__init__(f"error.script.{why}", **values)


class CastTooBig(CircusError):
    def __init__(self, count: int, most: int) -> None:
        super().__init__("error.cast_too_big", count=count, most=most)


class SceneNotFound(CircusError):
    def __init__(self, path: object) -> None:
        self.scene = _last_part(path)
        super().__init__("error.scene_not_found", path=path)

    def in_language(self, language: str, *, relative: bool = False) -> str:
        if not relative:
            return super().in_language(language)
        return say("error.scene_not_found.relative", language, scene=self.scene)


class SceneExists(CircusError):
    def __init__(self, path: object) -> None:
        self.scene = _last_part(path)
        super().__init__("error.scene_exists", path=path)

    def in_language(self, language: str, *, relative: bool = False) -> str:
        if not relative:
            return super().in_language(language)
        return say("error.scene_exists.relative", language, scene=self.scene)


def _last_part(path: object) -> str:
    return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


class BadSceneFile(CircusError):
    """A file in a scene folder that can't be used as it is.

    `path` is where it is on this machine (for the console); `rel` is its path inside the scene
    folder (`actors/律師/soul.md`), the only form shown in Discord (`relative=True`). `why` is
    the catalog key of the reason, said with `values`; `why` holds it said in English.
    """

    def __init__(
        self, path: object, why: str, /, *, rel: str | None = None, **values: object
    ) -> None:
        self.path = path
        self.rel = rel if rel is not None else _last_part(path)
        self.reason = Phrase(why, **values)
        self.why = self.reason.render("en")
        super().__init__("error.bad_scene_file", path=path, why=self.reason)

    def in_language(self, language: str, *, relative: bool = False) -> str:
        path = self.rel if relative else self.path
        return say("error.bad_scene_file", language, path=path, why=self.reason)


class Refused(CircusError):
    """A change that arrived through an untrusted door (Discord) and may not set `key`.

    Files the operator writes on disk are trusted configuration; text a Discord member sends
    is data, so it may change a character but never where a model request goes or which
    model (and bill) it uses beyond the operator's allow-list.
    """

    def __init__(self, key: str, value: object = None, allowed: Iterable[str] = ()) -> None:
        self.key = key
        self.value = value
        self.allowed = tuple(allowed)
        if key == "api_base":
            super().__init__("error.refused.api_base")
        elif key == "reply_format":
            super().__init__("error.refused.reply_format")
        elif key in ("voice", "narrator_voice", "thoughts_voice"):
            names = ", ".join(self.allowed[:24])
            super().__init__("error.refused.voice", key=key, shown=str(value)[:64], names=names)
        elif key not in ("model", "fallback_model", "stage_manager_model"):
            super().__init__("error.refused.operator", key=key)  # a budget, a timeout
        else:
            super().__init__(
                "error.refused.model",
                key=key,
                shown=str(value)[:80],
                allowed=Phrase("error.refused.allowed", names=self.allowed)
                if self.allowed
                else Phrase("error.refused.none_allowed"),
            )


class UnknownActor(CircusError):
    def __init__(self, name: str, cast: Iterable[str]) -> None:
        cast = tuple(cast)
        super().__init__("error.unknown_actor", name=name, cast=cast or Phrase("error.cast_nobody"))


class AmbiguousActor(CircusError):
    """A name that could mean several actors: the director is asked, never guessed for."""

    def __init__(self, name: str, candidates: Iterable[str]) -> None:
        self.name, self.candidates = name, tuple(candidates)
        super().__init__("error.ambiguous_actor", name=name, candidates=self.candidates)


class SceneBusy(CircusError):
    def __init__(self, scene: str) -> None:
        super().__init__("error.scene_busy", scene=scene)


class TakeNotFound(CircusError):
    def __init__(self, take: object, available: Iterable[int]) -> None:
        numbers = list(available)
        have = ", ".join(f"take_{n}" for n in numbers)
        take = str(take) if len(str(take)) <= 20 else str(take)[:20] + "…"  # 5,000 digits
        super().__init__(
            "error.take_not_found", take=take, have=have or Phrase("error.no_takes_yet")
        )


class BadRequest(CircusError):
    """A command's arguments make no sense (a negative turn count, an empty note...)."""


class ModelError(CircusError):
    """A model call failed after its retries and fallback. `kind` is what failed, read from the
    error's status and type (engine.door.failures), so the message names what to fix: the
    gateway's key, a name the proxy does not serve (with the names it does), an address."""

    KEYS = {
        "gateway_key": "error.model.gateway_key",
        "not_served": "error.model.not_served",
        "unreachable": "error.model.unreachable",
    }

    def __init__(
        self,
        model: str,
        why: str,
        actor: str | None = None,
        *,
        kind: FailureKind = "error",
        served: tuple[str, ...] = (),
    ) -> None:
        self.model = model
        self.why = why
        self.actor = actor
        self.kind: FailureKind = kind
        self.served = served
        key = self.KEYS.get(kind, "error.model")
        super().__init__(key, model=model, why=why, served=", ".join(served[:20]))


class UnroutableModel(CircusError):
    """A model string no provider serves (`scripted`, `llama3.1`): refused before a run starts,
    naming what a model string looks like and the closest names litellm knows."""

    def __init__(self, model: str, who: object, closest: Iterable[str] = ()) -> None:
        self.model = model
        self.closest = tuple(closest)
        super().__init__(
            "error.unroutable",
            who=who,
            model=model[:80],
            closest=Phrase("error.unroutable.closest", names=self.closest) if self.closest else "",
        )


class OffStage(CircusError):
    """A command needs an actor on stage who is not (cue, run --start, say, exit)."""

    def __init__(self, actor: str) -> None:
        super().__init__("error.off_stage", actor=actor)


class OnStage(CircusError):
    """`enter` for an actor who is already on stage."""

    def __init__(self, actor: str) -> None:
        super().__init__("error.on_stage", actor=actor)


class NobodyOnStage(CircusError):
    def __init__(self) -> None:
        super().__init__("error.nobody_on_stage")


class NotYourTurn(CircusError):
    """A played line while a run plays, but the ball is not with that actor."""

    def __init__(self, actor: str) -> None:
        super().__init__("error.not_your_turn", actor=actor)


class NotPlaying(CircusError):
    """Someone tried to speak for an actor they do not play."""

    def __init__(self, actor: str | None) -> None:
        if actor is None:
            super().__init__("error.plays_nobody")
        else:
            super().__init__("error.not_playing", actor=actor)


def _amount(unit: str, value: float) -> object:
    if unit == "usd":
        return f"${value:.4f}"
    return Phrase("error.budget.tokens", count=f"{int(value):,}")


class BudgetExceeded(CircusError):
    """A model call would cross a spend budget, so it was not made (nothing was written).

    `scope` is scene (context.md's budget_usd/budget_tokens) or day (the operator's
    CIRCUS_DAILY_BUDGET_* for one Discord server); `estimate` is None when the budget is
    simply used up.
    """

    def __init__(
        self,
        scope: str,
        unit: str,  # usd | tokens
        limit: float,
        spent: float,
        estimate: float | None = None,
        setting: str = "",
    ) -> None:
        self.scope, self.unit, self.limit, self.spent = scope, unit, limit, spent
        self.estimate = estimate
        self.setting = setting
        left = max(0.0, limit - spent)
        today = Phrase("error.budget.today") if scope == "day" else ""
        if estimate is None:
            lead = Phrase("error.budget.cannot_start")
            state = Phrase("error.budget.used_up", spent=_amount(unit, spent), today=today)
        else:
            lead = Phrase("error.budget.stopped")
            state = Phrase(
                "error.budget.would_cross",
                spent=_amount(unit, spent),
                today=today,
                left=_amount(unit, left),
                estimate=_amount(unit, estimate),
            )
        which = "scene" if scope == "scene" else "day"
        super().__init__(
            "error.budget",
            lead=lead,
            which=Phrase(f"error.budget.{which}", setting=setting, limit=_amount(unit, limit)),
            state=state,
            todo=Phrase(f"error.budget.{which}_todo", setting=setting),
        )


class TurnNotFound(CircusError):
    def __init__(self, take: int, turn: object, last: int) -> None:
        have = Phrase("error.turn_range", last=last) if last else Phrase("error.no_turns_yet")
        super().__init__("error.turn_not_found", take=take, have=have, turn=turn)


class NotPicked(CircusError):
    def __init__(self, take: int, turn: int, by: str | None = None) -> None:
        who = Phrase("error.picked_by", by=by) if by else ""
        super().__init__("error.not_picked", take=take, turn=turn, who=who)


class UnknownFormat(CircusError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        formats = ", ".join(known)
        super().__init__("error.unknown_format", name=name, formats=formats)


class NoVoiceEngine(CircusError):
    """No voice engine can run here: the offline voices are not installed (or the audio
    libraries a speech model's answers are mixed with); the message says what to install."""


class UnknownVoice(CircusError):
    def __init__(self, voice: str, engine: str) -> None:
        self.voice, self.engine = voice, engine
        super().__init__("error.voice.unknown", voice=voice[:64], engine=engine)


class NotYourCharacter(CircusError):
    """A captain reached past their own character: another actor (error.captain.not_yours),
    everyone (error.captain.everyone), or a cue the scene keeps for its directors
    (error.captain.no_cue)."""

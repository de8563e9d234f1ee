"""Named errors for people: each message says what went wrong and what to do next.

Every error carries its message in English and, where written, in Chinese; `in_language`
picks the scene's. Frontends translate these once at their edge (an exit code and one line in
the console, a private reply in Discord). Anything else escaping the engine is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable


class CircusError(Exception):
    """Base for every error a director can act on."""

    def __init__(self, message: str, zh: str | None = None) -> None:
        super().__init__(message)
        self.zh = zh

    def in_language(self, language: str, *, relative: bool = False) -> str:
        """The message in the scene's language. `relative=True` promises no server path in it
        (Discord); errors that name a path override this to name it inside the scene."""
        if self.zh and language.lower().startswith("zh"):
            return self.zh
        return str(self)


_WHAT_ZH = {"Actor": "角色", "Scene": "場景", "Take": "排演"}


class BadName(CircusError):
    def __init__(self, what: str, name: str, why: str, why_zh: str | None = None) -> None:
        super().__init__(
            f"{what} name {name!r} is not allowed: {why}.",
            f"不能用「{name}」當{_WHAT_ZH.get(what, what)}名稱：{why_zh}。" if why_zh else None,
        )


class SceneNotFound(CircusError):
    def __init__(self, path: object) -> None:
        self.scene = _last_part(path)
        super().__init__(
            f"No scene at {path} (no context.md there) — create one with `circus new {path}`.",
            f"{path} 不是場景（那裡沒有 context.md）——用 `circus new {path}` 建一個。",
        )

    def in_language(self, language: str, *, relative: bool = False) -> str:
        if not relative:
            return super().in_language(language)
        if language.lower().startswith("zh"):
            return f"「{self.scene}」不是場景（那裡沒有 context.md）。"
        return f"{self.scene} is not a scene (it has no context.md)."


class SceneExists(CircusError):
    def __init__(self, path: object) -> None:
        self.scene = _last_part(path)
        super().__init__(
            f"{path} already exists — choose another name; nothing was written.",
            f"{path} 已經存在——換個名字；什麼都沒寫入。",
        )

    def in_language(self, language: str, *, relative: bool = False) -> str:
        if not relative:
            return super().in_language(language)
        if language.lower().startswith("zh"):
            return f"「{self.scene}」已經存在——換個名字；什麼都沒寫入。"
        return f"{self.scene} already exists — choose another name; nothing was written."


def _last_part(path: object) -> str:
    return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


class BadSceneFile(CircusError):
    """A file in a scene folder that can't be used as it is.

    `path` is where it is on this machine (for the console); `rel` is its path inside the scene
    folder (`actors/律師/soul.md`), the only form shown in Discord (`relative=True`).
    """

    def __init__(
        self, path: object, why: str, why_zh: str | None = None, *, rel: str | None = None
    ) -> None:
        self.path = path
        self.rel = rel if rel is not None else _last_part(path)
        self.why = why
        self.why_zh = why_zh
        super().__init__(f"{path}: {why}", f"{path}：{why_zh}" if why_zh else None)

    def in_language(self, language: str, *, relative: bool = False) -> str:
        if not relative:
            return super().in_language(language)
        if self.why_zh and language.lower().startswith("zh"):
            return f"{self.rel}：{self.why_zh}"
        return f"{self.rel}: {self.why}"


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
            super().__init__(
                "`api_base` can't be set from Discord — where model requests go is the "
                "operator's setting (soul.md on disk, context.md or CIRCUS_API_BASE). Remove the "
                "api_base line and send the soul again; nothing was written.",
                "不能從 Discord 設定 `api_base`——模型請求送到哪裡由營運者決定（磁碟上的 soul.md、"
                "context.md 或 CIRCUS_API_BASE）。刪掉 api_base 那一行再送一次；什麼都沒寫入。",
            )
            return
        names = ", ".join(self.allowed)
        shown = str(value)[:80]
        if self.allowed:
            en = f"the allowed models are {names}"
            zh = f"可以用的模型是 {'、'.join(self.allowed)}"
        else:
            en = "no model may be chosen from Discord on this server"
            zh = "這台伺服器不允許從 Discord 選模型"
        super().__init__(
            f"`{key}: {shown}` isn't allowed from Discord — {en} (the operator sets "
            f"CIRCUS_ALLOWED_MODELS). Pick one of them or remove the {key} line; nothing was "
            "written.",
            f"不能從 Discord 設定 `{key}: {shown}`——{zh}（由營運者以 CIRCUS_ALLOWED_MODELS "
            f"設定）。改用其中一個，或刪掉 {key} 那一行；什麼都沒寫入。",
        )


class UnknownActor(CircusError):
    def __init__(self, name: str, cast: Iterable[str]) -> None:
        cast = list(cast)
        super().__init__(
            f"No actor called {name} in this scene — the cast is {', '.join(cast) or '(nobody)'}.",
            f"這場戲沒有叫「{name}」的角色——在場的是 {'、'.join(cast) or '（沒有人）'}。",
        )


class SceneBusy(CircusError):
    def __init__(self, scene: str) -> None:
        super().__init__(
            f"Scene {scene} is already running — wait for it to finish or cut it first.",
            f"「{scene}」正在排演中——等它跑完，或先喊 CUT。",
        )


class TakeNotFound(CircusError):
    def __init__(self, take: object, available: Iterable[int]) -> None:
        numbers = list(available)
        have = ", ".join(f"take_{n}" for n in numbers)
        take = str(take) if len(str(take)) <= 20 else str(take)[:20] + "…"  # 5,000 digits
        super().__init__(
            f"No take {take} in this scene — takes: {have or 'none yet (save one with take save)'}.",
            f"這場戲沒有排演 {take}——現有：{have or '還沒有（用 take save 存一個）'}。",
        )


class BadRequest(CircusError):
    """A command's arguments make no sense (a negative turn count, an empty note...)."""


class ModelError(CircusError):
    def __init__(self, model: str, why: str, actor: str | None = None) -> None:
        self.model = model
        self.why = why
        self.actor = actor
        super().__init__(
            f"Model {model} failed: {why}. Check the model name, its API key or api_base, "
            "or set a fallback_model in the actor's soul.md.",
            f"模型 {model} 失敗：{why}。請檢查模型名稱、API 金鑰或 api_base，"
            "或在角色的 soul.md 設定 fallback_model。",
        )


class OffStage(CircusError):
    """A command needs an actor on stage who is not (cue, run --start, say, exit)."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"{actor} is off stage — bring them in first with `enter {actor}` "
            "(console: ENTER, Discord: /enter); nothing was written.",
            f"{actor} 不在場上——先用 `enter {actor}` 讓他進場"
            "（console：ENTER，Discord：/enter）；什麼都沒寫入。",
        )


class OnStage(CircusError):
    """`enter` for an actor who is already on stage."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"{actor} is already on stage; nothing was written.",
            f"{actor} 已經在場上；什麼都沒寫入。",
        )


class NobodyOnStage(CircusError):
    def __init__(self) -> None:
        super().__init__(
            "Nobody is on stage — bring someone in with `enter ACTOR` first.",
            "場上沒有人——先用 `enter 角色` 讓人進場。",
        )


class NotYourTurn(CircusError):
    """A played line while a run plays, but the ball is not with that actor."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"The scene is playing and the ball is not with {actor} — wait until the run "
            "waits for you, or ask the director to cut; nothing was written.",
            f"戲正在進行，球不在 {actor} 手上——等輪到你，或請導演喊 CUT；什麼都沒寫入。",
        )


class NotPlaying(CircusError):
    """Someone tried to speak for an actor they do not play."""

    def __init__(self, actor: str | None) -> None:
        if actor is None:
            super().__init__(
                "You play nobody in this scene — a director can give you a role with /play.",
                "你在這場戲裡沒有扮演任何角色——導演可以用 /play 把角色交給你。",
            )
        else:
            super().__init__(
                f"Only the person playing {actor} may speak their lines.",
                f"只有扮演 {actor} 的人能說他的台詞。",
            )


def _amount(unit: str, value: float, zh: bool = False) -> str:
    if unit == "usd":
        return f"${value:.4f}"
    return f"{int(value):,} " + ("個 token" if zh else "tokens")


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
        today, today_zh = (" today", "今天") if scope == "day" else ("", "")
        spent_en, spent_zh = _amount(unit, spent), _amount(unit, spent, True)
        if estimate is None:
            lead, lead_zh = "The run cannot start", "排演無法開始"
            state = f"is used up — {spent_en} spent{today}"
            state_zh = f"已經用完——{today_zh}已花 {spent_zh}"
        else:
            lead, lead_zh = (
                "The run stopped before the next model call",
                "排演在下一次模型呼叫前停了",
            )
            state = (
                f"would be crossed — {spent_en} spent{today}, {_amount(unit, left)} left, and the "
                f"call may cost up to {_amount(unit, estimate)}"
            )
            state_zh = (
                f"會被超過——{today_zh}已花 {spent_zh}，剩 {_amount(unit, left, True)}，"
                f"這次呼叫最多可能要 {_amount(unit, estimate, True)}"
            )
        if scope == "scene":
            which = f"this scene's budget ({setting}: {_amount(unit, limit)} in context.md)"
            which_zh = f"這場戲的預算（context.md 的 {setting}: {_amount(unit, limit, True)}）"
            todo = f"To go on, raise {setting}: in the scene's context.md."
            todo_zh = f"要繼續，請調高這場戲 context.md 裡的 {setting}:。"
        else:
            which = f"this server's daily budget ({setting} = {_amount(unit, limit)} per UTC day)"
            which_zh = (
                f"這個伺服器每天的預算（{setting} = 每個 UTC 日 {_amount(unit, limit, True)}）"
            )
            todo = "Wait until tomorrow (00:00 UTC), or ask the bot's operator to raise it."
            todo_zh = "請等到明天（UTC 00:00），或請機器人的管理者調高預算。"
        super().__init__(
            f"{lead}: {which} {state}. {todo}", f"{lead_zh}：{which_zh}{state_zh}。{todo_zh}"
        )


class TurnNotFound(CircusError):
    def __init__(self, take: int, turn: object, last: int) -> None:
        have = f"turns 1–{last}" if last else "no turns yet"
        have_zh = f"第 1–{last} 輪" if last else "還沒有任何一輪"
        super().__init__(
            f"Take {take} has {have}; there is no turn {turn} — nothing was changed.",
            f"排演 {take} 有{have_zh}；沒有第 {turn} 輪——什麼都沒改。",
        )


class NotPicked(CircusError):
    def __init__(self, take: int, turn: int, by: str | None = None) -> None:
        who = f" by {by}" if by else ""
        who_zh = f"（{by}）" if by else ""
        super().__init__(
            f"Turn {turn} of take {take} is not picked{who} — nothing was changed "
            "(`picks` lists the bin).",
            f"排演 {take} 第 {turn} 輪沒有被選{who_zh}——什麼都沒改（用 picks 看精選）。",
        )


class UnknownFormat(CircusError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        formats = ", ".join(known)
        super().__init__(
            f"Unknown export format {name!r} — choose from {formats}; nothing was written.",
            f"不認得的匯出格式「{name}」——可選 {formats}；什麼都沒寫入。",
        )

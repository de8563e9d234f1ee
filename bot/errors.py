"""Problems the bot itself reports to a person, as an i18n key plus values.

Invariant: these carry no text of their own; the single error edge (bot.interaction.edge.report, via the
command tree's on_error) renders them in the scene's language, privately. Engine errors
(CircusError) travel separately and are translated at the same edge.
"""

from __future__ import annotations

from discord import app_commands


class BotProblem(app_commands.AppCommandError):
    """Something a user or admin can act on; rendered privately with `bot.i18n.t`. An
    AppCommandError, so a check (bot.interaction.gate.directors_only) may raise it straight to on_tree_error."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


class NotInScene(BotProblem):
    def __init__(self) -> None:
        super().__init__("not_in_scene")


class NotDirector(BotProblem):
    def __init__(self, directors: str) -> None:
        super().__init__("not_director", directors=directors)


class MissingPermission(BotProblem):
    """Discord said 403 Missing Permissions; `what` names what the bot tried to do."""

    def __init__(self, channel: str, what: str) -> None:
        super().__init__("missing_permission", channel=channel, what=what)


class WebhookLimit(BotProblem):
    def __init__(self, channel: str) -> None:
        super().__init__("webhook_full", channel=channel)


class ReplaceNeedsInto(BotProblem):
    """/export replace: names lines of the writer's script, so it needs into: too."""

    def __init__(self) -> None:
        super().__init__("export_replace_needs_into")


class IntoOwnFormat(BotProblem):
    """/export into: writes the take into the writer's script, in its own format: a format: or
    thoughts: beside it would be silently ignored, so it is refused."""

    def __init__(self) -> None:
        super().__init__("export_into_own_format")

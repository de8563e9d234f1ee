"""Forms and buttons for a scene's directors: the same gate as their commands, the same edge.

Invariant: a form (Modal) or a row of buttons (View) is no command, so the command tree's
checks never see it; these bases give it the director check as its `interaction_check` (run by
discord.py before `on_submit` or any button's callback) and answer every error through
bot.interaction.edge.report, privately — so a submit or a press by anyone else changes nothing.
"""

from __future__ import annotations

import discord

from bot.interaction.edge import report
from bot.interaction.gate import directed, may_direct, refuse
from bot.thread.scene import SceneThread


class DirectorsForm(discord.ui.Modal):
    """A form only the scene's directors may submit. `for_scene` is set when the form writes
    to a scene other than its thread's (/scene next opens the new scene's souls from the old
    thread): then its user must direct that scene too."""

    for_scene: SceneThread | None = None

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        directed(interaction)  # raises the refusal, which on_error answers
        if self.for_scene is not None and not may_direct(interaction, self.for_scene):
            raise refuse(interaction, self.for_scene)
        return True

    # discord.py's Modal.on_error takes no item (it narrows BaseView's the same way)
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction, error: Exception, /
    ) -> None:
        await report(interaction, error)


class DirectorsView(discord.ui.View):
    """Buttons only the scene's directors may press."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        directed(interaction)
        return True

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item, /
    ) -> None:
        await report(interaction, error)

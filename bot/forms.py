"""Forms and buttons for a scene's directors: the same gate as their commands, the same edge.

Invariant: a form (Modal) or a row of buttons (View) is no command, so the command tree's
checks never see it; these bases give it the director check as its `interaction_check` (run by
discord.py before `on_submit` or any button's callback) and answer every error through
bot.edge.report, privately — so a submit or a press by anyone else changes nothing.
"""

from __future__ import annotations

import discord

from bot.edge import report
from bot.gate import directed


class DirectorsForm(discord.ui.Modal):
    """A form only the scene's directors may submit."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        directed(interaction)  # raises the refusal, which on_error answers
        return True

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
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

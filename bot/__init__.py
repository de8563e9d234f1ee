"""Circus in Discord: scenes are threads, actors are webhook personas, directors use slash
commands and receive the actors' thoughts by DM. `main()` is what `circus bot` runs."""


def main() -> int:
    """Run the Discord bot (reads DISCORD_TOKEN, CIRCUS_SCENES_DIR, ... from the environment)."""
    from bot.app import main as run

    return run()

"""Circus in Discord: scenes are threads, actors are webhook personas, directors use slash
commands and receive the actors' thoughts by DM. `main()` is what `circus bot` runs: the one
place the Discord frontend reads the environment (into a Config, passed down from there)."""


def main() -> int:
    """Run the Discord bot with the settings of the environment (DISCORD_TOKEN,
    CIRCUS_SCENES_DIR, ...), read once here."""
    import os
    import sys

    from bot.app import main as run
    from engine import CircusError, Config

    try:
        config = Config.from_env(os.environ)
    except CircusError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return run(config)

"""Circus in Discord: scenes are threads, actors are webhook personas, directors use slash
commands and receive the actors' thoughts by DM. `main()` is what `circus bot` runs: the one
place the Discord frontend reads the environment (into a Config, passed down from there)."""


def main(*, shards: str | None = None, shard_count: str | None = None) -> int:
    """Run the Discord bot with the settings of the environment (DISCORD_TOKEN,
    CIRCUS_SCENES_DIR, ...), read once here; `circus bot --shards/--shard-count` win over
    CIRCUS_SHARDS / CIRCUS_SHARD_COUNT."""
    import os
    import sys
    from dataclasses import replace

    from bot.app import main as run
    from engine import CircusError, Config

    try:
        config = Config.from_env(os.environ)
    except CircusError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if shards is not None or shard_count is not None:
        config = replace(
            config,
            shards=shards if shards is not None else config.shards,
            shard_count=shard_count if shard_count is not None else config.shard_count,
        )
    return run(config)

"""The fake Discord's own fixtures (`fake`, `bot`) for its tests."""

from fakediscord.fixtures import *  # noqa: F403

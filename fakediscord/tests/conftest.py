"""The fake Discord's own fixtures (`fake`, `bot`) for its tests; here every value the spec
checks is checked by both the compiled predicate and jsonschema, and any disagreement is a
spec violation (so `checked_fake` fails the test that found it)."""

from fakediscord.fixtures import *  # noqa: F403
from fakediscord.spec import SpecValidator

SpecValidator.cross_check = True

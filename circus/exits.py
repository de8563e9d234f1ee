"""The exit-code contract every `circus` subcommand keeps with the shell.

0 success; 1 a runtime failure (a model that fails, a scene busy in another process); 2 bad
input (a `UsageError`), one line on stderr and nothing written; 130 a run cut with Ctrl-C.
Every message for the director goes to stderr as `circus: …`. Standard library only.
"""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_CUT = 0, 1, 2, 130


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""


def print_error(message: str) -> None:
    print(f"circus: {message}", file=sys.stderr, flush=True)

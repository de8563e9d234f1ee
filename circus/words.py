"""The CLI's words: every sentence `circus` prints comes from the engine's catalog, in English.

The terminal has always spoken English (a scene's own `language` is used only for its stage
blocks, circus.render); `LANGUAGE` keeps that in one place. `t` says a sentence through
`engine.say`. `help_text` serves the parser's help without importing the engine: `circus --help`
must answer instantly (bench/bench_cli.py), and the engine package costs ~0.5 s to import.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

LANGUAGE = "en"


def t(key: str, /, **values: object) -> str:
    """The catalog sentence `key` in the CLI's language, filled with `values`."""
    from engine import say  # not at import: the parser must not load the engine

    return say(key, LANGUAGE, **values)


@cache
def _catalog() -> Mapping[str, str]:
    # The catalog file is plain data (one dict, no imports): read it beside the engine package
    # without running engine/__init__.py (find_spec of a top-level package does not import it).
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("engine")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "catalog" / f"{LANGUAGE}.py"
    namespace: dict[str, object] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace["TEXT"]  # type: ignore[return-value]


def help_text(key: str, /, **values: object) -> str:
    """A parser's help, description or usage sentence (`key` in the catalog), filled in: the
    same sentence `t` says, read without loading the engine when it is not loaded yet."""
    import sys

    if "engine" in sys.modules:
        return t(key, **values)
    template = _catalog()[key]
    return template.format(**values) if values else template

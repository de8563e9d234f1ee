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
    from importlib.util import find_spec, module_from_spec, spec_from_file_location
    from pathlib import Path

    engine = find_spec("engine")
    assert engine is not None and engine.origin is not None
    path = Path(engine.origin).parent / "catalog" / f"{LANGUAGE}.py"
    spec = spec_from_file_location(f"circus._catalog_{LANGUAGE}", path)
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEXT


def help_text(key: str, /, **values: object) -> str:
    """A parser's help, description or usage sentence (`key` in the catalog), filled in: the
    same sentence `t` says, read without loading the engine when it is not loaded yet."""
    import sys

    if "engine" in sys.modules:
        return t(key, **values)
    template = _catalog()[key]
    return template.format(**values) if values else template

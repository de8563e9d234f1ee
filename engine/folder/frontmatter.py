"""YAML front matter: scene and actor settings at the top of a markdown file.

`split` leaves the body exactly as written, so a file the engine only reads is never
reformatted; the front matter opens at the first line that is not blank (a BOM or an editor's
stray leading newline never hides it). Settings are never shown to any model. The header is
parsed by a small, safe subset of YAML (plain values, lists and mappings): anchors/aliases, tags,
merge keys, duplicate keys and deep nesting are refused, and the header's size is capped before
parsing, so a hostile file (the alias "billion laughs") is refused in microseconds instead of
eating memory.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from engine.catalog import Phrase
from engine.errors import BadSceneFile

_FENCE = "---"
BOM = "\ufeff"
MAX_HEADER_CHARS = 8_000  # a real soul's settings are a few hundred characters
MAX_DEPTH = 6  # settings are at most a mapping of lists; deeper nesting is refused early


class _Unsafe(yaml.YAMLError):
    """A YAML feature settings never need, refused before it costs anything."""

    def __init__(self, message_key: str, mark: Any, /, **values: object) -> None:
        self.problem, self.problem_mark = Phrase(message_key, **values), mark
        super().__init__(self.problem.render("en"))


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that refuses duplicate keys and keys that aren't plain scalars."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Unsafe("error.yaml.name_not_word", key_node.start_mark)
            if key_node.value in seen:
                raise _Unsafe("error.yaml.twice", key_node.start_mark, key=key_node.value)
            seen.add(key_node.value)
        return super().construct_mapping(node, deep)


_Constructor.add_constructor(
    "tag:yaml.org,2002:int", lambda loader, node: int(loader.construct_scalar(node))
)
_Constructor.add_constructor(
    "tag:yaml.org,2002:float", lambda loader, node: float(loader.construct_scalar(node))
)


class _Resolver(yaml.resolver.BaseResolver):
    """Only null, true/false, decimal ints and floats are recognised implicitly (the YAML 1.2
    core schema): `language: no` stays the text "no", `2024-01-01` stays text, `010` is ten,
    and `<<` is an ordinary (unknown) key, not a merge."""

    yaml_implicit_resolvers: dict = {}  # our own table, not the YAML 1.1 one


def _resolver(tag: str, pattern: str, first: list[str]) -> None:
    _Resolver.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", re.compile(pattern), first)


_resolver("null", r"^(?:~|null|Null|NULL|)$", [*"~nN", ""])
_resolver("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", [*"tTfF"])
_resolver("int", r"^[-+]?[0-9]+$", [*"-+0123456789"])
_resolver(
    "float", r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$", [*"-+.0123456789"]
)


class _PyLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _Constructor,
    _Resolver,
):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


_Loader: type = _PyLoader
try:  # libyaml, when PyYAML has it: an order of magnitude faster on a hostile header
    from yaml.cyaml import CParser

    class _CLoader(CParser, _Constructor, _Resolver):
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _Constructor.__init__(self)
            _Resolver.__init__(self)

    _Loader = _CLoader
except ImportError:  # pragma: no cover
    pass


_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_events(header: str, loader_class: type) -> None:
    """Refuse anchors, aliases, tags and deep nesting from the event stream, before any node
    is built: the alias "billion laughs" stops at its first `&`, in microseconds."""
    loader = loader_class(header)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise _Unsafe("error.yaml.anchors", event.start_mark)
            if getattr(event, "tag", None) is not None:
                raise _Unsafe("error.yaml.tags", event.start_mark, tag=event.tag)
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _Unsafe("error.yaml.too_deep", event.start_mark)
            elif isinstance(event, _CLOSE):
                depth -= 1
    finally:
        loader.dispose()


def load_header(header: str, loader_class: type | None = None) -> Any:
    """Parse a front-matter header with the safe subset (raises yaml.YAMLError)."""
    loader_class = loader_class or _Loader
    _check_events(header, loader_class)
    loader = loader_class(header)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _opening(lines: list[str]) -> int | None:
    """The line that opens the front matter: the first `---` line, after any blank lines or
    whitespace a file may start with (an editor's stray newline must not hide `model:`)."""
    for i, line in enumerate(lines):
        if line.strip():
            return i if line.strip() == _FENCE else None
    return None


def split(text: str, path: object = "file", rel: str | None = None) -> tuple[dict[str, Any], str]:
    """Return (settings, body). A file without front matter has empty settings.

    The front matter opens at the file's first line that is not blank (a BOM is dropped).
    `path` names the file in errors; `rel` is its path inside the scene (shown in Discord).
    """
    text = text.removeprefix(BOM)
    if not text.lstrip().startswith(_FENCE):  # most files: no need to split them into lines
        return {}, text
    lines = text.split("\n")
    start = _opening(lines)
    if start is None:
        return {}, text
    size = 0
    for i in range(start + 1, len(lines)):
        if lines[i].strip() == _FENCE:
            header = "\n".join(lines[start + 1 : i])
            body = "\n".join(lines[i + 1 :])
            return _parse(header, path, rel, first_line=start + 2), body
        size += len(lines[i]) + 1
        if size > MAX_HEADER_CHARS:
            raise BadSceneFile(path, "error.yaml.too_long", rel=rel, most=MAX_HEADER_CHARS)
    raise BadSceneFile(path, "error.yaml.unclosed", rel=rel)


def _parse(header: str, path: object, rel: str | None, first_line: int = 2) -> dict[str, Any]:
    if not header.strip():
        return {}
    try:
        data = load_header(header)
    except _Unsafe as exc:
        raise BadSceneFile(
            path,
            "error.yaml.problem",
            rel=rel,
            problem=exc.problem,
            where=_where(exc, first_line),
        ) from None
    except yaml.YAMLError as exc:
        where = _where(exc, first_line)
        raise BadSceneFile(path, "error.yaml.invalid", rel=rel, where=where) from None
    except (ValueError, RecursionError):  # an int too long to convert; belt and braces
        raise BadSceneFile(path, "error.yaml.unreadable", rel=rel) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadSceneFile(path, "error.yaml.not_mapping", rel=rel)
    return data


def _where(exc: yaml.YAMLError, first_line: int) -> Phrase | str:
    """The file line of a YAML problem (the header's first line is the file's `first_line`)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return ""
    return Phrase("error.yaml.line", line=mark.line + first_line)


def _flow(value: Any) -> str:
    """One value as a single YAML line: `[林小姐, Eddie]`, quoting only where YAML needs it."""
    # A scalar is dumped inside a list and unwrapped: alone, YAML ends it with a `...` line.
    line = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=1 << 20)
    return line.strip()[1:-1]


def with_setting(text: str, key: str, value: Any) -> str:
    """The file's text with the top-level setting `key` set to `value` (None: removed), every
    other line exactly as written. A file without front matter gets one."""
    text = text.removeprefix(BOM)
    lines = text.split("\n")
    close, start = None, _opening(lines)
    if start is not None:
        fences = (i for i in range(start + 1, len(lines)) if lines[i].strip() == _FENCE)
        close = next(fences, None)
    if start is None or close is None:
        if value is None:
            return text
        return f"{_FENCE}\n{key}: {_flow(value)}\n{_FENCE}\n{text}"
    header = lines[start + 1 : close]
    at = next(
        (i for i, line in enumerate(header) if re.match(rf"{re.escape(key)}\s*:", line)), None
    )
    new = [] if value is None else [f"{key}: {_flow(value)}"]
    if at is None:
        header = header + new
    else:
        end = at + 1  # a block list (`cast:` then `  - a` lines) belongs to the key
        while end < len(header) and header[end][:1] in (" ", "\t", "-"):
            end += 1
        header = header[:at] + new + header[end:]
    return "\n".join([*lines[: start + 1], *header, *lines[close:]])

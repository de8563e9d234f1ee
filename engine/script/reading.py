"""Which reader a script file needs, and the checks before any reading: a known type, a
size under the cap, text rather than binary.

Invariant: a file is refused on its name and size before a byte of it is parsed, and the
bytes parsed are the bytes a splice is checked against. Pure but for `load_script`'s one read.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import BadScript
from engine.script.elements import MAX_BYTES, Script
from engine.script.fdx import parse_fdx
from engine.script.fountain import decode, parse_fountain

FOUNTAIN_TYPES = (".fountain", ".spmd", ".txt")
TYPES = (*FOUNTAIN_TYPES, ".fdx")


def script_format(name: str) -> str:
    """ "fountain" or "fdx", from the file name; anything else is refused."""
    suffix = Path(name).suffix.lower()
    if suffix in FOUNTAIN_TYPES:
        return "fountain"
    if suffix == ".fdx":
        return "fdx"
    raise BadScript("unknown_type", name=Path(name).name or name)


def parse_script(name: str, data: bytes) -> Script:
    """The script in `data`, read as its name says."""
    kind = script_format(name)
    if len(data) > MAX_BYTES:
        raise BadScript("too_big", most=MAX_BYTES // (1024 * 1024))
    if kind == "fdx":
        return parse_fdx(data)
    return parse_fountain(decode(data))


def load_script(path: Path) -> tuple[Script, bytes]:
    """The script at `path` and its bytes; its size is checked before it is read."""
    script_format(path.name)
    try:
        if not path.is_file():
            raise BadScript("not_found", path=path)
        if path.stat().st_size > MAX_BYTES:
            raise BadScript("too_big", most=MAX_BYTES // (1024 * 1024))
        data = path.read_bytes()
    except OSError:
        raise BadScript("not_found", path=path) from None
    return parse_script(path.name, data), data

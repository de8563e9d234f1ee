"""Final Draft XML (.fdx), read by a small hardened reader of our own (placeholder: filled next)."""

from __future__ import annotations

from engine.script.elements import BadScript, Script


def parse_fdx(data: bytes) -> Script:
    raise BadScript("not_fdx")


def splice_fdx(data: bytes, script: Script, last: int, lines: object) -> str:
    raise BadScript("not_fdx")

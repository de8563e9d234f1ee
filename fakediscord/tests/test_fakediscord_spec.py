"""The spec check is fast and still strict: every request schema compiles to a predicate that
agrees with jsonschema on valid and broken values, and bad requests are still refused, named.
"""

from __future__ import annotations

import random
from typing import Any

import discord
import pytest

from fakediscord import FakeDiscord
from fakediscord.spec import SpecValidator
from fakediscord.tinybot import TinyBot

JUNK: list[Any] = [None, True, 0, -1, 1.5, 2**70, "", "x" * 5000, "123", "abc", [], {}, [1]]


def _resolve(spec: dict[str, Any], schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        node: Any = spec
        for token in schema["$ref"].split("#", 1)[1].lstrip("/").split("/"):
            node = node[token.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**node, **rest} if rest else node
    return schema


def _value(spec: dict[str, Any], schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value shaped by `schema`, broken here and there (a wrong type, one over a bound)."""
    schema = _resolve(spec, schema)
    if not isinstance(schema, dict) or depth > 6 or rng.random() < 0.05:
        return rng.choice(JUNK)
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            return _value(spec, rng.choice(schema[key]), rng, depth + 1)
    for key in ("const", "enum"):
        if key in schema and rng.random() < 0.9:
            return schema["const"] if key == "const" else rng.choice(schema["enum"])
    kind = schema.get("type")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        picked = [n for n in props if n in schema.get("required", []) or rng.random() < 0.5]
        out = {n: _value(spec, props[n], rng, depth + 1) for n in picked if rng.random() > 0.03}
        return {**out, "not_in_spec": 1} if rng.random() < 0.05 else out
    if kind == "array":
        count = rng.choice([0, 1, 2, schema.get("maxItems", 2) + 1])
        return [_value(spec, schema.get("items", {}), rng, depth + 1) for _ in range(count)]
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 20)
        if "pattern" in schema and rng.random() < 0.8:
            return str(rng.randint(0, 10**18))
        return "ä" * min(rng.choice([low, high, high + 1, max(low - 1, 0)]), 4097)
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", -10), schema.get("maximum", 10**6)
        return rng.choice([low, high, low - 1, high + 1, float(low)])
    return rng.choice([True, False, 0, 1, None] if kind in ("boolean", "null") else JUNK)


def _request_schemas(spec: dict[str, Any]) -> list[str]:
    pointers = []
    for template, item in spec["paths"].items():
        path = "/paths/" + template.replace("~", "~0").replace("/", "~1")
        for method, op in item.items():
            for ctype in (
                (op.get("requestBody") or {}).get("content", {}) if isinstance(op, dict) else ()
            ):
                pointers.append(
                    f"{path}/{method}/requestBody/content/{ctype.replace('/', '~1')}/schema"
                )
    return pointers + ["/components/schemas/" + name for name in spec["components"]["schemas"]]


def test_every_schema_compiles_and_agrees_with_jsonschema() -> None:
    checker = SpecValidator()
    rng = random.Random(31)
    pointers = _request_schemas(checker.spec)
    disagreements, verdicts = [], set()
    for pointer in pointers:
        check = checker._check(pointer)
        assert check is not None, f"{pointer} fell back to jsonschema"
        for _ in range(6):
            value = _value(checker.spec, {"$ref": "#" + pointer}, rng)
            valid = checker._validator(pointer).is_valid(value)
            verdicts.add(valid)
            if check(value) != valid:
                disagreements.append((pointer, value, valid))
    assert disagreements == []
    assert verdicts == {True, False}  # the corpus holds both kinds


@pytest.mark.parametrize(
    ("method", "path", "body", "named"),
    [
        ("POST", "/channels/{channel_id}/threads", {"name": "x" * 101, "type": 11}, "name"),
        ("POST", "/channels/{channel_id}/messages", {"content": 5}, "content"),
        ("POST", "/channels/{channel_id}/messages", {"embeds": [{"title": "t" * 257}]}, "title"),
        (
            "POST",
            "/channels/{channel_id}/messages",
            {"content": "x", "allowed_mentions": {"parse": ["nobody"]}},
            "parse",
        ),
        (
            "POST",
            "/channels/{channel_id}/threads",
            {"name": "ok", "type": 11, "auto_archive_duration": 7},
            "auto_archive_duration",
        ),
    ],
)
async def test_a_broken_body_is_refused_and_named(
    fake: FakeDiscord, bot: TinyBot, method: str, path: str, body: dict[str, Any], named: str
) -> None:
    route = discord.http.Route(method, path, channel_id=fake.channel_id)
    with pytest.raises(discord.HTTPException) as info:
        await bot.http.request(route, json=body)
    assert info.value.status == 400
    assert fake.spec_violations and all(named in v for v in fake.spec_violations)
    fake.spec_violations.clear()


async def test_a_bad_path_parameter_is_refused(fake: FakeDiscord, bot: TinyBot) -> None:
    route = discord.http.Route("GET", "/channels/{channel_id}", channel_id="not-a-snowflake")
    with pytest.raises(discord.HTTPException):
        await bot.http.request(route)
    assert fake.spec_violations and "path param" in fake.spec_violations[0]
    fake.spec_violations.clear()

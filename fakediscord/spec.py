"""Validation of REST requests against Discord's own OpenAPI 3.1 spec.

The spec (discord/discord-api-spec) is loaded once per process.  Each request is
matched to an operation (method + path template), then its path parameters,
declared query parameters and JSON body (or the ``payload_json`` part of a
multipart body) are validated with jsonschema (Draft 2020-12, which is what
OpenAPI 3.1 uses).  ``$ref``s are resolved through a ``referencing`` registry
that holds the whole spec document, and compiled validators are cached per
operation.

jsonschema takes milliseconds a request (most of a busy bench's time went there), so each
schema is also compiled once into a plain predicate (schema_check.py): a value it passes is
valid, and only a value it fails, or a schema it cannot compile, goes to jsonschema, which
then has the last word and writes the messages (a disagreement it finds is itself
reported).  ``cross_check`` (on in fakediscord/tests)
runs both on every value and reports any disagreement as a violation.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .schema_check import Check, Compiler

RELAX_SNOWFLAKE_INTS = True  # see _relax_schema_tree
SPEC_URI = "https://discord.com/api/openapi.json"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def default_spec_path() -> Path:
    """$CIRCUS_DISCORD_OPENAPI, else <repo>/../shared/discord-api-spec/openapi.json, else the
    identical copy vendored beside this file (so a clone away from shared/ still tests)."""
    env = os.environ.get("CIRCUS_DISCORD_OPENAPI")
    if env:
        return Path(env)
    repo_root = Path(__file__).resolve().parents[1]
    shared = repo_root.parent / "shared" / "discord-api-spec" / "openapi.json"
    if shared.is_file():
        return shared
    return Path(__file__).resolve().parent / "discord-api-spec" / "openapi.json"


def _escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass
class Operation:
    method: str  # upper case
    template: str  # e.g. /channels/{channel_id}/messages
    operation_id: str
    pointer: str  # JSON pointer of the operation object
    op: dict[str, Any]
    # (name, location, required, schema pointer)
    parameters: list[tuple[str, str, bool, str]] = field(default_factory=list)


@dataclass
class _Template:
    template: str
    regex: re.Pattern
    literal_segments: int
    operations: dict[str, Operation]


# --------------------------------------------------------------------------------------
# Narrow relaxations.  Each one is something discord.py 2.7.1 genuinely sends, that
# Discord accepts, but that the published spec types more strictly.  Keep this list
# short and documented (see README.md).
# --------------------------------------------------------------------------------------


def _relax_schema_tree(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    # 1. Snowflakes: the spec only allows strings, but discord.py 2.7.1 sends many snowflakes
    #    as JSON integers, observed: POST /users/@me/channels {"recipient_id": <int>},
    #    attachments[].id (0, 1, ... for uploads), and by construction allowed_mentions
    #    users/roles, message_reference.message_id, applied_tags.  Discord accepts both.
    #    Only the *type* is relaxed: a non-negative integer; strings keep the digit pattern.
    snowflake = schemas.get("SnowflakeType")
    if snowflake is not None and snowflake.get("type") == "string":
        schemas["SnowflakeType"] = {
            "oneOf": [
                snowflake,
                {"type": "integer", "minimum": 0},
            ]
        }


_VALIDATORS: dict[str, dict[str, Any]] = {}
_CHECKS: dict[str, dict[str, Check | None]] = {}
_COMPILERS: dict[str, Compiler] = {}


class SpecValidator:
    """Matches requests to spec operations and validates them."""

    # Run jsonschema beside every compiled check and report where they disagree (tests).
    cross_check = os.environ.get("FAKEDISCORD_CROSS_CHECK", "") not in ("", "0")

    def __init__(self, spec_path: os.PathLike | None = None) -> None:
        self.spec_path = Path(spec_path) if spec_path else default_spec_path()
        self.spec, self.registry, self._templates = _load(str(self.spec_path))
        # compiled validators are shared by every FakeDiscord in the process
        self._validators: dict[str, Any] = _VALIDATORS.setdefault(str(self.spec_path), {})
        self._checks = _CHECKS.setdefault(str(self.spec_path), {})
        compiler = _COMPILERS.get(str(self.spec_path))
        if compiler is None:
            compiler = _COMPILERS[str(self.spec_path)] = Compiler(self.spec, SPEC_URI)
        self._compiler = compiler

    # -- matching -------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[_Template | None, dict[str, str]]:
        best: _Template | None = None
        best_params: dict[str, str] = {}
        for tpl in self._templates:
            m = tpl.regex.match(path)
            if m is None:
                continue
            if best is None or tpl.literal_segments > best.literal_segments:
                best, best_params = tpl, m.groupdict()
        return best, best_params

    def operation(
        self, method: str, path: str
    ) -> tuple[Operation | None, dict[str, str], str | None]:
        """Return (operation, path_params, error)."""
        tpl, params = self.match(method, path)
        if tpl is None:
            return None, {}, f"{method} {path}: no such path in the Discord OpenAPI spec"
        op = tpl.operations.get(method.upper())
        if op is None:
            return (
                None,
                params,
                (
                    f"{method} {path}: method not allowed for {tpl.template} "
                    f"(spec has {sorted(tpl.operations)})"
                ),
            )
        return op, params, None

    # -- validation -----------------------------------------------------------------
    def _validator(self, pointer: str):
        v = self._validators.get(pointer)
        if v is None:
            schema = {"$ref": f"{SPEC_URI}#{pointer}"}
            v = jsonschema.Draft202012Validator(schema, registry=self.registry)
            self._validators[pointer] = v
        return v

    def _resolve_pointer(self, pointer: str) -> Any:
        node: Any = self.spec
        for tok in pointer.lstrip("/").split("/"):
            tok = tok.replace("~1", "/").replace("~0", "~")
            node = node[int(tok)] if isinstance(node, list) else node[tok]
        while isinstance(node, dict) and "$ref" in node and len(node) == 1:
            node = self._resolve_pointer(node["$ref"].split("#", 1)[1])
        return node

    def _check(self, pointer: str) -> Check | None:
        if pointer not in self._checks:
            self._checks[pointer] = self._compiler.compile_check("#" + pointer)
        return self._checks[pointer]

    def _errors(self, pointer: str, instance: Any, where: str) -> list[str]:
        check = self._check(pointer)
        fast = check(instance) if check is not None else None
        if fast and not self.cross_check:
            return []
        validator = self._validator(pointer)
        problems = [f"{where} {_describe(err)}" for err in validator.iter_errors(instance)]
        if fast is not None and fast != (not problems):
            problems.append(
                f"{where}: fakediscord's compiled check says {'valid' if fast else 'invalid'}"
                f" but jsonschema says {'invalid' if problems else 'valid'}: {_short(instance)}"
            )
        return problems

    def _coerce_query(self, pointer: str, raw: str) -> Any:
        schema = self._resolve_pointer(pointer)
        types = schema.get("type") if isinstance(schema, dict) else None
        if isinstance(types, str):
            types = [types]
        types = types or []
        if "boolean" in types:
            # Relaxation: discord.py sends with_response=1 (and Discord accepts
            # 1/0/true/false in any case), the spec just says "boolean".
            low = raw.lower()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
            return raw
        if "integer" in types:
            try:
                return int(raw)
            except ValueError:
                return raw
        if "number" in types:
            try:
                return float(raw)
            except ValueError:
                return raw
        return raw

    def validate(
        self,
        op: Operation,
        path_params: Mapping[str, str],
        query: Mapping[str, str],
        content_type: str | None,
        body: Any,
        has_body: bool,
    ) -> list[str]:
        problems: list[str] = []
        where = f"{op.method} {op.template}"
        declared_query = set()
        for name, loc, required, schema_ptr in op.parameters:
            if loc == "path":
                if name in path_params:
                    problems += self._errors(schema_ptr, path_params[name], f"{where} path param")
            elif loc == "query":
                declared_query.add(name)
                if name in query:
                    value = self._coerce_query(schema_ptr, query[name])
                    problems += self._errors(schema_ptr, value, f"{where} query param {name}")
                elif required:
                    problems.append(f"{where}: missing required query parameter {name!r}")
        for name in query:
            if name not in declared_query:
                problems.append(f"{where}: query parameter {name!r} is not declared in the spec")

        request_body = op.op.get("requestBody")
        if request_body is None:
            if has_body and body not in (None, {}, ""):
                problems.append(
                    f"{where}: operation takes no request body but one was sent: {str(body)[:200]}"
                )
            return problems
        if not has_body:
            if request_body.get("required"):
                problems.append(f"{where}: request body is required")
            return problems
        content = request_body.get("content", {})
        ctype = (content_type or "application/json").split(";")[0].strip()
        if ctype not in content:
            if ctype == "multipart/form-data" and "application/json" in content:
                ctype = "application/json"
            else:
                problems.append(
                    f"{where}: content type {ctype!r} not accepted (spec: {sorted(content)})"
                )
                return problems
        schema_ptr = op.pointer + "/requestBody/content/" + _escape_pointer(ctype) + "/schema"
        problems += self._errors(schema_ptr, body, f"{where} body")
        return problems


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


_DISCRIMINATORS = ("enum", "const", "type", "required")


def _pick_branch_error(err: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For an anyOf/oneOf failure, find the branch that "almost" matched.

    Branches whose failure is a discriminator mismatch close to the root (e.g. the
    callback ``type`` enum) are most likely the wrong branch; of the rest, the deepest
    error is reported.
    """
    base = len(err.absolute_path)
    branches: dict[Any, list[Any]] = {}
    for sub in err.context:
        key = sub.relative_schema_path[0] if sub.relative_schema_path else None
        branches.setdefault(key, []).append(sub)
    plausible = [
        errs
        for errs in branches.values()
        if not any(
            e.validator in _DISCRIMINATORS and len(e.absolute_path) - base <= 1 for e in errs
        )
    ]
    if not plausible:
        plausible = list(branches.values())
    # The branch with the fewest errors is the closest match; report its deepest error.
    errs = min(plausible, key=lambda errs: (len(errs), -max(len(e.absolute_path) for e in errs)))
    return max(errs, key=lambda e: (len(e.absolute_path), e.validator not in _DISCRIMINATORS))


def _describe(err: jsonschema.ValidationError) -> str:
    """One line for a validation error; for anyOf/oneOf, descend to the most relevant cause."""
    while err.context:
        err = _pick_branch_error(err)
    loc = (
        "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path) or "<root>"
    )
    if err.validator in (
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maximum",
        "minimum",
        "pattern",
        "enum",
        "type",
        "const",
    ):
        return f"{loc}: {err.validator}={_short(err.validator_value)} violated by {_short(err.instance)}"
    msg = err.message
    return f"{loc}: {msg if len(msg) <= 300 else msg[:300] + '...'}"


@functools.lru_cache(maxsize=4)
def _load(spec_path: str):
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    spec = copy.deepcopy(spec)
    if RELAX_SNOWFLAKE_INTS:
        _relax_schema_tree(spec)
    resource = Resource.from_contents(spec, default_specification=DRAFT202012)
    registry = Registry().with_resource(SPEC_URI, resource)

    templates: list[_Template] = []
    for template, item in spec["paths"].items():
        tpl_ptr = "/paths/" + _escape_pointer(template)
        parts = []
        literal = 0
        for seg in template.strip("/").split("/"):
            m = re.fullmatch(r"\{(\w+)\}", seg)
            if m:
                parts.append(f"(?P<{m.group(1)}>[^/]+)")
            else:
                parts.append(re.escape(seg))
                literal += 1
        regex = re.compile("^/" + "/".join(parts) + "/?$")
        common = item.get("parameters", [])
        ops: dict[str, Operation] = {}
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            op_ptr = f"{tpl_ptr}/{method}"
            params: dict[tuple[str, str], tuple[str, str, bool, str]] = {}
            for i, p in enumerate(common):
                params[(p["name"], p["in"])] = (
                    p["name"],
                    p["in"],
                    bool(p.get("required")),
                    f"{tpl_ptr}/parameters/{i}/schema",
                )
            for i, p in enumerate(op.get("parameters", [])):
                params[(p["name"], p["in"])] = (
                    p["name"],
                    p["in"],
                    bool(p.get("required")),
                    f"{op_ptr}/parameters/{i}/schema",
                )
            ops[method.upper()] = Operation(
                method=method.upper(),
                template=template,
                operation_id=op.get("operationId", ""),
                pointer=op_ptr,
                op=op,
                parameters=list(params.values()),
            )
        templates.append(_Template(template, regex, literal, ops))
    return spec, registry, templates

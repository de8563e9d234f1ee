"""A schema of the spec compiled once into a plain Python predicate: valid or not, no messages.

Invariant: a compiled check accepts exactly what jsonschema's Draft 2020-12 validator (no
format checker) accepts; it is built only for schemas whose every keyword, through every
``$ref``, is one it implements, else ``compile_check`` returns None and jsonschema decides.
spec.py asks jsonschema for the messages whenever a check fails, so a fast "valid" is the only
verdict it takes from here (and ``SpecValidator.cross_check`` compares the two on every call).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jsonschema._utils import equal, uniq  # the validator's own equality, so verdicts agree

Check = Callable[[Any], bool]

# Keywords jsonschema only annotates with (no format checker): they never fail a value.
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "format",
        "contentEncoding",
        "contentMediaType",
        "default",
        "example",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "nullable",  # OpenAPI 3.0; unknown to Draft 2020-12, so ignored by jsonschema too
    }
)
ASSERTIONS = frozenset(
    {
        "$ref",
        "type",
        "const",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "allOf",
        "anyOf",
        "oneOf",
    }
)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _pointer_target(spec: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise KeyError(ref)
    node: Any = spec
    for token in ref[1:].lstrip("/").split("/") if ref != "#" else []:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _local_ref(ref: str, spec_uri: str) -> str:
    return ref[len(spec_uri) :] if ref.startswith(spec_uri + "#") else ref


def _subschemas(schema: dict[str, Any]) -> list[Any]:
    subs: list[Any] = []
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), (dict, bool)):
            subs.append(schema[key])
    subs += list(schema.get("properties", {}).values())
    for key in ("allOf", "anyOf", "oneOf"):
        subs += list(schema.get(key, []))
    return subs


class Compiler:
    """Compiles schemas of one spec document; each ``$ref`` target once, shared by all."""

    def __init__(self, spec: dict[str, Any], spec_uri: str) -> None:
        self.spec = spec
        self.spec_uri = spec_uri
        self._refs: dict[str, Check] = {}
        self._supported: dict[str, bool] = {}

    def compile_check(self, ref: str) -> Check | None:
        """The predicate for the schema at `ref` (``#/json/pointer`` or the full URI), or None
        when some keyword it reaches is not one this module implements."""
        ref = _local_ref(ref, self.spec_uri)
        if not self._supports(ref):
            return None
        return self._ref(ref)

    # -- what can be compiled ---------------------------------------------------------
    def _supports(self, ref: str) -> bool:
        """Every schema reachable from `ref` through ``$ref``s uses only known keywords."""
        known = self._supported.get(ref)
        if known is None:
            seen: set[str] = set()
            todo = [ref]
            known = True
            while todo and known:
                here = todo.pop()
                if here in seen:
                    continue
                seen.add(here)
                try:
                    known = self._local_walk(_pointer_target(self.spec, here), todo)
                except (KeyError, IndexError, ValueError, TypeError, re.error):
                    known = False
            self._supported[ref] = known
        return known

    def _local_walk(self, schema: Any, refs: list[str]) -> bool:
        """Whether `schema` itself uses only known keywords; the refs it names go to `refs`."""
        if isinstance(schema, bool):
            return True
        if not isinstance(schema, dict):
            return False
        for key, value in schema.items():
            if key in ANNOTATIONS or key.startswith("x-"):
                continue
            if key not in ASSERTIONS:
                return False
            if key in ("items", "additionalProperties") and not isinstance(value, (dict, bool)):
                return False
            if key == "$ref":
                refs.append(_local_ref(value, self.spec_uri))
            elif key == "pattern":
                re.compile(value)
            elif key == "type":
                names = value if isinstance(value, list) else [value]
                if not all(name in TYPES for name in names):
                    return False
        return all(self._local_walk(sub, refs) for sub in _subschemas(schema))

    # -- compiling --------------------------------------------------------------------
    def _ref(self, ref: str) -> Check:
        check = self._refs.get(ref)
        if check is not None:
            return check
        cell: list[Check] = []
        self._refs[ref] = lambda value: cell[0](value)  # a recursive $ref calls through this
        compiled = self._compile(_pointer_target(self.spec, ref))
        cell.append(compiled)
        self._refs[ref] = compiled
        return compiled

    def _compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda value: True
        if schema is False:
            return lambda value: False
        # cheap discriminating checks first, so a wrong oneOf branch fails fast
        checks = [*_typed_checks(schema), *self._structural_checks(schema)]
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    def _structural_checks(self, schema: dict[str, Any]) -> list[Check]:
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self._ref(_local_ref(schema["$ref"], self.spec_uri)))
        if "properties" in schema or "additionalProperties" in schema:
            checks.append(self._object(schema))
        if "items" in schema:
            checks.append(self._items(schema["items"]))
        for key, combine in (("allOf", _all_of), ("anyOf", _any_of), ("oneOf", _one_of)):
            if key in schema:
                checks.append(combine([self._compile(sub) for sub in schema[key]]))
        return checks

    def _object(self, schema: dict[str, Any]) -> Check:
        props = {name: self._compile(sub) for name, sub in schema.get("properties", {}).items()}
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is True else self._compile(extra_schema)

        def check(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for name, item in value.items():
                prop = props.get(name)
                if prop is not None:
                    if not prop(item):
                        return False
                elif extra is not None and not extra(item):
                    return False
            return True

        return check

    def _items(self, items: Any) -> Check:
        each = self._compile(items)
        return lambda value: not isinstance(value, list) or all(each(item) for item in value)


def _all_of(checks: list[Check]) -> Check:
    return lambda value: all(check(value) for check in checks)


def _any_of(checks: list[Check]) -> Check:
    return lambda value: any(check(value) for check in checks)


def _one_of(checks: list[Check]) -> Check:
    def check(value: Any) -> bool:
        passed = 0
        for branch in checks:
            if branch(value):
                passed += 1
                if passed > 1:
                    return False
        return passed == 1

    return check


def _typed_checks(schema: dict[str, Any]) -> list[Check]:
    """type, const, enum, required, and the bounds that apply to one JSON type each."""
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        preds = [TYPES[name] for name in names]
        checks.append(lambda value: any(pred(value) for pred in preds))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda value: equal(value, const))
    if "enum" in schema:
        enums = list(schema["enum"])
        checks.append(lambda value: any(equal(each, value) for each in enums))
    if "required" in schema:
        names = list(schema["required"])
        checks.append(lambda value: not isinstance(value, dict) or all(n in value for n in names))
    checks += _bound_checks(schema)
    return checks


def _bound_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None or hi is not None:
        checks.append(
            lambda v: not _is_number(v) or ((lo is None or v >= lo) and (hi is None or v <= hi))
        )
    checks += _sized(schema, "minLength", "maxLength", lambda v: isinstance(v, str))
    checks += _sized(schema, "minItems", "maxItems", lambda v: isinstance(v, list))
    checks += _sized(schema, "minProperties", "maxProperties", lambda v: isinstance(v, dict))
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
    if schema.get("uniqueItems"):
        checks.append(lambda v: not isinstance(v, list) or uniq(v))
    return checks


def _sized(schema: dict[str, Any], low_key: str, high_key: str, applies: Check) -> list[Check]:
    lo, hi = schema.get(low_key), schema.get(high_key)
    if lo is None and hi is None:
        return []
    return [
        lambda v: not applies(v) or ((lo is None or len(v) >= lo) and (hi is None or len(v) <= hi))
    ]

"""Reply grammars for constrained decoding, and closing a reply cut short by max_tokens.

Pure functions over the cast: the GBNF text that makes a small local model always produce the
actor format (four tags, a cue from the cast or ANY) or the stage manager's `NEXT: <name>`, and
the repair of a truncated but grammatical prefix into a whole reply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engine.folder.turns import ANY  # the one home of the cue word

# Longest text the grammar allows per field, in characters. SmolLM2's tokenizer spends about
# 2 tokens on a CJK character and 1 on 4 Latin ones, so "wide" (CJK) scenes get shorter fields;
# either way a whole actor reply fits the default 256 tokens. A reply that still runs out of
# tokens is closed into shape (see finish_actor_reply).
FIELDS = ("thought", "action", "dialogue")
FIELD_LIMITS = {False: (200, 160, 320), True: (30, 24, 64)}  # keyed by "wide"
REASON_LIMITS = {False: 150, True: 20}
FILLER = "…"  # stands in for a field a truncated reply never reached
# A field must hold more than punctuation: SmolLM2 otherwise settles into "<thought>...</thought>"
# for every field. Up to a few of these may lead ("……我不知道"), then a real character.
_FILLER_CHARS = " \t.,;:!?*_~-…。、，；：！？·—"


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal; everything outside printable ASCII is \\u-escaped."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def _unique(names: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for name in names:
        if name and name not in seen:
            seen.append(name)
    return seen


def cue_choices(cast: Sequence[str], speaker: str) -> list[str]:
    """Names an actor may cue: everyone else in the cast, then ANY."""
    return [name for name in _unique(cast) if name != speaker and name != ANY] + [ANY]


def stage_manager_choices(cast: Sequence[str]) -> list[str]:
    return _unique(cast)


def _alternatives(names: Sequence[str]) -> str:
    return " | ".join(gbnf_literal(name) for name in names)


def is_wide(texts: Iterable[str]) -> bool:
    """Whether the prompt is mostly CJK (at least a fifth of its non-space characters)."""
    wide = narrow = 0
    for text in texts:
        for char in text:
            if char.isspace():
                continue
            if ord(char) > 0x2E7F:
                wide += 1
            else:
                narrow += 1
    return wide * 5 >= wide + narrow and wide > 0


def _char_class(chars: str, negate: bool = False) -> str:
    escaped = "".join(
        f"\\u{ord(c):04X}" if not (0x20 < ord(c) < 0x7F) or c in "\\]^-[" else c for c in chars
    )
    return f"[{'^' if negate else ''}{escaped}]"


def actor_grammar_text(cast: Sequence[str], speaker: str, wide: bool = False) -> str:
    rules = [
        'root ::= "<thought>" thought "</thought>\\n<action>" action '
        '"</action>\\n<dialogue>" dialogue "</dialogue>\\n<cue>" cue "</cue>"'
    ]
    limits = zip(FIELDS, FIELD_LIMITS[wide], strict=True)
    rules += [f"{tag} ::= lead{{0,3}} word [^<\\n\\r]{{0,{limit - 1}}}" for tag, limit in limits]
    rules.append(f"lead ::= {_char_class(_FILLER_CHARS)}")
    rules.append(f"word ::= {_char_class(_FILLER_CHARS + '<' + chr(10) + chr(13), negate=True)}")
    rules.append(f"cue ::= {_alternatives(cue_choices(cast, speaker))}")
    return "\n".join(rules) + "\n"


def stage_manager_grammar_text(cast: Sequence[str], wide: bool = False) -> str:
    names = stage_manager_choices(cast)
    name_rule = _alternatives(names) if names else "[^<\\n\\r]{1,60}"
    return (
        'root ::= "NEXT: " name reason?\n'
        f"name ::= {name_rule}\n"
        f'reason ::= "\\nREASON: " [^<\\n\\r]{{0,{REASON_LIMITS[wide]}}}\n'
    )


def grammar_text(kind: str, cast: Sequence[str], speaker: str, wide: bool = False) -> str | None:
    """The GBNF grammar for a reply shape (None for free text)."""
    if kind == "actor":
        return actor_grammar_text(cast, speaker, wide)
    if kind == "stage_manager":
        return stage_manager_grammar_text(cast, wide)
    return None


# ---------------------------------------------------------------------------------------------
# Repairing a reply cut short by max_tokens (the grammar guarantees it is a valid prefix)

_FIELD_VALUE = {tag: re.compile(rf"<{tag}>([^<\n\r]*)") for tag in FIELDS}
_CUE_VALUE = re.compile(r"<cue>([^<\n\r]*)")
_ACTOR_REPLY = re.compile(
    r"<thought>[^<\n\r]+</thought>\n<action>[^<\n\r]+</action>\n"
    r"<dialogue>[^<\n\r]+</dialogue>\n<cue>([^<\n\r]+)</cue>"
)
_NEXT_VALUE = re.compile(r"NEXT: ([^<\n\r]*)(\nREASON: ([^<\n\r]*))?")


def _complete_name(prefix: str, choices: Sequence[str], default: str) -> str:
    if prefix in choices:
        return prefix
    fitting = [name for name in choices if name.startswith(prefix)] if prefix else []
    return min(fitting, key=len) if fitting else default


def finish_actor_reply(text: str, cast: Sequence[str], speaker: str) -> str:
    """A well-formed actor reply from `text`, closing any field a truncation left open."""
    match = _ACTOR_REPLY.fullmatch(text)
    choices = cue_choices(cast, speaker)
    if match and match.group(1) in choices:
        return text
    values = {}
    for tag in FIELDS:
        found = _FIELD_VALUE[tag].search(text)
        values[tag] = (found.group(1).strip() if found else "") or FILLER
    cue_found = _CUE_VALUE.search(text)
    cue = _complete_name(cue_found.group(1) if cue_found else "", choices, ANY)
    return (
        f"<thought>{values['thought']}</thought>\n<action>{values['action']}</action>\n"
        f"<dialogue>{values['dialogue']}</dialogue>\n<cue>{cue}</cue>"
    )


def finish_stage_manager_reply(text: str, cast: Sequence[str]) -> str:
    """A well-formed stage-manager answer from `text` (completing a cut-off name)."""
    choices = stage_manager_choices(cast)
    found = _NEXT_VALUE.match(text)
    if not choices:
        return text
    prefix = found.group(1) if found else ""
    name = _complete_name(prefix, choices, choices[0])
    reason = found.group(3) if found and found.group(3) is not None else None
    return f"NEXT: {name}" + (f"\nREASON: {reason}" if reason is not None else "")

"""One redactor for every text a provider, a proxy or a library wrote on its way to a person: a
DM, the thread, the terminal, a log line, a report. The operator's own key values, and anything
shaped like a credential (a bearer token, an `sk-…`/`key-…` string, an `api_key=` field), become
`[redacted]` — a self-hosted server that echoes the Authorization header leaks nothing.

Pure, and idempotent; the keys it knows are the operator's (`Config.secrets`, read once from the
environment), never guessed from the text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping

MASK = "[redacted]"
MIN_SECRET = 8  # a shorter value is no key; masking it would blank ordinary words
# Environment variables that hold credentials: the provider keys litellm reads
# (OPENAI_API_KEY, ANTHROPIC_API_KEY, AZURE_API_KEY, …), tokens and passwords.
_CREDENTIAL_NAME = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)$|API_KEY", re.I)
_SHAPES = (
    re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\b(?:sk|pk|rk|key|gsk|xai|xox[abpr])-[A-Za-z0-9_-]{12,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),  # a Google API key
    re.compile(
        r"(?i)(\b(?:api[_-]?key|x-api-key|access[_-]?token|auth(?:orization)?|secret|password)"
        r"[\"']?\s*[:=]\s*[\"']?)(?!\[redacted\])[^\s\"',;}]{8,}"
    ),
)


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the environment's credential variables, longest first (so a key that
    contains another is masked whole)."""
    found = {
        v.strip()
        for name, v in environ.items()
        if _CREDENTIAL_NAME.search(name) and len(v.strip()) >= MIN_SECRET
    }
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret and every credential-shaped string masked."""
    for value in secrets:
        if len(value) >= MIN_SECRET:
            text = text.replace(value, MASK)
    for shape in _SHAPES:
        text = shape.sub(_masked, text)
    return text


def _masked(match: re.Match[str]) -> str:
    # Keep a label ("Bearer ", "api_key=") so the reader still sees what kind of thing it was.
    if match.re is _SHAPES[0]:
        return f"{match.group(1)} {MASK}"
    if match.re is _SHAPES[3]:
        return match.group(1) + MASK
    return MASK


def redact_logs(secrets: Iterable[str] = ()) -> None:
    """From now on every log record any logger makes — ours, litellm's, discord.py's — has its
    message, arguments and traceback redacted when it is made, whatever handler prints it.
    Each frontend's entry point calls this once, with the operator's `Config.secrets`."""
    known = tuple(secrets)
    make = logging.getLogRecordFactory()
    if getattr(make, "redacting", False):
        make = make.inner  # type: ignore[attr-defined]

    def redacted_record(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: log it as written
            text = str(record.msg)
        record.msg, record.args = redact(text, known), None
        if record.exc_info and record.exc_info[0] is not None:
            trace = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = redact(trace, known), None
        return record

    redacted_record.redacting = True  # type: ignore[attr-defined]
    redacted_record.inner = make  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacted_record)

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
_CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS)$|API_?KEY", re.I
)
# Each credential shape with what replaces it; a label it keeps ("Bearer ", "api_key=", a
# URL's user) tells the reader what kind of thing was there.
_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Bearer …" / "Basic …" as HTTP writes them (not "a basic understanding")
    (re.compile(r"\b(Bearer|Basic|bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {MASK}"),
    # provider key prefixes: sk-…, sk_live_…, gsk_…, ghp_…, hf_…, xoxb-…; a run with a digit
    (
        re.compile(
            r"\b(?:sk|pk|rk|gsk|xai|ghp|gho|ghs|hf|xox[abpr])[-_](?=[A-Za-z0-9_-]*\d)"
            r"[A-Za-z0-9_-]{12,}"
        ),
        MASK,
    ),
    (re.compile(r"\bkey-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{16,}"), MASK),  # key-… (Mailgun-style)
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), MASK),  # a Google API key
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK),  # an AWS access key id
    (re.compile(r"\b[MN][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b"), MASK),
    (re.compile(r"(/webhooks/\d+/)[A-Za-z0-9_-]{20,}"), rf"\1{MASK}"),  # a webhook URL's token
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+(@)"), rf"\1{MASK}\2"),  # user:pass@host
    (
        re.compile(
            r"(?i)(\b(?:api[_-]?key|x-api-key|access[_-]?token|auth(?:orization)?|secret|password"
            r"|token)[\"']?\s*[:=]\s*[\"']?)(?!\[redacted\])[^\s\"',;}]{8,}"
        ),
        rf"\1{MASK}",
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
    for shape, replacement in _SHAPES:
        text = shape.sub(replacement, text)
    return text


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

"""Whatever a library logs when a provider fails — its message, its arguments, the traceback of
the exception that carries the provider's echoed request — is redacted as the record is made,
whichever logger and handler print it."""

from __future__ import annotations

import logging

import pytest

from engine.redact import MASK, redact_logs

KEY = "sk-proj-LOGGEDkey00000000000000000000"


@pytest.fixture
def restore_factory():
    factory = logging.getLogRecordFactory()
    yield
    logging.setLogRecordFactory(factory)


def test_a_logged_key_is_masked_in_message_arguments_and_traceback(restore_factory, caplog):
    redact_logs([KEY])
    redact_logs([KEY])  # twice is once: the factory is not wrapped again
    log = logging.getLogger("LiteLLM")
    with caplog.at_level(logging.INFO):
        log.info("POST with headers %s", {"Authorization": f"Bearer {KEY}"})
        try:
            raise RuntimeError(f"401 Invalid API key passed in: {KEY}")
        except RuntimeError:
            log.exception("call failed for %s", KEY)
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert KEY not in text
    assert text.count(MASK) >= 3 and "RuntimeError" in text  # the trace is kept, masked

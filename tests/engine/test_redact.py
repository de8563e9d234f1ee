"""The redactor: every text a provider, a proxy or a library wrote passes it on the way to a
person. Known key values and credential shapes are masked; ordinary writing is left alone; what
a library logs is redacted as the record is made, whichever logger and handler print it."""

from __future__ import annotations

import logging

import pytest
from fakeproviders.echoing import DISCORD_TOKEN, GATEWAY_KEY, OPENAI_KEY

from engine.redact import MASK, redact, redact_logs, secret_values

KEY = "sk-proj-LOGGEDkey00000000000000000000"


@pytest.mark.parametrize(
    "text, secrets, expected",
    [
        ("Invalid API key passed in: Bearer sk-abc123abc123abc123", (),
         f"Invalid API key passed in: Bearer {MASK}"),
        ("401: Incorrect API key provided: sk-proj-ABCDEFGHIJKLMNOP1234.", (),
         f"401: Incorrect API key provided: {MASK}."),
        ('{"api_key": "hunter2hunter2"}', (), f'{{"api_key": "{MASK}"}}'),
        ("x-api-key=abcdefgh12345678 rejected", (), f"x-api-key={MASK} rejected"),
        ("token circus-gw-Secret-0f3c9a77 unknown", (GATEWAY_KEY,), f"token {MASK} unknown"),
        ("the gateway said circus-gw-Secret-0f3c9a77", (GATEWAY_KEY,), f"the gateway said {MASK}"),
        ("Google: key AIzaSyA-1234567890abcdefghijklmno bad", (), f"Google: key {MASK} bad"),
        # ordinary error text is left alone
        ("the model did not answer in time", (), "the model did not answer in time"),
        ("404 model gpt-4o-mini not found; key-frames ok", (), "404 model gpt-4o-mini not found; key-frames ok"),
        ("a basic understanding of Token economics", (), "a basic understanding of Token economics"),
        ("The key-to-the-kingdom-speech lands", (), "The key-to-the-kingdom-speech lands"),
        ("sk-learn and the risk-assessment-framework", (), "sk-learn and the risk-assessment-framework"),
        # shapes of keys a provider or a library may echo
        ("groq: gsk_abcdefgh12345678ijkl bad", (), f"groq: {MASK} bad"),
        ("stripe sk_live_51Habcdefgh1234567", (), f"stripe {MASK}"),
        ("hf_AbCdEfGh1234567890xyz rejected", (), f"{MASK} rejected"),
        ("AWS AKIAIOSFODNN7EXAMPLE denied", (), f"AWS {MASK} denied"),
        ("POST https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwxyz0123 failed", (),
         f"POST https://discord.com/api/webhooks/123456/{MASK} failed"),
        ("cannot connect to http://admin:hunter2@10.0.0.5:4000/v1", (),
         f"cannot connect to http://admin:{MASK}@10.0.0.5:4000/v1"),
        ("short values are no keys: abc", ("abc",), "short values are no keys: abc"),
    ],
)  # fmt: skip
def test_redact_masks_keys_and_credential_shapes(text, secrets, expected):
    assert redact(text, secrets) == expected
    assert redact(expected, secrets) == expected  # idempotent


def test_the_secrets_are_the_environments_credential_variables():
    environ = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "CIRCUS_GATEWAY_KEY": GATEWAY_KEY,
        "DISCORD_TOKEN": DISCORD_TOKEN,
        "AWS_SECRET_ACCESS_KEY": "aws/secret/value/1234",
        "WATSONX_APIKEY": "watsonx-api-key-1",
        "DB_PASSWORD": "correct-horse",
        "CIRCUS_MODEL": "openai/gpt-4o-mini",  # not a credential
        "SHORT_KEY": "abc",  # too short to mask
    }
    assert set(secret_values(environ)) == {
        OPENAI_KEY,
        GATEWAY_KEY,
        DISCORD_TOKEN,
        "watsonx-api-key-1",
        "aws/secret/value/1234",
        "correct-horse",
    }


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


def test_a_key_that_straddles_the_cut_of_a_long_error_is_masked_whole():
    """The door cuts a provider's error to one short line: redacted first, then cut."""
    from engine.door.llm import _describe

    error = RuntimeError("x" * 270 + f" {GATEWAY_KEY} and more")
    said = _describe(error, (GATEWAY_KEY,))
    assert GATEWAY_KEY[:8] not in said and len(said) <= 300

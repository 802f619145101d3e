"""Redaction over its corpora: every secret gone, look-alikes left alone,
idempotent, text outside secrets intact; and ENGRAM_REDACT by kind."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory.evaluation import redaction as corpus
from memory.screening import redact, redact_json
from memory.screening.redaction import KINDS, parse_kinds


@pytest.mark.parametrize("name", sorted(corpus.CORPORA))
def test_every_secret_is_redacted_and_lookalikes_are_kept(name: str) -> None:
    lines = corpus.load(corpus.CORPORA[name])
    secrets = [line for line in lines if not line.lookalike]
    assert len(secrets) >= (1000 if name == "main" else 50)
    assert len(lines) - len(secrets) >= (1000 if name == "main" else 50)
    report = corpus.evaluate(lines)
    assert report.misses == [] and report.recall == corpus.MIN_RECALL
    assert report.lookalike_rate <= corpus.MAX_LOOKALIKE_RATE, report.false_positives
    assert report.not_idempotent == [] and report.text_broken == []


def test_the_main_corpus_covers_every_kind() -> None:
    kinds = {line.kind for line in corpus.load(corpus.CORPORA["main"])}
    assert set(KINDS) - kinds <= {"service_token"}  # hand-written only


def test_engram_redact_turns_kinds_off_and_on(settings) -> None:  # type: ignore[no-untyped-def]
    text = "mail ana@example.com, key AKIAIOSFODNN7EXAMPLE, call +44 20 7946 0958"
    settings.ENGRAM = {**settings.ENGRAM, "REDACT": ["-email"]}
    out = redact(text)
    assert "ana@example.com" in out and "[REDACTED:aws_key]" in out and "[REDACTED:phone]" in out
    settings.ENGRAM = {**settings.ENGRAM, "REDACT": ["secrets"]}
    assert redact(text) == "mail ana@example.com, key [REDACTED:aws_key], call +44 20 7946 0958"
    settings.ENGRAM = {**settings.ENGRAM, "REDACT": ["none"]}
    assert redact(text) == text
    assert parse_kinds(("all",)) == frozenset(KINDS)
    assert "ssn" not in parse_kinds(("pii", "-national_id"))
    with pytest.raises(ImproperlyConfigured, match="emial"):
        parse_kinds(("-emial",))


def test_json_values_under_secret_keys_are_redacted_whole() -> None:
    value = {
        "password": "hunter2",
        "nested": [{"client_secret": "abc-123-def", "pin_count": 3}, "mail ana@example.com"],
        "Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "db_password": 12345678,
        "max_tokens": 4096,
        "token_type": "bearer",
        "ana@example.com": "seen",
        "note": "The secret is patience 👨‍👩‍👧",
    }
    out = redact_json(value)
    assert out["password"] == "[REDACTED:password]" and out["db_password"] == "[REDACTED:password]"
    assert out["nested"][0] == {"client_secret": "[REDACTED:secret]", "pin_count": 3}
    assert out["nested"][1] == "mail [REDACTED:email]"
    assert out["Authorization"] == "Basic [REDACTED:basic_auth]"
    assert out["max_tokens"] == 4096 and out["token_type"] == "bearer"
    assert out["[REDACTED:email]"] == "seen" and out["note"] == value["note"]
    assert redact_json(out) == out

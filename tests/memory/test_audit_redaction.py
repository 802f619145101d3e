"""Audit details are redacted like every other write: a preview, a forget
query or a reason may quote a secret, and the log outlives what it names."""

from __future__ import annotations

import json

import pytest

from memory.models import AuditEvent, MemoryItem
from memory.services import audit, curation, forget

STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
EMAIL = "ada.lovelace@example.com"


def all_details() -> str:
    return json.dumps(list(AuditEvent.objects.values_list("detail", flat=True)))


def test_record_redacts_nested_details(space) -> None:  # type: ignore[no-untyped-def]
    audit.record(
        space=space,
        action="forget",
        target_type="item",
        query=f"the key {STRIPE}",
        nested={"reason": [f"mail {EMAIL}"], "count": 3},
        content_hash="0" * 64,
    )
    detail = AuditEvent.objects.get().detail
    assert STRIPE not in json.dumps(detail) and EMAIL not in json.dumps(detail)
    assert detail["query"] == "the key [REDACTED:stripe_key]"
    assert detail["nested"] == {"reason": ["mail [REDACTED:email]"], "count": 3}
    assert detail["content_hash"] == "0" * 64


def test_batched_events_are_redacted(space) -> None:  # type: ignore[no-untyped-def]
    with audit.batched() as events:
        audit.record(space=space, action="add", target_type="item", text=f"ask {EMAIL}")
    AuditEvent.objects.bulk_create(events)
    assert EMAIL not in all_details()


@pytest.mark.django_db
def test_forget_query_and_correction_never_store_a_secret_raw(api, space) -> None:  # type: ignore[no-untyped-def]
    saved = api.post(
        "/api/v1/memory/remember_fact",
        {"text": "Priya keeps the billing key in the vault"},
        content_type="application/json",
    ).json()
    old = MemoryItem.objects.get(pk=saved["id"])
    curation.correct(
        space=space,
        old=old,
        text=f"Priya keeps the billing key {STRIPE} in the vault, ask {EMAIL}",
        actor="test",
        source="test",
    )
    forget.forget(space=space, query=f"billing vault {STRIPE} {EMAIL}", actor="test")
    audit.record(space=space, action="forget", target_type="item", query=f"vault {STRIPE}")
    details = all_details()
    assert STRIPE not in details and EMAIL not in details

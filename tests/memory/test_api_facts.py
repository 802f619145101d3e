"""POST /api/v1/memory/facts as the contract describes it."""

from __future__ import annotations

import pytest

from memory.models import AuditEvent, Entity, MemoryItem

pytestmark = pytest.mark.django_db


def save(api, **body):  # type: ignore[no-untyped-def]
    return api.post("/api/v1/memory/facts", body, content_type="application/json")


def test_it_adds_then_supersedes_by_subject_and_predicate(api, space):
    first = save(
        api,
        text="Sam works at Acme",
        subject="Sam",
        predicate="works_at",
        object="Acme",
        valid_from="2024-06-01",
    )
    assert first.status_code == 200
    assert first.json()["action"] == "ADD" and first.json()["superseded"] == []
    second = save(
        api,
        text="Sam works at Globex",
        subject="sam",
        predicate="works_at",
        object="Globex",
        valid_from="2025-02-01",
        importance=0.7,
    )
    body = second.json()
    assert body["action"] == "UPDATE" and body["superseded"] == [first.json()["id"]]
    old = MemoryItem.objects.get(pk=int(first.json()["id"]))
    new = MemoryItem.objects.get(pk=int(body["id"]))
    assert old.superseded_by_id == new.pk and old.expired_at is not None
    assert new.valid_from.date().isoformat() == "2025-02-01" and new.importance == 0.7
    assert Entity.objects.filter(space=space, norm="globex").exists()
    assert AuditEvent.objects.filter(action="update", target_id=body["id"]).exists()


def test_a_plain_sentence_gets_its_structure_from_the_rules(api, space):
    save(api, text="I live in Lisbon")
    moved = save(api, text="I moved to Berlin").json()
    assert moved["action"] == "UPDATE" and len(moved["superseded"]) == 1
    retracted = save(api, text="I don't live in Berlin anymore").json()
    assert retracted["action"] == "DELETE" and retracted["superseded"] == [moved["id"]]


def test_it_answers_noop_for_a_repeat(api, space):
    a = save(api, text="Sam's favourite tea is genmaicha").json()
    b = save(api, text="sam's favourite tea is Genmaicha!").json()
    assert b["action"] == "NOOP" and b["id"] == a["id"]
    assert MemoryItem.objects.get(pk=int(a["id"])).frequency == 2


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "text"),
        ({"text": "   "}, "text"),
        ({"text": "x" * 4001}, "text"),
        ({"text": "ok fine", "importance": 2}, "importance"),
        ({"text": "Sam likes tea", "valid_from": "last tuesday"}, "valid_from"),
        ({"text": "Sam likes tea", "kind": "rumour"}, "kind"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(api, body, field):
    response = save(api, **body)
    assert response.status_code == 422
    assert field in response.json()["detail"]


def test_noise_is_refused(api):
    response = save(api, text="ok ok ok")
    assert response.status_code == 422 and "too little information" in response.json()["detail"]


def test_it_needs_a_key(client):
    assert (
        client.post(
            "/api/v1/memory/facts", {"text": "x y z"}, content_type="application/json"
        ).status_code
        == 401
    )


def test_a_dry_run_answers_the_plan_and_writes_nothing(api, space):
    first = save(
        api, text="Sam works at Initech", subject="sam", predicate="works_at", object="Initech"
    )
    before = (MemoryItem.objects.count(), AuditEvent.objects.count())
    plan = save(
        api,
        text="Sam works at Globex",
        subject="sam",
        predicate="works_at",
        object="Globex",
        dry_run=True,
    ).json()
    assert plan["dry_run"] is True and plan["id"] is None
    assert plan["action"] == "UPDATE" and plan["superseded"] == [first.json()["id"]]
    assert (MemoryItem.objects.count(), AuditEvent.objects.count()) == before
    assert MemoryItem.objects.get(pk=first.json()["id"]).expired_at is None

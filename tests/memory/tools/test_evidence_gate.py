"""The evidence gate: memory_search registers a batch with a ref per row;
memory_assess is sufficient only when the caller claims it, cites at least
one ref of that batch and chooses to answer. Refs of other batches are
rejected and listed; every verdict is audited."""

from __future__ import annotations

import pytest

from memory.models import AuditEvent, SearchBatch
from memory.tools.search import BATCHES_PER_SESSION, PRUNE_EVERY


@pytest.fixture
def batch(ok):  # type: ignore[no-untyped-def]
    ok("memory_save", text="The user's sister Anna lives in Porto.")
    ok("memory_save", text="The user works at Acme as a welder.")
    found = ok("memory_search", query="Anna Porto sister")
    assert found["results"], found
    return found


def test_search_answers_a_batch_id_and_a_ref_per_row(batch):
    refs = [r["ref"] for r in batch["results"]]
    assert all(ref.startswith(batch["batch_id"] + ".") for ref in refs)
    assert len(set(refs)) == len(refs)
    stored = SearchBatch.objects.get(batch_id=batch["batch_id"])
    assert stored.refs == {r["ref"]: r["id"] for r in batch["results"]}


def test_sufficient_when_all_three_hold(ok, batch):
    ref = batch["results"][0]["ref"]
    verdict = ok(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=[ref],
        next_strategy="answer",
        sufficient=True,
    )
    assert verdict["sufficient"] is True and verdict["next_strategy"] == "answer"
    assert verdict["accepted_refs"] == [ref] and verdict["rejected_refs"] == []


@pytest.mark.parametrize(
    ("claimed", "with_ref", "strategy", "rewritten"),
    [
        (False, True, "answer", "search"),  # the caller does not claim it
        (True, False, "answer", "search"),  # no ref of the batch
        (True, True, "search", "search"),  # the caller wants to search on
        (True, True, "ask_user", "ask_user"),
    ],
)
def test_insufficient_when_any_part_fails(ok, batch, claimed, with_ref, strategy, rewritten):
    verdict = ok(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=[batch["results"][0]["ref"]] if with_ref else [],
        missing="when she moved",
        next_strategy=strategy,
        sufficient=claimed,
    )
    assert verdict["sufficient"] is False
    assert verdict["next_strategy"] == rewritten


def test_refs_of_another_batch_are_rejected_and_listed(ok, batch):
    other = ok("memory_search", query="Acme welder")
    foreign = other["results"][0]["ref"]
    verdict = ok(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=[foreign, "made.up"],
        next_strategy="answer",
        sufficient=True,
    )
    assert verdict["sufficient"] is False and verdict["next_strategy"] == "search"
    assert verdict["rejected_refs"] == [foreign, "made.up"]
    # One good ref is enough even next to a foreign one, which is still listed.
    verdict = ok(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=[foreign, batch["results"][0]["ref"]],
        next_strategy="answer",
        sufficient=True,
    )
    assert verdict["sufficient"] is True and verdict["rejected_refs"] == [foreign]


def test_every_verdict_is_audited(ok, batch, space):
    ok(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=["x.1"],
        next_strategy="answer",
        sufficient=True,
    )
    event = AuditEvent.objects.get(space=space, action="assess")
    assert event.target_id == batch["batch_id"]
    assert event.detail["sufficient"] is False and event.detail["rejected_refs"] == ["x.1"]
    assert SearchBatch.objects.get(batch_id=batch["batch_id"]).assessed_at is not None


def test_at_most_eight_refs_and_unknown_batches(call, batch):
    status, body = call(
        "memory_assess",
        batch_id=batch["batch_id"],
        evidence_refs=[f"r.{i}" for i in range(9)],
        next_strategy="answer",
        sufficient=True,
    )
    assert status == 422 and "evidence_refs" in body["detail"]
    status, body = call("memory_assess", batch_id="nope", next_strategy="answer", sufficient=True)
    assert status == 404


def test_only_the_latest_batches_of_a_session_count(ok, call, space):
    ok("memory_save", text="The user's sister Anna lives in Porto.")
    first = ok("memory_search", query="Anna", session_id="chat-1")
    assess = {
        "evidence_refs": [first["results"][0]["ref"]],
        "next_strategy": "answer",
        "sufficient": True,
    }
    for _ in range(BATCHES_PER_SESSION - 1):
        ok("memory_search", query="Anna", session_id="chat-1")
    ok("memory_search", query="Anna", session_id="chat-2")  # another session's do not count
    assert ok("memory_assess", batch_id=first["batch_id"], **assess)["sufficient"] is True
    ok("memory_search", query="Anna", session_id="chat-1")  # the 21st
    status, _ = call("memory_assess", batch_id=first["batch_id"], **assess)
    assert status == 404
    for _ in range(2 * PRUNE_EVERY):
        ok("memory_search", query="Anna", session_id="chat-1")
    kept = SearchBatch.objects.filter(space=space, session_key="chat-1").count()
    assert BATCHES_PER_SESSION <= kept < BATCHES_PER_SESSION + PRUNE_EVERY
    assert not SearchBatch.objects.filter(batch_id=first["batch_id"]).exists()
    assert SearchBatch.objects.filter(space=space, session_key="chat-2").count() == 1


def test_another_space_cannot_assess_a_batch(ok, batch, client_for):
    from memory.services.spaces import create_api_key

    _, other_key = create_api_key(space_name="other-space")
    response = client_for(other_key).post(
        "/api/v1/tools/memory_assess",
        {"batch_id": batch["batch_id"], "next_strategy": "answer", "sufficient": True},
        content_type="application/json",
    )
    assert response.status_code == 404


def test_context_reminds_while_a_batch_is_unassessed(ok, api, settings):
    ok("memory_save", text="The user's sister Anna lives in Porto.")
    found = ok("memory_search", query="Anna", session_id="chat-9")

    def reminder() -> str:
        body = api.get("/api/v1/context?session_id=chat-9").json()
        return body["blocks"]["reminder"]

    assert "memory_assess" in reminder() and "1 search" in reminder()
    assert api.get("/api/v1/context?session_id=other").json()["blocks"]["reminder"] == ""
    settings.ENGRAM = {**settings.ENGRAM, "ASSESS_REMINDER": False}
    assert reminder() == ""
    settings.ENGRAM = {**settings.ENGRAM, "ASSESS_REMINDER": True}
    ok(
        "memory_assess",
        batch_id=found["batch_id"],
        evidence_refs=[found["results"][0]["ref"]],
        next_strategy="answer",
        sufficient=True,
    )
    assert reminder() == ""

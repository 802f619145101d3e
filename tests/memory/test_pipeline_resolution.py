"""Resolution through the real HTTP API and the real pipeline task (run
eagerly on commit): add, update with an invalidation chain, retraction,
duplicates, contradictions kept for review, as_of reads over the chain."""

from __future__ import annotations

import itertools

import pytest
from django.utils import timezone

from memory.models import AuditEvent, IngestJob, MemoryItem, Relation, Turn
from memory.search import search
from memory.timeview import TimeView

pytestmark = pytest.mark.django_db(transaction=False)
_refs = itertools.count()


@pytest.fixture
def say(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def post(text: str, *, role: str = "user", session: str = "s1") -> Turn:
        body = {"session_id": session, "role": role, "text": text, "ref": f"r{next(_refs)}"}
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/turns", body, content_type="application/json")
        assert response.status_code == 202, response.content
        return Turn.objects.get(pk=int(response.json()["id"]))

    return post


def live(space, **filters):  # type: ignore[no-untyped-def]
    return MemoryItem.objects.filter(space=space, expired_at=None, status="active", **filters)


def test_it_adds_a_fact_from_a_salient_turn(space, say):
    turn = say("Hi there, my name is Sam Carter and I live in Lisbon.")
    turn.refresh_from_db()
    assert turn.skip_reason == ""
    name = live(space, predicate="name").get()
    assert name.object == "Sam Carter" and name.disposition == "ADD"
    assert name.source_turn_refs == [turn.ref] and name.source_session_id == turn.session_id
    assert live(space, predicate="lives_in").get().object == "Lisbon"
    job = IngestJob.objects.get(turn=turn)
    assert job.status == "done" and job.result["extractor"] == "rules"
    assert Relation.objects.filter(space=space, rel="lives_in", dst__norm="lisbon").exists()
    steps = set(
        AuditEvent.objects.filter(space=space, target_id=str(turn.pk)).values_list(
            "action", flat=True
        )
    )
    assert {"salience", "extract", "retrieve", "graph", "core_proposal"} <= steps


def test_it_supersedes_a_functional_fact_and_keeps_the_chain(space, say):
    say("I live in Lisbon with my two cats these days.")
    first = live(space, predicate="lives_in").get()
    before_move = timezone.now()
    say("Big news: I moved to Berlin last week!")
    second = live(space, predicate="lives_in").get()
    first.refresh_from_db()
    assert second.object == "Berlin" and second.disposition == "UPDATE"
    assert first.superseded_by_id == second.pk
    assert first.expired_at is not None and first.valid_to is not None
    # the old edge closes with the old fact
    assert Relation.objects.get(item=first).expired_at is not None
    assert Relation.objects.get(item=second).expired_at is None
    say("Actually I just relocated to Paris for the new job.")
    third = live(space, predicate="lives_in").get()
    second.refresh_from_db()
    assert third.object == "Paris" and second.superseded_by_id == third.pk
    # known_at reads: what Engram knew before the move, and now
    then = {
        h.id
        for h in search(
            "item",
            space_id=space.pk,
            query="lives Lisbon Berlin Paris",
            when=TimeView(known_at=before_move),
        )
    }
    now = {h.id for h in search("item", space_id=space.pk, query="lives Lisbon Berlin Paris")}
    assert then == {first.pk}
    assert now == {third.pk}


def test_it_invalidates_a_retracted_fact_without_deleting_it(space, say):
    say("I work at Acme Corp as an engineer on the billing team.")
    fact = live(space, predicate="works_at").get()
    turn = say("I don't work at Acme Corp anymore, long story.")
    fact.refresh_from_db()
    assert fact.expired_at is not None and fact.valid_to is not None
    assert MemoryItem.objects.filter(pk=fact.pk).exists()
    assert not live(space, predicate="works_at").exists()
    job = IngestJob.objects.get(turn=turn)
    assert job.result["actions"][0]["action"] == "DELETE"
    assert AuditEvent.objects.filter(action="delete", target_id=str(fact.pk)).exists()


def test_it_reinforces_a_duplicate_instead_of_adding_it(space, say):
    say("I really love hiking in the mountains on weekends.")
    item = live(space, predicate="likes").get()
    turn = say("I really love hiking in the mountains on weekends!", session="s2")
    item.refresh_from_db()
    assert live(space, predicate="likes").count() == 1
    assert item.frequency == 2
    assert turn.ref in item.source_turn_refs
    assert IngestJob.objects.get(turn=turn).result["actions"][0]["action"] == "NOOP"


def test_it_keeps_a_contradiction_pending_review(space, api):
    first = api.post(
        "/api/v1/memory/facts",
        {"text": "Anna from the climbing gym is vegetarian"},
        content_type="application/json",
    ).json()
    second = api.post(
        "/api/v1/memory/facts",
        {"text": "Anna from the climbing gym is not vegetarian"},
        content_type="application/json",
    ).json()
    assert first["action"] == "ADD" and second["disposition"] == "DEFER"
    pending = MemoryItem.objects.get(pk=int(second["id"]))
    assert pending.status == "pending_review"
    assert pending.metadata["contradicts"] == [int(first["id"])]
    # the original stays live; the pending one is not recalled
    assert MemoryItem.objects.get(pk=int(first["id"])).expired_at is None
    hits = {h.id for h in search("item", space_id=space.pk, query="Anna vegetarian")}
    assert hits == {int(first["id"])}


def test_it_skips_non_salient_and_assistant_turns(space, say):
    short = say("ok thanks")
    command = say("open chrome and go to github")
    assistant = say("I live in Madrid and love tapas, says the assistant.", role="assistant")
    for turn, reason in ((short, "short"), (command, "command"), (assistant, "assistant")):
        turn.refresh_from_db()
        assert turn.skip_reason == reason
    assert not MemoryItem.objects.filter(space=space).exists()


def test_it_runs_a_redelivered_job_once(space, say):
    from memory.services.pipeline import run_job

    turn = say("My sister Anna lives in Berlin and teaches piano.")
    job = IngestJob.objects.get(turn=turn)
    count = MemoryItem.objects.filter(space=space).count()
    assert run_job(job.pk) is None  # already done: claim refuses it
    # a job whose lease expired while its worker was dead is re-run exactly once
    IngestJob.objects.filter(pk=job.pk).update(status="running", lease_until=timezone.now())
    run_job(job.pk)
    assert MemoryItem.objects.filter(space=space).count() == count
    assert live(space, predicate="sister").count() == 1


def test_it_merges_entity_names(space, api):
    from memory.services import graph

    a = graph.upsert_entity(space=space, name="Anna", type="person")
    b = graph.upsert_entity(space=space, name="anna")
    c = graph.upsert_entity(space=space, name="Anna K.")
    d = graph.upsert_entity(space=space, name="Anna Karenina")
    assert a.pk == b.pk == c.pk and d.pk != a.pk
    found = graph.entities_in_text(space=space, text="Did anna k. call Anna Karenina?")
    assert [e.pk for e in found] == [a.pk, d.pk]

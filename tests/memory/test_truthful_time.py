"""Memory that is true: facts dated by when they were said, changes that end
the old value where the new one begins, history never rewritten (known_at
rebuilds what Engram held), arrival order never changing the outcome, one
entity per person, and a read path that never presents the past as now.

Driven through the HTTP API with the real pipeline run eagerly on commit."""

from __future__ import annotations

import itertools
import time

import pytest
from django.utils import timezone

pytestmark = pytest.mark.django_db
_refs = itertools.count()


@pytest.fixture
def say(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def post(text: str, ts: str, *, role: str = "user", session: str = "s1") -> None:
        body = {
            "session_id": session,
            "role": role,
            "text": text,
            "ts": ts,
            "ref": f"t{next(_refs)}",
        }
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/turns", body, content_type="application/json")
        assert response.status_code == 202, response.content

    return post


def facts(api, **params):  # type: ignore[no-untyped-def]
    response = api.get("/api/v1/memory/facts", params)
    assert response.status_code == 200, response.content
    return response.json()["facts"]


def objects(api, **params):  # type: ignore[no-untyped-def]
    return [f["object"] for f in facts(api, **params)]


def moment() -> str:
    """A wall-clock instant strictly between two writes."""
    time.sleep(0.01)
    at = timezone.now().isoformat()
    time.sleep(0.01)
    return at


def test_a_fact_is_dated_by_its_turn_not_by_the_worker(api, say):
    say("I work at Northwind these days.", "2025-01-10T09:00:00Z")
    (fact,) = facts(api, subject="user", predicate="works_at")
    assert fact["valid_from"].startswith("2025-01-10") and fact["current"] is True
    assert objects(api, subject="user", predicate="works_at", as_of="2025-05-01") == ["Northwind"]
    assert objects(api, subject="user", predicate="works_at", as_of="2024-12-01") == []


def test_a_date_in_the_text_wins_over_the_turn(api, say):
    say("I moved to Denver last month, finally settled.", "2025-06-15T12:00:00Z")
    (fact,) = facts(api, subject="user", predicate="lives_in")
    assert fact["valid_from"].startswith("2025-05-16")


def test_a_change_ends_the_old_value_where_the_new_one_begins(api, say):
    say("I live in Madrid with my partner.", "2025-01-05T10:00:00Z")
    between = moment()
    say("We moved! I live in Seville now.", "2025-06-01T10:00:00Z")
    chain = facts(api, subject="user", predicate="lives_in", include_history=True)
    assert [(f["object"], f["current"]) for f in chain] == [("Seville", True), ("Madrid", False)]
    seville, madrid = chain
    assert madrid["valid_to"] == seville["valid_from"] and madrid["valid_to"].startswith(
        "2025-06-01"
    )
    assert madrid["superseded_by"] == seville["id"]
    # valid time, by what is known now
    assert objects(api, subject="user", predicate="lives_in", as_of="2025-03-01") == ["Madrid"]
    assert objects(api, subject="user", predicate="lives_in", as_of="2025-07-01") == ["Seville"]
    # transaction time: between the two writes Engram held Madrid as current
    (then,) = facts(api, subject="user", predicate="lives_in", known_at=between)
    assert then["object"] == "Madrid" and then["current"] is True and then["valid_to"] is None
    # what Engram knew then about a moment before the change: Madrid, open-ended
    assert objects(
        api, subject="user", predicate="lives_in", known_at=between, as_of="2025-07-01"
    ) == ["Madrid"]


def _state(api):  # type: ignore[no-untyped-def]
    return [
        (f["object"], f["current"], f["valid_from"][:10], (f["valid_to"] or "")[:10])
        for f in facts(api, subject="user", predicate="works_at", include_history=True)
    ]


TURNS = [
    ("I work at Siemens as an engineer.", "2024-03-01T09:00:00Z"),
    ("I got a new job at Bosch, started this week.", "2024-09-02T09:00:00Z"),
    ("I started at Zeiss today, new chapter!", "2025-02-03T09:00:00Z"),
]


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (2, 1, 0), (1, 2, 0)])
def test_arrival_order_never_changes_what_is_current(api, say, space, order):
    for i in order:
        say(*TURNS[i])
    assert _state(api) == [
        ("Zeiss", True, "2025-02-03", ""),
        ("Bosch", False, "2024-09-02", "2025-02-03"),
        ("Siemens", False, "2024-03-01", "2024-09-02"),
    ]


def test_a_restatement_said_earlier_moves_the_start_back(api, say):
    say("I live in Lyon now.", "2025-05-01T09:00:00Z")
    say("I live in Paris, just arrived.", "2025-01-01T09:00:00Z")  # backfilled later
    say("I live in Lyon, love it here.", "2025-03-01T09:00:00Z")  # backfilled later too
    chain = facts(api, subject="user", predicate="lives_in", include_history=True)
    assert [(f["object"], f["valid_from"][:10], (f["valid_to"] or "")[:10]) for f in chain] == [
        ("Lyon", "2025-03-01", ""),
        ("Paris", "2025-01-01", "2025-03-01"),
    ]


def test_a_new_value_reads_only_the_live_one_of_a_long_history(api, say, monkeypatch):
    from memory.services import facts as service

    loaded: list[list] = []
    real = service._chain

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        loaded.append(found)
        return found

    monkeypatch.setattr(service, "_chain", spy)
    for month, city in enumerate(["Oslo", "Bergen", "Tromso", "Bodo", "Alta"], start=1):
        say(f"I live in {city} now.", f"2025-{month:02d}-01T09:00:00Z")
    assert [len(found) for found in loaded[1:]] == [1, 1, 1, 1]  # the live value, no history
    say("I live in Paris, just arrived.", "2024-06-01T09:00:00Z")  # said before all of them
    assert len(loaded[-1]) == 5  # the whole history, to place it in
    chain = facts(api, subject="user", predicate="lives_in", include_history=True)
    assert [f["object"] for f in chain] == ["Alta", "Bodo", "Tromso", "Bergen", "Oslo", "Paris"]
    assert chain[-1]["valid_to"].startswith("2025-01-01")


def test_a_retraction_ends_the_fact_when_it_was_said(api, say):
    say("I work at Initech on the payments team.", "2025-01-10T09:00:00Z")
    say("I quit Initech, no longer there.", "2025-04-20T09:00:00Z")
    assert facts(api, subject="user", predicate="works_at") == []
    (old,) = facts(api, subject="user", predicate="works_at", include_history=True)
    assert old["valid_to"].startswith("2025-04-20") and old["current"] is False
    assert objects(api, subject="user", predicate="works_at", as_of="2025-02-01") == ["Initech"]


def test_the_users_name_is_the_user(api, say):
    say("Hi! My name is Maria Lopez.", "2025-01-01T09:00:00Z")
    say("I work at Siemens in the Munich office.", "2025-01-02T09:00:00Z")
    say("Maria works at Bosch now, big change.", "2025-03-01T09:00:00Z")
    assert objects(api, subject="user", predicate="works_at") == ["Bosch"]
    assert objects(api, subject="Maria", predicate="works_at") == ["Bosch"]
    (bosch,) = facts(api, subject="user", predicate="works_at")
    assert bosch["subject"] == "user" and bosch["text"] == "User works at Bosch"
    say("Everyone calls me Sam, by the way.", "2025-03-02T09:00:00Z")
    assert objects(api, subject="user", predicate="name") == ["Maria Lopez"]
    assert objects(api, subject="user", predicate="nickname") == ["Sam"]
    say("Sam lives in Porto these days.", "2025-03-03T09:00:00Z")
    assert objects(api, subject="Maria Lopez", predicate="lives_in") == ["Porto"]


def test_a_new_manager_replaces_the_old_one(api, say):
    say("My manager is Daniel, he is great.", "2025-01-01T09:00:00Z")
    say("My manager is Meera now, Daniel left.", "2025-05-01T09:00:00Z")
    assert objects(api, subject="user", predicate="manager") == ["Meera"]
    assert objects(api, subject="user", predicate="manager", as_of="2025-02-01") == ["Daniel"]


def test_a_relative_is_one_entity_under_every_name(api, say):
    say("My sister Anna lives in Porto.", "2025-01-01T09:00:00Z")
    say("My sister moved to Lyon last week.", "2025-06-10T09:00:00Z")
    assert objects(api, subject="Anna", predicate="lives_in") == ["Lyon"]
    assert objects(api, subject="anna", predicate="lives_in", as_of="2025-03-01") == ["Porto"]
    say("anna lives in Lyon, she still loves it there", "2025-07-01T09:00:00Z")
    assert len(facts(api, subject="Anna", predicate="lives_in", include_history=True)) == 2


def test_the_assistants_guesses_and_small_talk_write_nothing(api, say):
    say("I guess you live in Paris? Many people do.", "2025-01-01T09:00:00Z", role="assistant")
    say("haha ok, thanks for that!", "2025-01-01T09:01:00Z")
    say("what's the weather like tomorrow?", "2025-01-01T09:02:00Z")
    assert facts(api, include_history=True) == []


def _context(api, query, **params):  # type: ignore[no-untyped-def]
    response = api.get("/api/v1/context", {"query": query, **params})
    assert response.status_code == 200, response.content
    return response.json()["blocks"]["recalled"]


# /context recalls on a helper thread with its own connection: it sees only
# committed rows.
@pytest.mark.django_db(transaction=True)
def test_context_never_presents_the_past_as_now(api, say):
    say("I live in Hamburg, in a small flat.", "2025-01-01T09:00:00Z", session="a")
    say("I moved to Munich for the new job.", "2025-06-20T09:00:00Z", session="b")
    recalled = _context(api, "where do I live now?")
    lines = recalled.splitlines()
    munich = next(i for i, ln in enumerate(lines) if "User lives in Munich" in ln)
    hamburg_turn = next(i for i, ln in enumerate(lines) if "I live in Hamburg" in ln)
    assert munich < hamburg_turn
    assert lines[hamburg_turn].startswith("- said on 2025-01-01 (since superseded):")
    assert "now" not in lines[hamburg_turn].split(":")[0]
    formerly = [ln for ln in lines if "User lives in Hamburg" in ln]
    assert formerly and all(ln.startswith("- formerly (until 2025-06-20):") for ln in formerly)
    assert "valid" not in recalled


def test_recall_marks_the_stale_turn_and_ranks_it_below_the_current_fact(api, say):
    say("I live in Hamburg, in a small flat.", "2025-01-01T09:00:00Z", session="a")
    say("I moved to Munich for the new job.", "2025-06-20T09:00:00Z", session="b")
    results = api.post(
        "/api/v1/recall", {"query": "where do I live"}, content_type="application/json"
    ).json()["results"]
    by_text = {r["text"]: (i, r) for i, r in enumerate(results)}
    fact_rank, fact = by_text["User lives in Munich"]
    turn_rank, turn = by_text["I live in Hamburg, in a small flat."]
    assert fact["current"] is True and fact["space"] == "test-space"
    assert turn["current"] is None and turn["superseded_by"] == fact["id"]
    assert fact_rank < turn_rank
    assert "User lives in Hamburg" not in by_text  # history only when asked for


@pytest.mark.django_db(transaction=True)
def test_context_has_a_relevance_gate(api, say):
    say("I live in Hamburg, in a small flat.", "2025-01-01T09:00:00Z")
    say("My favourite food is ramen from the place downstairs.", "2025-01-02T09:00:00Z")
    assert _context(api, "zebra quantum") == ""
    assert "ramen" in _context(api, "what food do I like? ramen?")


def test_fact_only_scores_are_graded(api, say):
    say("I live in Hamburg near the harbour.", "2025-01-01T09:00:00Z")
    say("My favourite food is ramen.", "2025-01-02T09:00:00Z")
    say("I work at Airbus in Hamburg.", "2025-01-03T09:00:00Z")
    results = api.post(
        "/api/v1/recall",
        {"query": "Hamburg Airbus work", "types": ["fact"]},
        content_type="application/json",
    ).json()["results"]
    scores = [r["score"] for r in results]
    assert len(scores) >= 2 and len(set(scores)) == len(scores)
    assert "Airbus" in results[0]["text"] and scores[-1] < scores[0]

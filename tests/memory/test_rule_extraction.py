"""What the rule-based extractor (no LLM configured) learns from a user's
turns, through the HTTP API and the real pipeline: the failures a new user
met (a job said as "I'm a <role> in <city>", a move said with "we", a diet,
an evolving preference, dated events that collapsed into one, an allergy
that became a role and an employer) and the boundaries of what it reads."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from memory.models import CoreBlock
from memory.services.pipeline import rules

pytestmark = pytest.mark.django_db
_refs = itertools.count()


@pytest.fixture
def say(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def post(text: str, ts: str = "2025-03-01T09:00:00Z", *, session: str = "s1") -> None:
        body = {
            "session_id": session,
            "role": "user",
            "text": text,
            "ts": ts,
            "ref": f"r{next(_refs)}",
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
    return sorted(f["object"] for f in facts(api, **params))


def core_text(space) -> str:  # type: ignore[no-untyped-def]
    block = CoreBlock.objects.filter(space=space, label="user").first()
    return block.text if block else ""


def test_an_allergy_is_an_allergy_not_a_role_or_an_employer(api, say, space):
    say("I'm a nurse at St Thomas' Hospital.", "2025-01-01T09:00:00Z")
    say("I'm allergic to peanuts, so keep that in mind for recipes", "2025-02-01T09:00:00Z")
    assert objects(api, subject="user", predicate="role") == ["nurse"]
    assert objects(api, subject="user", predicate="works_at") == ["St Thomas' Hospital"]
    assert objects(api, subject="user", predicate="allergic_to") == ["peanuts"]
    assert "llergic" not in core_text(space) and "recipes" not in core_text(space)


def test_a_life_story_is_learned(api, say):
    say("Hi, my name is Sam Carter but everyone calls me Sammy.", "2025-01-01T09:00:00Z")
    say("I'm a physiotherapist in Leeds.", "2025-01-02T09:00:00Z")
    say("We moved to York last month, the kids love it.", "2025-02-10T09:00:00Z")
    say("I've been vegetarian for ten years.", "2025-02-11T09:00:00Z")
    say("I used to love coffee but these days I only drink green tea.", "2025-02-12T09:00:00Z")
    say("My dog Biscuit is a beagle.", "2025-02-13T09:00:00Z")
    say("I'm building TrailMate, a hiking app.", "2025-02-14T09:00:00Z")
    say("We're flying to Lisbon on 12 April for my sister's wedding.", "2025-02-15T09:00:00Z")
    assert objects(api, subject="user", predicate="name") == ["Sam Carter"]
    assert objects(api, subject="user", predicate="nickname") == ["Sammy"]
    assert objects(api, subject="user", predicate="role") == ["physiotherapist"]
    assert objects(api, subject="user", predicate="lives_in") == ["York"]
    assert objects(api, subject="user", predicate="diet") == ["vegetarian"]
    assert objects(api, subject="user", predicate="prefers") == ["green tea"]
    assert objects(api, subject="user", predicate="dog") == ["Biscuit"]
    assert objects(api, subject="user", predicate="project") == ["TrailMate"]
    (plan,) = facts(api, subject="user", predicate="plan")
    assert "Lisbon" in plan["text"]


def test_every_dated_event_is_its_own_fact(api, say):
    say("I just moved from Chicago to Denver last month.", "2025-06-15T12:00:00Z")
    say("My birthday is on March 14th.", "2025-06-16T12:00:00Z")
    say("I ran my first marathon last Sunday!", "2025-06-17T12:00:00Z")
    say("I passed my driving test yesterday.", "2025-06-18T12:00:00Z")
    (home,) = facts(api, subject="user", predicate="lives_in")
    assert home["object"] == "Denver" and home["valid_from"].startswith("2025-05-16")
    (birthday,) = facts(api, subject="user", predicate="birthday")
    # the date is the birthday; the fact holds from when it was said
    assert birthday["object"] == "March 14" and birthday["valid_from"].startswith("2025-06-16")
    events = facts(api, subject="user", predicate="event")
    assert sorted(e["object"] for e in events) == ["passed driving test", "ran first marathon"]
    assert {e["valid_from"][:10] for e in events} == {"2025-06-15", "2025-06-17"}


def test_a_relatives_attributes_are_about_them(api, say):
    say("Anna lives in Berlin, she is a teacher.", "2025-01-01T09:00:00Z")
    say("My brother Tom works at Siemens and lives in Munich.", "2025-01-02T09:00:00Z")
    assert objects(api, subject="Anna", predicate="lives_in") == ["Berlin"]
    assert objects(api, subject="Anna", predicate="role") == ["teacher"]
    assert objects(api, subject="Tom", predicate="works_at") == ["Siemens"]
    assert objects(api, subject="Tom", predicate="lives_in") == ["Munich"]
    assert objects(api, subject="user", predicate="brother") == ["Tom"]
    assert facts(api, subject="user", predicate="lives_in") == []
    assert facts(api, subject="user", predicate="role") == []


def test_a_restated_city_with_a_trailing_clause_is_a_noop(api, say):
    say("My sister Anna lives in Porto.", "2025-01-01T09:00:00Z")
    say("Anna lives in Porto, she still loves it there.", "2025-02-01T09:00:00Z")
    (porto,) = facts(api, subject="Anna", predicate="lives_in", include_history=True)
    assert porto["object"] == "Porto" and porto["current"] is True


def test_retractions(api, say):
    say("I work at Globex and I'm vegan.", "2025-01-01T09:00:00Z")
    say("I quit my job yesterday.", "2025-03-01T09:00:00Z")
    say("I'm not vegan anymore.", "2025-04-01T09:00:00Z")
    assert facts(api, subject="user", predicate="works_at") == []
    assert facts(api, subject="user", predicate="diet") == []
    say("I live in Oslo. Actually, that's no longer true.", "2025-05-01T09:00:00Z")
    assert facts(api, subject="user", predicate="lives_in") == []


@pytest.mark.parametrize(
    "text",
    [
        "If I lived in Paris I would eat croissants every day.",
        "My friend thinks I should move to Berlin.",
        'He said "I live in Paris" but I did not believe him.',
        "Do I live in Paris or Lyon?",
        "I'm a big believer in second chances.",
        "Call me crazy, but I think it works.",
        "I'd love to work at NASA someday.",
        "I love the colour you picked.",
    ],
)
def test_what_is_not_a_fact_writes_nothing(text):
    assert rules.extract(text, now=datetime(2025, 1, 1, tzinfo=UTC)) == []


def test_lower_case_guesses_stay_out_of_core_memory():
    (c,) = rules.extract("i live in lisbon", now=datetime(2025, 1, 1, tzinfo=UTC))
    assert (c.predicate, c.object) == ("lives_in", "Lisbon") and c.importance < 0.8
    (c,) = rules.extract("I live in Lisbon.", now=datetime(2025, 1, 1, tzinfo=UTC))
    assert c.importance >= 0.8


def test_the_key_word_prefilter_never_changes_what_is_found(monkeypatch):
    """Each pattern runs only on clauses holding one of its key words; with
    the prefilter off (every clause tried), the corpus yields the same facts."""
    from memory.evaluation import extraction
    from memory.services import pipeline

    now = extraction.CORPUS_NOW
    texts = [ex.text for ex in extraction.load()]
    with_filter = [
        [(c.subject, c.predicate, c.object, c.retract) for c in rules.extract(t, now=now)]
        for t in texts
    ]
    everything = {needs: ("",) for needs in pipeline.rules._NEEDS}
    monkeypatch.setattr(pipeline.rules, "_NEEDS", everything)
    without = [
        [(c.subject, c.predicate, c.object, c.retract) for c in rules.extract(t, now=now)]
        for t in texts
    ]
    assert with_filter == without

"""Each recall channel finds what it should, and fusion is deterministic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.models import (
    Entity,
    EntityAlias,
    MemoryItem,
    Relation,
    Session,
    SessionSummary,
    Skill,
    Turn,
)
from memory.services.recall import recall
from memory.services.recall.fusion import Ranking, fuse

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def _session(space, name="s1"):  # type: ignore[no-untyped-def]
    return Session.objects.create(space=space, external_id=name, started_at=T0, last_turn_at=T0)


def _turn(space, session, ref, text, *, speaker="", minutes=0, role="user"):  # type: ignore[no-untyped-def]
    return Turn.objects.create(
        space=space,
        session=session,
        ref=ref,
        role=role,
        text=text,
        ts=T0 + timedelta(minutes=minutes),
        metadata={"speaker": speaker} if speaker else {},
    )


def _refs(response):  # type: ignore[no-untyped-def]
    return [ref for r in response.results for ref in r.source.turn_refs]


def test_it_finds_a_live_fact_by_its_words(space) -> None:
    MemoryItem.objects.create(
        space=space, text="The user is allergic to peanuts", source_turn_refs=["t9"]
    )
    MemoryItem.objects.create(space=space, text="The user drives a blue bicycle")
    response = recall(space=space, query="Any allergies, peanuts?", k=5)
    assert response.results[0].type == "fact"
    assert response.results[0].text == "The user is allergic to peanuts"
    assert response.results[0].source.turn_refs == ["t9"]
    assert "bm25_items" in response.results[0].channels


def test_it_finds_a_turn_and_reports_its_own_ref(space) -> None:
    s = _session(space)
    _turn(space, s, "a1", "We booked the ferry to Naxos for Thursday")
    _turn(space, s, "a2", "Remember to buy sunscreen", minutes=1)
    response = recall(space=space, query="ferry Naxos", k=3)
    top = response.results[0]
    assert (top.type, top.source.turn_refs, top.source.session_id) == ("turn", ["a1"], "s1")
    assert top.channels["bm25_turns"] == 1


def test_it_finds_a_session_summary(space) -> None:
    s = _session(space)
    SessionSummary.objects.create(
        space=space,
        session=s,
        text="Planning the kitchen renovation budget",
        first_ts=T0,
        last_ts=T0,
    )
    response = recall(space=space, query="renovation budget", k=3, types=["summary"])
    assert [r.type for r in response.results] == ["summary"]
    assert response.results[0].source.session_id == "s1"


def test_it_finds_an_enabled_skill_and_never_a_draft(space) -> None:
    Skill.objects.create(
        space=space,
        name="deploy-staging",
        description="Deploy the web app to staging",
        body="1. run the tests 2. push the tag 3. watch the rollout",
        enabled=True,
        is_draft=False,
        evidence_turn_refs=["D2:4"],
    )
    Skill.objects.create(
        space=space, name="deploy-prod", description="Deploy to production", enabled=False
    )
    MemoryItem.objects.create(space=space, text="The user likes green tea")
    found = recall(space=space, query="how do I deploy to staging?", k=5).results
    assert [(r.type, r.text.splitlines()[0]) for r in found] == [
        ("skill", "deploy-staging: Deploy the web app to staging")
    ]
    assert "push the tag" in found[0].text
    assert found[0].source.turn_refs == ["D2:4"] and found[0].channels == {"skills": 1}
    only = recall(space=space, query="deploy", k=5, types=["skill"]).results
    assert [r.type for r in only] == ["skill"]
    before = recall(space=space, query="deploy staging", k=5, known_at=T0 - timedelta(days=1))
    assert before.results == []


def test_a_query_matching_no_skill_keeps_the_score_scale(space) -> None:
    MemoryItem.objects.create(space=space, text="The user likes green tea")
    alone = recall(space=space, query="green tea", k=3).results[0].score
    Skill.objects.create(space=space, name="brew", description="Brew coffee", enabled=True)
    assert recall(space=space, query="green tea", k=3).results[0].score == alone


def test_the_graph_channel_finds_facts_about_a_named_entity(space) -> None:
    anna = Entity.objects.create(
        space=space, name="Anna Karenina", norm="anna karenina", type="person"
    )
    EntityAlias.objects.create(space=space, entity=anna, alias="Anna", norm="anna")
    lisbon = Entity.objects.create(space=space, name="Lisbon", norm="lisbon", type="place")
    # The fact's text does not contain the word the query uses: only the graph links them.
    fact = MemoryItem.objects.create(space=space, text="She relocated to Portugal's capital")
    Relation.objects.create(space=space, src=anna, rel="lives_in", dst=lisbon, item=fact)
    response = recall(space=space, query="Where is Anna these days?", k=5)
    assert [r.id for r in response.results] == [str(fact.pk)]
    assert response.results[0].channels == {"graph": 1}


def test_a_reply_to_a_matching_turn_comes_with_it(space) -> None:
    s = _session(space)
    _turn(space, s, "q", "What was the name of the hiking trail you loved?", minutes=0)
    _turn(space, s, "a", "It was the Levada do Rei, absolutely stunning", minutes=1)
    _turn(space, s, "x", "Unrelated chatter about lunch", minutes=2)
    refs = _refs(recall(space=space, query="hiking trail name", k=2))
    assert refs == ["q", "a"]


def test_a_turn_said_by_the_person_named_ranks_first(space) -> None:
    s = _session(space)
    _turn(space, s, "m1", "I painted a lake at sunrise", speaker="Mel", minutes=0)
    _turn(space, s, "gap", "ok", speaker="Caro", minutes=1)
    _turn(space, s, "gap2", "ok", speaker="Mel", minutes=2)
    _turn(space, s, "c1", "I painted a lake at sunrise too", speaker="Caro", minutes=3)
    assert _refs(recall(space=space, query="What did Caro paint?", k=1)) == ["c1"]
    assert _refs(recall(space=space, query="What did Mel paint?", k=1)) == ["m1"]


def test_a_date_in_the_query_lifts_turns_from_then(space) -> None:
    s = _session(space)
    Turn.objects.create(
        space=space,
        session=s,
        ref="old",
        role="user",
        text="went to the concert",
        ts=datetime(2022, 5, 10, tzinfo=UTC),
    )
    Turn.objects.create(
        space=space,
        session=s,
        ref="new",
        role="user",
        text="went to the concert",
        ts=datetime(2023, 5, 10, tzinfo=UTC),
    )
    assert _refs(recall(space=space, query="concert in May 2022", k=1)) == ["old"]
    assert _refs(recall(space=space, query="concert in May 2023", k=1)) == ["new"]


def test_types_filter_keeps_only_those_types(space) -> None:
    s = _session(space)
    _turn(space, s, "t1", "Tea with oat milk every morning")
    MemoryItem.objects.create(space=space, text="Prefers tea with oat milk", kind="preference")
    assert {r.type for r in recall(space=space, query="oat milk tea", types=["turn"]).results} == {
        "turn"
    }
    assert {r.type for r in recall(space=space, query="oat milk tea", types=["fact"]).results} == {
        "fact"
    }


def test_scores_are_in_unit_range_and_best_first(space) -> None:
    s = _session(space)
    for i in range(12):
        _turn(
            space,
            s,
            f"r{i}",
            f"note {i} about gardening tomatoes" + " and basil" * (i % 3),
            minutes=i,
        )
    MemoryItem.objects.create(space=space, text="Grows tomatoes and basil on the balcony")
    results = recall(space=space, query="tomatoes basil", k=10).results
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    assert scores[0] >= 0.5  # a first place in its channels reads as a strong score


def test_fusion_is_deterministic_and_breaks_ties_by_key() -> None:
    a = Ranking("one", 1.0, [("turn", 5), ("turn", 3)], frozenset({"turn"}))
    b = Ranking("two", 1.0, [("turn", 3), ("turn", 5)], frozenset({"turn"}))
    first = fuse([a, b])
    assert [f.key for f in first] == [("turn", 3), ("turn", 5)]  # tie -> lower key first
    assert [f.key for f in fuse([b, a])] == [f.key for f in first]
    assert first[0].channels == {"one": 2, "two": 1}
    assert first[0].score == pytest.approx(first[1].score)


def test_recall_order_is_stable_across_calls(space) -> None:
    s = _session(space)
    for i in range(20):
        _turn(space, s, f"d{i}", "the same sentence about sailing boats", minutes=i)
    orders = {tuple(_refs(recall(space=space, query="sailing boats", k=10))) for _ in range(3)}
    assert len(orders) == 1


def test_a_query_with_no_searchable_words_returns_nothing(space) -> None:
    s = _session(space)
    _turn(space, s, "t1", "anything at all")
    assert recall(space=space, query="?!  ...", k=5).results == []
    assert recall(space=space, query="", k=5).results == []

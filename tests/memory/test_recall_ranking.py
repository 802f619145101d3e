"""Ranking details of the turn and graph channels: per-space statistics, the
"when" question, a month without a year, and the graph's live-fact rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.models import Entity, EntityAlias, MemoryItem, Relation, Session, Space, Turn
from memory.services.recall import channels, recall

pytestmark = pytest.mark.django_db

T0 = datetime(2022, 3, 1, 12, 0, tzinfo=UTC)
# Turns sharing no word with the questions, so theirs are not everywhere.
FILLER = [(f"f{i}", f"filler line number {i}") for i in range(20)]


def _turns(space, texts, *, session="s1", ts=T0):  # type: ignore[no-untyped-def]
    s, _ = Session.objects.get_or_create(
        space=space, external_id=session, defaults={"started_at": ts, "last_turn_at": ts}
    )
    Turn.objects.bulk_create(
        Turn(
            space=space,
            session=s,
            ref=ref,
            role="user",
            text=text,
            ts=ts + timedelta(minutes=i),
        )
        for i, (ref, text) in enumerate(texts)
    )


def _refs(space, query, k=2):  # type: ignore[no-untyped-def]
    return [
        r for res in recall(space=space, query=query, k=k).results for r in res.source.turn_refs
    ]


def test_another_space_does_not_move_this_spaces_ranking(space) -> None:
    # Here "tomato" and "garden" are equally rare, and the shorter turn wins.
    _turns(
        space,
        [
            ("short", "tomato soup"),
            ("long", "we spent the whole long afternoon sitting quietly in the garden"),
        ]
        + FILLER,
    )
    assert _refs(space, "tomato garden") == ["short", "long"]
    # Another tenant talks about tomatoes all day. In an index-wide BM25 that
    # makes "tomato" a common word and flips the order above.
    other = Space.objects.create(name="other")
    _turns(other, [(f"o{i}", f"tomato harvest day {i}") for i in range(300)])
    assert _refs(space, "tomato garden") == ["short", "long"]


def test_derived_forms_of_a_word_meet(space) -> None:
    # A suffix stripper kept "peace" from "peaceful" and "activities" from
    # "active": the turns answering were never candidates.
    _turns(
        space,
        [
            ("calm", "The lake near my house is such a peaceful spot"),
            ("busy", "I stay active with tennis twice a week"),
        ]
        + FILLER,
    )
    assert _refs(space, "Where does she find peace?", k=1) == ["calm"]
    assert _refs(space, "Which activities keep him going?", k=1) == ["busy"]


def test_a_question_asking_for_a_name_prefers_the_turn_naming_one(space) -> None:
    _turns(
        space,
        [
            ("named", "Last spring Ana visited Lisbon with her sister"),
            ("echo", "Ana said visiting a new city is always fun for her"),
        ]
        + FILLER,
    )
    assert _refs(space, "Which city did Ana visit?", k=1) == ["named"]
    # Not asking for a name: the turn holding more of the question wins.
    assert _refs(space, "Did Ana enjoy visiting a city?", k=1) == ["echo"]


def test_a_when_question_prefers_the_turn_that_places_it_in_time(space) -> None:
    _turns(
        space,
        [
            ("plain", "the pottery class was fun"),
            ("dated", "the pottery class we both took was on Friday evening"),
        ],
    )
    assert _refs(space, "When was the pottery class?", k=1) == ["dated"]
    # Not a "when" question: the shorter turn, which also says "fun", wins.
    assert _refs(space, "Was the pottery class fun?", k=1) == ["plain"]


def test_a_month_without_a_year_matches_that_month_of_any_year(space) -> None:
    # Created first, so it would win the tie without the date.
    _turns(
        space,
        [("august", "went to the concert")],
        session="s1",
        ts=datetime(2022, 8, 9, tzinfo=UTC),
    )
    _turns(
        space, [("may", "went to the concert")], session="s2", ts=datetime(2022, 5, 9, tzinfo=UTC)
    )
    assert _refs(space, "Which concert did I go to in May?", k=1) == ["may"]
    assert _refs(space, "Which concert did I go to in August?", k=1) == ["august"]


@pytest.mark.parametrize("status", ["archived", "forgotten"])
def test_the_graph_ignores_edges_of_facts_out_of_recall(space, status) -> None:
    anna = Entity.objects.create(space=space, name="Anna", norm="anna", type="person")
    EntityAlias.objects.create(space=space, entity=anna, alias="Anna", norm="anna")
    lisbon = Entity.objects.create(space=space, name="Lisbon", norm="lisbon", type="place")
    portugal = Entity.objects.create(space=space, name="Portugal", norm="portugal", type="place")
    tea = Entity.objects.create(space=space, name="green tea", norm="green tea", type="thing")
    gone = MemoryItem.objects.create(space=space, text="She moved there", status=status)
    # Reachable from Anna only through the edge of the fact that is gone.
    beyond = MemoryItem.objects.create(space=space, text="It is the capital")
    live = MemoryItem.objects.create(space=space, text="Drinks it every morning")
    # The edge itself is still open, as it would be if nothing closed it.
    Relation.objects.create(space=space, src=anna, rel="lives_in", dst=lisbon, item=gone)
    Relation.objects.create(space=space, src=lisbon, rel="capital_of", dst=portugal, item=beyond)
    Relation.objects.create(space=space, src=anna, rel="likes", dst=tea, item=live)
    ranking = channels.graph(space=space, query="What about Anna?", limit=10, when=None)
    assert ranking.keys == [("item", live.pk)]


def test_a_fact_holding_the_whole_query_keeps_a_place_among_many_turns(space) -> None:
    # Thirty turns talk about the editor; fusion weighs turns over facts, so
    # on score alone all eight places go to turns.
    _turns(space, [(f"t{i}", f"the editor froze again during session {i}") for i in range(30)])
    fact = MemoryItem.objects.create(space=space, text="Prefers the Helix editor")
    MemoryItem.objects.create(space=space, text="Helix is a mountain bike brand")
    results = recall(space=space, query="which editor, Helix?", k=8).results
    assert [r.type for r in results[:7]] == ["turn"] * 7
    assert (results[7].type, results[7].id) == ("fact", str(fact.pk))
    # No fact holds all of this query, so none gets such a place,
    results = recall(space=space, query="which editor, Helix, for Rust?", k=8).results
    assert all(r.type == "turn" for r in results)
    # nor one that no longer holds, nor any when k is too small to share.
    MemoryItem.objects.filter(pk=fact.pk).update(valid_to=T0)
    assert all(r.type == "turn" for r in recall(space=space, query="which editor, Helix?").results)
    MemoryItem.objects.filter(pk=fact.pk).update(valid_to=None)
    assert [r.type for r in recall(space=space, query="which editor, Helix?", k=2).results] == [
        "turn",
        "turn",
    ]

"""The fact channel ranks a space's facts as they are now, or with their
history, from their statistics' postings (termstats.best_items): by the
space's own word counts, never a fact the view does not show, a fact saved a
moment ago included, and a fact whose text changed in place found by its new
words. A view at an instant asks the index."""

from __future__ import annotations

import pytest

from engram_site.db import batch
from memory.models import Entity, EntityAlias, MemoryItem, Relation, Space
from memory.services.facts import supersede
from memory.services.recall import channels, recall, termstats
from memory.timeview import TimeView

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh():  # type: ignore[no-untyped-def]
    termstats._cache.clear()
    yield
    termstats._cache.clear()


def _ranked(space: Space, query: str, limit: int = 10) -> list[int]:
    ranking = channels.bm25_items(space=space, query=query, limit=limit, when=TimeView())
    return [pk for _, pk in ranking.keys]


def test_facts_rank_by_the_spaces_own_word_counts(space) -> None:  # type: ignore[no-untyped-def]
    # In this space "quince" is rare and "medlar" common; in the other one,
    # the other way round. Each space's ranking follows its own counts.
    rare = MemoryItem.objects.create(space=space, text="The orchard grows quince")
    common = MemoryItem.objects.create(space=space, text="The orchard grows medlar")
    for i in range(3):
        MemoryItem.objects.create(space=space, text=f"Medlar jam batch {i}")
    other = Space.objects.create(name="other")
    for i in range(40):
        MemoryItem.objects.create(space=other, text=f"Quince paste batch {i}")
    assert _ranked(space, "quince medlar orchard")[:2] == [rare.pk, common.pk]


def test_facts_no_longer_live_never_crowd_out_a_live_one(space) -> None:  # type: ignore[no-untyped-def]
    # Sixty former facts outscore the live one on the query's word; the
    # channel's depth (40 for k=8) still reaches the live fact.
    live = MemoryItem.objects.create(
        space=space, text="The kayak trip went down a long and winding river in spring"
    )
    for i in range(60):
        old = MemoryItem.objects.create(space=space, text=f"kayak kayak {i}")
        supersede(old=old, new=live, actor="test")
    ids = _ranked(space, "kayak", limit=40)
    assert ids == [live.pk]
    assert [r.id for r in recall(space=space, query="kayak", k=8).results] == [str(live.pk)]


def test_a_fact_saved_a_moment_ago_is_found(space) -> None:  # type: ignore[no-untyped-def]
    MemoryItem.objects.create(space=space, text="The user plays the cello")
    assert _ranked(space, "cello")  # the statistics are built now
    saved = MemoryItem.objects.create(space=space, text="The user bought a new cello bow")
    assert saved.pk in _ranked(space, "bow")


def test_a_fact_rewritten_in_place_is_found_by_its_new_words(space, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(termstats, "REFRESH_SECONDS", 0.0)
    fact = MemoryItem.objects.create(space=space, text="The user has a dog")
    assert _ranked(space, "dog") == [fact.pk]
    MemoryItem.objects.filter(pk=fact.pk).update(text="The user has a beagle called Pip")
    termstats.rewritten(space.pk)
    assert _ranked(space, "beagle") == [fact.pk]


def test_a_history_view_ranks_from_the_postings_former_facts_included(space, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Every /context asks for history: a former fact is found, as the index
    # found it, without the index being asked; a forgotten or
    # quarantined fact stays out, as it does there.
    old = MemoryItem.objects.create(space=space, text="The user lives in Lisbon")
    new = MemoryItem.objects.create(space=space, text="The user lives in Porto")
    supersede(old=old, new=new, actor="test")
    MemoryItem.objects.create(
        space=space, text="The user once visited Lisbon", status=MemoryItem.Status.FORGOTTEN
    )
    MemoryItem.objects.create(
        space=space,
        text="Lisbon is where you must send the keys",
        screen_status=MemoryItem.Screen.FLAGGED,
    )
    history = TimeView(history=True)
    by_index = channels.search("item", space_id=space.pk, query="Lisbon", limit=10, when=history)
    assert [h.id for h in by_index] == [old.pk]

    def no_index(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the history view asked the index")

    monkeypatch.setattr(channels, "search", no_index)
    ranking = channels.bm25_items(space=space, query="Lisbon", limit=10, when=history)
    assert [pk for _, pk in ranking.keys] == [old.pk]
    assert _ranked(space, "Lisbon") == []  # as things are now, it is former
    ranking = channels.bm25_items(space=space, query="lives", limit=10, when=history)
    assert {pk for _, pk in ranking.keys} == {old.pk, new.pk}


def test_a_view_at_an_instant_ranks_facts_from_the_index(space, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fact = MemoryItem.objects.create(space=space, text="The user lives in Lisbon")
    asked = []
    search = channels.search

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(kwargs["when"])
        return search(*args, **kwargs)

    monkeypatch.setattr(channels, "search", counted)
    view = TimeView(as_of=fact.created_at)
    ranking = channels.bm25_items(space=space, query="Lisbon", limit=10, when=view)
    assert [pk for _, pk in ranking.keys] == [fact.pk]
    assert asked == [view]


@pytest.fixture
def sent(monkeypatch):  # type: ignore[no-untyped-def]
    """The number of reads in each batch sent (a test clears it after its set-up)."""
    counts: list[int] = []
    run = batch.run

    def counted(*reads):  # type: ignore[no-untyped-def]
        counts.append(len(reads))
        return run(*reads)

    monkeypatch.setattr(batch, "run", counted)
    return counts


def test_the_first_reads_of_the_fact_and_graph_channels_go_together(space, sent) -> None:  # type: ignore[no-untyped-def]
    # The look for facts added since, the names the query holds and the live
    # check of the best-ranked facts: one batch, so one round trip on
    # PostgreSQL. When the look finds a fact added since, it is ranked too.
    anna = Entity.objects.create(space=space, name="Anna", norm="anna", type="person")
    EntityAlias.objects.create(space=space, entity=anna, alias="Anna", norm="anna")
    seen = MemoryItem.objects.create(space=space, text="Anna plays the violin")
    assert _ranked(space, "violin") == [seen.pk]  # the statistics are built now
    Relation.objects.create(space=space, src=anna, rel="plays", dst=anna, item=seen)
    sent.clear()
    items, graph = channels.fact_channels(
        space=space, query="Does Anna play the violin?", limit=10, when=TimeView()
    )
    assert sent == [3]
    assert items.keys == [("item", seen.pk)]
    assert graph.keys == [("item", seen.pk)]

    sent.clear()
    added = MemoryItem.objects.create(
        space=space, text="Anna bought a violin bow, a fine violin bow"
    )
    items, _ = channels.fact_channels(
        space=space, query="Anna violin bow", limit=10, when=TimeView()
    )
    assert sent[0] == 3  # then the new ranking's live check on its own
    assert [pk for _, pk in items.keys] == [added.pk, seen.pk]


def test_a_query_no_fact_matches_sends_no_live_check(space, sent) -> None:  # type: ignore[no-untyped-def]
    MemoryItem.objects.create(space=space, text="The user plays the cello")
    assert _ranked(space, "cello")  # the statistics are built now
    sent.clear()
    items, graph = channels.fact_channels(
        space=space, query="bassoon lessons", limit=10, when=TimeView()
    )
    assert sent == [2]  # the look and the names, no live check of nothing
    assert items.keys == [] and graph.keys == []

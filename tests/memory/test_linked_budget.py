"""A linked space is searched with a lighter budget than the key's own
(recall.channels.LINKED): the own space's ranking is unchanged, the linked
one's index searches rank only its newest matches once a query's words are
everywhere. Turns and facts of the space as it is now are ranked from the
term statistics' postings, every match, so the cap applies to them only in
a time view."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import MemoryItem, Session, Space, Turn
from memory.search import search
from memory.services import recall as recall_service
from memory.services.recall import channels

pytestmark = pytest.mark.django_db


def _fill(space: Space, n: int) -> tuple[list[int], list[int]]:
    session = Session.objects.create(space=space, external_id="s")
    turns = [
        Turn.objects.create(
            space=space, session=session, ref=str(i), role="user", text=f"kayak trip {i}"
        ).pk
        for i in range(n)
    ]
    items = [MemoryItem.objects.create(space=space, text=f"kayak owner {i}").pk for i in range(n)]
    return turns, items


def test_search_budget_caps_the_rows_ranked(space) -> None:
    turns, _ = _fill(space, 8)
    assert {h.id for h in search("turn", space_id=space.pk, query="kayak", limit=20)} == set(turns)
    light = search("turn", space_id=space.pk, query="kayak", limit=20, budget=3)
    assert sorted(h.id for h in light) == turns[-3:]


@pytest.mark.parametrize("view", ["now", "as_of"])
def test_only_the_linked_space_is_searched_lighter(monkeypatch, view) -> None:
    own = Space.objects.create(name="acme")
    user = Space.objects.create(name="sam", kind=Space.Kind.USER)
    own_turns, own_items = _fill(own, 8)
    user_turns, user_items = _fill(user, 8)
    monkeypatch.setattr(channels, "LINKED", channels.Budget(match=3, turns=3, neighbours=0))
    # A time view that admits every row: the turns come from the index.
    when = recall_service.TimeView(
        as_of=timezone.now() + timedelta(days=1) if view == "as_of" else None
    )

    per_space = recall_service._per_space(
        (own, user), query="kayak", pool=40, when=when, wanted={"fact", "turn"}
    )
    found = [
        {key for r in rankings if r.channel.startswith("bm25_") for key in r.keys}
        for rankings in per_space
    ]
    assert found[0] == _keys(own_turns, own_items)
    # As they are now, turns and facts are ranked from postings: every match.
    linked = (user_turns, user_items) if view == "now" else (user_turns[-3:], user_items[-3:])
    assert found[1] == _keys(*linked)


def _keys(turns: list[int], items: list[int]) -> set[tuple[str, int]]:
    # Keyed by kind too: turn and item ids are separate sequences, equal on a
    # fresh SQLite file but not on PostgreSQL.
    return {("turn", pk) for pk in turns} | {("item", pk) for pk in items}

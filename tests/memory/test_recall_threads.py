"""Recall's fact channels on a helper thread rank exactly as on the calling
thread, and a write the caller has not committed is still found."""

from __future__ import annotations

import pytest
from django.db import transaction

from memory.models import MemoryItem, Session, Turn
from memory.services import recall as recall_module
from memory.services.recall import recall


def _fill(space) -> None:  # type: ignore[no-untyped-def]
    s = Session.objects.create(space=space, external_id="s1")
    for i in range(30):
        Turn.objects.create(
            space=space, session=s, ref=f"D1:{i}", role="user", text=f"we talked about boat {i}"
        )
        MemoryItem.objects.create(
            space=space, text=f"The user owns boat number {i}", source_turn_refs=[f"D1:{i}"]
        )
    Turn.objects.create(space=space, session=s, ref="D1:99", role="user", text="kayak in Oslo")
    MemoryItem.objects.create(space=space, text="The user paddles a kayak", source_turn_refs=["x"])


def _ranked(space, query):  # type: ignore[no-untyped-def]
    return [(r.type, r.id, r.score) for r in recall(space=space, query=query, k=10).results]


@pytest.mark.django_db(transaction=True)
def test_helpers_rank_exactly_as_the_calling_thread(space, monkeypatch) -> None:
    _fill(space)
    queries = ["boat 7", "kayak", "what about the boat number 12?", "Oslo kayak boat"]
    monkeypatch.setattr(recall_module._helpers, "size", 0)
    alone = [_ranked(space, q) for q in queries]
    monkeypatch.setattr(recall_module._helpers, "size", 2)
    beside = [_ranked(space, q) for q in queries]
    assert beside == alone
    assert any(t == "fact" for t, _, _ in beside[1]) and any(t == "turn" for t, _, _ in beside[1])


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_recall_sees_its_own_writes(space, monkeypatch) -> None:
    monkeypatch.setattr(recall_module._helpers, "size", 2)
    with transaction.atomic():
        MemoryItem.objects.create(space=space, text="The user's cat is called Miso")
        found = recall(space=space, query="cat Miso", k=5).results
    assert [r.text for r in found] == ["The user's cat is called Miso"]

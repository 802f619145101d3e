"""Per-space word counts: built on first use, topped up with new turns, and
rebuilt in the background so no recall waits for a rebuild."""

from __future__ import annotations

import time

import pytest

from memory.models import Session, Turn
from memory.services.recall import termstats


@pytest.fixture(autouse=True)
def _fresh():  # type: ignore[no-untyped-def]
    termstats._cache.clear()
    yield
    termstats._cache.clear()


def _turns(space, texts):  # type: ignore[no-untyped-def]
    s, _ = Session.objects.get_or_create(space=space, external_id="s")
    return [Turn.objects.create(space=space, session=s, role="user", text=t) for t in texts]


@pytest.mark.django_db(transaction=True)  # the rebuild runs on a helper thread
def test_stale_counts_serve_while_a_helper_rebuilds_them(space, monkeypatch) -> None:
    kayaks = _turns(space, ["my kayak", "a kayak trip", "kayak again"])
    first = termstats.turn_stats(space)
    assert first.df["kayak"] == 3
    kayaks[0].delete()  # topping up never forgets a deleted turn; a rebuild does
    monkeypatch.setattr(termstats, "REBUILD_SECONDS", 0.0)
    monkeypatch.setattr(termstats, "REFRESH_SECONDS", 3600.0)
    assert termstats.turn_stats(space) is first  # answered at once, from the old counts
    deadline = time.monotonic() + 10
    while termstats.turn_stats(space) is first:
        assert time.monotonic() < deadline, "the rebuild never landed"
        time.sleep(0.02)
    assert termstats.turn_stats(space).df["kayak"] == 2


@pytest.mark.django_db
def test_new_turns_are_counted_on_the_next_look(space, monkeypatch) -> None:
    monkeypatch.setattr(termstats, "REFRESH_SECONDS", 0.0)
    _turns(space, ["one kayak"])
    assert termstats.turn_stats(space).df["kayak"] == 1
    _turns(space, ["two kayaks"])
    stats = termstats.turn_stats(space)
    assert (stats.docs, stats.df["kayak"]) == (2, 2)


def test_query_weights_come_in_one_order_whatever_the_set_order(space) -> None:
    # Scores are sums over these weights; summed in a set's order (which the
    # process's hash seed decides) near-equal scores swapped after a restart.
    stats = termstats.turn_stats(space)
    words = ["zebra", "apple", "mango", "kiwi"]
    assert list(termstats.query_weights(set(words), stats)) == sorted(words)
    assert list(termstats.query_weights(reversed(words), stats)) == sorted(words)

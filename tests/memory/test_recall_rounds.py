"""Recall loads the rows of its fused head in rounds: every fact at once (a
fact's boosts can lift it far), everything else best first, k at a time,
until nothing left unloaded could still reach the k-th place. The answer
must be the one loading every row would give."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from memory.models import MemoryItem, Session, Turn
from memory.services import recall as recall_module
from memory.services.recall import recall, rows

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _turns(space, n):  # type: ignore[no-untyped-def]
    """n turns about comets, each naming them once less than the one before,
    and filler that shares no word with them."""
    session = Session.objects.create(space=space, external_id="s1", started_at=T0, last_turn_at=T0)
    texts = [" ".join(["comet"] * (n - i) + ["sky"] * i) + f" night {i}" for i in range(n)]
    texts += [f"filler line number {i}" for i in range(30)]
    return Turn.objects.bulk_create(
        Turn(
            space=space,
            session=session,
            ref=f"t{i}",
            role="user",
            text=text,
            ts=T0 + timedelta(minutes=i),
        )
        for i, text in enumerate(texts)
    )


def _answer(space, query, k):  # type: ignore[no-untyped-def]
    return [(r.type, r.id, r.score) for r in recall(space=space, query=query, k=k).results]


def _loading_everything(monkeypatch, space, query, k):  # type: ignore[no-untyped-def]
    """The answer with every row of the head loaded in the first round."""
    with monkeypatch.context() as m:
        m.setattr(recall_module, "_ceiling", lambda windows: math.inf)
        return _answer(space, query, k)


@pytest.fixture
def loads(monkeypatch):  # type: ignore[no-untyped-def]
    """How many turn rows each load asked for."""
    asked: list[int] = []
    real = rows.load

    def counting(space_id, *, items, turns, when):  # type: ignore[no-untyped-def]
        if turns:
            asked.append(len(turns))
        return real(space_id, items=items, turns=turns, when=when)

    monkeypatch.setattr(rows, "load", counting)
    return asked


def test_only_the_turns_that_can_place_are_loaded(space, loads, monkeypatch) -> None:
    _turns(space, 40)
    MemoryItem.objects.create(space=space, text="a comet crossed the sky", kind="fact")
    answer = _answer(space, "comet sky", 3)
    assert len(answer) == 3
    # The head holds 40 turns; three were enough.
    assert loads == [3]
    assert answer == _loading_everything(monkeypatch, space, "comet sky", 3)


def test_a_turn_the_view_hides_makes_room_for_the_next(space, loads, monkeypatch) -> None:
    made = _turns(space, 40)
    _answer(space, "comet", 3)  # the turn channel's postings now hold them all
    # The best five are quarantined after they were indexed: the channel still
    # finds them, and loading their rows is what leaves them out.
    Turn.objects.filter(pk__in=[t.pk for t in made[:5]]).update(screen_status="flagged")
    loads.clear()
    answer = _answer(space, "comet", 3)
    assert [i for _, i, _ in answer] == [str(t.pk) for t in made[5:8]]
    assert len(loads) == 3  # 3 hidden, 2 hidden and one shown, then the next three
    assert answer == _loading_everything(monkeypatch, space, "comet", 3)


def test_a_date_in_the_query_widens_what_may_still_place(space, loads, monkeypatch) -> None:
    # A turn on the named day doubles its score, so one far down can still
    # take first place: rounds go on until doubling cannot reach the k-th.
    made = _turns(space, 40)
    Turn.objects.filter(pk=made[30].pk).update(ts=datetime(2023, 7, 14, 12, tzinfo=UTC))
    query = "comet on 14 July 2023"
    answer = _answer(space, query, 3)
    assert str(made[30].pk) in [i for _, i, _ in answer]
    assert sum(loads) > 3
    assert answer == _loading_everything(monkeypatch, space, query, 3)

"""Time travel and what never comes back: as_of over an update chain (valid
time and transaction time), quarantined and archived items."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import MemoryItem
from memory.services.recall import recall

pytestmark = pytest.mark.django_db

JAN, MAR, JUN, SEP = (datetime(2024, m, 1, tzinfo=UTC) for m in (1, 3, 6, 9))


def _texts(space, query, **kw):  # type: ignore[no-untyped-def]
    return [r.text for r in recall(space=space, query=query, types=["fact"], **kw).results]


@pytest.fixture
def chain(space):  # type: ignore[no-untyped-def]
    """Lived in Porto from January; moved to Lisbon in June, which Engram
    learned in June: the old fact is closed and superseded, never deleted."""
    new = MemoryItem.objects.create(
        space=space,
        text="Ana lives in Lisbon",
        subject="Ana",
        predicate="lives_in",
        object="Lisbon",
        valid_from=JUN,
        created_at=JUN,
    )
    old = MemoryItem.objects.create(
        space=space,
        text="Ana lives in Porto",
        subject="Ana",
        predicate="lives_in",
        object="Porto",
        valid_from=JAN,
        valid_to=JUN,
        created_at=JAN,
        expired_at=JUN,
        superseded_by=new,
    )
    return old, new


def test_now_sees_only_the_live_version(space, chain) -> None:
    assert _texts(space, "where does Ana live") == ["Ana lives in Lisbon"]


def test_as_of_before_the_update_sees_the_old_version(space, chain) -> None:
    assert _texts(space, "where does Ana live", as_of=MAR) == ["Ana lives in Porto"]


def test_as_of_after_the_update_sees_the_new_version(space, chain) -> None:
    assert _texts(space, "where does Ana live", as_of=SEP) == ["Ana lives in Lisbon"]


def test_transaction_time_hides_what_was_not_known_yet(space) -> None:
    # True since January, but Engram only learned it in June.
    MemoryItem.objects.create(space=space, text="Ana speaks Greek", valid_from=JAN, created_at=JUN)
    # as_of asks the world, by what is known now: true in March.
    assert _texts(space, "Ana Greek", as_of=MAR) == ["Ana speaks Greek"]
    # known_at asks Engram: in March it did not know yet.
    assert _texts(space, "Ana Greek", known_at=MAR) == []
    assert _texts(space, "Ana Greek", known_at=SEP) == ["Ana speaks Greek"]
    assert _texts(space, "Ana Greek", as_of=MAR, known_at=SEP) == ["Ana speaks Greek"]


def test_valid_time_hides_what_was_not_true_yet(space) -> None:
    # Known since January as a plan starting in June.
    MemoryItem.objects.create(
        space=space, text="Ana works at the harbour office", valid_from=JUN, created_at=JAN
    )
    assert _texts(space, "Ana harbour office", as_of=MAR) == []
    assert _texts(space, "Ana harbour office", as_of=SEP) == ["Ana works at the harbour office"]


def test_a_naive_as_of_is_read_as_utc(space, chain) -> None:
    assert _texts(space, "where does Ana live", as_of=datetime(2024, 3, 1)) == [
        "Ana lives in Porto"
    ]


@pytest.mark.parametrize("as_of", [None, MAR, SEP])
def test_quarantined_and_archived_never_come_back(space, as_of) -> None:
    common = {"space": space, "created_at": JAN, "valid_from": JAN}
    MemoryItem.objects.create(
        text="secret marmalade recipe quarantined", screen_status="flagged", **common
    )
    MemoryItem.objects.create(text="secret marmalade recipe archived", status="archived", **common)
    MemoryItem.objects.create(
        text="secret marmalade recipe forgotten", status="forgotten", **common
    )
    MemoryItem.objects.create(text="secret marmalade recipe live", **common)
    assert _texts(space, "secret marmalade recipe", as_of=as_of) == ["secret marmalade recipe live"]


def test_as_of_hides_turns_stored_later(space) -> None:
    from memory.models import Session, Turn

    s = Session.objects.create(space=space, external_id="s")
    Turn.objects.create(
        space=space, session=s, ref="early", role="user", text="kayak trip", ts=JAN, created_at=JAN
    )
    Turn.objects.create(
        space=space,
        session=s,
        ref="late",
        role="user",
        text="kayak trip again",
        ts=JUN,
        created_at=JUN,
    )
    refs = [
        r.source.turn_refs[0] for r in recall(space=space, query="kayak trip", as_of=MAR).results
    ]
    assert refs == ["early"]

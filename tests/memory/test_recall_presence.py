"""Recall skips the summary, skill and document channels of a space with
none of those (recall/presence.py), without changing any score, and finds a
space's first summary, skill or document within a second of its being
stored (at once in the process that stored it)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import MemoryItem, Session, SessionSummary
from memory.services.recall import presence, recall
from memory.services.skills import create_skill

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh():  # type: ignore[no-untyped-def]
    presence._marks.clear()
    yield
    presence._marks.clear()


def test_skipping_empty_channels_changes_no_score(space, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    MemoryItem.objects.create(space=space, text="The user keeps bees on the roof")
    MemoryItem.objects.create(space=space, text="The roof garden has tomatoes")
    skipped = recall(space=space, query="bees on the roof", k=5).results
    monkeypatch.setattr(presence, "holds", lambda kind, space: True)
    searched = recall(space=space, query="bees on the roof", k=5).results
    assert [(r.id, r.score) for r in skipped] == [(r.id, r.score) for r in searched]
    assert skipped and skipped[0].score < 1.0  # the summary channel still counts in the scale


def test_a_first_skill_is_found_at_once_in_the_process_that_stored_it(space) -> None:  # type: ignore[no-untyped-def]
    assert recall(space=space, query="sourdough starter", k=5).results == []
    create_skill(
        space=space, name="sourdough", description="Feed the sourdough starter", enabled=True
    )
    assert [r.type for r in recall(space=space, query="sourdough starter", k=5).results] == [
        "skill"
    ]


def test_a_first_summary_stored_elsewhere_is_found_once_the_mark_expires(
    space, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    assert recall(space=space, query="kitchen renovation", k=3, types=["summary"]).results == []
    session = Session.objects.create(space=space, external_id="s1", started_at=T0, last_turn_at=T0)
    # Stored by a worker process: this one was not told.
    SessionSummary.objects.create(
        space=space,
        session=session,
        text="Planning the kitchen renovation",
        first_ts=T0,
        last_ts=T0,
    )
    started = presence._clock()
    monkeypatch.setattr(presence, "_clock", lambda: started)
    assert recall(space=space, query="kitchen renovation", k=3, types=["summary"]).results == []
    later = started + presence.EMPTY_SECONDS
    monkeypatch.setattr(presence, "_clock", lambda: later)
    found = recall(space=space, query="kitchen renovation", k=3, types=["summary"]).results
    assert [r.type for r in found] == ["summary"]

"""Entries without a palace place (a store from before the palace, imports):
slotted in batches with the same outcome as one by one, on the palace's
next read when few, by the background task when many, and never twice."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command

from memory.models import MemoryItem, PalaceEntry, Space
from memory.services import facts
from memory.services.palace import slots, tour

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _small_rooms(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "MIRROR_DIR": tmp_path / "mirror",
        "ROOM_CAPACITY": 3,
        "REVIEW_ENROL": True,
    }
    cache.clear()


# Topics that come back, placards that repeat, and first words that clash,
# across three wings: every rule of the one-by-one path is exercised.
ROWS: list[dict[str, Any]] = []
for n in range(40):
    kind = ("fact", "preference", "decision")[n % 3]
    if n % 5 == 0:
        row = {"text": f"Anna plays the cello in hall {n}", "subject": "Anna", "predicate": "plays"}
    elif n % 7 == 0:
        row = {"text": "The kiln runs hot", "subject": "", "predicate": ""}
    else:
        row = {"text": f"Shelf {n} holds the {n}th notebook", "subject": "", "predicate": ""}
    ROWS.append({**row, "kind": kind})


def bare_items(space: Space) -> list[MemoryItem]:
    """Items stored around the write path, as a store from before the palace holds them."""
    return [MemoryItem.objects.create(space=space, **row) for row in ROWS]


def layout(space: Space) -> list[tuple[Any, ...]]:
    rows = PalaceEntry.objects.filter(space=space).order_by("pk")
    return [
        (
            e.item.text if e.item else None,
            e.wing,
            e.room_no,
            e.slot,
            e.topic,
            e.placard,
            e.placard_unique,
            e.placard_clash,
            e.placard_score,
            e.due_at,
        )
        for e in rows.select_related("item")
    ]


def test_batched_slotting_places_entries_exactly_as_one_by_one(settings):  # type: ignore[no-untyped-def]
    one, batched = Space.objects.create(name="one"), Space.objects.create(name="batched")
    for space in (one, batched):
        # Some entries already have places (written through the write path).
        for text in ("Anna plays the cello at home", "Shelf 99 holds the old atlas"):
            facts.save_fact(space=space, text=text, subject="Anna" if "Anna" in text else "")
    for item in bare_items(one):
        slots.place_item(item, enrol=False)
    bare_items(batched)
    # Chunks smaller than the backlog, so state carries from chunk to chunk.
    settings_chunk = slots.CHUNK
    slots.CHUNK = 7
    try:
        assert slots.slot_missing(batched.pk) == len(ROWS)
    finally:
        slots.CHUNK = settings_chunk
    got, want = layout(batched), layout(one)
    assert [g[:9] for g in got] == [w[:9] for w in want]
    assert all(g[9] is None for g in got[2:])  # backlog entries are not enrolled
    assert slots.slot_missing(batched.pk) == 0  # idempotent


def test_a_small_backlog_is_slotted_by_the_next_read_and_the_mark_cleared(space):  # type: ignore[no-untyped-def]
    Space.objects.filter(pk=space.pk).update(palace_backlog_at=None)
    facts.save_fact(space=space, text="The heron nests by the fjord")
    # An import stores items around the write path and marks the space...
    imported = MemoryItem.objects.create(space=space, text="Imported: the kiln runs hot")
    slots.mark_backlog(space.pk)
    # ...and a later live write has a higher id than the imported row.
    facts.save_fact(space=space, text="The granite steps are worn smooth")
    stops, _ = tour.fixed(space)
    assert str(imported.pk) in {s["id"] for s in stops}
    space.refresh_from_db()
    assert space.palace_backlog_at is None


def test_a_large_backlog_goes_to_the_background_task_in_bounded_shares(space, settings):  # type: ignore[no-untyped-def]
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.ENGRAM = {**settings.ENGRAM, "PALACE_SLOT_TASK_LIMIT": 10}
    from engram_site.celery import app

    app.conf.task_always_eager = True
    old_inline = slots.INLINE_MAX
    slots.INLINE_MAX, slots.CHUNK = 5, 4
    calls: list[int] = []
    real = slots.slot_missing

    def counting(space_id: int, **kw: Any) -> int:
        placed = real(space_id, **kw)
        calls.append(placed)
        return placed

    slots.slot_missing = counting  # type: ignore[assignment]
    try:
        bare_items(space)
        slots.ensure(space)
    finally:
        slots.slot_missing = real  # type: ignore[assignment]
        slots.INLINE_MAX, slots.CHUNK = old_inline, 500
        app.conf.task_always_eager = False
    assert PalaceEntry.objects.filter(space=space).count() == len(ROWS)
    assert len(calls) >= 4 and max(calls) <= 12  # shares of about the task limit
    space.refresh_from_db()
    assert space.palace_backlog_at is None
    assert cache.get(f"palace-slotting:{space.pk}") is None  # its claim given back


def test_the_task_is_scheduled_once_while_it_is_on_its_way(space):  # type: ignore[no-untyped-def]
    from memory import tasks

    sent: list[int] = []
    real = tasks.slot_palace.delay
    tasks.slot_palace.delay = lambda space_id: sent.append(space_id)  # type: ignore[method-assign]
    try:
        assert tasks.schedule_slotting(space.pk) is True
        assert tasks.schedule_slotting(space.pk) is False
        assert tasks.slot_palaces() == 0  # the beat sees the claim too
    finally:
        tasks.slot_palace.delay = real  # type: ignore[method-assign]
    assert sent == [space.pk]


def test_a_pass_leaves_the_mark_when_an_import_came_meanwhile(space):  # type: ignore[no-untyped-def]
    bare_items(space)
    real = slots.slot_missing

    def with_import(space_id: int, **kw: Any) -> int:
        placed = real(space_id, **kw)
        MemoryItem.objects.create(space=space, text="Imported during the pass")
        slots.mark_backlog(space_id)
        return placed

    slots.slot_missing = with_import  # type: ignore[assignment]
    try:
        assert slots.clear_backlog(space.pk) is True
    finally:
        slots.slot_missing = real  # type: ignore[assignment]
    space.refresh_from_db()
    assert space.palace_backlog_at is not None  # the next read takes the new row
    slots.ensure(space)
    assert not MemoryItem.objects.filter(space=space, palace__isnull=True).exists()


def test_the_command_slots_every_marked_space_with_progress(capsys):  # type: ignore[no-untyped-def]
    a, b = Space.objects.create(name="a"), Space.objects.create(name="b")
    bare_items(a)
    bare_items(b)
    call_command("slot_palace")
    out = capsys.readouterr().out
    assert f"a: {len(ROWS)} slotted" in out and f"b: {len(ROWS)} slotted" in out
    assert PalaceEntry.objects.count() == 2 * len(ROWS)
    assert not Space.objects.filter(palace_backlog_at__isnull=False).exists()
    call_command("slot_palace", "--space", "a")
    assert "a: 0 slotted" in capsys.readouterr().out

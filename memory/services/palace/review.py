"""Spaced repetition (SM-2) over palace entries.

An entry under review scheduling has a due date. Each graded recall
(0-5) advances it: the first good recall comes back in 1 day, the second
in 6, then the previous interval times the ease; a grade below 3 starts
over at 1 day. The ease moves by the SM-2 formula, never below 1.3.
The queue shows coordinates and placards, never the entry's text: the
point is to recall it before looking (memory_review reveals it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from engram_site.db import batch, prepared, rows
from memory.models import MemoryItem, PalaceEntry, Space
from memory.services.palace import rooms, slots

EASE_FLOOR = 1.3
PASS = 3
# memory_report's outcome, read as a grade: it worked (4, recalled with
# some effort), it misled (1, wrong but familiar).
OUTCOME_GRADE = {"success": 4, "failure": 1}


@dataclass(frozen=True)
class Schedule:
    interval_days: int = 0
    ease: float = 2.5
    repetitions: int = 0


def sm2(current: Schedule, grade: int) -> Schedule:
    if not 0 <= grade <= 5:
        raise ValueError(f"grade must be 0..5, not {grade}")
    if grade >= PASS:
        if current.repetitions == 0:
            interval = 1
        elif current.repetitions == 1:
            interval = 6
        else:
            interval = round(current.interval_days * current.ease)
        repetitions = current.repetitions + 1
    else:
        interval, repetitions = 1, 0
    miss = 5 - grade
    ease = max(EASE_FLOOR, current.ease + 0.1 - miss * (0.08 + miss * 0.02))
    return Schedule(interval_days=max(1, interval), ease=round(ease, 4), repetitions=repetitions)


def entry_for(item: MemoryItem) -> PalaceEntry | None:
    entry = PalaceEntry.objects.filter(item=item).first()
    if entry is None and item.is_live:
        entry = slots.place_item(item, enrol=False)
    return entry


def record(*, entry: PalaceEntry, grade: int, at: datetime | None = None) -> PalaceEntry:
    """Apply one graded recall; enrols the entry if it was not scheduled
    (grading it is practising it)."""
    now = at or timezone.now()
    nxt = sm2(Schedule(entry.interval_days, entry.ease, entry.repetitions), grade)
    entry.interval_days = nxt.interval_days
    entry.ease = nxt.ease
    entry.repetitions = nxt.repetitions
    entry.reviewed_at = now
    entry.due_at = now + timedelta(days=nxt.interval_days)
    entry.save(update_fields=["interval_days", "ease", "repetitions", "reviewed_at", "due_at"])
    return entry


BATCH = 200
# What the queue reads of an entry: its place and schedule, never the text.
QUEUE_FIELDS = ("item_id", "wing", "room_no", "slot", "placard", "due_at", "repetitions")


def _scheduled(
    space: Space,
    *,
    due_by: datetime | None,
    limit: int | None,
    first: batch.Rows | None = None,
) -> Iterator[dict[str, Any]]:
    """Scheduled entries whose item is live, soonest due first, read in
    batches down the (space, due_at) index with the items' liveness checked
    by primary key: a join would let the planner walk every live item
    first, tens of milliseconds on a large palace for a count of 100.
    Hand-written statements: /context counts what is due on every turn,
    and building the ORM's two queries cost ten times running them.
    `first`: the first batch's rows, already read (`due_count_read`)."""
    sql, params = _due_sql(due_by)
    step = _step(limit)
    given, offset = 0, 0
    while limit is None or given < limit:
        if offset == 0 and first is not None:
            found = first
        else:
            with prepared.cursor() as cursor:
                cursor.execute(sql, [space.pk, *params, step, offset])
                found = cursor.fetchall()
        entries = rows.values(PalaceEntry, QUEUE_FIELDS, found, connection)
        if not entries:
            return
        offset += step
        live = _live_items([e["item_id"] for e in entries if e["item_id"] is not None])
        for e in entries:
            if e["item_id"] in live:
                yield e
                given += 1
                if limit is not None and given >= limit:
                    return


def _step(limit: int | None) -> int:
    return min(BATCH, limit) if limit else BATCH


def _due_sql(due_by: datetime | None) -> tuple[str, list[Any]]:
    qn = connection.ops.quote_name
    due = "due_at <= %s" if due_by is not None else "1 = 1"
    sql = (
        f"SELECT {', '.join(qn(f) for f in QUEUE_FIELDS)} "
        f"FROM {qn(PalaceEntry._meta.db_table)} WHERE space_id = %s "
        f"AND due_at IS NOT NULL AND {due} ORDER BY due_at, id LIMIT %s OFFSET %s"
    )
    params = [connection.ops.adapt_datetimefield_value(due_by)] if due_by is not None else []
    return sql, params


def _live_items(ids: list[int]) -> set[int]:
    if not ids:
        return set()
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {qn(MemoryItem._meta.db_table)} WHERE id IN "
            f"({', '.join(['%s'] * len(ids))}) AND status = %s AND expired_at IS NULL "
            "AND screen_status = %s",
            [*ids, MemoryItem.Status.ACTIVE, MemoryItem.Screen.OK],
        )
        return {row[0] for row in cursor.fetchall()}


def due_count(space: Space, *, at: datetime | None = None, cap: int | None = None) -> int:
    """Entries due now; with `cap`, counting stops there (the prompt context
    says "100+" rather than count a whole overdue palace on every turn)."""
    return batch.one(due_count_read(space, at=at, cap=cap))


def due_count_read(
    space: Space, *, at: datetime | None = None, cap: int | None = None
) -> batch.Read[int]:
    """`due_count` as a read to send with others (engram_site/db/batch.py):
    the read is the first batch of entries; any further ones are read after."""
    due_by = at or timezone.now()
    sql, params = _due_sql(due_by)

    def count(first: batch.Rows) -> int:
        return sum(1 for _ in _scheduled(space, due_by=due_by, limit=cap, first=first))

    return batch.Read(sql, [space.pk, *params, _step(cap), 0], count)


def queue(
    space: Space, *, limit: int, include_not_due: bool, at: datetime | None = None
) -> list[dict[str, Any]]:
    """Due entries, most overdue first: coordinates, placard, days overdue
    (negative: not due yet). No body text, by construction: the text
    column is never read."""
    now = at or timezone.now()
    out = []
    for e in _scheduled(space, due_by=None if include_not_due else now, limit=limit):
        out.append(
            {
                "id": str(e["item_id"]),
                "coordinate": rooms.coordinate(e["wing"], e["room_no"], e["slot"]),
                "room": rooms.room_name(e["wing"], e["room_no"]),
                "slot": e["slot"],
                "placard": e["placard"],
                "due_at": e["due_at"],
                "days_overdue": round((now - e["due_at"]).total_seconds() / 86400, 2),
                "repetitions": e["repetitions"],
            }
        )
    return out

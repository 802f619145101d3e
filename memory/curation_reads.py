"""Reads for the dashboard's Today, Library and Log views: grouped per-day
counts for the sparklines and the heatmap, the library's filtered page and
the audit trail's classes. Every series is one grouped query."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, DateField, Func, Q, QuerySet
from django.utils import timezone

from memory.models import (
    AuditEvent,
    Entity,
    IngestJob,
    MemoryItem,
    PalaceEntry,
    ProposedWrite,
    Space,
    Turn,
)
from memory.selectors import live_items
from memory.services.palace import rooms

CLEAR_PLACARD = 0.7


class UTCDay(Func):
    """The UTC calendar day of a timestamp, computed by the database itself:
    Django's TruncDate calls a Python function per row on SQLite (~20 µs
    each, 0.2 s for the 10,000 rows of one sparkline). Storage is UTC, and
    so are the days the series count."""

    output_field = DateField()

    def as_sqlite(self, compiler, connection, **extra):  # type: ignore[no-untyped-def]
        return self.as_sql(compiler, connection, template="date(%(expressions)s)", **extra)

    def as_postgresql(self, compiler, connection, **extra):  # type: ignore[no-untyped-def]
        template = "((%(expressions)s) AT TIME ZONE 'UTC')::date"
        return self.as_sql(compiler, connection, template=template, **extra)


REDACTION_MARK = "[REDACTED:"

# Audit actions by family (grep of audit.record / AuditEvent in the code).
LOG_CLASSES: dict[str, tuple[str, ...]] = {
    "writes": ("add", "noop", "reinforce", "embed", "salience", "import", "defer", "use"),
    "corrections": ("update", "expire", "merge", "supersede", "replace"),
    "forgetting": ("forget", "restore", "delete", "wipe", "archive", "drop"),
    "core": ("edit", "remove", "refuse"),
    "consolidation": ("consolidate",),
    "review": ("assess", "report", "review", "propose", "proposal_approve", "proposal_reject"),
    "security": ("quarantine", "release", "host_access"),
    "admin": ("admin_add", "admin_edit", "admin_delete"),
}


def _days(rows: list[dict[str, Any]], key: str = "n") -> dict[date, int]:
    return {r["day"]: r[key] for r in rows if r["day"] is not None}


def _series(counts: dict[date, int], days: int, today: date) -> list[int]:
    return [counts.get(today - timedelta(days=days - 1 - i), 0) for i in range(days)]


def today_kpis(*, space: Space, days: int = 30) -> dict[str, Any]:
    """The four numbers of the Today hero, each with its last-`days` series."""
    now = timezone.now()
    today = timezone.localdate(now)
    since = now - timedelta(days=days)
    items = MemoryItem.objects.filter(space=space)
    open_q = Q(status=MemoryItem.Status.PENDING_REVIEW) | Q(screen_status=MemoryItem.Screen.FLAGGED)
    per_day = list(
        items.filter(created_at__gte=since)
        .annotate(day=UTCDay("created_at"))
        .values("day")
        .order_by()
        .annotate(n=Count("id"), open=Count("id", filter=open_q))
    )
    palace = PalaceEntry.objects.filter(
        space=space,
        item__status=MemoryItem.Status.ACTIVE,
        item__expired_at=None,
        item__screen_status=MemoryItem.Screen.OK,
    )
    clear = palace.aggregate(
        total=Count("id"), clear=Count("id", filter=Q(placard_score__gte=CLEAR_PLACARD))
    )
    placards_per_day = list(
        PalaceEntry.objects.filter(space=space, created_at__gte=since)
        .annotate(day=UTCDay("created_at"))
        .values("day")
        .order_by()
        .annotate(n=Count("id"), clear=Count("id", filter=Q(placard_score__gte=CLEAR_PLACARD)))
    )
    end_of_today = timezone.make_aware(
        datetime.combine(today + timedelta(days=1), datetime.min.time())
    )
    due = palace.filter(due_at__lt=end_of_today).count()
    reviews = list(
        PalaceEntry.objects.filter(space=space, reviewed_at__gte=since)
        .annotate(day=UTCDay("reviewed_at"))
        .values("day")
        .order_by()
        .annotate(n=Count("id"))
    )
    open_now = (
        items.filter(open_q).count()
        + IngestJob.objects.filter(space=space, status=IngestJob.Status.DEAD).count()
        # Proposed writes waiting for a person (ENGRAM_WRITE_APPROVAL).
        + ProposedWrite.objects.filter(space=space, status=ProposedWrite.Status.PENDING).count()
    )
    clear_by_day = {r["day"]: r for r in placards_per_day}
    clarity_series = [
        round(100 * r["clear"] / r["n"])
        if (r := clear_by_day.get(today - timedelta(days=days - 1 - i))) and r["n"]
        else 0
        for i in range(days)
    ]
    return {
        "live": live_items(space).count(),
        "live_series": _series(_days(per_day), days, today),
        "open": open_now,
        "open_series": _series(_days(per_day, "open"), days, today),
        "clarity": round(100 * clear["clear"] / clear["total"]) if clear["total"] else None,
        "clarity_total": clear["total"],
        "clarity_series": clarity_series,
        "due": due,
        "due_series": _series(_days(reviews), days, today),
    }


def sparkline(values: list[int], width: int = 120, height: int = 28) -> str:
    """The points of an SVG polyline for `values` (max at the top)."""
    if not values:
        return ""
    top = max(values) or 1
    step = width / max(1, len(values) - 1)
    return " ".join(
        f"{round(i * step, 1)},{round(height - 2 - (v / top) * (height - 4), 1)}"
        for i, v in enumerate(values)
    )


def activity(*, space: Space, days: int = 182) -> dict[str, Any]:
    """Turns and facts written per day for the heatmap: weeks as columns."""
    today = timezone.localdate()
    start = today - timedelta(days=days - 1)
    start -= timedelta(days=start.weekday())  # weeks begin on Monday
    since = timezone.make_aware(datetime.combine(start, datetime.min.time()))
    counts: dict[date, int] = {}
    for model in (Turn, MemoryItem):
        rows = (
            model.objects.filter(space=space, created_at__gte=since)
            .annotate(day=UTCDay("created_at"))
            .values("day")
            .order_by()
            .annotate(n=Count("id"))
        )
        for r in rows:
            if r["day"] is not None:
                counts[r["day"]] = counts.get(r["day"], 0) + r["n"]
    top = max(counts.values(), default=0)
    cells = []
    day = start
    while day <= today:
        n = counts.get(day, 0)
        level = 0 if not n or not top else min(4, 1 + (4 * n - 1) // top)
        cells.append({"day": day, "n": n, "level": level, "row": day.weekday() + 1})
        day += timedelta(days=1)
    return {"cells": cells, "top": top, "total": sum(counts.values())}


# --- Library -----------------------------------------------------------------------------

LIBRARY_STATUSES = (
    "active",
    "pending_review",
    "archived",
    "forgotten",
    "quarantined",
    "superseded",
)
LIBRARY_SORTS = {
    "newest": ("-created_at", "-id"),
    "oldest": ("created_at", "id"),
    "tour": ("palace__id", "id"),
}


def library_items(
    *,
    space: Space,
    room: str = "",
    kind: str = "",
    status: str = "",
    entity: str = "",
    q: str = "",
    redacted: bool = False,
    sort: str = "newest",
) -> QuerySet[MemoryItem]:
    """Every memory of the space, filtered; unknown values are the caller's
    to refuse (room raises memory.errors.Invalid)."""
    items = MemoryItem.objects.filter(space=space).select_related("palace", "superseded_by")
    if room:
        wing, room_no = rooms.parse_room(room)
        items = items.filter(palace__wing=wing, palace__room_no=room_no)
    if kind:
        items = items.filter(kind=kind)
    if status == "quarantined":
        items = items.filter(screen_status=MemoryItem.Screen.FLAGGED)
    elif status == "superseded":
        items = items.exclude(expired_at=None)
    elif status:
        items = items.filter(status=status)
    if entity:
        names = Entity.objects.filter(space=space, norm=entity.strip().lower()).values_list(
            "name", flat=True
        )
        match = Q(subject__iexact=entity.strip()) | Q(object__iexact=entity.strip())
        for name in names:
            match |= Q(subject__iexact=name) | Q(object__iexact=name)
        items = items.filter(match)
    for word in q.split()[:8]:
        items = items.filter(text__icontains=word)
    if redacted:
        items = items.filter(text__contains=REDACTION_MARK)
    return items.order_by(*LIBRARY_SORTS.get(sort, LIBRARY_SORTS["newest"]))


def room_names(*, space: Space, per_wing: int = 5) -> list[str]:
    """Suggestions for the room filter: each wing's newest rooms, from the
    directory's rows (one seek per wing). A large palace has a thousand
    rooms; listing them all made the page a thousand options long."""
    from memory.services.palace import tour

    out = []
    for row in tour.directory(space):
        wing, _ = rooms.parse_room(row["room"])
        newest = row["rooms"]
        out += [rooms.room_name(wing, n) for n in range(newest, max(0, newest - per_wing), -1)]
    return out


# --- Log ---------------------------------------------------------------------------------


def log_events(
    *,
    space: Space,
    cls: str = "",
    actor: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.filter(space=space)
    if cls == "other":
        known = [a for actions in LOG_CLASSES.values() for a in actions]
        events = events.exclude(action__in=known)
    elif cls:
        events = events.filter(action__in=LOG_CLASSES[cls])
    if actor:
        events = events.filter(actor__icontains=actor)
    if since is not None:
        events = events.filter(created_at__gte=since)
    if until is not None:
        events = events.filter(created_at__lt=until)
    return events.order_by("-created_at", "-id")


def class_of(action: str) -> str:
    for name, actions in LOG_CLASSES.items():
        if action in actions:
            return name
    return "other"

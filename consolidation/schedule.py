"""When runs start on their own. Celery beat calls `check_idle` every
CONSOLIDATE_CHECK_SECONDS and `run_daily` at CONSOLIDATE_DAILY_AT (UTC)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from consolidation import services
from memory.models import Space


def idle_spaces(*, now: datetime | None = None) -> list[Space]:
    """Spaces quiet for CONSOLIDATE_IDLE_MINUTES that had activity since the
    start of their last run (a space nobody touched has nothing new)."""
    now = now or timezone.now()
    quiet_since = now - timedelta(minutes=settings.ENGRAM["CONSOLIDATE_IDLE_MINUTES"])
    return list(
        Space.objects.filter(last_activity_at__isnull=False, last_activity_at__lte=quiet_since)
        .filter(Q(last_consolidated_at=None) | Q(last_consolidated_at__lt=F("last_activity_at")))
        .order_by("last_activity_at")
    )


def check_idle() -> list[int]:
    """Start a run for every idle space; re-send runs whose message was lost
    or whose worker died. Returns the ids of the runs started."""
    services.resend_stale()
    started = []
    for space in idle_spaces():
        run, created = services.start_run(space=space, trigger="idle")
        if created:
            started.append(run.pk)
    return started


def run_daily() -> list[int]:
    """Start a run for every space that has ever been used: decay and event
    horizons move with time even when nothing new arrived."""
    started = []
    for space in Space.objects.filter(last_activity_at__isnull=False).order_by("pk"):
        run, created = services.start_run(space=space, trigger="daily")
        if created:
            started.append(run.pk)
    return started

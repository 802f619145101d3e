"""Read-only queries of the memory app."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from memory.models import Entity, IngestJob, MemoryItem, Relation, Session, Space, Turn


def live_items(space: Space):  # type: ignore[no-untyped-def]
    """Facts recall may return now: active, unexpired, not quarantined."""
    return MemoryItem.objects.filter(
        space=space,
        status=MemoryItem.Status.ACTIVE,
        expired_at=None,
        screen_status=MemoryItem.Screen.OK,
    )


def space_status(*, space: Space) -> dict[str, object]:
    from consolidation.models import ConsolidationRun

    jobs = IngestJob.objects.filter(space=space)
    last_run = (
        ConsolidationRun.objects.filter(space=space, status=ConsolidationRun.Status.DONE)
        .order_by("-finished_at")
        .values_list("finished_at", flat=True)
        .first()
    )
    return {
        "space": space.name,
        "facts": live_items(space).count(),
        "entities": Entity.objects.filter(space=space).count(),
        "relations": Relation.objects.filter(space=space, expired_at=None).count(),
        "turns": Turn.objects.filter(space=space).count(),
        "sessions": Session.objects.filter(space=space).count(),
        "pending_jobs": jobs.filter(
            Q(status=IngestJob.Status.PENDING) | Q(status=IngestJob.Status.RUNNING)
        ).count(),
        "dead_jobs": jobs.filter(status=IngestJob.Status.DEAD).count(),
        "last_consolidation": last_run.isoformat() if last_run else None,
        "embeddings": settings.ENGRAM["EMBEDDINGS"],
        "llm_providers": len(settings.ENGRAM["LLM_PROVIDERS"]),
    }

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


# --- Dashboard reads -------------------------------------------------------------------


def facts_page(
    *,
    space: Space,
    kind: str = "",
    status: str = "",
    entity: str = "",
    live: str = "",
    q: str = "",
    limit: int = 100,
) -> list[MemoryItem]:
    """The facts browser: newest first, filtered by the curator's choices."""
    items = MemoryItem.objects.filter(space=space).select_related("superseded_by")
    if kind:
        items = items.filter(kind=kind)
    if status == "quarantined":
        items = items.filter(screen_status=MemoryItem.Screen.FLAGGED)
    elif status:
        items = items.filter(status=status)
    if live == "live":
        items = items.filter(expired_at=None)
    elif live == "expired":
        items = items.exclude(expired_at=None)
    if entity:
        names = Entity.objects.filter(space=space, norm=entity.strip().lower()).values_list(
            "name", flat=True
        )
        match = Q(subject__iexact=entity.strip()) | Q(object__iexact=entity.strip())
        for name in names:
            match |= Q(subject__iexact=name) | Q(object__iexact=name)
        items = items.filter(match)
    if q:
        for word in q.split()[:8]:
            items = items.filter(text__icontains=word)
    return list(items.order_by("-created_at", "-id")[:limit])


def fact_chain(*, space: Space, item_id: int) -> list[MemoryItem]:
    """Every version of a fact, oldest first: follow superseded_by backwards
    to the first version and forwards to the current one."""
    item = MemoryItem.objects.get(space=space, pk=item_id)
    first = item
    seen = {first.pk}
    while True:
        previous = MemoryItem.objects.filter(space=space, superseded_by=first).first()
        if previous is None or previous.pk in seen:
            break
        first = previous
        seen.add(first.pk)
    chain = [first]
    while chain[-1].superseded_by_id and chain[-1].superseded_by_id not in {c.pk for c in chain}:
        nxt = MemoryItem.objects.filter(space=space, pk=chain[-1].superseded_by_id).first()
        if nxt is None:
            break
        chain.append(nxt)
    return chain


def graph_data(*, space: Space, limit: int = 300) -> dict[str, list[dict[str, object]]]:
    """Entities as nodes and relations as edges, for the knowledge-graph view.
    An edge is drawn live only while the fact it came from is live too
    (archived, quarantined or pending facts draw it as history), and the edges
    of a soft-forgotten fact are not drawn at all: forgetting is the user's
    word that it should not be shown."""
    relations = list(
        Relation.objects.filter(space=space)
        .exclude(item__status=MemoryItem.Status.FORGOTTEN)
        .select_related("src", "dst", "item")
        .order_by("expired_at", "-created_at")[:limit]
    )
    ids = {r.src_id for r in relations} | {r.dst_id for r in relations}
    extra = Entity.objects.filter(space=space).exclude(pk__in=ids).order_by("-last_mentioned_at")
    entities = list(Entity.objects.filter(pk__in=ids)) + list(extra[: max(0, 60 - len(ids))])
    return {
        "nodes": [{"id": e.pk, "name": e.name, "type": e.type} for e in entities],
        "edges": [
            {
                "src": r.src_id,
                "dst": r.dst_id,
                "rel": r.rel,
                "live": r.expired_at is None and (r.item is None or r.item.is_live),
            }
            for r in relations
        ],
    }

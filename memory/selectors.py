"""Read-only queries of the memory app."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memory.models import (
    Entity,
    FactRevision,
    IngestJob,
    MemoryItem,
    Relation,
    SearchBatch,
    Session,
    Space,
    Turn,
)
from memory.timeview import TimeView, Window, is_current, state_at, visible


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
    open_jobs = jobs.filter(Q(status=IngestJob.Status.PENDING) | Q(status=IngestJob.Status.RUNNING))
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
        # The contract's pending_jobs is ingest work: posted turns not yet
        # through the write pipeline. Import jobs are counted on their own.
        "pending_jobs": open_jobs.exclude(kind__startswith="import_").count(),
        "pending_imports": open_jobs.filter(kind__startswith="import_").count(),
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


def graph_data(
    *, space: Space, limit: int = 300, when: TimeView | None = None
) -> dict[str, list[dict[str, object]]]:
    """Entities as nodes and relations as edges, for the knowledge-graph view.
    An edge is drawn live only while the fact it came from is live too
    (archived, quarantined or pending facts draw it as history), and the edges
    of a soft-forgotten fact are not drawn at all: forgetting is the user's
    word that it should not be shown. In a time view (the time-travel slider)
    an edge is live when its fact was true at `as_of` by what Engram knew at
    `known_at`; edges Engram did not know yet are left out."""
    view = when or TimeView()
    known = Relation.objects.filter(space=space).exclude(item__status=MemoryItem.Status.FORGOTTEN)
    if view.known_at is not None:
        known = known.filter(created_at__lte=view.known_at)
    relations = list(
        known.select_related("src", "dst", "item").order_by("expired_at", "-created_at")[:limit]
    )
    revisions = _revisions([r.item_id for r in relations if r.item_id]) if view.known_at else {}
    now = timezone.now()

    def live(r: Relation) -> bool:
        if view.is_now:
            return r.expired_at is None and (r.item is None or r.item.is_live)
        if r.item is not None:
            if r.item.status != MemoryItem.Status.ACTIVE or r.item.screen_status != "ok":
                return False
            window = state_at(_window(r.item), revisions.get(r.item_id or 0, []), view.known_at)
        else:
            window = Window(r.valid_from or r.created_at, r.valid_to, r.expired_at, None)
        return is_current(window, view.instant(now))

    ids = {r.src_id for r in relations} | {r.dst_id for r in relations}
    extra = Entity.objects.filter(space=space).exclude(pk__in=ids).order_by("-last_mentioned_at")
    if view.known_at is not None:
        extra = extra.filter(created_at__lte=view.known_at)
    entities = list(Entity.objects.filter(pk__in=ids)) + list(extra[: max(0, 60 - len(ids))])
    return {
        "nodes": [{"id": e.pk, "name": e.name, "type": e.type} for e in entities],
        "edges": [
            {"src": r.src_id, "dst": r.dst_id, "rel": r.rel, "live": live(r)} for r in relations
        ],
    }


def _window(item: MemoryItem) -> Window:
    return Window(
        item.valid_from or item.created_at, item.valid_to, item.expired_at, item.superseded_by_id
    )


def _revisions(item_ids: list[int]) -> dict[int, list[tuple[datetime, Window]]]:
    """Each item's recorded window changes, oldest first (see FactRevision)."""
    out: dict[int, list[tuple[datetime, Window]]] = {}
    for rev in FactRevision.objects.filter(item_id__in=item_ids).order_by("recorded_at", "id"):
        out.setdefault(rev.item_id, []).append(
            (
                rev.recorded_at,
                Window(
                    rev.prior_valid_from,
                    rev.prior_valid_to,
                    rev.prior_expired_at,
                    rev.prior_superseded_by,
                ),
            )
        )
    return out


def facts_in_view(
    *,
    space: Space,
    subject: str = "",
    predicate: str = "",
    when: TimeView | None = None,
    limit: int = 100,
) -> list[FactView]:
    """Facts of a subject (any of its names) and predicate as a time view sees
    them: live ones now; with as_of/known_at what was true or known then, each
    window as Engram held it at known_at; with history, every known value.
    Newest first by valid_from."""
    from memory.services.identity import canonical_subject
    from memory.services.pipeline.candidates import spellings

    view = when or TimeView()
    items = MemoryItem.objects.filter(space=space).filter(view.item_q())
    if subject:
        items = items.filter(subject__in=spellings(canonical_subject(space, subject)))
    if predicate:
        items = items.filter(predicate=predicate)
    rows = list(items.order_by("-valid_from", "-id")[: max(limit * 2, limit)])
    revisions = _revisions([i.pk for i in rows]) if view.known_at is not None else {}
    now = timezone.now()
    out: list[FactView] = []
    for item in rows:
        window = state_at(_window(item), revisions.get(item.pk, []), view.known_at)
        if not visible(window, view, now=now):
            continue
        current = is_current(window, view.instant(now)) and (
            view.valid_at is not None or window.expired_at is None
        )
        out.append(FactView(item, window, current))
    out.sort(key=lambda f: (f.window.valid_from or f.item.created_at, f.item.pk), reverse=True)
    return out[:limit]


@dataclass(frozen=True, slots=True)
class FactView:
    """A fact with its window as one time view sees it."""

    item: MemoryItem
    window: Window
    current: bool

    def as_dict(self) -> dict[str, object]:
        """The fact as the fact-chain reads answer it (REST and the memory_facts tool)."""
        by = self.window.superseded_by
        return {
            "id": str(self.item.pk),
            "text": self.item.text,
            "kind": self.item.kind,
            "subject": self.item.subject,
            "predicate": self.item.predicate,
            "object": self.item.object,
            "valid_from": self.window.valid_from,
            "valid_to": self.window.valid_to,
            "created_at": self.item.created_at,
            "expired_at": self.window.expired_at,
            "current": self.current,
            "superseded_by": str(by) if by else None,
            "status": self.item.status,
        }


def unassessed_batches(*, space: Space, session_key: str) -> int:
    """memory_search answers of a session that no memory_assess has judged."""
    return SearchBatch.objects.filter(
        space=space, session_key=session_key, assessed_at=None
    ).count()

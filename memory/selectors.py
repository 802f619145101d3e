"""Read-only queries of the memory app."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Q, QuerySet
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


# Facts of these kinds are sentences about the user (a standing instruction,
# an insight, a session's episode): their object is free text, not a thing
# in the world, so the graph shows them as details of the subject's node.
FREE_TEXT_KINDS = frozenset({"instruction", "insight", "episode", "decision"})
# A sentence's end: a full stop after a word (not an abbreviation such as
# "St." or "K."), or any of ! ? ; between or after words.
_CLAUSE = re.compile(r"\w{4,}\.(?:\s+\S|$)|[!?;](?:\s+\S|$)")


def names_an_entity(name: str) -> bool:
    """Whether a name reads as an entity ("Anna", "Anna K.", "green tea",
    "Porto, Portugal", "St. Petersburg") rather than a sentence ("always
    answer in English and cite the source"): at most five words, no clause
    punctuation."""
    words = name.split()
    if not words or len(words) > 5 or len(name) > 60:
        return False
    return len(words) == 1 or not _CLAUSE.search(name)


def graph_data(
    *, space: Space, limit: int = 300, when: TimeView | None = None
) -> dict[str, object]:
    """Entities as nodes and relations as edges, for the knowledge-graph view.
    An edge is drawn live only while the fact it came from is live too
    (archived, quarantined or pending facts draw it as history), and the edges
    of a soft-forgotten fact are not drawn at all: forgetting is the user's
    word that it should not be shown. In a time view (the time-travel slider)
    an edge is live when its fact was true at `as_of` by what Engram knew at
    `known_at`; edges Engram did not know yet, or whose fact only became true
    after the instant, are left out, and the rest (true before, ended or
    superseded since) are drawn expired.

    Only real entities are nodes: a relation whose object is free text (an
    instruction's sentence, a name that reads as a clause) is not an edge but
    a detail of its subject's node."""
    view = when or TimeView()
    known = Relation.objects.filter(space=space).exclude(item__status=MemoryItem.Status.FORGOTTEN)
    if view.known_at is not None:
        known = known.filter(created_at__lte=view.known_at)
    # The page of edges is chosen on the relation rows alone, then loaded
    # with their entities and facts: sorting the joined rows (every column of
    # four tables) cost 0.1-0.2 s at 10,000 edges.
    chosen = list(known.order_by("expired_at", "-created_at").values_list("pk", flat=True)[:limit])
    rank = {pk: i for i, pk in enumerate(chosen)}
    relations = sorted(
        Relation.objects.filter(pk__in=chosen).select_related("src", "dst", "item"),
        key=lambda r: rank[r.pk],
    )
    revisions = _revisions([r.item_id for r in relations if r.item_id]) if view.known_at else {}
    now = timezone.now()

    def window(r: Relation) -> Window:
        if r.item is not None:
            return state_at(_window(r.item), revisions.get(r.item_id or 0, []), view.known_at)
        return Window(r.valid_from or r.created_at, r.valid_to, r.expired_at, None)

    def live(r: Relation) -> bool:
        if view.is_now:
            return r.expired_at is None and (r.item is None or r.item.is_live)
        if r.item is not None and (
            r.item.status != MemoryItem.Status.ACTIVE or r.item.screen_status != "ok"
        ):
            return False
        return is_current(window(r), view.instant(now))

    at = view.instant(now)
    edges: list[dict[str, object]] = []
    ids: set[int] = set()
    details: dict[int, list[str]] = {}
    for r in relations:
        if not view.is_now:
            start = window(r).valid_from
            if start is not None and start > at:
                continue  # not true yet at the instant: the future is not drawn
        free = (r.item is not None and r.item.kind in FREE_TEXT_KINDS) or not names_an_entity(
            r.dst.name
        )
        if free:
            if live(r):
                details.setdefault(r.src_id, []).append(r.item.text if r.item else r.dst.name)
            continue
        ids |= {r.src_id, r.dst_id}
        edges.append(
            {
                "src": r.src_id,
                "dst": r.dst_id,
                "rel": r.rel,
                "live": live(r),
                "fact": r.item_id,
                "text": r.item.text if r.item else "",
            }
        )
    by_id = {r.src_id: r.src for r in relations} | {r.dst_id: r.dst for r in relations}
    ids |= set(details)
    entities = [by_id[i] for i in ids]
    if view.is_now:
        # Entities without drawn edges fill the picture up to 60 nodes, now only:
        # a past instant shows what stood then.
        extra = (
            Entity.objects.filter(space=space)
            .exclude(pk__in=ids)
            .order_by("-last_mentioned_at")
            .only("id", "name", "type")
        )
        entities += [e for e in extra[: max(0, 60 - len(ids))] if names_an_entity(e.name)]
    return {
        "nodes": [
            {"id": e.pk, "name": e.name, "type": e.type, "details": details.get(e.pk, [])[:5]}
            for e in sorted(entities, key=lambda e: e.pk)
        ],
        "edges": edges,
    }


def validity_range(*, space: Space) -> tuple[datetime, datetime]:
    """The span the time-travel slider covers: from the earliest moment a
    fact of the space was valid to the latest moment its validity changed
    (or now, if later facts are open-ended)."""
    from django.db.models import Max, Min
    from django.db.models.functions import Coalesce

    items = MemoryItem.objects.filter(space=space)
    span = items.aggregate(
        first=Min(Coalesce("valid_from", "created_at")),
        last_from=Max(Coalesce("valid_from", "created_at")),
        last_to=Max("valid_to"),
    )
    now = timezone.now()
    first = span["first"] or now
    last = max(d for d in (span["last_from"], span["last_to"], now) if d is not None)
    return min(first, now), last


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


# --- review, skills and ops (the dashboard's curation views) ----------------------


PAGE_SIZE = 50
# Review cards carry several forms each (accept, reject, merge, release):
# a shorter page keeps the view fast, and decisions are taken one at a time.
REVIEW_PAGE_SIZE = 20


def page_of(rows, number: str | int | None, *, size: int = PAGE_SIZE):  # type: ignore[no-untyped-def]
    """One page of a queryset; a bad or too-large page number gives the last
    page (or the first), never an error."""
    from django.core.paginator import Paginator

    return Paginator(rows, size).get_page(number)


def pending_review(*, space: Space, page: str | int | None = None):  # type: ignore[no-untyped-def]
    """Facts kept pending review, newest first, each with `.contradicts`: the
    facts it may contradict (one query for the whole page)."""
    rows = MemoryItem.objects.filter(
        space=space, status=MemoryItem.Status.PENDING_REVIEW, expired_at=None
    ).order_by("-created_at", "-id")
    found = page_of(rows, page, size=REVIEW_PAGE_SIZE)
    items = list(found.object_list)
    wanted = {
        int(x)
        for item in items
        for x in (item.metadata or {}).get("contradicts") or []
        if str(x).isdigit()
    }
    olds = {m.pk: m for m in MemoryItem.objects.filter(space=space, pk__in=wanted)}
    for item in items:
        ids = [int(x) for x in (item.metadata or {}).get("contradicts") or [] if str(x).isdigit()]
        item.contradicts = [olds[i] for i in ids if i in olds]  # type: ignore[attr-defined]
    found.object_list = items
    return found


def quarantined_rows(*, space: Space) -> QuerySet[MemoryItem]:
    """Entries the screen flagged and nobody has forgotten, newest first."""
    return (
        MemoryItem.objects.filter(space=space, screen_status=MemoryItem.Screen.FLAGGED)
        .exclude(status=MemoryItem.Status.FORGOTTEN)
        .order_by("-created_at", "-id")
    )


def quarantined(*, space: Space, page: str | int | None = None):  # type: ignore[no-untyped-def]
    """Entries the screen flagged and nobody has forgotten, with its reasons."""
    return page_of(quarantined_rows(space=space), page, size=REVIEW_PAGE_SIZE)


def proposals(*, space: Space, page: str | int | None = None):  # type: ignore[no-untyped-def]
    """Proposed writes waiting for a person, oldest first (decided in the
    order they were made), each with `.preview`: its diff against the
    block as it is now and whether it is stale."""
    from memory.models import ProposedWrite
    from memory.services import approval

    rows = ProposedWrite.objects.filter(space=space, status=ProposedWrite.Status.PENDING).order_by(
        "created_at", "id"
    )
    found = page_of(rows, page, size=REVIEW_PAGE_SIZE)
    items = list(found.object_list)
    blocks = approval.blocks_for(space=space, proposals=items)
    for proposal in items:
        proposal.space = space
        proposal.preview = approval.preview(proposal, blocks.get(proposal.label))  # type: ignore[attr-defined]
    found.object_list = items
    return found


def skills_page(*, space: Space, state: str = "", page: str | int | None = None):  # type: ignore[no-untyped-def]
    from memory.models import Skill

    rows = Skill.objects.filter(space=space)
    if state == "draft":
        rows = rows.filter(is_draft=True)
    elif state == "enabled":
        rows = rows.filter(enabled=True)
    elif state == "disabled":
        rows = rows.filter(enabled=False, is_draft=False)
    return page_of(rows.order_by("-is_draft", "name"), page)


def jobs_page(*, space: Space, status: str = "", page: str | int | None = None):  # type: ignore[no-untyped-def]
    rows = IngestJob.objects.filter(space=space).select_related("turn").defer("payload")
    if status:
        rows = rows.filter(status=status)
    return page_of(rows.order_by("-created_at", "-id"), page, size=PAGE_SIZE)


def backfill_jobs(*, space: Space, limit: int = 5) -> list[IngestJob]:
    return list(
        IngestJob.objects.filter(space=space, kind="import_history")
        .defer("payload")
        .order_by("-created_at", "-id")[:limit]
    )


def adjudications(*, space: Space, limit: int = 30):  # type: ignore[no-untyped-def]
    from memory.models import Adjudication

    return list(Adjudication.objects.filter(space=space).order_by("-id")[:limit])

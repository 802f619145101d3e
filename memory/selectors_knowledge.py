"""Read helpers of the dashboard's knowledge views: episodes (sessions with
their summaries and turns), the entity lexicon with each entity's fact chain,
and beliefs with their evidence. Every read is a bounded number of queries
per page, whatever the number of rows (see the query-count tests)."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from memory.models import Belief, Entity, EntityAlias, MemoryItem, Relation, Session, Space, Turn
from memory.services.graph import normalize

PER_PAGE = 50


def _page(rows: QuerySet, number: object, per_page: int = PER_PAGE) -> Page:  # type: ignore[type-arg]
    """A page of rows; an unreadable or out-of-range number gives the first
    or the last page (Paginator.get_page), never an error."""
    return Paginator(rows, per_page).get_page(number if isinstance(number, int | str) else None)


# --- episodes -------------------------------------------------------------------------


def episodes_page(*, space: Space, q: str = "", number: object = 1) -> Page:  # type: ignore[type-arg]
    """Sessions newest first, each with its summary (if consolidation wrote
    one) and its number of turns."""
    turns = (
        Turn.objects.filter(session=OuterRef("pk"))
        .order_by()
        .values("session")
        .annotate(n=Count("pk"))
        .values("n")
    )
    sessions = (
        Session.objects.filter(space=space)
        .select_related("summary")
        .annotate(turn_total=Coalesce(Subquery(turns, output_field=IntegerField()), 0))
        .order_by("-last_turn_at", "-pk")
    )
    if q:
        sessions = sessions.filter(
            Q(title__icontains=q) | Q(external_id__icontains=q) | Q(summary__text__icontains=q)
        )
    return _page(sessions, number)


@dataclass(frozen=True, slots=True)
class Around:
    """Turns before and after an anchor turn, and whether more lie beyond."""

    anchor: Turn
    turns: list[Turn]
    more_before: bool
    more_after: bool


def turns_page(*, session: Session, number: object = 1, per_page: int = 100) -> Page:  # type: ignore[type-arg]
    return _page(Turn.objects.filter(session=session).order_by("ts", "id"), number, per_page)


def turns_around(*, session: Session, anchor: Turn, span: int = 5) -> Around:
    """The `span` turns before and after `anchor` in its session, in order."""
    in_session = Turn.objects.filter(session=session)
    earlier = Q(ts__lt=anchor.ts) | Q(ts=anchor.ts, id__lt=anchor.pk)
    later = Q(ts__gt=anchor.ts) | Q(ts=anchor.ts, id__gt=anchor.pk)
    before = list(in_session.filter(earlier).order_by("-ts", "-id")[: span + 1])
    after = list(in_session.filter(later).order_by("ts", "id")[: span + 1])
    return Around(
        anchor=anchor,
        turns=[*reversed(before[:span]), anchor, *after[:span]],
        more_before=len(before) > span,
        more_after=len(after) > span,
    )


# --- entities -------------------------------------------------------------------------


def _fact_count(field: str) -> Subquery:
    rows = (
        Relation.objects.filter(**{field: OuterRef("pk")})
        .exclude(item=None)
        .order_by()
        .values(field)
        .annotate(n=Count("item", distinct=True))
        .values("n")
    )
    return Subquery(rows, output_field=IntegerField())


def entities_page(*, space: Space, kind: str = "", q: str = "", number: object = 1) -> Page:  # type: ignore[type-arg]
    """The lexicon: entities by name with their aliases and how many facts
    they take part in (as subject or object of a graph edge)."""
    entities = Entity.objects.filter(space=space)
    if kind:
        entities = entities.filter(type=kind)
    if q:
        match = Q(name__icontains=q.strip())
        if norm := normalize(q):  # "?!" has no letters to look an alias up by
            aliased = EntityAlias.objects.filter(space=space, norm__contains=norm)
            match |= Q(pk__in=aliased.values("entity"))
        entities = entities.filter(match)
    entities = (
        entities.annotate(
            facts_out=Coalesce(_fact_count("src"), 0), facts_in=Coalesce(_fact_count("dst"), 0)
        )
        .prefetch_related(Prefetch("aliases", queryset=EntityAlias.objects.order_by("alias")))
        .order_by("name", "pk")
    )
    return _page(entities, number)


def entity_facts(*, space: Space, entity: Entity, number: object = 1) -> Page:  # type: ignore[type-arg]
    """Every fact about an entity, invalidated and superseded ones too,
    newest first: those its graph edges came from, and those whose subject
    or object is one of its names."""
    names = {entity.name, *entity.aliases.values_list("alias", flat=True)}
    linked = Relation.objects.filter(Q(src=entity) | Q(dst=entity)).exclude(item=None)
    match = Q(pk__in=linked.values("item"))
    for name in sorted(names)[:20]:
        match |= Q(subject__iexact=name) | Q(object__iexact=name)
    items = (
        MemoryItem.objects.filter(space=space)
        .filter(match)
        .select_related("superseded_by")
        .order_by(Coalesce("valid_from", "created_at").desc(), "-pk")
    )
    return _page(items, number)


# --- beliefs --------------------------------------------------------------------------

# The dashboard's words for the stored statuses (Belief.Status).
BELIEF_FILTERS = {"held": Belief.Status.ACTIVE, "stale": Belief.Status.STALE, "refuted": "refuted"}


def beliefs_page(*, space: Space, status: str = "", q: str = "", number: object = 1) -> Page:  # type: ignore[type-arg]
    """Beliefs ranked by how much evidence they rest on, with the evidence
    facts and the turns that stated them, in a fixed number of queries."""
    beliefs = Belief.objects.filter(space=space)
    if status:
        beliefs = beliefs.filter(status=BELIEF_FILTERS[status])
    if q:
        for word in q.split()[:8]:
            beliefs = beliefs.filter(text__icontains=word)
    evidence = MemoryItem.objects.select_related("superseded_by", "source_session").order_by(
        "-created_at", "-pk"
    )
    beliefs = (
        beliefs.annotate(evidence_total=Count("evidence", distinct=True))
        .prefetch_related(
            Prefetch("evidence", queryset=evidence),
            Prefetch(
                "evidence__stated_in__turn",
                queryset=Turn.objects.only("id", "session_id", "role", "text", "ts"),
            ),
        )
        .order_by("-evidence_total", "-proof_count", "-updated_at", "-pk")
    )
    return _page(beliefs, number, per_page=25)

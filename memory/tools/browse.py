"""Browsing tools, all read-only: memory_timeline, memory_episodes,
memory_examine and memory_neighbors."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from django.db.models import Case, F, Q, When
from pydantic import Field

from engram_site.bounds import Instant
from memory.errors import Invalid
from memory.models import Entity, MemoryItem, Relation, Session, Turn
from memory.tools._common import ItemOut, item_out, reach_item
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool
from memory.tools.write import EntityOut, _entity_out, resolve_entity

# --- memory_timeline ---------------------------------------------------------------------------


class TimelineIn(ToolArgs):
    kind: (
        Literal["fact", "preference", "event", "instruction", "insight", "decision", "episode"]
        | None
    ) = Field(default=None, description="Only entries of this kind.")
    order: Literal["created", "tour"] = Field(
        default="created",
        description="created: newest first; tour: along the palace's fixed route, first slotted first.",
    )
    before: Instant | None = Field(default=None, description="Only entries created before this.")
    include_inactive: bool = Field(
        default=False, description="Also superseded, forgotten and archived entries."
    )
    limit: int = Field(default=20, ge=1, le=100)


class TimelineOut(ToolResult):
    items: list[ItemOut]


@tool(
    "memory_timeline",
    title="Timeline",
    description=(
        "Browse memory entries by creation time, newest first, optionally of one kind "
        "(fact, preference, event, instruction, insight, decision, episode); page with before. "
        "order=tour walks them along the memory palace's fixed route instead."
    ),
    result=TimelineOut,
    read_only=True,
    examples=({"kind": "event", "limit": 10},),
)
def memory_timeline(ctx: ToolContext, args: TimelineIn) -> dict[str, Any]:
    spaces = ctx.read_spaces  # a linked key browses both, each entry labelled
    names = {s.pk: s.name for s in spaces}
    items = MemoryItem.objects.filter(space_id__in=list(names), screen_status=MemoryItem.Screen.OK)
    if not args.include_inactive:
        items = items.filter(status=MemoryItem.Status.ACTIVE, expired_at=None)
    if args.kind:
        items = items.filter(kind=args.kind)
    if args.before:
        items = items.filter(created_at__lt=args.before)
    if args.order == "tour":
        from memory.services.palace import slots

        for space in spaces:
            slots.ensure(space)
        # Each palace has its own route: the key's own space is walked first,
        # then the linked one. Entries never slotted (inactive since before
        # the palace) come last in each.
        own_first = Case(When(space_id=ctx.space.pk, then=0), default=1)
        ordered = items.order_by(own_first, F("palace__id").asc(nulls_last=True), "id")
    else:
        ordered = items.order_by("-created_at", "-id")
    return {"items": [item_out(i, names[i.space_id]) for i in ordered[: args.limit]]}


# --- memory_episodes ---------------------------------------------------------------------------


class EpisodesIn(ToolArgs):
    start: Instant | None = Field(default=None, description="From this moment (turn time).")
    end: Instant | None = Field(default=None, description="Up to this moment.")
    session_id: str | None = Field(
        default=None, max_length=200, description="Drill into one session."
    )
    around: str | None = Field(
        default=None,
        max_length=40,
        description="A memory id: the episodes within window_minutes of when it was said.",
    )
    window_minutes: int = Field(default=60, ge=1, le=10_080)
    limit: int = Field(default=50, ge=1, le=200, description="At most this many turns.")


class EpisodeTurn(ToolResult):
    ref: str | None
    role: str
    text: str
    ts: datetime


class EpisodeGroup(ToolResult):
    session_id: str
    summary: str | None
    turns: list[EpisodeTurn]


class EpisodesOut(ToolResult):
    sessions: list[EpisodeGroup]


@tool(
    "memory_episodes",
    title="Episodes",
    description=(
        "Past conversations by date range, grouped by session with its summary (newest "
        "session first, turns in order within). session_id drills into one session; around "
        "(a memory id) lists what was said within window_minutes (default 60) of it."
    ),
    result=EpisodesOut,
    read_only=True,
    examples=({"start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:00Z"},),
)
def memory_episodes(ctx: ToolContext, args: EpisodesIn) -> dict[str, Any]:
    space = ctx.space
    start, end = args.start, args.end
    if args.around:
        # An id from the linked user space lists what was said around it
        # there: the conversation it came from is in that space.
        item, here = reach_item(ctx, args.around)
        space = here.space
        anchor = item.stated_at or item.valid_from or item.created_at
        window = timedelta(minutes=args.window_minutes)
        start, end = anchor - window, anchor + window
    if start and end and start > end:
        raise Invalid("start: must be before end")
    turns = Turn.objects.filter(space=space, screen_status="ok").select_related("session")
    if start:
        turns = turns.filter(ts__gte=start)
    if end:
        turns = turns.filter(ts__lte=end)
    if args.session_id:
        turns = turns.filter(session__external_id=args.session_id)
    rows = list(turns.order_by("-ts", "-id")[: args.limit])
    groups: dict[int, list[Turn]] = {}
    for t in rows:
        groups.setdefault(t.session_id, []).append(t)
    sessions = {s.pk: s for s in Session.objects.filter(pk__in=groups).select_related("summary")}
    out = []
    for session_pk, session_turns in groups.items():  # newest session first: rows are
        session = sessions[session_pk]
        summary = getattr(session, "summary", None)
        out.append(
            {
                "session_id": session.external_id,
                "summary": summary.text if summary is not None else None,
                "turns": [
                    {"ref": t.ref, "role": t.role, "text": t.text, "ts": t.ts}
                    for t in reversed(session_turns)
                ],
            }
        )
    return {"sessions": out}


# --- memory_examine ----------------------------------------------------------------------------


class ExamineIn(ToolArgs):
    ids: list[str] = Field(
        min_length=1, max_length=16, description="Entry ids from search or timeline results."
    )


class Provenance(ToolResult):
    source: str
    session_id: str | None
    turn_refs: list[str]
    disposition: str


class ExaminedItem(ItemOut):
    provenance: Provenance


class ExamineOut(ToolResult):
    items: list[ExaminedItem]
    not_found: list[str]


@tool(
    "memory_examine",
    title="Examine entries",
    description=(
        "Full records of up to 16 entries by id, with provenance (source, session, the refs "
        "of the turns they came from). Ids that are not found are listed in not_found."
    ),
    result=ExamineOut,
    read_only=True,
    examples=({"ids": ["42", "43"]},),
)
def memory_examine(ctx: ToolContext, args: ExamineIn) -> dict[str, Any]:
    wanted = [i for i in dict.fromkeys(args.ids)]
    numeric = [int(i) for i in wanted if i.isdigit()]
    found = {
        str(i.pk): i
        for i in MemoryItem.objects.filter(space=ctx.space, pk__in=numeric).select_related(
            "source_session"
        )
    }
    items = []
    for key in wanted:
        item = found.get(key)
        if item is None:
            continue
        items.append(
            {
                **item_out(item),
                "provenance": {
                    "source": item.source,
                    "session_id": item.source_session.external_id if item.source_session else None,
                    "turn_refs": [str(r) for r in item.source_turn_refs or []],
                    "disposition": item.disposition,
                },
            }
        )
    return {"items": items, "not_found": [k for k in wanted if k not in found]}


# --- memory_neighbors --------------------------------------------------------------------------


class NeighborsIn(ToolArgs):
    entity: str | None = Field(default=None, max_length=200, description="Start here, by name.")
    entity_id: str | None = Field(default=None, max_length=40, description="Or by id.")
    hops: int = Field(default=1, ge=1, le=3, description="How far to walk: 1 to 3 relations.")
    limit: int = Field(default=30, ge=1, le=100, description="At most this many neighbours.")


class Neighbor(EntityOut):
    hops: int
    via: str = Field(description="The relation that reached it, e.g. 'Anna -lives_in-> Porto'.")
    summary: str = ""


class NeighborsOut(ToolResult):
    entity: EntityOut | None
    candidates: list[EntityOut] = Field(default_factory=list)
    neighbors: list[Neighbor] = Field(default_factory=list)


@tool(
    "memory_neighbors",
    title="Neighbours",
    description=(
        "Walk the knowledge graph from one entity over live relations, 1 to 3 hops, and "
        "answer the entities reached with the relation that reached each and a summary."
    ),
    result=NeighborsOut,
    read_only=True,
    examples=({"entity": "Anna", "hops": 2},),
)
def memory_neighbors(ctx: ToolContext, args: NeighborsIn) -> dict[str, Any]:
    start, candidates = resolve_entity(ctx, name=args.entity, entity_id=args.entity_id)
    if start is None:
        return {"entity": None, "candidates": [_entity_out(e) for e in candidates]}
    seen: dict[int, dict[str, Any]] = {start.pk: {}}
    frontier = {start.pk}
    names = {start.pk: start.name}
    out: list[dict[str, Any]] = []
    for hop in range(1, args.hops + 1):
        if not frontier or len(out) >= args.limit:
            break
        edges = (
            Relation.objects.filter(space=ctx.space, expired_at=None)
            .filter(Q(src_id__in=frontier) | Q(dst_id__in=frontier))
            .exclude(item__status__in=[MemoryItem.Status.FORGOTTEN, MemoryItem.Status.ARCHIVED])
        )
        nxt: set[int] = set()
        for edge in edges.select_related("src", "dst")[:500]:
            for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                if here.pk in frontier and there.pk not in seen and len(out) < args.limit:
                    seen[there.pk] = {}
                    names[there.pk] = there.name
                    nxt.add(there.pk)
                    out.append(
                        {
                            **_entity_out(there),
                            "hops": hop,
                            "via": f"{edge.src.name} -{edge.rel}-> {edge.dst.name}",
                            "summary": there.summary[:300],
                        }
                    )
        frontier = nxt
    del names
    return {"entity": _entity_out(start), "neighbors": out}


__all__ = ["Entity"]

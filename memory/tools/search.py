"""memory_search with its evidence batches, memory_assess (the evidence
gate) and the legacy recall aliases."""

from __future__ import annotations

import secrets
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal

from django.utils import timezone
from pydantic import Field

from engram_site.bounds import Instant
from memory.errors import NotFound
from memory.models import SearchBatch
from memory.schemas import SourceOut
from memory.services import audit, skill_usage
from memory.services.palace import tour
from memory.services.recall import recall
from memory.tools._common import AS_OF, KNOWN_AT, ResultType
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool

BATCHES_PER_SESSION = 20
PRUNE_EVERY = 10
SESSION = Field(
    default="default",
    min_length=1,
    max_length=200,
    description="Your conversation's id: search batches and their assessment are kept per session.",
)


class ResultRow(ToolResult):
    id: str
    ref: str | None = Field(
        default=None, description="Cite this in memory_assess.evidence_refs (memory_search only)."
    )
    type: str
    text: str
    score: float
    channels: dict[str, float]
    created_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    source: SourceOut
    current: bool | None = None
    superseded_by: str | None = None
    space: str = ""
    coordinate: str | None = Field(
        default=None, description="The entry's room#slot in the memory palace (top 5 hits)."
    )
    neighbours: list[str] | None = Field(
        default=None,
        description="Top 5 hits: ids in the slots beside it in its room, cues from its context.",
    )


class SearchIn(ToolArgs):
    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    k: int = Field(default=8, ge=1, le=100, description="How many results.")
    as_of: Instant | None = AS_OF
    known_at: Instant | None = KNOWN_AT
    include_history: bool = Field(
        default=False, description="Also superseded and expired facts (marked current: false)."
    )
    types: list[ResultType] | None = Field(
        default=None, max_length=6, description="Only these result types."
    )
    session_id: str = SESSION
    room: str | None = Field(
        default=None,
        min_length=1,
        max_length=60,
        description='Search inside one room of the palace ("Fact Hall", "Preference Pavilion-2"); '
        "memory_tour lists the rooms.",
    )


class SearchOut(ToolResult):
    results: list[ResultRow]
    took_ms: float
    batch_id: str = Field(description="Pass to memory_assess with the refs you rely on.")
    degraded: list[str] = Field(default_factory=list)


def _rows(response: Any) -> list[dict[str, Any]]:
    return [asdict(r) for r in response.results]


PALACE_TYPES = ["fact", "insight", "skill"]
ROOM_POOL = 100
NEIGHBOURED = 5


def _place_hits(ctx: ToolContext, rows: list[dict[str, Any]]) -> None:
    """The top hits' coordinates and their room-mates' ids."""
    hits = [r for r in rows if r["type"] in PALACE_TYPES][:NEIGHBOURED]
    keys = [("skill" if r["type"] == "skill" else "item", int(r["id"])) for r in hits]
    placed = tour.neighbours(ctx.space, keys)
    for row, key in zip(hits, keys, strict=True):
        found = placed.get(key)
        if found is not None:
            row["coordinate"] = found["coordinate"]
            row["neighbours"] = found["neighbours"]


def register_batch(
    *, ctx: ToolContext, session_id: str, query: str, rows: list[dict[str, Any]]
) -> str:
    """Record the answer's refs: one INSERT on the search path. Only the
    latest BATCHES_PER_SESSION of a session count (memory_assess checks);
    older ones are deleted every PRUNE_EVERY batches."""
    batch_id = secrets.token_hex(4)
    refs: dict[str, str] = {}
    for n, row in enumerate(rows, start=1):
        row["ref"] = f"{batch_id}.{n}"
        refs[row["ref"]] = row["id"]
    batch = SearchBatch.objects.create(
        space=ctx.space, batch_id=batch_id, session_key=session_id, query=query[:500], refs=refs
    )
    if batch.pk % PRUNE_EVERY == 0:
        prune_batches(space=ctx.space, session_id=session_id)
    return batch_id


def _session_batches(space: Any, session_id: str) -> Any:
    return SearchBatch.objects.filter(space=space, session_key=session_id).order_by("-id")


def prune_batches(*, space: Any, session_id: str) -> int:
    cutoff = (
        _session_batches(space, session_id)
        .values_list("pk", flat=True)[BATCHES_PER_SESSION : BATCHES_PER_SESSION + 1]
        .first()
    )
    if cutoff is None:
        return 0
    deleted, _ = SearchBatch.objects.filter(
        space=space, session_key=session_id, pk__lte=cutoff
    ).delete()
    return deleted


def live_batch(*, space: Any, batch_id: str) -> SearchBatch | None:
    """The batch if it is one of the latest BATCHES_PER_SESSION of its session."""
    batch = SearchBatch.objects.filter(space=space, batch_id=batch_id).first()
    if batch is None:
        return None
    newer = SearchBatch.objects.filter(
        space=space, session_key=batch.session_key, pk__gt=batch.pk
    ).count()
    return batch if newer < BATCHES_PER_SESSION else None


@tool(
    "memory_search",
    title="Search memory",
    description=(
        "Search long-term memory (facts, past conversations, session summaries, insights) with "
        "provenance and validity dates. Use as_of for what was true at a past moment, known_at "
        "for what was known then, include_history for superseded values. A hit means relevant, "
        "not enough to answer: every row carries a ref, the answer a batch_id; before you "
        "answer from memory, call memory_assess with the refs you rely on."
    ),
    result=SearchOut,
    read_only=True,
    examples=({"query": "where does the user live", "k": 5},),
)
def memory_search(ctx: ToolContext, args: SearchIn) -> dict[str, Any]:
    types: list[str] | None = [str(t) for t in args.types] if args.types else None
    members = None
    if args.room is not None:
        # Corridor routing: the room is chosen first, and only what hangs in
        # it is ranked. Recall ranks a deeper pool of entry types and the
        # room's members are kept (a room holds a handful of entries).
        members = tour.room_members(ctx.space, args.room)
        types = [t for t in (types or PALACE_TYPES) if t in PALACE_TYPES]
    response = recall(
        spaces=ctx.read_spaces,
        query=args.query,
        k=args.k if members is None else max(args.k, ROOM_POOL),
        as_of=args.as_of,
        known_at=args.known_at,
        include_history=args.include_history,
        types=types,
    )
    if members is not None:
        items, skills = members
        response.results = [
            r for r in response.results if int(r.id) in (skills if r.type == "skill" else items)
        ][: args.k]
    skill_usage.returned(space_id=ctx.space.pk, results=response.results)
    rows = _rows(response)
    _place_hits(ctx, rows)
    batch_id = register_batch(ctx=ctx, session_id=args.session_id, query=args.query, rows=rows)
    return {
        "results": rows,
        "took_ms": response.took_ms,
        "batch_id": batch_id,
        "degraded": list(response.degraded),
    }


# --- the evidence gate ------------------------------------------------------------------------


class AssessIn(ToolArgs):
    batch_id: str = Field(min_length=1, max_length=32, description="From the memory_search answer.")
    evidence_refs: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="The refs (from that batch only) that support your answer.",
    )
    missing: str = Field(default="", max_length=1000, description="What is still unknown.")
    next_strategy: Literal["answer", "search", "ask_user"] = Field(
        description="answer from the evidence, search again, or ask the user."
    )
    sufficient: bool = Field(description="Whether you judge the evidence enough to answer.")


class AssessOut(ToolResult):
    sufficient: bool
    next_strategy: str
    rejected_refs: list[str]
    accepted_refs: list[str]
    message: str


def verdict(
    *, claimed: bool, strategy: str, refs: list[str], batch_refs: dict[str, str]
) -> dict[str, Any]:
    """The three-part rule: sufficient only when the caller claims it, at
    least one ref of this batch is cited, and the strategy is to answer.
    Otherwise insufficient, with the strategy turned back to retrieval."""
    accepted = [r for r in dict.fromkeys(refs) if r in batch_refs]
    rejected = [r for r in dict.fromkeys(refs) if r not in batch_refs]
    sufficient = claimed and bool(accepted) and strategy == "answer"
    if sufficient:
        return {
            "sufficient": True,
            "next_strategy": "answer",
            "rejected_refs": rejected,
            "accepted_refs": accepted,
            "message": "Answer from the accepted evidence only.",
        }
    reasons = []
    if not claimed:
        reasons.append("you did not claim the evidence is sufficient")
    if not accepted:
        reasons.append("no cited ref belongs to this batch")
    if strategy != "answer":
        reasons.append(f"next_strategy is {strategy}")
    return {
        "sufficient": False,
        "next_strategy": "ask_user" if strategy == "ask_user" else "search",
        "rejected_refs": rejected,
        "accepted_refs": accepted,
        "message": "Insufficient: " + "; ".join(reasons) + ". Search again or ask the user.",
    }


@tool(
    "memory_assess",
    title="Assess the evidence",
    description=(
        "The evidence gate: before answering from memory, judge whether a memory_search batch "
        "is enough. Give its batch_id, up to 8 evidence_refs (ref values from that batch only), "
        "what is missing and next_strategy. The verdict is sufficient only when you claim it, "
        "at least one ref of that batch is cited and next_strategy is answer; refs of other "
        "batches are rejected and listed. Every verdict is audited."
    ),
    result=AssessOut,
    read_only=False,
    examples=(
        {
            "batch_id": "1a2b3c4d",
            "evidence_refs": ["1a2b3c4d.1"],
            "missing": "",
            "next_strategy": "answer",
            "sufficient": True,
        },
    ),
)
def memory_assess(ctx: ToolContext, args: AssessIn) -> dict[str, Any]:
    batch = live_batch(space=ctx.space, batch_id=args.batch_id)
    if batch is None:
        raise NotFound(f"batch {args.batch_id} not found (batches are kept for 20 searches)")
    out = verdict(
        claimed=args.sufficient,
        strategy=args.next_strategy,
        refs=args.evidence_refs,
        batch_refs=batch.refs,
    )
    now = timezone.now()
    SearchBatch.objects.filter(pk=batch.pk).update(assessed_at=now, verdict=out)
    audit.record(
        space=ctx.space,
        action="assess",
        target_type="search_batch",
        target_id=batch.batch_id,
        actor=ctx.actor,
        claimed=args.sufficient,
        strategy=args.next_strategy,
        sufficient=out["sufficient"],
        rejected_refs=out["rejected_refs"],
        missing=args.missing[:300],
    )
    return out


def unassessed(*, space: Any, session_id: str = "default") -> int:
    """How many search batches of a session no memory_assess has judged yet."""
    return SearchBatch.objects.filter(space=space, session_key=session_id, assessed_at=None).count()


# --- legacy aliases ---------------------------------------------------------------------------


class AliasIn(ToolArgs):
    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    k: int = Field(default=8, ge=1, le=100, description="How many results.")
    as_of: Instant | None = AS_OF
    known_at: Instant | None = KNOWN_AT


class AliasOut(ToolResult):
    results: list[ResultRow]
    took_ms: float


def _alias(ctx: ToolContext, args: AliasIn, types: list[str]) -> dict[str, Any]:
    response = recall(
        spaces=ctx.read_spaces,
        query=args.query,
        k=args.k,
        as_of=args.as_of,
        known_at=args.known_at,
        types=types,
    )
    skill_usage.returned(space_id=ctx.space.pk, results=response.results)
    return {"results": _rows(response), "took_ms": response.took_ms}


@tool(
    "recall_facts",
    title="Recall facts",
    description="Search long-term facts and insights (alias of memory_search limited to facts).",
    result=AliasOut,
    read_only=True,
    examples=({"query": "user's job"},),
)
def recall_facts(ctx: ToolContext, args: AliasIn) -> dict[str, Any]:
    return _alias(ctx, args, ["fact", "insight"])


@tool(
    "search_conversations",
    title="Search conversations",
    description="Search past conversation turns (alias of memory_search limited to turns).",
    result=AliasOut,
    read_only=True,
    examples=({"query": "what we said about the trip"},),
)
def search_conversations(ctx: ToolContext, args: AliasIn) -> dict[str, Any]:
    return _alias(ctx, args, ["turn"])


@tool(
    "recall_sessions",
    title="Recall sessions",
    description="Search summaries of past sessions (alias of memory_search limited to summaries).",
    result=AliasOut,
    read_only=True,
    examples=({"query": "planning sessions"},),
)
def recall_sessions(ctx: ToolContext, args: AliasIn) -> dict[str, Any]:
    return _alias(ctx, args, ["summary"])

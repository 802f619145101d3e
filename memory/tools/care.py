"""Looking after memory: memory_review, memory_stats, memory_audit_forgotten,
memory_distill, memory_reflect, memory_export and memory_skills."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from django.db.models import Count
from pydantic import Field

from memory.models import AuditEvent, MemoryItem, PalaceEntry, SearchBatch, Skill, Turn
from memory.selectors import fact_chain, space_status
from memory.services import skills as skill_service
from memory.tools._common import DRY_RUN, ItemOut, item_out, reach_item
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool

# --- memory_review -----------------------------------------------------------------------------


class ReviewIn(ToolArgs):
    id: str = Field(min_length=1, max_length=40, description="The entry to audit.")


class SourceTurn(ToolResult):
    ref: str | None
    session_id: str
    role: str
    text: str
    ts: datetime


class AuditRow(ToolResult):
    action: str
    actor: str
    created_at: datetime
    detail: dict[str, Any]


class PalaceOut(ToolResult):
    coordinate: str = Field(description="room#slot")
    placard: str
    placard_score: float
    due_at: datetime | None = Field(description="Next recall practice; null when not scheduled.")
    interval_days: int
    ease: float
    repetitions: int


class ReviewOut(ToolResult):
    item: ItemOut
    palace: PalaceOut | None = Field(
        default=None, description="Where it hangs in the memory palace and its review schedule."
    )
    source_turns: list[SourceTurn]
    chain: list[ItemOut] = Field(description="Every version, oldest first.")
    contradictions: list[ItemOut]
    audit: list[AuditRow]


@tool(
    "memory_review",
    title="Review an entry",
    description=(
        "Reveal and audit one entry: its text, its room#slot, placard and review schedule, the "
        "turns it came from, its supersede chain (every version, oldest first), the entries it "
        "contradicts and its audit trail. After recalling a memory_review_queue entry, grade "
        "yourself with memory_report."
    ),
    result=ReviewOut,
    read_only=True,
    examples=({"id": "42"},),
)
def memory_review(ctx: ToolContext, args: ReviewIn) -> dict[str, Any]:
    # An entry of the linked user space is reviewed there; the turns it
    # came from may be the project's (extraction routes personal facts of a
    # project conversation to the user space), so they are looked up in both.
    readable = [s.pk for s in ctx.read_spaces]
    item, ctx = reach_item(ctx, args.id)
    refs = [str(r) for r in item.source_turn_refs or []]
    turns = Turn.objects.filter(space_id__in=readable, ref__in=refs).select_related("session")
    if item.source_session_id:
        turns = turns.filter(session_id=item.source_session_id)
    contradicts = [int(i) for i in (item.metadata or {}).get("contradicts", []) if str(i).isdigit()]
    events = AuditEvent.objects.filter(
        space=ctx.space, target_type="item", target_id=str(item.pk)
    ).order_by("-created_at", "-id")[:50]
    entry = PalaceEntry.objects.filter(item=item).first()
    return {
        "item": item_out(item),
        "palace": _palace_out(entry) if entry is not None else None,
        "source_turns": [
            {
                "ref": t.ref,
                "session_id": t.session.external_id,
                "role": t.role,
                "text": t.text,
                "ts": t.ts,
            }
            for t in turns.order_by("ts")[:20]
        ],
        "chain": [item_out(i) for i in fact_chain(space=ctx.space, item_id=item.pk)],
        "contradictions": [
            item_out(i) for i in MemoryItem.objects.filter(space=ctx.space, pk__in=contradicts)
        ],
        "audit": [
            {"action": e.action, "actor": e.actor, "created_at": e.created_at, "detail": e.detail}
            for e in events
        ],
    }


def _palace_out(entry: PalaceEntry) -> dict[str, Any]:
    from memory.services.palace import rooms

    return {
        "coordinate": rooms.coordinate(entry.wing, entry.room_no, entry.slot),
        "placard": entry.placard,
        "placard_score": entry.placard_score,
        "due_at": entry.due_at,
        "interval_days": entry.interval_days,
        "ease": entry.ease,
        "repetitions": entry.repetitions,
    }


# --- memory_stats ------------------------------------------------------------------------------


class StatsIn(ToolArgs):
    pass


class StatsOut(ToolResult):
    by_kind: dict[str, int]
    by_status: dict[str, int]
    live: int
    total: int
    signal_ratio: float = Field(description="Live entries over all entries ever stored.")
    quarantined: int
    entities: int
    relations: int
    turns: int
    sessions: int
    skills_enabled: int
    unassessed_batches: int
    pending_jobs: int
    last_consolidation: str | None


@tool(
    "memory_stats",
    title="Memory statistics",
    description=(
        "Whole-space statistics: entries by kind and by state, the signal ratio (live over "
        "all), entities, turns, pending write-pipeline jobs and the last consolidation."
    ),
    result=StatsOut,
    read_only=True,
    examples=({},),
)
def memory_stats(ctx: ToolContext, args: StatsIn) -> dict[str, Any]:
    items = MemoryItem.objects.filter(space=ctx.space)
    status = space_status(space=ctx.space)
    total = items.count()
    live = int(status["facts"])  # type: ignore[call-overload]
    return {
        "by_kind": {
            r["kind"]: r["n"] for r in items.values("kind").annotate(n=Count("id")).order_by()
        },
        "by_status": {
            r["status"]: r["n"] for r in items.values("status").annotate(n=Count("id")).order_by()
        },
        "live": live,
        "total": total,
        "signal_ratio": round(live / total, 4) if total else 0.0,
        "quarantined": items.filter(screen_status=MemoryItem.Screen.FLAGGED).count(),
        "entities": status["entities"],
        "relations": status["relations"],
        "turns": status["turns"],
        "sessions": status["sessions"],
        "skills_enabled": Skill.objects.filter(space=ctx.space, enabled=True).count(),
        "unassessed_batches": SearchBatch.objects.filter(space=ctx.space, assessed_at=None).count(),
        "pending_jobs": status["pending_jobs"],
        "last_consolidation": status["last_consolidation"],
    }


# --- memory_audit_forgotten --------------------------------------------------------------------


class ForgottenIn(ToolArgs):
    limit: int = Field(default=20, ge=1, le=100)


class ForgottenRow(ItemOut):
    why: str
    when: datetime | None
    restorable: bool


class ForgottenOut(ToolResult):
    items: list[ForgottenRow]


@tool(
    "memory_audit_forgotten",
    title="Recently forgotten",
    description=(
        "Recently forgotten or archived (decayed) entries with why and when, to check that the "
        "forgetting was sound. They are restorable from the dashboard or the API."
    ),
    result=ForgottenOut,
    read_only=True,
    examples=({"limit": 10},),
)
def memory_audit_forgotten(ctx: ToolContext, args: ForgottenIn) -> dict[str, Any]:
    gone = MemoryItem.objects.filter(
        space=ctx.space, status__in=[MemoryItem.Status.FORGOTTEN, MemoryItem.Status.ARCHIVED]
    )
    events = {
        e.target_id: e
        for e in AuditEvent.objects.filter(
            space=ctx.space,
            target_type="item",
            action__in=["forget", "archive", "decay"],
        ).order_by("created_at", "id")
    }
    rows = []
    for item in gone:
        event = events.get(str(item.pk))
        rows.append(
            {
                **item_out(item),
                "why": (
                    f"{event.action} by {event.actor}"
                    if event
                    else ("decayed: rarely used" if item.status == "archived" else "forgotten")
                ),
                "when": event.created_at if event else None,
                "restorable": True,
            }
        )
    rows.sort(key=lambda r: r["when"] or r["created_at"], reverse=True)
    return {"items": rows[: args.limit]}


# --- consolidation on demand --------------------------------------------------------------------


class StepIn(ToolArgs):
    dry_run: bool = DRY_RUN


class StepOut(ToolResult):
    ran: bool
    counts: dict[str, Any]
    report: str = ""
    dry_run: bool = False


def _run_step(ctx: ToolContext, step: str) -> dict[str, Any]:
    from consolidation import services as consolidation

    run = consolidation.run_now(space=ctx.space, trigger="manual", only=[step])
    if run is None:
        return {"ran": False, "counts": {}, "report": "a consolidation run is already active"}
    counts = dict((run.steps or {}).get(step, {}).get("counts", {}))
    return {"ran": True, "counts": counts, "report": run.report[:2000]}


@tool(
    "memory_distill",
    title="Distill",
    description=(
        "Merge clusters of same-topic entries into one higher-level entry (the others are "
        "superseded by it, history kept), and flag contradictions. Uses the LLM when one is "
        "configured, a deterministic merge otherwise. dry_run=true counts the clusters."
    ),
    result=StepOut,
    read_only=False,
    examples=({"dry_run": True},),
)
def memory_distill(ctx: ToolContext, args: StepIn) -> dict[str, Any]:
    if args.dry_run:
        from consolidation.jobs import merge
        from memory.selectors import live_items

        items = list(live_items(ctx.space).filter(kind__in=merge.MERGEABLE).order_by("pk"))
        groups = merge.clusters(items)
        return {
            "ran": False,
            "counts": {"clusters": len(groups), "entries": sum(len(g) for g in groups)},
            "dry_run": True,
        }
    return _run_step(ctx, "merge")


@tool(
    "memory_reflect",
    title="Reflect",
    description=(
        "Run the belief step now: abstract recent entries into higher-level beliefs backed by "
        "evidence, review stale beliefs (form, refine, still, refute). Raw entries stay."
    ),
    result=StepOut,
    read_only=False,
    examples=({},),
)
def memory_reflect(ctx: ToolContext, args: StepIn) -> dict[str, Any]:
    if args.dry_run:
        return {"ran": False, "counts": {}, "dry_run": True}
    return _run_step(ctx, "reflect")


# --- memory_export ------------------------------------------------------------------------------


class ExportIn(ToolArgs):
    format: Literal["json", "markdown"] = "markdown"
    redacted: bool = Field(
        default=False, description="Secrets and personal data scrubbed, for sharing."
    )


class ExportOut(ToolResult):
    format: str
    redacted: bool
    content: str


@tool(
    "memory_export",
    title="Export",
    description=(
        "Export this space's memory as Markdown (readable) or JSON (complete, re-importable); "
        "redacted=true scrubs secrets and personal data for sharing."
    ),
    result=ExportOut,
    read_only=True,
    examples=({"format": "markdown", "redacted": True},),
)
def memory_export(ctx: ToolContext, args: ExportIn) -> dict[str, Any]:
    from memory.services.export import export_markdown, export_space

    if args.format == "json":
        content = json.dumps(
            export_space(space=ctx.space, redacted=args.redacted), ensure_ascii=False
        )
    else:
        content = export_markdown(space=ctx.space, redacted=args.redacted)
    return {"format": args.format, "redacted": args.redacted, "content": content}


# --- memory_skills ------------------------------------------------------------------------------


class SkillsIn(ToolArgs):
    query: str = Field(default="", max_length=500, description="Words to look for; empty: all.")
    use: str | None = Field(
        default=None, max_length=40, description="The id of a skill you are about to follow."
    )
    limit: int = Field(default=10, ge=1, le=50)


class SkillRow(ToolResult):
    id: str
    name: str
    description: str
    body: str
    usage_count: int


class SkillsOut(ToolResult):
    skills: list[SkillRow]
    used: str | None = None


@tool(
    "memory_skills",
    title="Skills",
    description=(
        "List or search the enabled skills (procedures a person approved) of this space. Pass "
        "use=<id> when you follow one, so its use is counted."
    ),
    result=SkillsOut,
    read_only=False,
    examples=({"query": "deploy"},),
)
def memory_skills(ctx: ToolContext, args: SkillsIn) -> dict[str, Any]:
    used = None
    if args.use is not None:
        from memory.errors import NotFound

        if not args.use.isdigit():
            raise NotFound(f"skill {args.use} not found")
        from memory.services import skill_usage

        used = str(skill_usage.report(space=ctx.space, skill_id=int(args.use), actor=ctx.actor).pk)
    rows = skill_service.skills(space=ctx.space, enabled=True, q=args.query)[: args.limit]
    return {
        "skills": [
            {
                "id": str(s.pk),
                "name": s.name,
                "description": s.description,
                "body": s.body,
                "usage_count": s.usage_count,
            }
            for s in rows
        ],
        "used": used,
    }

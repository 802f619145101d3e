"""Write tools: memory_save (core blocks, one fact or up to 10), memory_update,
memory_forget, memory_facts (read and write a fact chain), memory_report,
memory_ingest_history and the remember_fact alias. Every write tool takes
dry_run: the plan, nothing written."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from django.db import transaction
from pydantic import Field, model_validator

from engram_site.bounds import Instant
from memory.errors import EngramError, Invalid, NotFound
from memory.models import Entity, MemoryItem, ProposedWrite
from memory.screening import screen_strict
from memory.services import approval, audit, core, curation, facts, forget, graph, scopes
from memory.services.imports import history
from memory.services.imports import jobs as import_jobs
from memory.tools._common import (
    AS_OF,
    DRY_RUN,
    KNOWN_AT,
    SCOPE,
    ItemOut,
    Scope,
    for_item,
    in_scope,
    item_or_404,
    item_out,
    reach_item,
)
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool

FactKind = Literal["fact", "preference", "event", "instruction", "decision", "episode"]


class PlanOut(ToolResult):
    """One fact's outcome (or, with dry_run, its plan)."""

    id: str | None = None
    action: str = Field(description="ADD | UPDATE | NOOP | DELETE | DEFER | DROP | QUARANTINE")
    superseded: list[str] = Field(default_factory=list)
    reason: str = ""
    quarantined: bool = Field(
        default=False,
        description="Stored for review but never recalled: the injection screen flagged it.",
    )
    reasons: list[str] = Field(default_factory=list, description="Why it was quarantined.")
    status: str | None = Field(
        default=None,
        description='"proposed": held for a person\'s approval (ENGRAM_WRITE_APPROVAL), '
        "nothing written yet.",
    )
    proposal_id: str | None = None


PROPOSED = "Proposed (#{id}): nothing changes until a person approves it in Review."


def _proposal(proposal: ProposedWrite) -> dict[str, Any]:
    return {
        "status": "proposed",
        "proposal_id": str(proposal.pk),
        "quarantined": bool(proposal.screen_reasons),
        "reasons": list(proposal.screen_reasons),
    }


def _held() -> bool:
    return approval.gates_facts()


def _fact(ctx: ToolContext, *, dry_run: bool, **fields: Any) -> dict[str, Any]:
    if _held() and not dry_run:
        # ENGRAM_WRITE_APPROVAL=all: held for a person, nothing written;
        # unless it repeats what is stored, which leaves nothing to approve.
        planned = {k: v for k, v in fields.items() if k != "replaces"}
        plan = facts.save_fact(
            space=ctx.space, source="tool", actor=ctx.actor, dry_run=True, judge=False, **planned
        )
        if plan.action == "NOOP":
            return {
                "id": None,
                "action": "NOOP",
                "superseded": [],
                "reason": plan.reason,
                "quarantined": False,
                "reasons": [],
            }
        proposal = approval.propose_fact(
            space=ctx.space, proposer=ctx.actor, source="tool", **fields
        )
        return {
            "id": None,
            "action": "PROPOSED",
            "reason": PROPOSED.format(id=proposal.pk),
            **_proposal(proposal),
        }
    result = facts.save_fact(
        space=ctx.space, source="tool", actor=ctx.actor, dry_run=dry_run, judge=True, **fields
    )
    return {
        "id": str(result.item.pk) if result.item is not None else None,
        "action": result.action,
        "superseded": [str(pk) for pk in result.superseded],
        "reason": result.reason,
        "quarantined": result.quarantined,
        "reasons": result.reasons,
    }


# --- memory_save ----------------------------------------------------------------------------


class SaveItem(ToolArgs):
    text: str = Field(min_length=1, max_length=2000, description="The fact as one sentence.")
    kind: FactKind = "fact"
    importance: float = Field(default=0.5, ge=0.0, le=1.0)


class SaveIn(ToolArgs):
    block: Literal["user", "agent", "auto"] = Field(
        default="auto",
        description=(
            "user: who the user is, preferences, standing instructions (always in your prompt). "
            "agent: environment quirks, conventions, lessons. auto: long-term facts."
        ),
    )
    action: Literal["add", "replace", "remove"] = Field(
        default="add",
        description="add a new entry; replace or remove the one entry containing old_text.",
    )
    text: str = Field(default="", max_length=2000, description="The entry: one dense line.")
    old_text: str = Field(
        default="", max_length=2000, description="For replace/remove: a unique part of the entry."
    )
    items: list[SaveItem] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="block=auto only: up to 10 facts in one call, each with its own outcome.",
    )
    scope: Scope | None = SCOPE
    dry_run: bool = DRY_RUN

    @model_validator(mode="after")
    def _items_are_facts(self) -> SaveIn:
        if self.items is not None and self.block != "auto":
            raise ValueError("items: only with block=auto")
        return self


class SavedItem(PlanOut):
    index: int
    error: str | None = None


class SaveOut(ToolResult):
    ok: bool
    block: str
    message: str
    usage: float = 0.0
    version: int | None = None
    id: str | None = None
    action: str | None = None
    superseded: list[str] = Field(default_factory=list)
    items: list[SavedItem] = Field(default_factory=list)
    failed: int = 0
    dry_run: bool = False
    quarantined: bool = Field(
        default=False,
        description="The fact was stored quarantined, or the core entry refused, by the "
        "injection screen.",
    )
    reasons: list[str] = Field(default_factory=list, description="The screen's reasons.")
    status: str | None = Field(
        default=None,
        description='"proposed": held for a person\'s approval (ENGRAM_WRITE_APPROVAL), '
        "nothing written yet.",
    )
    proposal_id: str | None = None


@tool(
    "memory_save",
    title="Save to memory",
    description=(
        "Save to memory. block=auto (default) stores long-term facts through conflict "
        "resolution: text for one, items for up to 10 at once (each answers its own "
        "disposition: ADD, UPDATE of an older value, NOOP duplicate, DEFER pending review, DROP "
        "too vague). block=user / block=agent curates core memory, which is in your prompt "
        "on every turn: add, replace or remove one-line entries; blocks have hard budgets. "
        "dry_run=true answers the plan and writes nothing."
    ),
    result=SaveOut,
    read_only=False,
    examples=(
        {"block": "auto", "text": "The user's sister Anna lives in Porto."},
        {"block": "user", "action": "add", "text": "Prefers short answers."},
        {"items": [{"text": "User works at Acme."}, {"text": "User has a dog named Rex."}]},
    ),
)
def memory_save(ctx: ToolContext, args: SaveIn) -> dict[str, Any]:
    ctx = in_scope(ctx, scopes.core_scope(args.block, args.scope, ctx.user_space))
    if args.block != "auto":
        return _save_core(ctx, args)
    if args.action == "remove":
        needle = (args.old_text or args.text).strip()
        if not needle:
            raise Invalid("old_text: say which fact to remove")
        if args.dry_run:
            found = forget.items_for_query(space=ctx.space, query=needle, include_inactive=False)
            return {
                "ok": bool(found),
                "block": "auto",
                "message": f"Would forget {len(found)} fact(s).",
                "superseded": [str(i.pk) for i in found],
                "dry_run": True,
            }
        if _held():
            held = approval.propose_forget(space=ctx.space, proposer=ctx.actor, query=needle)
            return {
                "ok": True,
                "block": "auto",
                "message": PROPOSED.format(id=held.pk),
                "status": "proposed",
                "proposal_id": str(held.pk),
            }
        count = forget.forget(space=ctx.space, query=needle, actor=ctx.actor)
        return {
            "ok": count > 0,
            "block": "auto",
            "message": f"Forgot {count} fact(s)." if count else "No fact matched.",
        }
    if args.items is not None:
        rows: list[dict[str, Any]] = []
        for index, entry in enumerate(args.items):
            try:
                rows.append(
                    {
                        "index": index,
                        **_fact(
                            ctx,
                            dry_run=args.dry_run,
                            text=entry.text,
                            kind=entry.kind,
                            importance=entry.importance,
                        ),
                    }
                )
            except EngramError as exc:
                rows.append({"index": index, "action": "FAILED", "error": exc.detail})
        failed = sum(1 for r in rows if r.get("error"))
        return {
            "ok": failed < len(rows),
            "block": "auto",
            "message": f"{len(rows) - failed} of {len(rows)} processed.",
            "items": rows,
            "failed": failed,
            "dry_run": args.dry_run,
        }
    if not args.text.strip():
        raise Invalid("text: required for add and replace")
    saved = _fact(ctx, dry_run=args.dry_run, text=args.text)
    if saved.get("status") == "proposed":
        return {
            "ok": True,
            "block": "auto",
            "message": saved["reason"],
            "id": None,
            "action": saved["action"],
            **_proposal_fields(saved),
        }
    if saved["quarantined"]:
        message = (
            f"{'Would be quarantined' if args.dry_run else 'Quarantined'} by the injection screen "
            f"({', '.join(saved['reasons'])}): stored for review, never recalled."
        )
    else:
        message = ("Would be " if args.dry_run else "Saved to long-term memory: ") + saved["action"]
    return {
        "ok": saved["action"] not in ("DROP", "QUARANTINE") or bool(saved["id"]),
        "block": "auto",
        "message": message,
        "id": saved["id"],
        "action": saved["action"],
        "superseded": saved["superseded"],
        "dry_run": args.dry_run,
        "quarantined": saved["quarantined"],
        "reasons": saved["reasons"],
    }


def _proposal_fields(saved: dict[str, Any]) -> dict[str, Any]:
    keys = ("status", "proposal_id", "quarantined", "reasons")
    return {key: saved[key] for key in keys}


def _save_core(ctx: ToolContext, args: SaveIn) -> dict[str, Any]:
    if args.dry_run:
        block = core.get_block(space=ctx.space, label=args.block)
        lines = core.entries(block.text)
        needle = args.old_text.strip()
        matches = [line for line in lines if needle and needle in line]
        verdict = screen_strict(args.text) if args.action != "remove" else None
        if verdict is not None and verdict.flagged:
            message = f"would be refused by the injection screen ({', '.join(verdict.reasons)})"
        elif args.action != "add" and len(matches) != 1:
            message = f"old_text matches {len(matches)} entries; it must match exactly one"
        else:
            message = f"would {args.action} one entry of the {args.block} block"
        refused = verdict is not None and verdict.flagged
        return {
            "ok": not refused and (args.action == "add" or len(matches) == 1),
            "block": args.block,
            "message": message,
            "usage": core.usage(block=block),
            "version": block.version,
            "dry_run": True,
            "quarantined": refused,
            "reasons": verdict.reasons if refused and verdict else [],
        }
    if approval.gates_core():
        refusal, proposal = approval.propose_entry(
            space=ctx.space,
            label=args.block,
            action=args.action,
            text=args.text,
            old_text=args.old_text,
            proposer=ctx.actor,
        )
        if proposal is not None:
            block = core.load_block(space=ctx.space, label=args.block)
            return {
                "ok": True,
                "block": args.block,
                "usage": core.usage(block=block),
                "message": PROPOSED.format(id=proposal.pk),
                "version": block.version,
                **_proposal(proposal),
            }
        assert refusal is not None
        result = refusal
    else:
        result = core.save(
            space=ctx.space,
            label=args.block,
            action=args.action,
            text=args.text,
            old_text=args.old_text,
            author=ctx.actor,
        )
    return {
        "ok": result.ok,
        "block": args.block,
        "usage": result.usage,
        "message": result.message,
        "version": result.block.version,
        "quarantined": bool(result.reasons),
        "reasons": result.reasons,
    }


class RememberIn(ToolArgs):
    text: str = Field(min_length=1, max_length=2000, description="The fact as one sentence.")
    subject: str = Field(default="", max_length=200)
    predicate: str = Field(default="", max_length=100)
    object: str = Field(default="", max_length=500)
    kind: FactKind = "fact"
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    scope: Scope | None = SCOPE
    dry_run: bool = DRY_RUN


@tool(
    "remember_fact",
    title="Remember a fact",
    description="Save one long-term fact about the user or their world (alias of memory_save "
    "with block=auto).",
    result=PlanOut,
    read_only=False,
    examples=({"text": "The user is allergic to peanuts.", "kind": "fact"},),
)
def remember_fact(ctx: ToolContext, args: RememberIn) -> dict[str, Any]:
    fields = args.model_dump(exclude={"dry_run", "scope"})
    return _fact(in_scope(ctx, args.scope), dry_run=args.dry_run, **fields)


# --- memory_update ----------------------------------------------------------------------------


class UpdateIn(ToolArgs):
    id: str = Field(min_length=1, max_length=40, description="The entry to correct.")
    text: str = Field(min_length=1, max_length=2000, description="The corrected entry.")
    dry_run: bool = DRY_RUN


class UpdateOut(ToolResult):
    id: str | None
    replaces: str
    action: str
    dry_run: bool = False
    status: str | None = Field(
        default=None, description='"proposed": held for a person\'s approval, nothing written.'
    )
    proposal_id: str | None = None


@tool(
    "memory_update",
    title="Correct an entry",
    description=(
        "Correct an entry by id: the corrected text becomes a new version that supersedes the "
        "old one; the old version stays in the history (memory_review shows the chain)."
    ),
    result=UpdateOut,
    read_only=False,
    examples=({"id": "42", "text": "The user's sister Anna lives in Lisbon."},),
)
def memory_update(ctx: ToolContext, args: UpdateIn) -> dict[str, Any]:
    old, ctx = reach_item(ctx, args.id)
    if args.dry_run:
        # The same checks as the write, and nothing written.
        curation.check(old=old, text=args.text)
        return {"id": None, "replaces": str(old.pk), "action": "UPDATE", "dry_run": True}
    if _held():
        proposal = approval.propose_correction(
            space=ctx.space, old=old, text=args.text, proposer=ctx.actor
        )
        return {
            "id": None,
            "replaces": str(old.pk),
            "action": "PROPOSED",
            "status": "proposed",
            "proposal_id": str(proposal.pk),
        }
    new = curation.correct(
        space=ctx.space, old=old, text=args.text, actor=ctx.actor, source="tool:update"
    )
    return {"id": str(new.pk), "replaces": str(old.pk), "action": "UPDATE"}


# --- memory_forget ----------------------------------------------------------------------------


class ForgetIn(ToolArgs):
    item_id: str | None = Field(
        default=None, max_length=40, description="Id of one memory item (from a search result)."
    )
    query: str | None = Field(
        default=None, max_length=1000, description="Forget the facts containing every word of this."
    )
    everything: bool = Field(default=False, description="Wipe all memory of this space.")
    confirm: str | None = Field(
        default=None, max_length=64, description="The space name, typed, to confirm everything."
    )
    hard: bool = Field(default=False, description="Delete for good instead of restorably.")
    dry_run: bool = DRY_RUN


class ForgetOut(ToolResult):
    forgotten: int
    ids: list[str] = Field(default_factory=list)
    dry_run: bool = False
    # ENGRAM_WRITE_APPROVAL=all: "proposed", held for a person, nothing forgotten yet.
    status: str | None = None
    proposal_id: str | None = None
    verification: dict[str, Any] | None = Field(
        default=None,
        description="Hard forgets and wipes: every place searched afterwards and what was found.",
    )


@tool(
    "memory_forget",
    title="Forget",
    description=(
        "Forget memories the user asks you to forget: one item by id, the facts containing "
        "every word of a query, or everything (with the space name as confirm). Restorable "
        "(memory_audit_forgotten lists them) unless hard=true. dry_run=true lists what would go."
    ),
    result=ForgetOut,
    read_only=False,
    destructive=True,
    examples=({"item_id": "42"}, {"query": "sister address", "dry_run": True}),
)
def memory_forget(ctx: ToolContext, args: ForgetIn) -> dict[str, Any]:
    if args.item_id is not None:
        ctx = for_item(ctx, args.item_id)
    if args.dry_run:
        if args.item_id is not None:
            found = [item_or_404(ctx.space, args.item_id)]
        elif args.query:
            found = forget.items_for_query(
                space=ctx.space, query=args.query, include_inactive=args.hard
            )
        elif args.everything:
            found = list(MemoryItem.objects.filter(space=ctx.space))
        else:
            raise Invalid("give exactly one of item_id, query or everything")
        return {"forgotten": len(found), "ids": [str(i.pk) for i in found], "dry_run": True}
    if args.item_id is not None:
        item_or_404(ctx.space, args.item_id)
    if _held():
        held = approval.propose_forget(
            space=ctx.space,
            proposer=ctx.actor,
            item_id=args.item_id,
            query=args.query,
            everything=args.everything,
            confirm=args.confirm,
            hard=args.hard,
        )
        return {"forgotten": 0, "status": "proposed", "proposal_id": str(held.pk)}
    done = forget.forget_with_report(
        space=ctx.space,
        item_id=args.item_id,
        query=args.query,
        everything=args.everything,
        confirm=args.confirm,
        hard=args.hard,
        actor=ctx.actor,
    )
    return {"forgotten": done.count, "verification": done.verification}


# --- memory_facts ----------------------------------------------------------------------------


class FactEntry(ToolArgs):
    entity: str | None = Field(default=None, max_length=200, description="Whose fact, by name.")
    entity_id: str | None = Field(default=None, max_length=40, description="Or the entity's id.")
    content: str = Field(min_length=1, max_length=2000, description="The fact as one sentence.")
    predicate: str = Field(default="", max_length=100, description="e.g. lives_in, works_at.")
    object: str = Field(default="", max_length=500)
    replaces: str | None = Field(
        default=None, max_length=40, description="Id of the fact this one supersedes."
    )
    valid_from: Instant | None = Field(default=None, description="When it became true.")


class FactsIn(ToolArgs):
    entity: str | None = Field(
        default=None,
        max_length=200,
        description='Read mode: whose facts, by name or alias ("user" for the user). No '
        "entity is created on a miss; an ambiguous name lists candidates.",
    )
    entity_id: str | None = Field(default=None, max_length=40, description="Or the entity's id.")
    predicate: str = Field(default="", max_length=100, description="Only this predicate.")
    include_invalid: bool = Field(
        default=False, description="The full chain, superseded and expired values too."
    )
    as_of: Instant | None = AS_OF
    known_at: Instant | None = KNOWN_AT
    limit: int = Field(default=50, ge=1, le=200)
    facts: list[FactEntry] | None = Field(
        default=None, min_length=1, max_length=50, description="Write mode: up to 50 facts."
    )
    scope: Scope | None = SCOPE
    dry_run: bool = DRY_RUN


class ChainRow(ToolResult):
    space: str = ""  # the space it lives in: a linked key reads two
    id: str
    text: str
    kind: str
    subject: str
    predicate: str
    object: str
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    expired_at: datetime | None
    current: bool
    superseded_by: str | None
    status: str


class EntityOut(ToolResult):
    id: str
    name: str
    type: str


class FactFailure(ToolResult):
    index: int
    error: str


class FactWritten(PlanOut):
    index: int


class FactsOut(ToolResult):
    entity: EntityOut | None = None
    candidates: list[EntityOut] = Field(default_factory=list)
    facts: list[ChainRow] = Field(default_factory=list)
    written: list[FactWritten] = Field(default_factory=list)
    failed: list[FactFailure] = Field(default_factory=list)
    dry_run: bool = False


def _entity_out(e: Entity) -> dict[str, Any]:
    return {"id": str(e.pk), "name": e.name, "type": e.type}


def resolve_entity(
    ctx: ToolContext, *, name: str | None, entity_id: str | None
) -> tuple[Entity | None, list[Entity]]:
    """An entity by id or name without creating one: (found, candidates)."""
    if entity_id:
        found = (
            Entity.objects.filter(space=ctx.space, pk=int(entity_id)).first()
            if entity_id.isdigit()
            else None
        )
        if found is None:
            raise NotFound(f"entity {entity_id} not found")
        return found, []
    if not name or not name.strip():
        raise Invalid("entity: give entity or entity_id")
    found = graph.find_entity(space=ctx.space, name=name)
    if found is not None:
        return found, []
    norm = graph.normalize(name)
    near = list(
        Entity.objects.filter(space=ctx.space, aliases__norm__icontains=norm).distinct()[:8]
    )
    if len(near) == 1:
        return near[0], []
    return None, near


@tool(
    "memory_facts",
    title="Fact chains",
    description=(
        "An entity's fact chain. Read mode: entity (by name; nothing is created on a miss and "
        "an ambiguous name lists candidates) or entity_id, with include_invalid for the full "
        "history and as_of/known_at for a past view. Write mode: facts, up to 50 entries "
        "(entity or entity_id + content; replaces supersedes an older fact by id); a bad entry "
        "lands in failed without stopping the rest."
    ),
    result=FactsOut,
    read_only=False,
    examples=(
        {"entity": "user", "include_invalid": True},
        {"facts": [{"entity": "Anna", "content": "Anna lives in Porto.", "predicate": "lives_in"}]},
    ),
)
def memory_facts(ctx: ToolContext, args: FactsIn) -> dict[str, Any]:
    if args.facts is not None:
        return _write_facts(ctx, args)
    from memory.selectors import facts_in_view
    from memory.timeview import TimeView

    subject = args.entity.strip() if args.entity else ""
    view = TimeView(as_of=args.as_of, known_at=args.known_at, history=args.include_invalid)
    # A linked key reads the chain in both spaces (the user's own facts live
    # in the user space), each row labelled; an entity id names one space's
    # entity, so it is looked up where it exists.
    found: Entity | None = None
    candidates: list[Entity] = []
    rows: list[dict[str, Any]] = []
    for space in ctx.read_spaces:
        here = ToolContext(space=space, actor=ctx.actor)
        entity: Entity | None = None
        if args.entity_id or subject.lower() != "user":
            try:
                entity, near = resolve_entity(here, name=args.entity, entity_id=args.entity_id)
            except NotFound:
                continue
            if entity is None:
                candidates.extend(near)
                continue
            name = entity.name
        else:
            name = subject
        found = found or entity
        chain = facts_in_view(
            space=space, subject=name, predicate=args.predicate, when=view, limit=args.limit
        )
        rows.extend({"space": space.name, **f.as_dict()} for f in chain)
    if args.entity_id and found is None:
        raise NotFound(f"entity {args.entity_id} not found")
    if found is None and subject.lower() != "user":
        return {"candidates": [_entity_out(e) for e in candidates]}
    return {"entity": _entity_out(found) if found else None, "facts": rows[: args.limit]}


def _write_facts(ctx: ToolContext, args: FactsIn) -> dict[str, Any]:
    written: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for index, entry in enumerate(args.facts or []):
        try:
            # A new value supersedes an old one in the old one's space (an id
            # from the linked user space is reached there); otherwise it is
            # written where `scope` says. Its entity is one of that space.
            if entry.replaces:
                old, here = reach_item(ctx, entry.replaces)
            else:
                old, here = None, in_scope(ctx, args.scope)
            if entry.entity_id:
                entity, _ = resolve_entity(here, name=None, entity_id=entry.entity_id)
                subject = entity.name if entity else ""
            elif entry.entity and entry.entity.strip():
                subject = entry.entity.strip()
            else:
                raise Invalid("entity: give entity or entity_id")
            out = _fact(
                here,
                dry_run=args.dry_run,
                text=entry.content,
                subject=subject,
                predicate=entry.predicate or (old.predicate if old else ""),
                object=entry.object,
                valid_from=entry.valid_from,
                **({"replaces": old.pk} if old is not None and _held() else {}),
            )
            if old is not None and out["id"] and str(old.pk) not in out["superseded"]:
                new = MemoryItem.objects.get(pk=int(out["id"]))
                if new.pk != old.pk and facts.supersede(old=old, new=new, actor=ctx.actor):
                    out["superseded"].append(str(old.pk))
            elif old is not None and args.dry_run and str(old.pk) not in out["superseded"]:
                out["superseded"].append(str(old.pk))
            written.append({"index": index, **out})
        except EngramError as exc:
            failed.append({"index": index, "error": exc.detail})
    return {"written": written, "failed": failed, "dry_run": args.dry_run}


# --- memory_report ---------------------------------------------------------------------------

SUCCESS_STEP = 0.05
FAILURE_STEP = -0.1


class ReportIn(ToolArgs):
    id: str | None = Field(
        default=None, min_length=1, max_length=40, description="The entry you relied on."
    )
    skill_id: str | None = Field(
        default=None,
        max_length=40,
        description="Or a skill you used (a memory_search result of type skill): counts the use.",
    )
    outcome: Literal["success", "failure"] | None = Field(
        default=None, description="Did relying on it work? success +0.05, failure -0.1."
    )
    grade: int | None = Field(
        default=None, ge=0, le=5, description="Self-rated recall 0-5 (spaced repetition)."
    )
    note: str = Field(default="", max_length=500, description="Optional: how it went.")
    dry_run: bool = DRY_RUN

    @model_validator(mode="after")
    def _one(self) -> ReportIn:
        if (self.id is None) == (self.skill_id is None):
            raise ValueError("give exactly one of id or skill_id")
        if self.id is not None and (self.outcome is None) == (self.grade is None):
            raise ValueError("give exactly one of outcome or grade")
        return self


class ReportOut(ToolResult):
    id: str
    importance: float | None = None
    grade: int | None = None
    usage_count: int | None = Field(default=None, description="A skill's uses so far.")
    next_due: datetime | None = Field(
        default=None,
        description="Next review date (spaced repetition); null for an entry not under review.",
    )
    dry_run: bool = False


@tool(
    "memory_report",
    title="Report an outcome",
    description=(
        "Report how an entry worked out when you relied on it: outcome success raises its "
        "importance by 0.05, failure lowers it by 0.1 (persistently useless entries decay "
        "away). Or grade your recall of it 0-5 after memory_review_queue (SM-2: the answer "
        "says when it is due again; an outcome moves a scheduled entry's review too). For a "
        "skill you followed, pass skill_id: its use is counted and what it relies on is kept "
        "fresh."
    ),
    result=ReportOut,
    read_only=False,
    examples=(
        {"id": "42", "outcome": "success"},
        {"id": "42", "grade": 4},
        {"skill_id": "7", "note": "worked first time"},
    ),
)
def memory_report(ctx: ToolContext, args: ReportIn) -> dict[str, Any]:
    if args.skill_id is not None:
        return _report_skill(ctx, args)
    item, ctx = reach_item(ctx, args.id or "")
    importance = float(item.importance)
    if args.outcome is not None:
        step = SUCCESS_STEP if args.outcome == "success" else FAILURE_STEP
        importance = round(min(1.0, max(0.0, importance + step)), 4)
    if args.dry_run:
        return {"id": str(item.pk), "importance": importance, "grade": args.grade, "dry_run": True}
    next_due = None
    with transaction.atomic():
        next_due = _reschedule(item, args)
        meta = dict(item.metadata or {})
        reports = meta.setdefault("reports", {"success": 0, "failure": 0})
        if args.outcome is not None:
            reports[args.outcome] = int(reports.get(args.outcome, 0)) + 1
        if args.grade is not None:
            meta["grades"] = ([*meta.get("grades", []), args.grade])[-20:]
        MemoryItem.objects.filter(pk=item.pk).update(importance=importance, metadata=meta)
        audit.record(
            space=ctx.space,
            action="report",
            target_type="item",
            target_id=item.pk,
            actor=ctx.actor,
            outcome=args.outcome,
            grade=args.grade,
            importance=importance,
            **({"note": args.note} if args.note else {}),
        )
    return {"id": str(item.pk), "importance": importance, "grade": args.grade, "next_due": next_due}


def _reschedule(item: MemoryItem, args: ReportIn) -> datetime | None:
    """Advance the entry's SM-2 schedule: a grade always does (grading is
    practising, so it enrols an entry not scheduled yet); an outcome does,
    read as a grade, only for an entry already under review."""
    from memory.services.palace import review

    entry = review.entry_for(item)
    if entry is None:
        return None  # not live: nothing to practise
    if args.grade is not None:
        grade = args.grade
    elif args.outcome is not None and entry.due_at is not None:
        grade = review.OUTCOME_GRADE[args.outcome]
    else:
        return entry.due_at
    return review.record(entry=entry, grade=grade).due_at


def _report_skill(ctx: ToolContext, args: ReportIn) -> dict[str, Any]:
    from memory.models import Skill
    from memory.services import skill_usage

    raw = args.skill_id or ""
    skill = (
        Skill.objects.filter(space=ctx.space, pk=int(raw), enabled=True).first()
        if raw.isdigit()
        else None
    )
    if skill is None:
        raise NotFound(f"no enabled skill {raw} in this space")
    if not args.dry_run:
        skill = skill_usage.report(
            space=ctx.space, skill_id=skill.pk, actor=ctx.actor, note=args.note
        )
    return {"id": str(skill.pk), "usage_count": skill.usage_count, "dry_run": args.dry_run}


# --- memory_ingest_history ---------------------------------------------------------------------


class IngestIn(ToolArgs):
    jsonl: str = Field(
        min_length=1,
        max_length=1_000_000,
        description='Past turns, one JSON object a line: {"session_id", "role", "text", "ts", "ref"}.',
    )
    dry_run: bool = Field(
        default=True, description="Default true: only the estimate. Pass false to store the turns."
    )
    background: bool = Field(
        default=False,
        description="Store the turns in a background job even for a short log (longer ones "
        "always are): the answer then names the job and its status_url.",
    )


class IngestOut(ToolResult):
    dry_run: bool
    turns: int = 0
    sessions: int = 0
    salient: int = 0
    already_present: int = 0
    estimated_llm_calls: int = 0
    created: int = 0
    existing: int = 0
    bad_lines: list[str] = Field(default_factory=list)
    job_id: str | None = Field(
        default=None, description="The background job storing the turns, if one does."
    )
    status_url: str | None = Field(default=None, description="Where the job's progress is shown.")


@tool(
    "memory_ingest_history",
    title="Backfill history",
    description=(
        "Backfill past conversations from JSONL turns (session_id, role, text, ts, ref). "
        "dry_run defaults to true and answers an estimate (turns, salient, already present, "
        "LLM calls); pass dry_run=false to store them: turns already stored are skipped."
    ),
    result=IngestOut,
    read_only=False,
    examples=({"jsonl": '{"session_id": "s1", "role": "user", "text": "I moved to Porto."}'},),
)
def memory_ingest_history(ctx: ToolContext, args: IngestIn) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        path.write_text(args.jsonl, encoding="utf-8")
        if args.dry_run:
            est = history.estimate(space=ctx.space, path=path)
            return {
                "dry_run": True,
                "turns": est.turns,
                "sessions": est.sessions,
                "salient": est.salient,
                "already_present": est.already_present,
                "estimated_llm_calls": est.estimated_llm_calls,
                "bad_lines": [f"line {b.line}: {b.error}" for b in est.bad_lines],
            }
        lines = sum(1 for line in args.jsonl.splitlines() if line.strip())
        if args.background or lines > import_jobs.SYNC_ROWS:
            # Stored by a worker, a batch of turns per transaction, not here.
            job = import_jobs.start(
                space=ctx.space,
                kind=import_jobs.HISTORY,
                data={"jsonl": args.jsonl},
                total=lines,
                actor=ctx.actor,
            )
            view = import_jobs.view(job)
            return {"dry_run": False, "job_id": view["job_id"], "status_url": view["status_url"]}
        result = history.run(space=ctx.space, path=path, actor=ctx.actor)
        return {
            "dry_run": False,
            "created": result.created,
            "existing": result.existing,
            "bad_lines": [f"line {b.line}: {b.error}" for b in result.bad_lines],
        }


__all__ = ["ItemOut", "item_out"]

"""The review queue for agents, tools and people with a key.

GET /review lists what waits for a decision in the key's space: facts held
pending review (`contradiction`: a DEFER that may contradict live facts;
`defer` names the same kind), quarantined entries (`quarantined`) and
proposed writes (`proposal`, ENGRAM_WRITE_APPROVAL). POST
/review/{kind}/{id} decides one through the service the dashboard uses;
each service audits its decision. Ids of another space answer 404."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db.models import QuerySet
from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory import selectors
from memory.errors import Conflict, Invalid, NotFound
from memory.models import CoreBlock, MemoryItem, ProposedWrite, Space
from memory.services import approval, curation, forget, review

router = Router(tags=["review"])

KINDS = ("contradiction", "quarantined", "proposal")
ALIASES = {"defer": "contradiction"}
DECISIONS = {
    "contradiction": ("accept", "reject", "merge"),
    "quarantined": ("release", "delete"),
    "proposal": ("approve", "reject"),
}


class ReviewQuery(Schema):
    kind: str | None = Field(
        default=None, max_length=20, description="contradiction (or defer), quarantined, proposal"
    )
    limit: int = Field(default=50, ge=1, le=200)
    # Bounded so offset + limit stays a 64-bit integer in the SQL.
    offset: int = Field(default=0, ge=0, le=1_000_000_000)


class ProposalOut(Schema):
    target: str = Field(description="core | fact")
    label: str = Field(description="The core block (user | agent); empty for a fact.")
    op: str = Field(description="set (a whole block), save (one entry) or fact")
    payload: dict[str, Any] = Field(description="What approving writes (screened, redacted).")
    proposer: str
    reason: str
    base_version: int | None
    current_version: int | None
    stale: bool = Field(description="The block moved on since it was proposed.")
    diff: str = Field(description="Core: a unified diff against the block as it is now.")
    blocked: str = Field(description="Why approving would fail now; empty when it would not.")


class ReviewItemOut(Schema):
    kind: str
    id: str
    text: str = Field(description="As stored: screened and redacted.")
    created_at: datetime
    decisions: list[str]
    contradicts: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list, description="The screen's reasons.")
    proposal: ProposalOut | None = None


class ReviewPage(Schema):
    count: int = Field(description="Open items of the asked kind (all kinds if none), all pages.")
    counts: dict[str, int]
    items: list[ReviewItemOut]


KindPath = Literal["contradiction", "defer", "quarantined", "proposal"]


class DecisionIn(Schema):
    decision: Literal["accept", "reject", "merge", "release", "delete", "approve"] = Field(
        description="By kind: contradiction accept / reject / merge, quarantined release / "
        "delete, proposal approve / reject."
    )
    into: str | None = Field(
        default=None, max_length=40, description="merge: the id of the fact it says the same as."
    )


class DecisionOut(Schema):
    kind: str
    id: str
    decision: str
    result: dict[str, Any] = Field(default_factory=dict)


def _kind(raw: str) -> str:
    kind = ALIASES.get(raw, raw)
    if kind not in KINDS:
        raise Invalid(f"kind: must be one of {', '.join((*KINDS, *ALIASES))}, not {raw!r}")
    return kind


def _rows(space: Space, kind: str) -> QuerySet[Any]:
    if kind == "contradiction":
        return MemoryItem.objects.filter(
            space=space, status=MemoryItem.Status.PENDING_REVIEW, expired_at=None
        ).order_by("-created_at", "-id")
    if kind == "quarantined":
        return selectors.quarantined_rows(space=space)
    return approval.pending(space=space).order_by("-created_at", "-id")


def _item_out(kind: str, row: Any, blocks: dict[str, CoreBlock]) -> dict[str, Any]:
    if kind == "proposal":
        seen = approval.preview(row, blocks.get(row.label))
        payload = dict(row.payload)
        return {
            "kind": kind,
            "id": str(row.pk),
            "text": str(payload.get("text", "")),
            "created_at": row.created_at,
            "decisions": list(DECISIONS[kind]),
            "reasons": list(row.screen_reasons),
            "proposal": {
                "target": row.target,
                "label": row.label,
                "op": str(payload.get("op", "")),
                "payload": payload,
                "proposer": row.proposer,
                "reason": row.reason,
                "base_version": row.base_version,
                "current_version": seen.current_version,
                "stale": seen.stale,
                "diff": seen.diff,
                "blocked": seen.blocked,
            },
        }
    return {
        "kind": kind,
        "id": str(row.pk),
        "text": row.text,
        "created_at": row.created_at,
        "decisions": list(DECISIONS[kind]),
        "contradicts": [str(i) for i in review.contradicted_ids(row)]
        if kind == "contradiction"
        else [],
        "reasons": list(row.screen_reasons or []) if row.screen_status != "ok" else [],
    }


@router.get("/review", response=ReviewPage)
def list_open(request: SpaceRequest, params: Query[ReviewQuery]) -> dict[str, Any]:
    """What waits for a decision in this space, newest first within each kind
    (contradictions, then quarantined entries, then proposed writes)."""
    space = request.space
    counts = {kind: _rows(space, kind).count() for kind in KINDS}
    kinds = (_kind(params.kind),) if params.kind else KINDS
    # One page across the kinds in order: skip whole kinds the offset passes.
    skip, room, items = params.offset, params.limit, []
    blocks: dict[str, CoreBlock] = {}  # the proposals' blocks, read once per page
    for kind in kinds:
        if room <= 0:
            break
        if skip >= counts[kind]:
            skip -= counts[kind]
            continue
        rows = list(_rows(space, kind)[skip : skip + room])
        if kind == "proposal":
            blocks = approval.blocks_for(space=space, proposals=rows)
        for row in rows:
            row.space = space
            items.append(_item_out(kind, row, blocks))
        room = params.limit - len(items)
        skip = 0
    return {"count": sum(counts[k] for k in kinds), "counts": counts, "items": items}


def _id(raw: str) -> int:
    if not raw.isdigit() or len(raw) > 18:
        raise Invalid(f"id: must be a positive integer, not {raw!r}")
    return int(raw)


def _memory_item(space: Space, raw: str) -> MemoryItem:
    item = MemoryItem.objects.filter(space=space, pk=_id(raw)).first()
    if item is None:
        raise NotFound(f"item {raw} is not in this space")
    return item


def _decide_pending(
    space: Space, item: MemoryItem, payload: DecisionIn, actor: str
) -> dict[str, Any]:
    if payload.decision == "accept":
        return {"superseded": [str(i) for i in review.accept(space=space, item=item, actor=actor)]}
    if payload.decision == "reject":
        return {"forgotten": review.reject(space=space, item=item, actor=actor)}
    if not payload.into:
        raise Invalid("into: required for merge (the id of the fact it says the same as)")
    into = _memory_item(space, payload.into)
    return {"merged_into": str(review.merge(space=space, item=item, into=into, actor=actor).pk)}


def _decide_quarantined(
    space: Space, item: MemoryItem, decision: str, actor: str
) -> dict[str, Any]:
    if item.screen_status != MemoryItem.Screen.FLAGGED or item.status == "forgotten":
        raise Conflict(f"item {item.pk} is not quarantined any more")
    if decision == "release":
        if not curation.release(item=item, actor=actor):
            raise Conflict(f"item {item.pk} was released already")
        return {"released": True}
    return {"forgotten": forget.forget(space=space, item_id=item.pk, actor=actor)}


def _proposal(space: Space, raw: str) -> ProposedWrite:
    proposal = ProposedWrite.objects.filter(space=space, pk=_id(raw)).first()
    if proposal is None:
        raise NotFound(f"proposal {raw} is not in this space")
    return proposal


@router.post("/review/{kind}/{item_id}", response=DecisionOut)
@raises(404, 409)
def decide(
    request: SpaceRequest, kind: KindPath, item_id: str, payload: DecisionIn
) -> dict[str, Any]:
    """Decide one open item. Decisions by kind: contradiction accept / reject
    / merge (with into), quarantined release / delete, proposal approve /
    reject. 404 for an id not in this space, 409 when it was decided already."""
    space, name = request.space, _kind(kind)
    # The id first: another space's id is not found, whatever was asked of it.
    target = _proposal(space, item_id) if name == "proposal" else _memory_item(space, item_id)
    if payload.decision not in DECISIONS[name]:
        raise Invalid(
            f"decision: {payload.decision!r} is not a decision for a {name}; "
            f"one of {', '.join(DECISIONS[name])}"
        )
    actor = f"api:{request.api_key.prefix}"
    result: dict[str, Any]
    if isinstance(target, ProposedWrite):
        if payload.decision == "approve":
            result = {"applied": approval.approve(space=space, proposal=target, actor=actor)}
        else:
            approval.reject(space=space, proposal=target, actor=actor)
            result = {"rejected": True}
    elif name == "contradiction":
        result = _decide_pending(space, target, payload, actor)
    else:
        result = _decide_quarantined(space, target, payload.decision, actor)
    return {"kind": name, "id": item_id, "decision": payload.decision, "result": result}

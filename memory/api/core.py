"""Core memory (L1) blocks: read, write with optimistic locking, history, diff,
undo and rollback. Each operation calls one service in memory.services.core."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from engram_site.bounds import INT64_MAX
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.errors import Conflict, Invalid, NotFound
from memory.models import CoreBlock
from memory.services import approval, core
from memory.tokens import estimate_tokens

router = Router(tags=["core memory"])

LabelPath = Literal["user", "agent"]


class CoreBlockOut(Schema):
    label: str
    text: str
    version: int
    budget_tokens: int
    tokens: int
    usage: float
    updated_at: datetime
    # On writes (PUT, undo, rollback): false when the block was already as
    # asked and no version was made. Absent on reads.
    changed: bool | None = None
    # With ENGRAM_WRITE_APPROVAL=core or all, a write answers 202 with status
    # "proposed": the block above is unchanged until a person approves it.
    status: str | None = Field(default=None, description='"proposed" when held for approval.')
    proposal_id: str | None = None


class CorePutIn(Schema):
    text: str = Field(max_length=32_000)
    expected_version: int | None = Field(
        default=None,
        ge=0,
        le=INT64_MAX,
        description="The version you edited; 409 if the block moved on.",
    )
    reason: str = Field(default="", max_length=200)


class CoreUndoIn(Schema):
    expected_version: int | None = Field(default=None, ge=0, le=INT64_MAX)


class CoreRollbackIn(Schema):
    version: int = Field(
        ge=0, le=INT64_MAX, description="The version whose text to restore (0 = empty)."
    )
    expected_version: int | None = Field(default=None, ge=0, le=INT64_MAX)


class CoreVersionOut(Schema):
    version: int
    text: str
    author: str
    reason: str
    tokens: int
    created_at: datetime


class CoreHistoryQuery(Schema):
    limit: int = Field(default=50, ge=1, le=500)


class CoreDiffQuery(Schema):
    from_version: int = Field(ge=0, le=INT64_MAX, alias="from")
    to_version: int | None = Field(default=None, ge=0, le=INT64_MAX, alias="to")


class CoreDiffOut(Schema):
    label: str
    from_version: int
    to_version: int
    diff: str


def _out(block: CoreBlock) -> dict[str, object]:
    return {
        "label": block.label,
        "text": block.text,
        "version": block.version,
        "budget_tokens": block.budget_tokens,
        "tokens": core.tokens(block=block),
        "usage": core.usage(block=block),
        "updated_at": block.updated_at,
    }


def _author(request: SpaceRequest) -> str:
    return f"api:{request.api_key.prefix}"


Answer = dict[str, object] | Status
WRITE_RESPONSES = {200: CoreBlockOut, 202: CoreBlockOut}


def _propose(
    request: SpaceRequest,
    label: str,
    text: str,
    reason: str,
    expected_version: int | None,
) -> Answer:
    """The write held for a person (ENGRAM_WRITE_APPROVAL): 202 with the
    block as it still is, or 200 unchanged when it already reads so."""
    block, proposal = approval.propose_block_text(
        space=request.space,
        label=label,
        text=text,
        proposer=_author(request),
        reason=reason,
        expected_version=expected_version,
    )
    if proposal is None:
        return {**_out(block), "changed": False}
    return Status(
        202,
        {
            **_out(block),
            "changed": False,
            "status": "proposed",
            "proposal_id": str(proposal.pk),
        },
    )


@router.get("/core", response=list[CoreBlockOut])
def list_blocks(request: SpaceRequest) -> list[dict[str, object]]:
    space = request.space
    return [_out(core.get_block(space=space, label=label)) for label in core.LABELS]


@router.get("/core/{label}", response=CoreBlockOut)
def get_block(request: SpaceRequest, label: LabelPath) -> dict[str, object]:
    return _out(core.get_block(space=request.space, label=label))


@router.put("/core/{label}", response=WRITE_RESPONSES)
@raises(409)
def put_block(request: SpaceRequest, label: LabelPath, payload: CorePutIn) -> Answer:
    space = request.space
    if approval.gates_core():
        return _propose(
            request, label, payload.text, payload.reason or "edit", payload.expected_version
        )
    # Import a pending hand edit first, so a stale expected_version is caught.
    before = core.get_block(space=space, label=label).version
    block = core.set_text(
        space=space,
        label=label,
        text=payload.text,
        author=_author(request),
        reason=payload.reason or "edit",
        expected_version=payload.expected_version,
    )
    return {**_out(block), "changed": block.version != before}


@router.get("/core/{label}/history", response=list[CoreVersionOut])
def block_history(
    request: SpaceRequest, label: LabelPath, params: Query[CoreHistoryQuery]
) -> list[dict[str, object]]:
    block = core.get_block(space=request.space, label=label)
    return [
        {
            "version": v.version,
            "text": v.text,
            "author": v.author,
            "reason": v.reason,
            "tokens": estimate_tokens(v.text),
            "created_at": v.created_at,
        }
        for v in core.history(block=block, limit=params.limit)
    ]


@router.get("/core/{label}/diff", response=CoreDiffOut)
def block_diff(
    request: SpaceRequest, label: LabelPath, params: Query[CoreDiffQuery]
) -> dict[str, object]:
    block = core.get_block(space=request.space, label=label)
    to_version = block.version if params.to_version is None else params.to_version
    return {
        "label": label,
        "from_version": params.from_version,
        "to_version": to_version,
        "diff": core.diff(block=block, from_version=params.from_version, to_version=to_version),
    }


@router.post("/core/{label}/undo", response=WRITE_RESPONSES)
@raises(409)
def undo_block(request: SpaceRequest, label: LabelPath, payload: CoreUndoIn) -> Answer:
    if approval.gates_core():
        block = core.get_block(space=request.space, label=label)
        if block.version == 0:
            raise Invalid(f"the {label} block has no change to undo")
        previous = core.version_text(block=block, version=block.version - 1)
        return _propose(
            request, label, previous, f"undo to v{block.version - 1}", payload.expected_version
        )
    before = core.get_block(space=request.space, label=label).version
    block = core.undo(
        space=request.space,
        label=label,
        author=_author(request),
        expected_version=payload.expected_version,
    )
    return {**_out(block), "changed": block.version != before}


@router.post("/core/{label}/rollback", response=WRITE_RESPONSES)
@raises(409)
def rollback_block(request: SpaceRequest, label: LabelPath, payload: CoreRollbackIn) -> Answer:
    space = request.space
    block = core.get_block(space=space, label=label)
    if payload.expected_version is not None and payload.expected_version != block.version:
        raise Conflict(
            f"the {label} block is at version {block.version}, not {payload.expected_version}"
        )
    if approval.gates_core():
        if payload.version > block.version:
            raise NotFound(f"version {payload.version} of the {label} block does not exist")
        old_text = core.version_text(block=block, version=payload.version)
        return _propose(
            request, label, old_text, f"rollback to v{payload.version}", payload.expected_version
        )
    after = core.rollback(
        space=space, label=label, version=payload.version, author=_author(request)
    )
    return {**_out(after), "changed": after.version != block.version}

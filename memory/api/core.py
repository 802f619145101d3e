"""Core memory (L1) blocks: read, write with optimistic locking, history, diff,
undo and rollback. Each operation calls one service in memory.services.core."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.bounds import INT64_MAX
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.errors import Conflict
from memory.models import CoreBlock
from memory.services import core
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


@router.get("/core", response=list[CoreBlockOut])
def list_blocks(request: SpaceRequest) -> list[dict[str, object]]:
    space = request.space
    return [_out(core.get_block(space=space, label=label)) for label in core.LABELS]


@router.get("/core/{label}", response=CoreBlockOut)
def get_block(request: SpaceRequest, label: LabelPath) -> dict[str, object]:
    return _out(core.get_block(space=request.space, label=label))


@router.put("/core/{label}", response=CoreBlockOut)
@raises(409)
def put_block(request: SpaceRequest, label: LabelPath, payload: CorePutIn) -> dict[str, object]:
    space = request.space
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


@router.post("/core/{label}/undo", response=CoreBlockOut)
@raises(409)
def undo_block(request: SpaceRequest, label: LabelPath, payload: CoreUndoIn) -> dict[str, object]:
    before = core.get_block(space=request.space, label=label).version
    block = core.undo(
        space=request.space,
        label=label,
        author=_author(request),
        expected_version=payload.expected_version,
    )
    return {**_out(block), "changed": block.version != before}


@router.post("/core/{label}/rollback", response=CoreBlockOut)
@raises(409)
def rollback_block(
    request: SpaceRequest, label: LabelPath, payload: CoreRollbackIn
) -> dict[str, object]:
    space = request.space
    block = core.get_block(space=space, label=label)
    if payload.expected_version is not None and payload.expected_version != block.version:
        raise Conflict(
            f"the {label} block is at version {block.version}, not {payload.expected_version}"
        )
    after = core.rollback(
        space=space, label=label, version=payload.version, author=_author(request)
    )
    return {**_out(after), "changed": after.version != block.version}

"""Argument and result pieces shared by the tool modules."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from memory.errors import NotFound
from memory.models import MemoryItem, Space
from memory.schemas import SCOPE_DESCRIPTION, Scope
from memory.services import scopes
from memory.tools.registry import ToolContext, ToolResult

SCOPE = Field(default=None, description=SCOPE_DESCRIPTION)


def in_scope(ctx: ToolContext, scope: str | None) -> ToolContext:
    """The context a write with this `scope` runs in: the same caller, its
    space the one the scope names (a 400 for "user" without a link)."""
    space = scopes.write_space(ctx.space, ctx.user_space, scope)
    if space.pk == ctx.space.pk:
        return ctx
    return ToolContext(space=space, actor=ctx.actor)


__all__ = ["SCOPE", "Scope", "in_scope"]

ResultType = Literal["fact", "turn", "summary", "insight", "skill", "doc"]
ItemId = str


def item_or_404(space: Space, item_id: str) -> MemoryItem:
    """An item of this space by id; any other id (another space's included)
    is simply not found."""
    if not str(item_id).isdigit():
        raise NotFound(f"item {item_id} not found")
    item = MemoryItem.objects.filter(space=space, pk=int(item_id)).first()
    if item is None:
        raise NotFound(f"item {item_id} not found")
    return item


def for_item(ctx: ToolContext, item_id: object) -> ToolContext:
    """The context a by-id operation runs in: the space holding the item
    among the caller's readable ones (scopes.space_for_item), so an id from
    the linked user space is acted on, and audited, there; the same caller
    as actor."""
    space = scopes.space_for_item(ctx.read_spaces, item_id)
    if space.pk == ctx.space.pk:
        return ctx
    return ToolContext(space=space, actor=ctx.actor)


def reach_item(ctx: ToolContext, item_id: str) -> tuple[MemoryItem, ToolContext]:
    """(item, the context to act on it in): an id from the key's own or its
    linked user space; any other id is not found, as a missing one."""
    here = for_item(ctx, item_id)
    return item_or_404(here.space, item_id), here


class ItemOut(ToolResult):
    id: str
    text: str
    kind: str
    status: str
    subject: str = ""
    predicate: str = ""
    object: str = ""
    importance: float
    created_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    expired_at: datetime | None
    superseded_by: str | None
    quarantined: bool = False
    space: str = ""  # the space it lives in: a linked key reads two


def item_out(item: MemoryItem, space: str = "") -> dict[str, Any]:
    return {
        "space": space,
        "id": str(item.pk),
        "text": item.text,
        "kind": item.kind,
        "status": item.status,
        "subject": item.subject,
        "predicate": item.predicate,
        "object": item.object,
        "importance": round(float(item.importance), 4),
        "created_at": item.created_at,
        "valid_from": item.valid_from,
        "valid_to": item.valid_to,
        "expired_at": item.expired_at,
        "superseded_by": str(item.superseded_by_id) if item.superseded_by_id else None,
        "quarantined": item.screen_status != MemoryItem.Screen.OK,
    }


DRY_RUN = Field(default=False, description="Answer the plan and write nothing.")
AS_OF = Field(
    default=None,
    description="ISO date-time, valid time: what was true at that moment, by what is known now.",
)
KNOWN_AT = Field(
    default=None, description="ISO date-time, transaction time: what Engram knew then."
)

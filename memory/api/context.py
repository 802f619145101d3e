"""GET /context: the block an agent puts in its system prompt this turn."""

from __future__ import annotations

from typing import Any

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.bounds import Instant
from engram_site.types import SpaceRequest
from memory.services.context import build_context

router = Router(tags=["context"])


class ContextQuery(Schema):
    query: str | None = Field(
        default=None, max_length=2000, description="This turn's user message, for recall."
    )
    as_of: Instant | None = Field(
        default=None, description="Valid time: recall what was true then, by what is known now."
    )
    known_at: Instant | None = Field(
        default=None, description="Transaction time: recall what Engram knew at that moment."
    )
    session_id: str | None = Field(
        default=None,
        max_length=200,
        description="The conversation: a reminder is added while its searches are unassessed.",
    )


class ContextBlocksOut(Schema):
    core_user: str
    core_agent: str
    environment: str
    palace: str = ""
    recalled: str
    reminder: str = ""


class ContextOut(Schema):
    text: str
    blocks: ContextBlocksOut
    tokens: int
    recall_left_out: bool
    took_ms: float
    degraded: list[str] = Field(
        default_factory=list,
        description='Recall channels left out of this answer, e.g. "provider:<name>" when '
        "an external provider was late or down.",
    )


@router.get("/context", response=ContextOut)
def context(request: SpaceRequest, params: Query[ContextQuery]) -> dict[str, Any]:
    return build_context(
        space=request.space,
        query=params.query,
        as_of=params.as_of,
        known_at=params.known_at,
        session_id=params.session_id,
        user_space=request.user_space,
    )

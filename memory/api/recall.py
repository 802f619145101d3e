"""POST /api/v1/recall and POST /api/v1/memory/search (the agent tool
`memory_search`): the same read-only recall, the same body and answer."""

from __future__ import annotations

from typing import Literal

from ninja import Router, Schema
from pydantic import Field

from engram_site.bounds import Instant
from engram_site.types import SpaceRequest
from memory.schemas import ResultOut
from memory.services import skill_usage
from memory.services.recall import RecallResponse, recall
from memory.services.recall import rewrite as rewrite_queries

router = Router(tags=["recall"])

ResultType = Literal["fact", "turn", "summary", "insight", "skill", "doc", "provider"]


class RecallIn(Schema):
    query: str = Field(max_length=16_000)
    k: int = Field(default=8, ge=1, le=100)
    as_of: Instant | None = Field(
        default=None, description="Valid time: what was true then, by what is known now."
    )
    known_at: Instant | None = Field(
        default=None, description="Transaction time: what Engram knew at that moment."
    )
    include_history: bool = Field(
        default=False, description="Superseded and expired facts too (marked current: false)."
    )
    types: list[ResultType] | None = Field(default=None, max_length=7)
    # LLM multi-query rewrite for this request; unset: ENGRAM_RECALL_REWRITE.
    rewrite: bool | None = None


class RecallOut(Schema):
    results: list[ResultOut]
    took_ms: float
    degraded: list[str] = Field(default_factory=list)


def _answer(request: SpaceRequest, payload: RecallIn) -> RecallResponse:
    response = recall(
        spaces=request.read_spaces,
        query=payload.query,
        k=payload.k,
        as_of=payload.as_of,
        known_at=payload.known_at,
        include_history=payload.include_history,
        types=list(payload.types) if payload.types else None,
        rewrite=rewrite_queries.enabled(payload.rewrite),
    )
    # A skill handed to the agent counts as a use (off the answer's path).
    skill_usage.returned(space_id=request.space.pk, results=response.results)
    return response


@router.post("/recall", response=RecallOut)
def post_recall(request: SpaceRequest, payload: RecallIn) -> RecallResponse:
    return _answer(request, payload)


@router.post("/memory/search", response=RecallOut)
def post_memory_search(request: SpaceRequest, payload: RecallIn) -> RecallResponse:
    return _answer(request, payload)

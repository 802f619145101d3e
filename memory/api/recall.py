"""POST /api/v1/recall and POST /api/v1/memory/search (the agent tool
`memory_search`): the same read-only recall, the same body and answer."""

from __future__ import annotations

import json
from typing import Any, Literal

from django.http import HttpResponse
from ninja import Router, Schema
from ninja.responses import NinjaJSONEncoder
from pydantic import Field

from engram_site.bounds import Instant
from engram_site.types import SpaceRequest
from memory.schemas import ResultOut
from memory.services import skill_usage
from memory.services.recall import RecallResponse, Result, recall
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


def result_data(r: Result) -> dict[str, Any]:
    """One result as ResultOut serialises it (test_recall_answer holds the
    two equal for every result type)."""
    source: dict[str, Any] = {"session_id": r.source.session_id, "turn_refs": r.source.turn_refs}
    if r.source.document_id is not None:
        source |= {
            "document_id": r.source.document_id,
            "title": r.source.title,
            "path": r.source.path,
            "section": r.source.section,
        }
    if r.source.provider is not None:
        source |= {"provider": r.source.provider, "provider_id": r.source.provider_id}
    return {
        "id": r.id,
        "type": r.type,
        "text": r.text,
        "score": float(r.score),
        "channels": {name: float(value) for name, value in r.channels.items()},
        "created_at": r.created_at,
        "valid_from": r.valid_from,
        "valid_to": r.valid_to,
        "source": source,
        "current": r.current,
        "superseded_by": r.superseded_by,
        "space": r.space,
    }


def recall_json(response: RecallResponse) -> HttpResponse:
    """The answer RecallOut documents, serialised directly: validating the
    dataclasses recall() built against the schema took 13% of a recall
    request's interpreter time at 100k + 100k, and proves nothing they do
    not already guarantee."""
    data = {
        "results": [result_data(r) for r in response.results],
        "took_ms": float(response.took_ms),
        "degraded": list(response.degraded),
    }
    return HttpResponse(
        json.dumps(data, cls=NinjaJSONEncoder), content_type="application/json; charset=utf-8"
    )


@router.post("/recall", response=RecallOut)
def post_recall(request: SpaceRequest, payload: RecallIn) -> HttpResponse:
    return recall_json(_answer(request, payload))


@router.post("/memory/search", response=RecallOut)
def post_memory_search(request: SpaceRequest, payload: RecallIn) -> HttpResponse:
    return recall_json(_answer(request, payload))

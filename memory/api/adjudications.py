"""GET /api/v1/adjudications: what the write judge was asked, newest first.

Answers "why was this one deferred" for the key's space: the rules'
decision, the judge's verdict (or why the rules stood), how long it took.
Paged with limit and offset, like GET /consolidation/runs, with the
space's total in `count`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.types import SpaceRequest
from memory.models import Adjudication

router = Router(tags=["memory"])


class AdjudicationQuery(Schema):
    limit: int = Field(default=50, ge=1, le=200)
    # Bounded so offset + limit stays a 64-bit integer in the SQL.
    offset: int = Field(default=0, ge=0, le=1_000_000_000)


class AdjudicationOut(Schema):
    id: int
    kind: str = Field(description="band (merge / accept / defer) or contradiction")
    item_id: int | None = Field(description="The item written or reinforced.")
    candidate_text: str = Field(description="The candidate as screened (redacted).")
    neighbour_ids: list[int]
    similarity: float
    rules_action: str
    verdict: str = Field(description="Empty when the rules stood.")
    action: str = Field(description="What the write did.")
    judge_used: bool
    judge: str
    elapsed_ms: float
    fallback_reason: str
    created_at: datetime


class AdjudicationPage(Schema):
    count: int = Field(description="Adjudications in this space, all pages.")
    adjudications: list[AdjudicationOut]


@router.get("/adjudications", response=AdjudicationPage)
def list_adjudications(request: SpaceRequest, params: Query[AdjudicationQuery]) -> dict[str, Any]:
    """The judge's recent adjudications in this space, newest first."""
    rows = Adjudication.objects.filter(space=request.space)
    # By id: rows written in one transaction share a created_at.
    page = rows.order_by("-id")[params.offset : params.offset + params.limit]
    return {"count": rows.count(), "adjudications": list(page)}

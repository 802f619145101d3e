"""GET /api/v1/adjudications: what the write judge was asked, newest first.

Answers "why was this one deferred" for the key's space: the rules'
decision, the judge's verdict (or why the rules stood), how long it took.
Paged by id (keyset): pass the answer's `next_before` back as `before`;
new rows arriving meanwhile never shift a page."""

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
    before: int | None = Field(
        default=None, ge=1, description="Only rows older than this id: the previous `next_before`."
    )


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
    adjudications: list[AdjudicationOut]
    next_before: int | None = Field(
        description="Pass as `before` for the next page; null at the end."
    )


@router.get("/adjudications", response=AdjudicationPage)
def list_adjudications(request: SpaceRequest, params: Query[AdjudicationQuery]) -> dict[str, Any]:
    """The judge's recent adjudications in this space, newest first."""
    rows = Adjudication.objects.filter(space=request.space)
    if params.before is not None:
        rows = rows.filter(pk__lt=params.before)
    # One more than asked tells whether another page exists.
    page = list(rows.order_by("-id")[: params.limit + 1])
    more = len(page) > params.limit
    page = page[: params.limit]
    return {"adjudications": page, "next_before": page[-1].pk if more else None}

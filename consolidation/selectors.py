"""Reading consolidation runs, always within one space."""

from __future__ import annotations

from consolidation.models import ConsolidationRun
from memory.errors import Invalid, NotFound
from memory.models import Space


def runs(
    *, space: Space, status: str | None = None, limit: int = 20, offset: int = 0
) -> tuple[list[ConsolidationRun], int]:
    qs = ConsolidationRun.objects.filter(space=space)
    if status:
        if status not in ConsolidationRun.Status.values:
            raise Invalid(f"status: must be one of {', '.join(ConsolidationRun.Status.values)}")
        qs = qs.filter(status=status)
    return list(qs.order_by("-created_at", "-pk")[offset : offset + limit]), qs.count()


def get_run(*, space: Space, run_id: int) -> ConsolidationRun:
    run = ConsolidationRun.objects.filter(space=space, pk=run_id).first()
    if run is None:
        raise NotFound(f"consolidation run {run_id} not found")
    return run


def last_run(*, space: Space) -> ConsolidationRun | None:
    return (
        ConsolidationRun.objects.filter(space=space, status=ConsolidationRun.Status.DONE)
        .order_by("-finished_at")
        .first()
    )

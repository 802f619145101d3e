"""Consolidation endpoints: start a run now, list runs, read one."""

from __future__ import annotations

from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from consolidation import selectors, services
from consolidation.models import ConsolidationRun
from consolidation.schemas import ConsolidateIn, ConsolidateOut, RunListOut, RunOut
from engram_site.bounds import DbInt
from engram_site.types import SpaceRequest

router = Router(tags=["consolidation"])


def run_out(run: ConsolidationRun) -> RunOut:
    return RunOut(
        id=run.pk,
        status=run.status,
        trigger=run.trigger,
        report=run.report,
        figures=services.figures(run),
        steps=run.steps or {},
        llm_calls=run.llm_calls,
        errors=run.errors or [],
        duration_seconds=services.duration_seconds(run),
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
    )


@router.post("/consolidate", response={202: ConsolidateOut})
def consolidate(
    request: SpaceRequest, payload: ConsolidateIn | None = None
) -> Status[ConsolidateOut]:
    payload = payload or ConsolidateIn()
    run, created = services.start_run(
        space=request.space,
        trigger="manual",
        only=payload.steps,
        skip=payload.skip,
    )
    return Status(202, ConsolidateOut(run_id=run.pk, status=run.status, created=created))


class RunFilter(Schema):
    limit: int = Field(default=20, ge=1, le=200)
    # Bounded so offset + limit stays a 64-bit integer in the SQL.
    offset: int = Field(default=0, ge=0, le=1_000_000_000)
    status: str | None = Field(default=None, max_length=10)


@router.get("/consolidation/runs", response=RunListOut)
def list_runs(request: SpaceRequest, filters: Query[RunFilter]) -> RunListOut:
    runs, count = selectors.runs(
        space=request.space,
        status=filters.status,
        limit=filters.limit,
        offset=filters.offset,
    )
    return RunListOut(count=count, runs=[run_out(r) for r in runs])


@router.get("/consolidation/runs/{run_id}", response=RunOut)
def get_run(request: SpaceRequest, run_id: DbInt) -> RunOut:
    return run_out(selectors.get_run(space=request.space, run_id=run_id))

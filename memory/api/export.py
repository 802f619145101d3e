"""Export and import of a whole space, and graph-dump import."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpResponse
from ninja import Body, Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from engram_site.bounds import DbInt
from engram_site.openapi import markdown_alternative
from engram_site.types import SpaceRequest
from memory.services import export as export_service
from memory.services.imports import import_graph, import_space
from memory.services.imports import jobs as import_jobs
from memory.services.imports.graph import check_dump
from memory.services.imports.space import check_export, row_count, slices

router = Router(tags=["export"])


class ImportOut(Schema):
    created: dict[str, int]
    skipped: dict[str, int]
    notes: list[str]


class GraphIn(Schema):
    nodes: list[dict[str, Any]] = Field(default_factory=list, max_length=50_000)
    edges: list[dict[str, Any]] = Field(default_factory=list, max_length=200_000)
    dry_run: bool = False
    background: bool = Field(
        default=False,
        description="Run as a background job (202) even for a small dump; large ones always do.",
    )


class GraphImportOut(Schema):
    dry_run: bool
    counts: dict[str, int]


@router.get("/export", response={200: dict[str, Any]}, openapi_extra=markdown_alternative())
def export_space(
    request: SpaceRequest, format: Literal["json", "markdown"] = "json", redacted: bool = False
) -> Any:
    """The whole space as JSON (round-trips through POST /import) or as one
    Markdown document. `redacted=true` masks secrets in every text, for sharing."""
    space = request.space
    if format == "markdown":
        text = export_service.export_markdown(space=space, redacted=redacted)
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="{space.name}.md"'
        return response
    return export_service.export_space(space=space, redacted=redacted)


class ImportJobOut(Schema):
    """A background import: poll `status_url` until `status` is done (the
    counts are then in `result`) or dead (`error` says why)."""

    job_id: str
    kind: str
    status: str = Field(description="pending, running, done or dead")
    status_url: str
    done: int = Field(description="Rows (graph) or slices (export) committed so far.")
    total: int
    counts: dict[str, Any] = Field(description="The counts of what has committed so far.")
    result: dict[str, Any] | None = Field(description="The import's answer, once done.")
    error: str | None
    attempts: int
    created_at: datetime
    finished_at: datetime | None


class ImportQuery(Schema):
    background: bool = Field(
        default=False,
        description=f"Run as a background job (202) even when the export has no more than "
        f"{import_jobs.SYNC_ROWS} rows; larger ones always do.",
    )


@router.post("/import", response={200: ImportOut, 202: ImportJobOut})
def import_export(
    request: SpaceRequest, payload: Body[dict[str, Any]], params: Query[ImportQuery]
) -> Any:
    """Import a JSON export of GET /export. Importing the same file twice adds nothing.
    An export of more than a thousand rows is imported by a background job:
    the answer is then 202 with the job, and GET /import/jobs/{job_id} shows
    its progress."""
    rows = row_count(payload)
    if params.background or rows > import_jobs.SYNC_ROWS:
        check_export(payload)  # a file that is no export is refused now, not later
        job = import_jobs.start(
            space=request.space,
            kind=import_jobs.SPACE,
            data=payload,
            total=len(slices(payload)),
            actor="api",
        )
        return Status(202, import_jobs.view(job))
    report = import_space(space=request.space, data=payload, actor="api")
    return report.as_dict()


@router.post("/import/graph", response={200: GraphImportOut, 202: ImportJobOut})
def import_graph_dump(request: SpaceRequest, payload: GraphIn) -> Any:
    """Import a {nodes, edges} knowledge-graph dump (Cognee's shape); facts get
    source 'import:cognee'. `dry_run` answers the counts without writing.
    A dump of more than a thousand nodes and edges (or `background: true`)
    is imported by a background job: 202 with the job, whose progress
    GET /import/jobs/{job_id} shows and whose `result` is this answer."""
    dump = {"nodes": payload.nodes, "edges": payload.edges}
    nodes, edges = check_dump(dump)  # a bad row is refused now, before any job
    if payload.background or nodes + edges > import_jobs.SYNC_ROWS:
        job = import_jobs.start(
            space=request.space,
            kind=import_jobs.GRAPH,
            data=dump,
            total=nodes + edges,
            dry_run=payload.dry_run,
            actor="api",
        )
        return Status(202, import_jobs.view(job))
    report = import_graph(space=request.space, dump=dump, dry_run=payload.dry_run, actor="api")
    return {"dry_run": report.dry_run, "counts": dict(report.counts)}


@router.get("/import/jobs/{job_id}", response=ImportJobOut)
def import_job(request: SpaceRequest, job_id: DbInt) -> dict[str, Any]:
    """A background import's status and progress."""
    return import_jobs.view(import_jobs.get(space=request.space, job_id=job_id))

"""Export and import of a whole space, and graph-dump import."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpResponse
from ninja import Body, Router, Schema
from pydantic import Field

from engram_site.openapi import markdown_alternative
from engram_site.types import SpaceRequest
from memory.services import export as export_service
from memory.services.imports import import_graph, import_space

router = Router(tags=["export"])


class ImportOut(Schema):
    created: dict[str, int]
    skipped: dict[str, int]
    notes: list[str]


class GraphIn(Schema):
    nodes: list[dict[str, Any]] = Field(default_factory=list, max_length=50_000)
    edges: list[dict[str, Any]] = Field(default_factory=list, max_length=200_000)
    dry_run: bool = False


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


@router.post("/import", response=ImportOut)
def import_export(request: SpaceRequest, payload: Body[dict[str, Any]]) -> dict[str, Any]:
    """Import a JSON export of GET /export. Importing the same file twice adds nothing."""
    report = import_space(space=request.space, data=payload, actor="api")
    return report.as_dict()


@router.post("/import/graph", response=GraphImportOut)
def import_graph_dump(request: SpaceRequest, payload: GraphIn) -> dict[str, Any]:
    """Import a {nodes, edges} knowledge-graph dump (Cognee's shape); facts get
    source 'import:cognee'. `dry_run` answers the counts without writing."""
    report = import_graph(
        space=request.space,
        dump={"nodes": payload.nodes, "edges": payload.edges},
        dry_run=payload.dry_run,
        actor="api",
    )
    return {"dry_run": report.dry_run, "counts": dict(report.counts)}

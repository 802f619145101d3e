"""Project documents: POST/GET /api/v1/documents, GET|DELETE
/api/v1/documents/{id}. Chunks are recalled with type `doc`; a delete is
hard (chunks and every index)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.bounds import DbInt
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.models import Document
from memory.services.documents import store

router = Router(tags=["documents"])


class DocumentIn(Schema):
    title: str = Field(min_length=1, max_length=300)
    text: str = Field(min_length=1, max_length=store.MAX_TEXT_CHARS)
    path: str = Field(
        default="",
        max_length=1000,
        description="Where it came from; posting the same path again replaces that document.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentAdded(Schema):
    id: str
    chunks: int
    quarantined: int = Field(
        default=0, description="Chunks the screen flagged: stored, never recalled."
    )
    changed: bool = Field(description="False when the same content was already stored.")


class DocumentOut(Schema):
    id: str
    title: str
    path: str
    content_hash: str
    metadata: dict[str, Any]
    chunks: int
    quarantined: int
    created_at: datetime
    updated_at: datetime


class ChunkOut(Schema):
    ordinal: int
    section: str
    text: str
    quarantined: bool


class DocumentDetail(DocumentOut):
    sections: list[ChunkOut]


class DocumentsQuery(Schema):
    limit: int = Field(default=50, ge=1, le=200)
    # Bounded so offset + limit stays a 64-bit integer in the SQL.
    offset: int = Field(default=0, ge=0, le=1_000_000_000)


class DocumentPage(Schema):
    count: int = Field(description="Documents in this space, all pages.")
    documents: list[DocumentOut]


class DocumentDeleted(Schema):
    deleted: bool
    chunks: int
    verified: bool
    checked: list[dict[str, Any]]


def _out(doc: Document, chunks: int, quarantined: int) -> dict[str, Any]:
    return {
        "id": str(doc.pk),
        "title": doc.title,
        "path": doc.path,
        "content_hash": doc.content_hash,
        "metadata": doc.metadata,
        "chunks": chunks,
        "quarantined": quarantined,
        "created_at": doc.created_at,
        "updated_at": doc.updated_at,
    }


def _actor(request: SpaceRequest) -> str:
    return f"api:{request.api_key.prefix}"


@router.post("/documents", response={201: DocumentAdded})
@raises(409)
def add_document(request: SpaceRequest, payload: DocumentIn) -> tuple[int, dict[str, Any]]:
    stored = store.add(
        space=request.space,
        title=payload.title,
        text=payload.text,
        path=payload.path,
        metadata=payload.metadata,
        actor=_actor(request),
    )
    return 201, {
        "id": str(stored.document.pk),
        "chunks": stored.chunks,
        "quarantined": stored.quarantined,
        "changed": stored.changed,
    }


@router.get("/documents", response=DocumentPage)
def list_documents(request: SpaceRequest, params: Query[DocumentsQuery]) -> dict[str, Any]:
    """The space's documents, newest first, with their chunk counts."""
    from django.db.models import Count, Q

    rows = Document.objects.filter(space=request.space)
    page = rows.annotate(
        n=Count("chunks"), flagged=Count("chunks", filter=Q(chunks__screen_status="flagged"))
    ).order_by("-id")[params.offset : params.offset + params.limit]
    return {"count": rows.count(), "documents": [_out(d, d.n, d.flagged) for d in page]}


@router.get("/documents/{document_id}", response=DocumentDetail)
def get_document(request: SpaceRequest, document_id: DbInt) -> dict[str, Any]:
    doc = store.get(space=request.space, document_id=document_id)
    chunks = list(
        doc.chunks.order_by("ordinal").values_list("ordinal", "section", "text", "screen_status")
    )
    sections = [
        # A quarantined chunk's text is not handed back through the API.
        {"ordinal": o, "section": sec, "text": t if st == "ok" else "", "quarantined": st != "ok"}
        for o, sec, t, st in chunks
    ]
    flagged = sum(st != "ok" for *_, st in chunks)
    return {**_out(doc, len(sections), flagged), "sections": sections}


@router.delete("/documents/{document_id}", response=DocumentDeleted)
def delete_document(request: SpaceRequest, document_id: DbInt) -> dict[str, Any]:
    doc = store.get(space=request.space, document_id=document_id)
    chunks = doc.chunks.count()
    report = store.delete(document=doc, actor=_actor(request))
    return {"deleted": True, "chunks": chunks, **report}

"""Adding, replacing and deleting project documents.

Every chunk goes through the same screen as any write: secrets redacted,
hidden characters and forged tags stripped; a chunk the screen flags is
stored quarantined (never recalled) and the answer counts it. The same text
posted again under the same path changes nothing (content hash). Vectors are
computed outside the transaction when embeddings are on; a backend that is
down leaves the chunks searchable by words only. Deleting is a hard delete:
the rows go, the full-text index with them (triggers on SQLite, the row's own
tsvector on PostgreSQL), and the vectors live on the rows.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory import embeddings
from memory.errors import Conflict, NotFound
from memory.models import Document, DocumentChunk, Space
from memory.screening import redact_json, screen
from memory.services import audit
from memory.services.documents import chunking
from memory.services.recall import presence

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class Stored:
    document: Document
    chunks: int
    quarantined: int
    changed: bool  # False when the same content was already stored


def content_hash(*, title: str, text: str) -> str:
    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()


def _vectors(texts: list[str]) -> tuple[str, list[bytes | None]]:
    if not embeddings.enabled() or not texts:
        return "", [None] * len(texts)
    try:
        model = embeddings.model_name()
        matrix = embeddings.embed_texts(texts)
        embeddings.check_dimension(model=model, dim=int(matrix.shape[1]))
        return model, [embeddings.to_blob(np.asarray(v)) for v in matrix]
    except embeddings.EmbeddingsUnavailable as exc:
        logger.warning("document chunks stored without vectors: %s", exc)
        return "", [None] * len(texts)


def stale_chunks(*, space_id: int, model: str):  # type: ignore[no-untyped-def]
    """Live chunks of the space with no vector under `model` (stored while
    embeddings were off or down, or under a model since replaced)."""
    return (
        DocumentChunk.objects.filter(space_id=space_id, screen_status="ok")
        .exclude(vec_model=model, vec__isnull=False)
        .order_by("pk")
    )


def reembed_chunks(*, space_id: int, limit: int, batch: int, on_batch=None) -> int:  # type: ignore[no-untyped-def]
    """Embed up to `limit` of the space's stale chunks under the configured
    model, the way add() embeds them (section path, then text), a batch per
    short transaction. Returns how many were embedded."""
    if not embeddings.enabled() or limit <= 0:
        return 0
    model = embeddings.model_name()
    done = 0
    while done < limit:
        rows = list(stale_chunks(space_id=space_id, model=model)[: min(batch, limit - done)])
        if not rows:
            break
        matrix = embeddings.embed_texts([f"{c.section}\n{c.text}".strip() for c in rows])
        embeddings.check_dimension(model=model, dim=int(matrix.shape[1]))
        for chunk, vector in zip(rows, matrix, strict=True):
            chunk.vec_model, chunk.vec = model, embeddings.to_blob(np.asarray(vector))
        with transaction.atomic():
            DocumentChunk.objects.bulk_update(rows, ["vec_model", "vec"])
        done += len(rows)
        if on_batch is not None:
            on_batch(len(rows))
    return done


def add(
    *,
    space: Space,
    title: str,
    text: str,
    path: str = "",
    metadata: dict[str, Any] | None = None,
    fmt: str | None = None,
    actor: str = "system",
) -> Stored:
    """Store a document, or replace the one with the same path."""
    title = screen(title).text[:300] or path or "untitled"
    path = screen(path).text[:1000] if path else ""
    metadata = redact_json(metadata or {})
    digest = content_hash(title=title, text=text)
    existing = Document.objects.filter(space=space, path=path).first() if path else None
    if existing is not None and existing.content_hash == digest:
        counts = existing.chunks.values_list("screen_status", flat=True)
        statuses = list(counts)
        return Stored(existing, len(statuses), statuses.count("flagged"), False)
    kind = fmt or (chunking.format_for(path) if path else None) or chunking.guess_format(text)
    pieces = chunking.chunk(text, fmt=kind)
    screened = [(c.section, screen(c.section).text, screen(c.text)) for c in pieces]
    screened = [s for s in screened if s[2].text]
    # The network call (embedding) before the transaction.
    model, blobs = _vectors([f"{sec}\n{res.text}".strip() for _, sec, res in screened])
    now = timezone.now()
    quarantined = sum(r.flagged for _, _, r in screened)
    try:
        with transaction.atomic():
            doc = _write(
                space, existing, title, path, digest, metadata, screened, model, blobs, now
            )
            audit.record(
                space=space,
                action="document_replace" if existing is not None else "document_add",
                target_type="document",
                target_id=doc.pk,
                actor=actor,
                chunks=len(screened),
                quarantined=quarantined,
            )
    except IntegrityError as exc:
        # Another request stored a document under this path meanwhile.
        raise Conflict(f"a document with path {path!r} was stored at the same time; retry") from exc
    return Stored(doc, len(screened), quarantined, True)


def _write(  # type: ignore[no-untyped-def]
    space: Space,
    existing: Document | None,
    title: str,
    path: str,
    digest: str,
    metadata: dict[str, Any],
    screened,
    model: str,
    blobs: list[bytes | None],
    now,
) -> Document:
    with transaction.atomic():
        if existing is not None:
            doc = existing
            doc.chunks.all().delete()
            doc.title = title
            doc.content_hash = digest
            doc.metadata = metadata
            doc.updated_at = now
            doc.save(update_fields=["title", "content_hash", "metadata", "updated_at"])
        else:
            doc = Document.objects.create(
                space=space,
                title=title,
                path=path,
                content_hash=digest,
                metadata=metadata,
                created_at=now,
                updated_at=now,
            )
        DocumentChunk.objects.bulk_create(
            [
                DocumentChunk(
                    space=space,
                    document=doc,
                    ordinal=n,
                    section=section[:1000],
                    text=result.text,
                    screen_status=result.status,
                    vec_model=model if blob is not None else "",
                    vec=blob,
                )
                for n, ((_, section, result), blob) in enumerate(zip(screened, blobs, strict=True))
            ]
        )
    presence.added("chunk", space.pk)
    return doc


def get(*, space: Space, document_id: int) -> Document:
    found = Document.objects.filter(space=space, pk=document_id).first()
    if found is None:
        raise NotFound(f"document {document_id} not found")
    return found


def delete(*, document: Document, actor: str = "system") -> dict[str, Any]:
    """Hard delete: the document, its chunks, their index entries and
    vectors. Answers what was checked afterwards and what was found."""
    space_id = document.space_id
    chunk_ids = list(document.chunks.values_list("pk", flat=True))
    with transaction.atomic():
        audit.record(
            space=space_id,
            action="document_delete",
            target_type="document",
            target_id=document.pk,
            actor=actor,
            chunks=len(chunk_ids),
        )
        document.delete()
    return verify_deleted(chunk_ids)


def verify_deleted(chunk_ids: list[int]) -> dict[str, Any]:
    """Count what is left of these chunks in every place they were kept."""
    rows = DocumentChunk.objects.filter(pk__in=chunk_ids).count() if chunk_ids else 0
    checked = [{"place": "table", "name": DocumentChunk._meta.db_table, "found": rows}]
    if connection.vendor == "sqlite" and chunk_ids:
        from memory.search import _fts

        fts = _fts.TABLES["chunk"][0]
        checked.append({"place": "fts", "name": fts, "found": _fts.indexed_ids("chunk", chunk_ids)})
    # PostgreSQL keeps the tsvector (and every chunk keeps its vector) on
    # the row itself: no row, no index entry.
    return {"verified": all(c["found"] == 0 for c in checked), "checked": checked}

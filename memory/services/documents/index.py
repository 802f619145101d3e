"""Indexing a folder of documents incrementally.

Each file is one document whose path is relative to the folder (prefixed
when another folder holds that path: _stored_path). A file whose
content hash is unchanged is skipped; a changed one is re-chunked; a document
of this folder whose file is gone is deleted from the index."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory.models import Document, Space
from memory.services.documents import chunking, store

MAX_FILE_BYTES = 10 * 1024 * 1024


@dataclass(slots=True)
class Summary:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0  # chunks written by this run
    quarantined: int = 0
    skipped: list[str] = field(default_factory=list)  # unreadable or too large


def files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and chunking.format_for(p.name)
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def _title(text: str, fmt: str, fallback: str) -> str:
    for c in chunking.chunk(text[:20_000], fmt=fmt):
        if c.section:
            return c.section.split(chunking.SEPARATOR)[0]
    return fallback


def _owner(space: Space, path: str) -> str | None:
    """The folder a stored document at `path` was indexed from ("" for one
    posted over the API), or None when the path is free."""
    meta = (
        Document.objects.filter(space=space, path=path).values_list("metadata", flat=True).first()
    )
    if meta is None:
        return None
    return str(meta.get("root", "")) if meta.get("source") == "index_docs" else ""


def _stored_path(space: Space, rel: str, *, root: Path, origin: str) -> str:
    """A file's document path: relative to its folder, unless another folder
    (or an API client) already holds that path in the space; then prefixed
    with the folder's name, and if that is taken too, with a digest of its
    location, so two folders' README.md never replace each other."""
    candidates = [rel, f"{root.name}/{rel}"]
    candidates.append(f"{root.name}-{hashlib.sha256(origin.encode()).hexdigest()[:8]}/{rel}")
    for candidate in candidates:
        if _owner(space, candidate) in (None, origin):
            return candidate
    return candidates[-1]


def index_folder(
    *,
    space: Space,
    root: Path,
    on_file: Callable[[str], None] | None = None,
    actor: str = "index_docs",
) -> Summary:
    """Index every supported file under `root` into `space`, each under its
    path relative to root. Removal only looks at documents indexed from this
    same folder (their metadata names it)."""
    summary = Summary()
    origin = str(root.resolve())
    seen: set[str] = set()
    for path in files(root):
        rel = _stored_path(space, path.relative_to(root).as_posix(), root=root, origin=origin)
        seen.add(rel)
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError("too large")
            text = path.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            summary.skipped.append(rel)
            if on_file:
                on_file(rel)
            continue
        fmt = chunking.format_for(path.name) or "text"
        existed = Document.objects.filter(space=space, path=rel).exists()
        stored = store.add(
            space=space,
            title=_title(text, fmt, path.stem),
            text=text,
            path=rel,
            metadata={"source": "index_docs", "root": origin},
            fmt=fmt,
            actor=actor,
        )
        if not stored.changed:
            summary.unchanged += 1
        elif existed:
            summary.changed += 1
        else:
            summary.added += 1
        if stored.changed:
            summary.chunks += stored.chunks
            summary.quarantined += stored.quarantined
        if on_file:
            on_file(rel)
    gone = Document.objects.filter(
        space=space, metadata__source="index_docs", metadata__root=origin
    ).exclude(path__in=seen)
    for doc in gone:
        store.delete(document=doc, actor=actor)
        summary.removed += 1
    return summary

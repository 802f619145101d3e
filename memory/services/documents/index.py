"""Indexing a folder of documents incrementally.

Each file is one document whose path is relative to the folder. A file whose
content hash is unchanged is skipped; a changed one is re-chunked; a document
of this folder whose file is gone is deleted from the index."""

from __future__ import annotations

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
        rel = path.relative_to(root).as_posix()
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

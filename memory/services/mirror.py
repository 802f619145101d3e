"""The Markdown mirror of core memory: <MIRROR_DIR>/<space>/USER.md and AGENT.md.

The database is the source of truth; the files let a person read and edit
memory with any editor. Each file is written after every change with its mtime
set to the block's updated_at, so a file whose mtime is newer was edited by a
person and is imported (screened and versioned, author "mirror"). An edit that
is refused (flagged or over budget) is kept beside the file as
USER.md.rejected-<timestamp> and the file is rewritten from the block, so the
refusal is visible and is not retried on every read.

The file body is the block text plus one trailing newline, below one comment
line; normalize() makes writing and reading it back an identity.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memory.errors import Conflict, Invalid
from memory.models import CoreBlock, Space
from memory.services import audit

log = logging.getLogger(__name__)

FILENAMES = {"user": "USER.md", "agent": "AGENT.md"}
_HEADER_PREFIX = "<!-- engram core memory"
# mtimes within this many seconds of updated_at count as our own write
# (filesystems with coarse timestamps round them).
_MTIME_SLACK = 0.001


def space_dir(space: Space) -> Path:
    return Path(settings.ENGRAM["MIRROR_DIR"]) / space.name


def path_for(*, space: Space, label: str) -> Path:
    return space_dir(space) / FILENAMES[label]


def _header(label: str) -> str:
    return (
        f"{_HEADER_PREFIX}: the {label} block, one entry per line. "
        "Edit freely; your changes are imported. -->"
    )


def render(*, label: str, text: str) -> str:
    return f"{_header(label)}\n{text}\n"


def parse(content: str) -> str:
    """The block text held in a mirror file (the header line is optional)."""
    from memory.services.core import normalize

    lines = content.replace("\r\n", "\n").split("\n")
    if lines and lines[0].startswith(_HEADER_PREFIX) and lines[0].rstrip().endswith("-->"):
        lines = lines[1:]
    return normalize("\n".join(lines))


def _write_file(path: Path, content: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write to a temporary file and rename, so a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(content)
        os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_local = threading.local()


@contextmanager
def deferred() -> Iterator[None]:
    """Inside the block, write_block() by id only notes the block; each noted
    block's file is written once, from the database, when the block ends. A
    worker running a chunk of turns may change the same core block with
    every one of them, and each file write is a rename (milliseconds on some
    filesystems); the file is then at most one chunk behind the database,
    which stays the source of truth."""
    outer = getattr(_local, "pending", None)
    pending: dict[int, None] = {}
    _local.pending = pending
    try:
        yield
    finally:
        _local.pending = outer
        for block_id in pending:
            write_block(block_id=block_id)


def write_block(*, block_id: int | None = None, block: CoreBlock | None = None) -> Path | None:
    """Write one block's file from the database (called after every change)."""
    pending: dict[int, None] | None = getattr(_local, "pending", None)
    if block is None and block_id is not None and pending is not None:
        pending[block_id] = None
        return None
    if block is None:
        if block_id is None:
            return None
        block = CoreBlock.objects.select_related("space").filter(pk=block_id).first()
        if block is None:
            return None
    path = path_for(space=block.space, label=block.label)
    try:
        _write_file(path, render(label=block.label, text=block.text), block.updated_at.timestamp())
    except OSError:
        # The mirror is a convenience; the database write already succeeded.
        log.exception("could not write the core memory mirror %s", path)
        return None
    return path


def _reject(*, block: CoreBlock, path: Path, why: str) -> None:
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
    kept = path.with_name(f"{path.name}.rejected-{stamp}")
    try:
        shutil.copy2(path, kept)
    except OSError:
        log.exception("could not keep the rejected mirror edit %s", path)
    audit.record(
        space=block.space_id,
        action="refuse",
        target_type="core",
        target_id=block.label,
        actor="mirror",
        reason=why[:300],
        kept_as=kept.name,
    )
    write_block(block=block)


def import_if_newer(*, block: CoreBlock) -> CoreBlock:
    """Import the block's mirror file if a person edited it after the block's
    last change. Costs one stat() when nothing changed."""
    from memory.services import core

    path = path_for(space=block.space, label=block.label)
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        if block.version > 0:
            # Deleted by hand or never written: put it back, but treat a missing
            # file as "no edit", not as "empty the block".
            write_block(block=block)
        return block
    except OSError:
        return block
    if mtime <= block.updated_at.timestamp() + _MTIME_SLACK:
        return block
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _reject(block=block, path=path, why=f"unreadable: {exc}")
        return block
    text = parse(content)
    if text == block.text:
        # Touched but not changed: adopt the file's mtime check point.
        write_block(block=block)
        return block
    try:
        return core.set_text(
            space=block.space,
            label=block.label,
            text=text,
            author="mirror",
            reason=f"edited in {path.name}",
            expected_version=block.version,
        )
    except Conflict:
        # Another request imported it first; that result is current.
        return core.load_block(space=block.space, label=block.label)
    except Invalid as exc:
        _reject(block=block, path=path, why=exc.detail)
        return core.load_block(space=block.space, label=block.label)


def sync_space(*, space: Space) -> int:
    """Import hand edits of one space's mirror files; returns how many blocks changed."""
    from memory.services import core

    changed = 0
    for label in core.LABELS:
        before = core.load_block(space=space, label=label)
        version = before.version
        after = import_if_newer(block=before)
        changed += after.version != version
    return changed


def sync_all() -> int:
    """For the consolidator and beat: import hand edits of every space whose
    mirror directory exists."""
    root = Path(settings.ENGRAM["MIRROR_DIR"])
    if not root.is_dir():
        return 0
    names = [p.name for p in root.iterdir() if p.is_dir()]
    return sum(sync_space(space=s) for s in Space.objects.filter(name__in=names))


def remove_space(*, space: Space) -> None:
    shutil.rmtree(space_dir(space), ignore_errors=True)


def scrub_rejected(*, space: Space, texts: list[str]) -> int:
    """Delete the kept copies of refused edits (USER.md.rejected-...) that
    hold any of `texts`: after a hard forget they are the last copy."""
    needles = [t.encode() for t in texts if t.strip()]
    removed = 0
    folder = space_dir(space)
    if not folder.is_dir() or not needles:
        return 0
    for path in folder.glob("*.rejected-*"):
        try:
            if any(n in path.read_bytes() for n in needles):
                path.unlink()
                removed += 1
        except OSError:
            log.exception("could not scrub the rejected mirror edit %s", path)
    return removed

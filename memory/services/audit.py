"""The audit log: one call for every add/update/delete/expire/forget/edit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memory.models import AuditEvent, Space
from memory.screening import redact_json

_local = threading.local()

# Detail keys whose values are identifiers or digests, never user text.
KEEP_KEYS = frozenset({"uid", "uids", "content_hash", "hash", "digest", "sha256", "format"})


@contextmanager
def batched() -> Iterator[list[AuditEvent]]:
    """Collect the events recorded inside the block instead of inserting each
    one; the caller inserts the list (with its own) in one statement before
    its transaction commits. The write pipeline records several events per
    turn while it holds the database's write lock."""
    outer = getattr(_local, "buffer", None)
    buffer: list[AuditEvent] = []
    _local.buffer = buffer
    try:
        yield buffer
    finally:
        _local.buffer = outer


def event(
    *,
    space: Space | int,
    action: str,
    target_type: str,
    target_id: object = "",
    actor: str = "system",
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """An unsaved audit event, its details redacted like every other write:
    a preview, a forget query or a reason may quote a secret or an address,
    and the log outlives what it describes. Every event is built here."""
    space_id = space if isinstance(space, int) else space.pk
    return AuditEvent(
        space_id=space_id,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        actor=actor,
        detail=redact_json(detail or {}, keep_keys=KEEP_KEYS),
    )


def record(
    *,
    space: Space | int,
    action: str,
    target_type: str,
    target_id: object = "",
    actor: str = "system",
    **detail: Any,
) -> AuditEvent:
    built = event(
        space=space,
        action=action,
        target_type=target_type,
        target_id=target_id,
        actor=actor,
        detail=detail,
    )
    buffer: list[AuditEvent] | None = getattr(_local, "buffer", None)
    if buffer is not None:
        buffer.append(built)  # inserted by the caller of batched()
    else:
        built.save(force_insert=True)
    return built


def record_admin(
    *, space_id: int, action: str, obj_label: str, pk: object, actor: str, **detail: Any
) -> None:
    """A save or delete made in the Django admin. Names the model and, for an
    edit, the fields that changed; never their values, since a deletion there
    may be someone forgetting something."""
    record(
        space=space_id,
        action=action,
        target_type=obj_label.split(".")[-1].lower(),
        target_id=pk,
        actor=actor,
        model=obj_label,
        **detail,
    )

"""The audit log: one call for every add/update/delete/expire/forget/edit."""

from __future__ import annotations

from typing import Any

from memory.models import AuditEvent, Space


def record(
    *,
    space: Space | int,
    action: str,
    target_type: str,
    target_id: object = "",
    actor: str = "system",
    **detail: Any,
) -> AuditEvent:
    space_id = space if isinstance(space, int) else space.pk
    return AuditEvent.objects.create(
        space_id=space_id,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        actor=actor,
        detail=detail,
    )

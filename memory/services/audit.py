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

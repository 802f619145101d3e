"""Reads of L5 snapshots."""

from __future__ import annotations

from environment.models import EnvironmentSnapshot
from memory.models import Space


def latest_probe() -> EnvironmentSnapshot | None:
    """The newest snapshot of the server host."""
    return (
        EnvironmentSnapshot.objects.filter(space=None, source="probe")
        .order_by("-created_at", "-id")
        .first()
    )


def latest_agent(*, space: Space, hostname: str | None = None) -> EnvironmentSnapshot | None:
    """The newest host an agent of this space reported (optionally: by name)."""
    qs = EnvironmentSnapshot.objects.filter(space=space, source="agent")
    if hostname is not None:
        qs = qs.filter(hostname=hostname)
    return qs.order_by("-created_at", "-id").first()

"""Reads of L5 snapshots. Both run on every /context of a space that may
see its host, so each is one hand-written statement (engram_site/db/rows.py
says why)."""

from __future__ import annotations

from typing import Any

from engram_site.db import batch, rows
from environment.models import EnvironmentSnapshot
from memory.models import Space


def latest_probe() -> EnvironmentSnapshot | None:
    """The newest snapshot of the server host."""
    return _newest("space_id IS NULL AND source = %s", ["probe"])


def latest_agent(*, space: Space, hostname: str | None = None) -> EnvironmentSnapshot | None:
    """The newest host an agent of this space reported (optionally: by name)."""
    if hostname is None:
        return _newest("space_id = %s AND source = %s", [space.pk, "agent"])
    return _newest("space_id = %s AND source = %s AND hostname = %s", [space.pk, "agent", hostname])


def latest_agent_read(*, space: Space) -> batch.Read[EnvironmentSnapshot | None]:
    """`latest_agent` as a read to send with others (engram_site/db/batch.py)."""
    return _newest_read("space_id = %s AND source = %s", [space.pk, "agent"])


def _newest(where: str, params: list[Any]) -> EnvironmentSnapshot | None:
    return batch.one(_newest_read(where, params))


def _newest_read(where: str, params: list[Any]) -> batch.Read[EnvironmentSnapshot | None]:
    return rows.first_read(EnvironmentSnapshot, where, params, order="t.created_at DESC, t.id DESC")

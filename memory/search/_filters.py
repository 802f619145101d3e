"""Which rows a search may return: the one definition both backends use, so
SQLite and PostgreSQL can never disagree about what is live or what was
known at `as_of`. Column names only; every value is a bound parameter."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def row_filters(
    target: str, *, prefix: str, space_id: int, live_only: bool, as_of: datetime | None
) -> tuple[list[str], list[Any]]:
    """(SQL conditions on the content table's columns, their parameters)."""
    c = prefix
    where = [f"{c}space_id = %s"]
    params: list[Any] = [space_id]
    if target in ("item", "turn"):
        where.append(f"{c}screen_status = 'ok'")
    if target == "item":
        if as_of is not None:
            where.append(f"{c}created_at <= %s AND ({c}expired_at IS NULL OR {c}expired_at > %s)")
            where.append(f"{c}status IN ('active', 'pending_review')")
            params += [as_of, as_of]
        elif live_only:
            where.append(f"{c}expired_at IS NULL AND {c}status = 'active'")
    elif as_of is not None:
        where.append(f"{c}created_at <= %s")
        params.append(as_of)
    return where, params

"""The search facade: full-text search over items, turns and summaries.

Callers never see SQL. SQLite uses FTS5 (memory/search/_fts.py, the only module
with FTS SQL); PostgreSQL uses its own full-text search (_pg.py). Both take the
user's raw query, turn it into safe terms and bind it as a parameter, so quotes,
operators, punctuation, emoji and empty strings never raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from django.db import connection

from memory.search.query import query_terms

Target = Literal["item", "turn", "summary"]

__all__ = ["Hit", "Target", "query_terms", "search"]


@dataclass(frozen=True, slots=True)
class Hit:
    id: int
    score: float  # higher is better, comparable only within one call


def _backend():  # type: ignore[no-untyped-def]
    if connection.vendor == "postgresql":
        from memory.search import _pg as backend
    else:
        from memory.search import _fts as backend
    return backend


def search(
    target: Target,
    *,
    space_id: int,
    query: str,
    limit: int = 50,
    live_only: bool = True,
    as_of: datetime | None = None,
) -> list[Hit]:
    """Rank rows of `target` in one space against `query`, best first.

    For items, `live_only` keeps active, unexpired, unquarantined facts; with
    `as_of` it keeps what was known by then and not yet expired at that time
    (valid-time filtering is the caller's, on the rows it loads)."""
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    return _backend().search(
        target, space_id=space_id, terms=terms, limit=limit, live_only=live_only, as_of=as_of
    )

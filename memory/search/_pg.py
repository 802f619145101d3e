"""PostgreSQL full-text search behind the same facade as FTS5.

Expression GIN indexes over to_tsvector('english', ...) (created in migrations)
keep the index in sync with the rows by definition. Terms are word characters
only and reach to_tsquery as one bound parameter, each quoted as a lexeme."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.db import connection

if TYPE_CHECKING:
    from memory.search import Hit, Target

TABLES = {"item": "memory_memoryitem", "turn": "memory_turn", "summary": "memory_sessionsummary"}

VECTORS = {
    "item": (
        "setweight(to_tsvector('english', coalesce(text, '')), 'A') || "
        "setweight(to_tsvector('english', coalesce(subject, '') || ' ' || coalesce(object, '')), 'B')"
    ),
    "turn": "to_tsvector('english', coalesce(text, ''))",
    "summary": "to_tsvector('english', coalesce(text, ''))",
}


def tsquery(terms: list[str]) -> str:
    return " | ".join("'" + t.replace("'", "''").replace("\\", "") + "'" for t in terms)


def search(
    target: Target,
    *,
    space_id: int,
    terms: list[str],
    limit: int,
    live_only: bool,
    as_of: datetime | None,
) -> list[Hit]:
    from memory.search import Hit

    table = TABLES[target]
    vector = VECTORS[target]
    where = ["space_id = %s"]
    params: list[object] = [tsquery(terms), space_id]
    if target == "item":
        where.append("screen_status = 'ok'")
        if as_of is not None:
            where.append("created_at <= %s AND (expired_at IS NULL OR expired_at > %s)")
            where.append("status IN ('active', 'pending_review')")
            params += [as_of, as_of]
        elif live_only:
            where.append("expired_at IS NULL AND status = 'active'")
    elif target == "turn":
        where.append("screen_status = 'ok'")
        if as_of is not None:
            where.append("created_at <= %s")
            params.append(as_of)
    elif as_of is not None:
        where.append("created_at <= %s")
        params.append(as_of)
    params.append(limit)
    sql = (
        f"WITH q AS (SELECT to_tsquery('english', %s) AS query) "
        f"SELECT id, ts_rank_cd({vector}, q.query, 1) AS rank FROM {table}, q "
        f"WHERE ({vector}) @@ q.query AND {' AND '.join(where)} "
        "ORDER BY rank DESC, id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=float(row[1])) for row in rows]


def doc_frequency(target: Target, *, term: str, cap: int) -> int:
    """Rows (all spaces) containing `term`, counted up to `cap` via the GIN index."""
    table = TABLES[target]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} "
            f"WHERE ({VECTORS[target]}) @@ to_tsquery('english', %s) LIMIT %s) AS t",
            [tsquery([term]), cap],
        )
        return int(cursor.fetchone()[0])


def create_sql(target: str) -> list[str]:
    return [
        f"CREATE INDEX IF NOT EXISTS {TABLES[target]}_fts_gin ON {TABLES[target]} "
        f"USING GIN (({VECTORS[target]}))"
    ]


def drop_sql(target: str) -> list[str]:
    return [f"DROP INDEX IF EXISTS {TABLES[target]}_fts_gin"]

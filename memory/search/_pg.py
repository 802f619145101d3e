"""PostgreSQL full-text search behind the same facade as FTS5.

Each searchable table carries a stored generated tsvector column (COLUMN,
added by migration 0003 on PostgreSQL only) with a GIN index on it. Postgres
computes it on every INSERT/UPDATE, so it is in sync with the row by
definition, and ranking reads the parsed vector instead of running
to_tsvector over the text of every matching row (which is what made ranking
slow with the earlier expression indexes). The column is not part of the
Django models: the ORM names the columns it selects and inserts, so it never
reads or writes it. Terms are word characters only and reach to_tsquery as
one bound parameter, each quoted as a lexeme."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db import connection

from memory.search._filters import row_filters
from memory.timeview import TimeView

if TYPE_CHECKING:
    from memory.search import Hit, Target

TABLES = {
    "item": "memory_memoryitem",
    "turn": "memory_turn",
    "summary": "memory_sessionsummary",
    "chunk": "memory_documentchunk",
}

VECTORS = {
    "item": (
        "setweight(to_tsvector('english', coalesce(text, '')), 'A') || "
        "setweight(to_tsvector('english', coalesce(subject, '') || ' ' || coalesce(object, '')), 'B')"
    ),
    "turn": "to_tsvector('english', coalesce(text, ''))",
    "summary": "to_tsvector('english', coalesce(text, ''))",
    "chunk": (
        "setweight(to_tsvector('english', coalesce(text, '')), 'A') || "
        "setweight(to_tsvector('english', coalesce(section, '')), 'B')"
    ),
}


# The stored, generated tsvector column on each table (raw SQL only).
COLUMN = "search_tsv"


def tsquery(terms: list[str]) -> str:
    return " | ".join("'" + t.replace("'", "''").replace("\\", "") + "'" for t in terms)


def search(
    target: Target,
    *,
    space_id: int,
    terms: list[str],
    limit: int,
    live_only: bool,
    when: TimeView | None,
    scan_cap: int,
    matches: int | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[Hit]:
    from memory.search import Hit

    table = TABLES[target]
    where, filter_params = row_filters(
        target, prefix="", space_id=space_id, live_only=live_only, when=when
    )
    query = tsquery(terms)
    # Rank only the newest scan_cap matches of the space (see SCAN_CAP in the
    # facade): a top-N by id is cheap, ranking every match is not. The
    # tsquery is written inline (not in a CTE) so the planner sees it and can
    # use the column's statistics: for a rare term it reads the GIN index, for
    # a term in most rows it walks the primary key backwards and stops at the
    # cap, instead of fetching every match through a bitmap.
    matched = (
        f"SELECT id, {COLUMN} AS tsv FROM {table} "
        f"WHERE {COLUMN} @@ to_tsquery('english', %s) AND {' AND '.join(where)} "
        "ORDER BY id DESC LIMIT %s"
    )
    if weights:
        rank, rank_params, per_term = _weighted_rank([t for t in terms if t in weights], weights)
        # In the order of the placeholders: rank weights, match, filters, cap,
        # each term's query, limit.
        params: list[Any] = [*rank_params, query, *filter_params, scan_cap, *per_term, limit]
        terms_sql = ", ".join(f"to_tsquery('english', %s) AS q{i}" for i in range(len(per_term)))
        sql = (
            f"SELECT id, {rank} AS rank FROM ({matched}) AS m, (SELECT {terms_sql}) AS q "
            "ORDER BY rank DESC, id LIMIT %s"
        )
    else:
        params = [query, query, *filter_params, scan_cap, limit]
        sql = (
            f"SELECT id, ts_rank_cd(tsv, to_tsquery('english', %s), 1) AS rank "
            f"FROM ({matched}) AS m ORDER BY rank DESC, id LIMIT %s"
        )
    with connection.cursor() as cursor:
        if matches is not None and matches <= BITMAP_FACTOR * scan_cap and _client_binding():
            rows = _without_index_walks(cursor, sql, params)
        else:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    return [Hit(id=row[0], score=float(row[1])) for row in rows]


def _weighted_rank(
    terms: list[str], weights: Mapping[str, float]
) -> tuple[str, list[Any], list[str]]:
    """The rank of a row `tsv` as SQL: the IDF of each query term it holds,
    summed, over 1 + ln(its length in lexemes), the length normalisation
    ts_rank_cd's option 1 applies. ts_rank_cd itself knows no IDF (a word in
    every fact counts as much as a name in one) and reads each row's
    positions to find covers: at 100k facts it took about 4 us a row, 2 ms
    of a recall's 4 ms in PostgreSQL, where testing a term is a binary
    search of the row's sorted lexemes. (SQL, its weights, each term's
    tsquery.)"""
    held = " + ".join(f"%s::float8 * (tsv @@ q.q{i})::int" for i in range(len(terms)))
    sql = f"(({held}) / (1 + ln(greatest(length(tsv), 1))))"
    return sql, [weights[t] for t in terms], [tsquery([t]) for t in terms]


# When the caller knows the terms match few of the space's rows, the matches
# are best fetched through the GIN index (with the space_id index ANDed in as
# a bitmap), which the planner underrates: it prices testing a row's tsvector
# as nearly free, so it walks the primary key backwards over every space's
# rows, or reads the whole of a small space through its space_id index,
# testing each. Measured at 100k + 100k beside a 10k + 10k space
# (EXPLAIN ANALYZE): a term in 4,500 of the big space's turns 24.9 -> 15.7 ms,
# three terms in 582 of the small space's turns 10.5 -> 5.5 ms. A term in most
# rows keeps the walk, which stops after scan_cap matches where a bitmap would
# fetch them all; the walk wins once matches exceed about sqrt(scan_cap x
# table rows), 15k here, so this bound (8k at the full cap) stays below it.
BITMAP_FACTOR = 4


def _client_binding() -> bool:
    # Django's default for psycopg; with server-side binding, one statement
    # per round trip, and the planner keeps its own plan.
    return not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding")


def _without_index_walks(cursor: Any, sql: str, params: list[Any]) -> list[Any]:
    """Run the search with plain index scans off (bitmap scans stay on), for
    this statement only. The three statements go in one round trip, which
    client-side binding allows; they run as one implicit transaction, so a
    failing search leaves the setting as it was."""
    cursor.execute(f"SET enable_indexscan = off; {sql}; RESET enable_indexscan", params)
    cursor.nextset()
    return list(cursor.fetchall())


def doc_frequency(target: Target, *, space_id: int, term: str, cap: int) -> int:
    """Rows of one space containing `term`, counted up to `cap` via the GIN index."""
    table = TABLES[target]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} "
            f"WHERE {COLUMN} @@ to_tsquery('english', %s) AND space_id = %s LIMIT %s) AS t",
            [tsquery([term]), space_id, cap],
        )
        return int(cursor.fetchone()[0])


# --- schema, used by migrations -------------------------------------------------------


def create_sql(target: str) -> list[str]:
    """Migration 0002: the original expression GIN index (superseded by 0003)."""
    return [
        f"CREATE INDEX IF NOT EXISTS {TABLES[target]}_fts_gin ON {TABLES[target]} "
        f"USING GIN (({VECTORS[target]}))"
    ]


def drop_sql(target: str) -> list[str]:
    return [f"DROP INDEX IF EXISTS {TABLES[target]}_fts_gin"]


def create_column_sql(target: str) -> list[str]:
    """Migration 0003: the stored tsvector column and its GIN index, replacing
    the expression index (adding the column computes it for existing rows)."""
    table = TABLES[target]
    return [
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {COLUMN} tsvector "
        f"GENERATED ALWAYS AS ({VECTORS[target]}) STORED",
        # fastupdate off: with it on, new rows wait in a pending list that
        # every search scans linearly until a vacuum merges it (measured: 7 ms
        # per lookup after a bulk load, 0.05 ms once merged). Writes pay the
        # GIN update at insert time instead, off the read path.
        f"CREATE INDEX IF NOT EXISTS {table}_tsv_gin ON {table} USING GIN ({COLUMN}) "
        "WITH (fastupdate = off)",
        *drop_sql(target),
    ]


def drop_column_sql(target: str) -> list[str]:
    table = TABLES[target]
    return [
        *create_sql(target),
        f"DROP INDEX IF EXISTS {table}_tsv_gin",
        f"ALTER TABLE {table} DROP COLUMN IF EXISTS {COLUMN}",
    ]

"""SQLite FTS5: the only module in Engram that writes full-text SQL.

The FTS tables are external-content tables over the model tables, kept in
sync by triggers created in migrations, so ORM writes, bulk writes and deletes
all stay indexed. Terms reach MATCH as one bound parameter, each term quoted as
an FTS5 string, so user text is never parsed as query syntax."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db import connection

from memory.search._filters import row_filters
from memory.timeview import TimeView

if TYPE_CHECKING:
    from memory.search import Hit, Target

TABLES: dict[str, tuple[str, str]] = {
    # target: (fts table, content table)
    "item": ("memory_item_fts", "memory_memoryitem"),
    "turn": ("memory_turn_fts", "memory_turn"),
    "summary": ("memory_summary_fts", "memory_sessionsummary"),
    "chunk": ("memory_chunk_fts", "memory_documentchunk"),
}

TOKENIZE = "porter unicode61 remove_diacritics 2"

# Each row FTS5 matches is checked against the content table's filter columns
# (space, screening, liveness). A covering index on them answers that check
# without reading the wide row and its text: turn search at 100k turns went
# from 3.6 to 2.4 ms. Named with INDEXED BY, because without ANALYZE
# statistics (which nothing gathers on a running server) SQLite's planner
# reads the table row instead.
_FILTER_COLUMNS = {
    "item": ("id", "space_id", "screen_status", "status", "expired_at", "created_at"),
    "turn": ("id", "space_id", "screen_status", "created_at"),
}


def _filter_index(target: str) -> str:
    return f"{TABLES[target][1]}_fts_filter"


def _indexed_by(target: str) -> str:
    return f" INDEXED BY {_filter_index(target)}" if target in _FILTER_COLUMNS else ""


# Column weights for bm25(): for items the text matters most, then subject/object.
_BM25 = {
    "item": "bm25(memory_item_fts, 1.0, 0.5, 0.5)",
    "turn": "bm25(memory_turn_fts)",
    "summary": "bm25(memory_summary_fts)",
    # Document chunks: the text, then the section path ("Install > Docker").
    "chunk": "bm25(memory_chunk_fts, 1.0, 0.5)",
}


# One FTS index serves every space, so a space with few matches would walk
# every other space's matches too; bounding the walk to the space's first and
# last id (two index seeks, which FTS5 takes as a rowid range) spares a small
# space the work of a big one beside it. Parameters: the space id, twice.
_SPACE_RANGE = (
    "AND {fts}.rowid >= (SELECT min(id) FROM {content} WHERE space_id = %s) "
    "AND {fts}.rowid <= (SELECT max(id) FROM {content} WHERE space_id = %s)"
)


def match_expression(terms: list[str]) -> str:
    # Each term becomes an FTS5 string literal ("" escapes a quote), ORed.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


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
    # `matches` (how many rows the terms match, when known) is for backends
    # that choose a plan by it; FTS5's walk of the match is the same either way.
    # `weights` (each term's IDF in the space) is for backends that cannot
    # weigh terms themselves; FTS5's bm25() does.
    from memory.search import Hit

    sql, params = search_sql(
        target,
        space_id=space_id,
        terms=terms,
        limit=limit,
        live_only=live_only,
        when=when,
        scan_cap=scan_cap,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # bm25() is lower-is-better and negative; flip it so higher is better.
    return [Hit(id=row[0], score=-float(row[1])) for row in rows]


def search_sql(
    target: Target,
    *,
    space_id: int,
    terms: list[str],
    limit: int,
    live_only: bool,
    when: TimeView | None,
    scan_cap: int,
) -> tuple[str, list[Any]]:
    fts, content = TABLES[target]
    where, filter_params = row_filters(
        target, prefix="c.", space_id=space_id, live_only=live_only, when=when
    )
    params: list[Any] = [match_expression(terms), space_id, space_id, *filter_params]
    params += [scan_cap, limit]
    # The inner query walks the match in descending rowid order, which FTS5
    # does without sorting, so LIMIT stops it after scan_cap rows of this space
    # and bm25() (a docsize lookup per row) runs only on those; the outer one
    # ranks them. Ties go to the lower id, so the order is deterministic.
    # The walk is bounded to the space's id range (_SPACE_RANGE).
    sql = (
        f"SELECT id, rank FROM (SELECT c.id AS id, {_BM25[target]} AS rank FROM {fts} "
        f"JOIN {content} c{_indexed_by(target)} ON c.id = {fts}.rowid "
        f"WHERE {fts} MATCH %s {_SPACE_RANGE.format(fts=fts, content=content)} "
        f"AND {' AND '.join(where)} "
        f"ORDER BY {fts}.rowid DESC LIMIT %s) "
        "ORDER BY rank, id LIMIT %s"
    )
    return sql, params


def doc_frequency(target: Target, *, space_id: int, term: str, cap: int) -> int:
    """Rows of one space containing `term`, counted up to `cap`: walking a
    doclist without ranking is cheap, and the cap bounds it."""
    fts, content = TABLES[target]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {fts} "
            f"JOIN {content} c{_indexed_by(target)} ON c.id = {fts}.rowid "
            f"WHERE {fts} MATCH %s {_SPACE_RANGE.format(fts=fts, content=content)} "
            "AND c.space_id = %s LIMIT %s)",
            [match_expression([term]), space_id, space_id, space_id, cap],
        )
        return int(cursor.fetchone()[0])


# --- schema, used by migrations -------------------------------------------------------


def _columns(target: str) -> list[str]:
    if target == "item":
        return ["text", "subject", "object"]
    return ["text", "section"] if target == "chunk" else ["text"]


def create_sql(target: str) -> list[str]:
    fts, content = TABLES[target]
    cols = _columns(target)
    col_list = ", ".join(cols)
    new_vals = ", ".join(f"new.{c}" for c in cols)
    old_vals = ", ".join(f"old.{c}" for c in cols)
    return [
        f"CREATE VIRTUAL TABLE {fts} USING fts5({col_list}, content='{content}', "
        f"content_rowid='id', tokenize='{TOKENIZE}')",
        f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {content} BEGIN "
        f"INSERT INTO {fts}(rowid, {col_list}) VALUES (new.id, {new_vals}); END",
        f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {content} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {col_list}) VALUES ('delete', old.id, {old_vals}); END",
        f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {col_list} ON {content} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {col_list}) VALUES ('delete', old.id, {old_vals}); "
        f"INSERT INTO {fts}(rowid, {col_list}) VALUES (new.id, {new_vals}); END",
        f"INSERT INTO {fts}({fts}) VALUES ('rebuild')",
    ]


def filter_index_sql(target: str) -> list[str]:
    if target not in _FILTER_COLUMNS:
        return []
    _, content = TABLES[target]
    return [
        f"CREATE INDEX IF NOT EXISTS {_filter_index(target)} ON {content}"
        f"({', '.join(_FILTER_COLUMNS[target])})"
    ]


def drop_filter_index_sql(target: str) -> list[str]:
    return [f"DROP INDEX IF EXISTS {_filter_index(target)}"] if target in _FILTER_COLUMNS else []


def drop_sql(target: str) -> list[str]:
    fts, _ = TABLES[target]
    return [f"DROP TRIGGER IF EXISTS {fts}_{s}" for s in ("ai", "ad", "au")] + [
        f"DROP TABLE IF EXISTS {fts}"
    ]


def index_row_count(target: str, space_id: int | None = None) -> int:
    """Rows in the FTS index (for tests and forget verification)."""
    fts, content = TABLES[target]
    with connection.cursor() as cursor:
        if space_id is None:
            cursor.execute(f"SELECT count(*) FROM {fts}")
        else:
            cursor.execute(
                f"SELECT count(*) FROM {fts} f JOIN {content} c ON c.id = f.rowid WHERE c.space_id = %s",
                [space_id],
            )
        return int(cursor.fetchone()[0])


def indexed_ids(target: str, ids: list[int]) -> int:
    """How many of these row ids the FTS index still lists (its docsize
    table, text aside): zero after a hard delete."""
    if not ids:
        return 0
    fts, _ = TABLES[target]
    marks = ", ".join("%s" for _ in ids)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {fts}_docsize WHERE id IN ({marks})", ids)
        return int(cursor.fetchone()[0])

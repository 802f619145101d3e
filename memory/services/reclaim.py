"""After a hard forget or a wipe: make the database give the bytes back.

Deleting a row is not the end of its text. On SQLite the old page images stay
in the -wal file until a checkpoint, an FTS5 delete only adds a tombstone (the
terms stay in the older index segments until they are merged), and without
secure_delete (set on every connection, see settings) freed pages keep their
content. So a hard forget merges the FTS indexes that lost rows and then
checkpoints the WAL with TRUNCATE; a wipe also runs VACUUM, which rebuilds the
file without the space's free pages.

PostgreSQL has no equivalent of secure_delete: a deleted row is a dead tuple
until VACUUM, and VACUUM only marks its space reusable (the bytes stay in the
data files until overwritten, and in WAL segments and backups until those
rotate). We VACUUM the tables that lost rows so the space is reused soon; the
README's security section says what that does and does not guarantee.

Each step runs outside any transaction (VACUUM and a WAL checkpoint cannot run
inside one): called inside an atomic block it reports itself skipped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any

from django.db import DatabaseError, connection, transaction

log = logging.getLogger(__name__)


def _database_file() -> str:
    return str(connection.settings_dict["NAME"])


def wal_path() -> str:
    return _database_file() + "-wal"


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _skipped() -> dict[str, Any] | None:
    if connection.in_atomic_block:
        return {"done": False, "reason": "inside a transaction: nothing reclaimed yet"}
    return None


def _sqlite_optimize(fts_tables: Iterable[str]) -> list[str]:
    done = []
    with transaction.atomic(), connection.cursor() as cursor:
        for table in sorted(set(fts_tables)):
            # Merges every segment into one, dropping deleted entries for good.
            cursor.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
            done.append(table)
    return done


def _sqlite_checkpoint() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA secure_delete")
        secure = bool(cursor.fetchone()[0])
        # TRUNCATE waits (busy_timeout) for readers of old snapshots, copies
        # every frame into the file and empties the -wal file.
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        busy, _frames, _copied = cursor.fetchone()
    return {
        "secure_delete": secure,
        "checkpoint": "truncate",
        "checkpoint_complete": not busy,
        "wal_bytes": _file_size(wal_path()),
    }


def _pg_vacuum(tables: Iterable[str]) -> list[str]:
    names = sorted(set(tables))
    if names:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM " + ", ".join(connection.ops.quote_name(t) for t in names))
    return names


def _failed(exc: DatabaseError) -> dict[str, Any]:
    # The rows are already gone (committed); failing to reclaim their space
    # must not turn the forget into an error. The report says so instead.
    log.exception("reclaiming space after a forget failed")
    return {"database": connection.vendor, "done": False, "reason": str(exc)[:200]}


def after_hard_forget(*, fts_tables: Iterable[str], tables: Iterable[str]) -> dict[str, Any]:
    """Reclaim after a hard forget. `fts_tables`: the SQLite FTS5 tables whose
    content rows were deleted; `tables`: the model tables that lost or
    rewrote rows (vacuumed on PostgreSQL)."""
    skipped = _skipped()
    if skipped:
        return {"database": connection.vendor, **skipped}
    try:
        return _after_hard_forget(fts_tables=fts_tables, tables=tables)
    except DatabaseError as exc:
        return _failed(exc)


def _after_hard_forget(*, fts_tables: Iterable[str], tables: Iterable[str]) -> dict[str, Any]:
    if connection.vendor == "sqlite":
        optimized = _sqlite_optimize(fts_tables)
        return {"database": "sqlite", "done": True, "fts_merged": optimized, **_sqlite_checkpoint()}
    return {"database": connection.vendor, "done": True, "vacuumed": _pg_vacuum(tables)}


def after_wipe(*, fts_tables: Iterable[str], tables: Iterable[str]) -> dict[str, Any]:
    """Reclaim after a space was wiped: on SQLite the FTS merge, VACUUM (which
    copies pages as they are, so the merge comes first) and an empty WAL; on
    PostgreSQL VACUUM of the space's tables."""
    skipped = _skipped()
    if skipped:
        return {"database": connection.vendor, **skipped}
    try:
        return _after_wipe(fts_tables=fts_tables, tables=tables)
    except DatabaseError as exc:
        return _failed(exc)


def _after_wipe(*, fts_tables: Iterable[str], tables: Iterable[str]) -> dict[str, Any]:
    if connection.vendor == "sqlite":
        optimized = _sqlite_optimize(fts_tables)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM")
        return {
            "database": "sqlite",
            "done": True,
            "fts_merged": optimized,
            "vacuum": True,
            **_sqlite_checkpoint(),
        }
    return {"database": connection.vendor, "done": True, "vacuumed": _pg_vacuum(tables)}

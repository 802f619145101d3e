"""Verified forget: after a hard forget, look for what was forgotten in every
place Engram keeps text, and say what was looked at and what was found.

The places: every text column (char, text, JSON) of every table that belongs
to a space, core block versions and the admin's change log (tables); the
full-text indexes, read through MATCH so a stale index entry counts (fts); the
stored vectors and this process's vector and term caches (vectors, cache); the
space's Markdown mirror files (mirror); every other file in the data directory
(files); and on SQLite the database file and its -wal file, read as bytes
after the checkpoint (database_file). A forget is verified when every count is
zero.

Texts shorter than MIN_NEEDLE characters ("ok", "yes") would be found in
unrelated rows; they are checked by id only. The report never repeats the
forgotten text: it names places and counts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from django.apps import apps
from django.conf import settings
from django.db import connection, models

from memory.models import CoreBlockVersion, MemoryItem, SessionSummary, Space, Turn
from memory.search import Target
from memory.services import byte_scan

MIN_NEEDLE = 8
# Bounds, so a forget of hundreds of rows on a large database stays quick: the
# byte scan reads each file once per needle.
FILE_SCAN_NEEDLES = 20
FILE_SCAN_MAX_BYTES = 2 * 1024**3
DATA_FILE_MAX_BYTES = 64 * 1024**2
_SQL_CHUNK = 100  # OR-ed conditions per query (SQLite's expression depth is 1000)

_TARGET_MODELS: dict[Target, type[models.Model]] = {
    "item": MemoryItem,
    "turn": Turn,
    "summary": SessionSummary,
}


@dataclass(frozen=True)
class Check:
    place: str  # table | fts | query | vectors | cache | mirror | files | database_file
    name: str
    found: int

    def as_dict(self) -> dict[str, Any]:
        return {"place": self.place, "name": self.name, "found": self.found}


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    storage: dict[str, Any] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return all(c.found == 0 for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "verified": self.verified,
            "found": sum(c.found for c in self.checks),
            "checked": [c.as_dict() for c in self.checks],
            "not_checked": self.not_checked,
            "storage": self.storage,
        }


def needles_of(texts: Iterable[str]) -> list[str]:
    """The distinct forgotten texts long enough to search for, longest first."""
    found = {t.strip() for t in texts if len(t.strip()) >= MIN_NEEDLE}
    return sorted(found, key=lambda t: (-len(t), t))


def _forms(needle: str, *, json_column: bool) -> list[str]:
    # SQLite stores JSON with non-ASCII escaped (\u00e9) and quotes escaped;
    # PostgreSQL's jsonb::text does not. Look for both spellings.
    forms = [needle]
    if json_column:
        escaped = json.dumps(needle)[1:-1]
        if escaped != needle:
            forms.append(escaped)
    return forms


def _contains_sql(column: str) -> str:
    col = f"CAST({connection.ops.quote_name(column)} AS TEXT)"
    if connection.vendor == "sqlite":
        return f"instr({col}, %s) > 0"
    return f"strpos({col}, %s) > 0"


def _text_columns(model: type[models.Model]) -> list[tuple[str, bool]]:
    cols = []
    for f in model._meta.concrete_fields:
        if isinstance(f, models.CharField | models.TextField):
            cols.append((f.column, False))
        elif isinstance(f, models.JSONField):
            cols.append((f.column, True))
    return cols


def _count_containing(
    *, table: str, scope_sql: str, scope_params: list[Any], cols: list[tuple[str, bool]], needles
) -> int:
    """Rows in scope holding any needle in any column (a row counts once)."""
    return len(
        _ids_containing(
            table=table, scope_sql=scope_sql, scope_params=scope_params, cols=cols, needles=needles
        )
    )


def space_rows_containing(
    model: type[models.Model], *, space: Space, needles: Iterable[str], columns: Iterable[str]
) -> set[Any]:
    """Ids of the space's rows of `model` whose `columns` hold any needle,
    found by the database (for the forget's own scrubbing)."""
    wanted = set(columns)
    cols = [c for c in _text_columns(model) if c[0] in wanted]
    return _ids_containing(
        table=model._meta.db_table,
        scope_sql=f"{connection.ops.quote_name('space_id')} = %s",
        scope_params=[space.pk],
        cols=cols,
        needles=list(needles),
    )


def _ids_containing(
    *, table: str, scope_sql: str, scope_params: list[Any], cols: list[tuple[str, bool]], needles
) -> set[Any]:
    conditions: list[tuple[str, str]] = [
        (_contains_sql(col), form)
        for needle in needles
        for col, is_json in cols
        for form in _forms(needle, json_column=is_json)
    ]
    if not conditions:
        return set()
    pk = connection.ops.quote_name("id")
    hit: set[Any] = set()
    with connection.cursor() as cursor:
        for start in range(0, len(conditions), _SQL_CHUNK):
            chunk = conditions[start : start + _SQL_CHUNK]
            where = " OR ".join(sql for sql, _ in chunk)
            cursor.execute(
                f"SELECT {pk} FROM {connection.ops.quote_name(table)} "
                f"WHERE {scope_sql} AND ({where})",
                [*scope_params, *(form for _, form in chunk)],
            )
            hit.update(row[0] for row in cursor.fetchall())
    return hit


def space_models() -> list[type[models.Model]]:
    """Every model with a `space` foreign key to Space, found by introspection
    so a table added later is checked too."""
    found = []
    for model in apps.get_models():
        try:
            f = model._meta.get_field("space")
        except Exception:
            continue
        if getattr(f, "related_model", None) is Space and f.concrete:
            found.append(model)
    return found


def _table_checks(
    *, space: Space, needles: list[str], deleted: dict[Target, set[int]]
) -> list[Check]:
    checks = []
    by_model = {m: ids for t, ids in deleted.items() if (m := _TARGET_MODELS.get(t))}
    for model in space_models():
        table = model._meta.db_table
        found = _count_containing(
            table=table,
            scope_sql=f"{connection.ops.quote_name('space_id')} = %s",
            scope_params=[space.pk],
            cols=_text_columns(model),
            needles=needles,
        )
        ids = by_model.get(model)
        if ids:
            found += model._default_manager.filter(pk__in=ids).count()
        checks.append(Check("table", table, found))
    version_table = CoreBlockVersion._meta.db_table
    checks.append(
        Check(
            "table",
            version_table,
            _count_containing(
                table=version_table,
                scope_sql="block_id IN (SELECT id FROM memory_coreblock WHERE space_id = %s)",
                scope_params=[space.pk],
                cols=_text_columns(CoreBlockVersion),
                needles=needles,
            ),
        )
    )
    if apps.is_installed("django.contrib.admin"):
        from django.contrib.admin.models import LogEntry

        checks.append(
            Check(
                "table",
                LogEntry._meta.db_table,
                _count_containing(
                    table=LogEntry._meta.db_table,
                    scope_sql="1 = 1",
                    scope_params=[],
                    cols=_text_columns(LogEntry),
                    needles=needles,
                ),
            )
        )
    return checks


def _fts_phrase(needle: str) -> str | None:
    if not any(ch.isalnum() for ch in needle):
        return None
    return '"' + needle.replace('"', '""') + '"'


def _fts_checks(
    *, space: Space, needles: list[str], deleted: dict[Target, set[int]]
) -> list[Check]:
    """SQLite: MATCH on the index itself, which still answers for a stale
    entry whose row is gone. PostgreSQL indexes the row itself (an expression
    over its text), so a deleted row has nothing left to match; its search
    facade is asked instead."""
    checks = []
    if connection.vendor == "sqlite":
        from memory.search._fts import TABLES

        for target, (fts, content) in TABLES.items():
            phrases = [p for n in needles if (p := _fts_phrase(n))]
            ids = sorted(deleted.get(cast(Target, target), set()))
            found: set[int] = set()
            with connection.cursor() as cursor:
                for start in range(0, len(phrases), 50):
                    expr = " OR ".join(phrases[start : start + 50])
                    id_sql = ", ".join("%s" for _ in ids) or "NULL"
                    # MATCH first, on its own (it cannot sit inside an OR).
                    cursor.execute(
                        f"WITH m AS MATERIALIZED (SELECT rowid AS id FROM {fts} "
                        f"WHERE {fts} MATCH %s) SELECT id FROM m WHERE id IN ({id_sql}) "
                        f"OR id IN (SELECT id FROM {content} WHERE space_id = %s)",
                        [expr, *ids, space.pk],
                    )
                    found.update(r[0] for r in cursor.fetchall())
                if ids:
                    # The index's own list of documents, text aside.
                    cursor.execute(
                        f"SELECT id FROM {fts}_docsize WHERE id IN ({', '.join('%s' for _ in ids)})",
                        ids,
                    )
                    found.update(r[0] for r in cursor.fetchall())
            checks.append(Check("fts", fts, len(found)))
        return checks
    from memory.search import search

    for target, model in _TARGET_MODELS.items():
        gone = deleted.get(target, set())
        found_ids: set[int] = set()
        for needle in needles[:FILE_SCAN_NEEDLES]:
            hits = search(target, space_id=space.pk, query=needle, limit=50, live_only=False)
            hit_ids = {h.id for h in hits}
            found_ids |= hit_ids & gone
            texts = model._default_manager.filter(pk__in=hit_ids).values_list("pk", "text")
            found_ids |= {pk for pk, text in texts if needle in text}
        checks.append(Check("fts", f"{model._meta.db_table} search index", len(found_ids)))
    return checks


def _query_checks(*, space: Space, query: str) -> list[Check]:
    """What the forget itself selects by: rows containing every word."""
    from memory.search import query_terms, search
    from memory.services.forget import QUERY_LIMIT, _matches_all, core_lines_for_query

    terms = query_terms(query)
    checks = []
    for target, model in _TARGET_MODELS.items():
        hits = search(target, space_id=space.pk, query=query, limit=QUERY_LIMIT, live_only=False)
        rows = model._default_manager.filter(space=space, pk__in=[h.id for h in hits])
        fields = ("text", "subject", "object") if model is MemoryItem else ("text",)
        found = 0
        for row in rows:
            found += _matches_all(" ".join(str(getattr(row, f)) for f in fields), terms)
        checks.append(Check("query", model._meta.db_table, found))
    lines = core_lines_for_query(space=space, query=query)
    checks.append(Check("query", "core memory lines and their history", len(lines)))
    return checks


def _vector_checks(*, space: Space, deleted: dict[Target, set[int]]) -> list[Check]:
    from django.db.models import Q

    from memory.models import MemoryVector
    from memory.search import cached_terms, vectors

    cond = Q(pk__in=[])
    columns: dict[Target, str] = {"item": "item_id", "turn": "turn_id", "summary": "summary_id"}
    for target, column in columns.items():
        if deleted.get(target):
            cond |= Q(**{f"{column}__in": deleted[target]})
    stored = MemoryVector.objects.filter(space=space).filter(cond).count()
    # Document chunks keep their vectors on their own rows: no cache entry.
    cached: dict[str, set[int]] = {str(t): ids for t, ids in vectors.cached_ids(space.pk).items()}
    in_cache = sum(len(cached.get(t, set()) & ids) for t, ids in deleted.items())
    return [
        Check("vectors", MemoryVector._meta.db_table, stored),
        Check("cache", "vector matrix (this process)", in_cache),
        Check("cache", "search term counts (this process)", len(cached_terms(space.pk))),
    ]


def _files_holding(paths: Iterable[Path], needles: list[str]) -> int:
    encoded = [n.encode() for n in needles[:FILE_SCAN_NEEDLES]]
    return sum(byte_scan.scan(list(paths), encoded, mode="any"))


def _walk(root: Path) -> Iterator[Path]:
    if not root.is_dir():
        return
    for base, _dirs, files in os.walk(root):
        for name in files:
            yield Path(base) / name


def _file_checks(*, space: Space, needles: list[str], report: Report) -> list[Check]:
    from memory.services import mirror

    mirror_root = Path(settings.ENGRAM["MIRROR_DIR"]).resolve()
    # Names relative to their roots: the answer goes to a tenant, who has no
    # business learning the server's directory layout.
    checks = [
        Check("mirror", f"{space.name}/", _files_holding(_walk(mirror.space_dir(space)), needles))
    ]
    db_files = set()
    if connection.vendor == "sqlite":
        name = str(connection.settings_dict["NAME"])
        db_files = {Path(name + suffix).resolve() for suffix in ("", "-wal", "-shm", "-journal")}
    others: list[Path] = []
    too_big = 0
    for path in _walk(Path(settings.DATA_DIR)):
        resolved = path.resolve()
        if resolved in db_files or resolved.is_relative_to(mirror_root):
            continue
        try:
            size = resolved.stat().st_size
        except OSError:
            continue
        if size > DATA_FILE_MAX_BYTES:
            too_big += 1
            continue
        others.append(resolved)
    checks.append(Check("files", "data directory", _files_holding(others, needles)))
    if too_big:
        report.not_checked.append(
            f"{too_big} file(s) over {DATA_FILE_MAX_BYTES} bytes in the data directory"
        )
    return checks


def _occurrences(path: Path, needles: list[str]) -> int:
    forms = {f.encode() for n in needles[:FILE_SCAN_NEEDLES] for f in _forms(n, json_column=True)}
    return byte_scan.scan([path], sorted(forms))[0]


def _database_file_checks(*, needles: list[str], report: Report) -> list[Check]:
    if connection.vendor != "sqlite":
        report.not_checked.append(
            "PostgreSQL data files: dead tuples keep their bytes until VACUUM reuses the space"
        )
        return []
    if len(needles) > FILE_SCAN_NEEDLES:
        report.not_checked.append(
            f"database file bytes: only the {FILE_SCAN_NEEDLES} longest of {len(needles)} texts"
        )
    checks = []
    name = str(connection.settings_dict["NAME"])
    for path in (Path(name), Path(name + "-wal")):
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        if size > FILE_SCAN_MAX_BYTES:
            report.not_checked.append(f"{path.name}: larger than {FILE_SCAN_MAX_BYTES} bytes")
            continue
        checks.append(Check("database_file", path.name, _occurrences(path, needles)))
    return checks


def drop_caches(space: Space) -> None:
    """This process's caches of the space: vector matrices, term counts and
    the recall statistics with their postings."""
    from memory.search import drop_space, vectors
    from memory.services.recall import termstats

    vectors.drop_space(space.pk)
    drop_space(space.pk)
    termstats.forgotten(space.pk)


def verify(
    *,
    space: Space,
    texts: Iterable[str],
    deleted: dict[Target, set[int]],
    query: str | None = None,
    storage: dict[str, Any] | None = None,
) -> Report:
    """Look for the forgotten `texts` and the `deleted` row ids ({"item": ids,
    "turn": ids, "summary": ids}) everywhere; `query` adds the forget's own
    selection; `storage` is what reclaim did (reported as is)."""
    needles = needles_of(texts)
    report = Report(storage=storage or {})
    report.checks += _table_checks(space=space, needles=needles, deleted=deleted)
    report.checks += _fts_checks(space=space, needles=needles, deleted=deleted)
    if query:
        report.checks += _query_checks(space=space, query=query)
    # The searches above cache their words' counts; a forget drops them, and
    # so does the check, before looking at what this process still holds.
    drop_caches(space)
    report.checks += _vector_checks(space=space, deleted=deleted)
    report.checks += _file_checks(space=space, needles=needles, report=report)
    report.checks += _database_file_checks(needles=needles, report=report)
    return report


def verify_wipe(
    *, space: Space, keep_audit_id: int | None, storage: dict[str, Any] | None = None
) -> Report:
    """After a wipe: no row of the space in any table (its API keys and the
    one audit record of the wipe excepted), no index entry, no vector, no
    mirror file."""
    from memory.models import ApiKey, AuditEvent, MemoryVector
    from memory.search import cached_terms, vectors
    from memory.services import mirror

    report = Report(storage=storage or {})
    for model in space_models():
        if model is ApiKey:
            continue
        rows = model._default_manager.filter(space=space)
        if model is AuditEvent and keep_audit_id is not None:
            rows = rows.exclude(pk=keep_audit_id)
        report.checks.append(Check("table", model._meta.db_table, rows.count()))
    report.checks.append(
        Check(
            "table",
            CoreBlockVersion._meta.db_table,
            CoreBlockVersion.objects.filter(block__space=space).count(),
        )
    )
    if connection.vendor == "sqlite":
        from memory.search._fts import TABLES

        with connection.cursor() as cursor:
            for fts, content in TABLES.values():
                # Index entries whose row is gone or belongs to the space.
                cursor.execute(
                    f"SELECT count(*) FROM {fts}_docsize d LEFT JOIN {content} c ON c.id = d.id "
                    "WHERE c.id IS NULL OR c.space_id = %s",
                    [space.pk],
                )
                report.checks.append(Check("fts", fts, int(cursor.fetchone()[0])))
    report.checks.append(
        Check(
            "vectors", MemoryVector._meta.db_table, MemoryVector.objects.filter(space=space).count()
        )
    )
    cached = vectors.cached_ids(space.pk)
    report.checks.append(
        Check("cache", "vector matrix (this process)", sum(len(v) for v in cached.values()))
    )
    report.checks.append(
        Check("cache", "search term counts (this process)", len(cached_terms(space.pk)))
    )
    report.checks.append(
        Check("mirror", f"{space.name}/", sum(1 for _ in _walk(mirror.space_dir(space))))
    )
    return report

"""Loading the rows recall ranks and returns, by id.

Plain SQL on purpose: every recall loads a few hundred rows by id, and
building the equivalent ORM query (an IN list of 240 ids, a JSON key, a join)
cost four times what running it did: 2.6 ms against 0.6 ms at 100k turns, a
quarter of the latency budget. Table and column names come from the models;
every value is a bound parameter. SQLite hands back naive UTC datetimes and
JSON as text, PostgreSQL aware datetimes and decoded JSON; _time() and
_json() even that out, so callers see the same rows on both.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np
from django.db import connection
from django.db.models import Model

from engram_site.db import batch, prepared
from memory import embeddings
from memory.models import (
    Document,
    DocumentChunk,
    FactRevision,
    MemoryItem,
    Session,
    SessionSummary,
    Skill,
    Turn,
    TurnFact,
)
from memory.search._filters import row_filters
from memory.timeview import TimeView, Window

# Who said a turn: the first non-empty of these metadata keys.
SPEAKER_KEYS = ("speaker", "name", "author")


class TurnText(NamedTuple):
    """What the turn channel scores a turn by."""

    session_id: int
    text: str
    speaker: str


class TurnRow(NamedTuple):
    id: int
    session: str  # the session's external id
    text: str
    ref: str | None
    ts: datetime
    created_at: datetime
    screen_status: str


class ItemRow(NamedTuple):
    id: int
    text: str
    kind: str
    importance: float
    frequency: int
    last_seen: datetime | None
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    expired_at: datetime | None
    status: str
    screen_status: str
    turn_refs: list[str]
    session: str | None
    superseded_by: int | None


class SummaryRow(NamedTuple):
    id: int
    text: str
    first_ts: datetime | None
    last_ts: datetime | None
    created_at: datetime
    session: str


class SkillRow(NamedTuple):
    id: int
    name: str
    description: str
    body: str
    created_at: datetime
    turn_refs: list[str]


def _time(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _json_key(column: str, key: str) -> str:
    if connection.vendor == "postgresql":
        return f"({column} ->> '{key}')"
    return f"json_extract({column}, '$.{key}')"


def _speaker_sql(column: str) -> str:
    parts = ", ".join(f"NULLIF({_json_key(column, k)}, '')" for k in SPEAKER_KEYS)
    return f"COALESCE({parts}, '')"


def _fetch(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with prepared.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _in(ids: Collection[int]) -> str:
    """The condition "is one of `ids`" after a column, its values bound by
    _bound() as one parameter. PostgreSQL takes them as an array: an IN list
    of a few hundred placeholders cost 0.7 ms more per query to send and
    plan (1.7 against 1.0 ms for the turn channel's 284 rows at 100k
    turns). The array goes as its text form, cast on the server: psycopg
    dumps a list element by element in Python, 320 against 180 us of this
    process's time for a statement of 240 ids. SQLite reads them from a JSON
    array: Django rewrites and binds each placeholder in Python, 0.3 ms for
    160 ids."""
    if connection.vendor == "postgresql":
        return "= ANY(%s::bigint[])"
    return "IN (SELECT value FROM json_each(%s))"


def _bound(ids: Collection[int]) -> list[Any]:
    # Both forms are built from ints, so no text but digits reaches the query.
    if connection.vendor == "postgresql":
        return ["{" + ",".join(str(int(pk)) for pk in ids) + "}"]
    return [json.dumps([int(pk) for pk in ids])]


def _turn_filters(space_id: int, when: TimeView | None) -> tuple[list[str], list[Any]]:
    # Screened clean and, in a time view, said and known by then.
    return row_filters("turn", prefix="t.", space_id=space_id, live_only=True, when=when)


def turn_texts(
    space_id: int, ids: Collection[int], *, when: TimeView | None
) -> dict[int, TurnText]:
    """Text, session and speaker of the turns among `ids` that recall may
    show. No times: parsing two datetimes per row doubled this query's cost,
    and scoring a few hundred candidates needs none."""
    if not ids:
        return {}
    where, params = _turn_filters(space_id, when)
    sql = (
        f"SELECT t.id, t.session_id, t.text, {_speaker_sql('t.metadata')} "
        f"FROM {Turn._meta.db_table} t WHERE {' AND '.join(where)} AND t.id {_in(ids)}"
    )
    return {
        pk: TurnText(session_id, text or "", str(speaker or ""))
        for pk, session_id, text, speaker in _fetch(sql, [*params, *_bound(ids)])
    }


def turns_between(
    space_id: int,
    ranges: list[tuple[datetime, datetime]],
    *,
    when: TimeView | None,
    limit: int,
) -> list[int]:
    """Ids of the turns recall may show whose time falls in one of `ranges`
    (start inclusive, end exclusive), earliest first within each range, at
    most `limit` in all. One query per range: each walks the (space, ts)
    index and stops at its limit, where one query OR-ing the ranges sorted
    every matching row first (25 ms for a month at 100k turns, against 0.2)."""
    where, params = _turn_filters(space_id, when)
    sql = (
        f"SELECT t.id FROM {Turn._meta.db_table} t WHERE {' AND '.join(where)} "
        "AND t.ts >= %s AND t.ts < %s ORDER BY t.ts, t.id LIMIT %s"
    )
    found: list[int] = []
    for start, end in ranges:
        if len(found) >= limit:
            break
        # Bound as the column stores them (SQLite keeps naive UTC text, which
        # an aware datetime's text would not compare with correctly).
        bounds = [connection.ops.adapt_datetimefield_value(v) for v in (start, end)]
        found += [pk for (pk,) in _fetch(sql, [*params, *bounds, limit - len(found)])]
    return found


def first_turn_time(space_id: int) -> datetime | None:
    """When the space's earliest turn was said (None without turns)."""
    rows = _fetch(
        f"SELECT MIN(t.ts) FROM {Turn._meta.db_table} t WHERE t.space_id = %s", [space_id]
    )
    value = rows[0][0] if rows else None
    if isinstance(value, str):  # SQLite hands back an aggregate's text as it is stored
        value = datetime.fromisoformat(value)
    return _time(value)


def turn_texts_after(
    space_id: int, after: int, *, page: int = 2000
) -> Iterator[tuple[int, str, str, int, bool]]:
    """(id, text, speaker, session id, screened clean) of every turn of the
    space past id `after`, in id order, a page at a time (for word
    statistics over a whole space)."""
    sql = (
        f"SELECT t.id, t.text, {_speaker_sql('t.metadata')}, t.session_id, t.screen_status "
        f"FROM {Turn._meta.db_table} t "
        "WHERE t.space_id = %s AND t.id > %s ORDER BY t.id LIMIT %s"
    )
    for pk, text, speaker, session_id, screen in _pages(sql, space_id, after, page):
        yield pk, text or "", str(speaker or ""), session_id, screen == "ok"


def _pages(sql: str, space_id: int, after: int, page: int) -> Iterator[tuple[Any, ...]]:
    """The rows of `sql` (parameters: space id, last id seen, page size; id
    first, in id order), a page at a time."""
    while True:
        batch = _fetch(sql, [space_id, after, page])
        yield from batch
        if len(batch) < page:
            return
        after = batch[-1][0]


def any_in_space(model: type[Model], space_id: int) -> bool:
    """Whether the space has any row of `model` (one index seek)."""
    return bool(
        _fetch(f"SELECT 1 FROM {model._meta.db_table} WHERE space_id = %s LIMIT 1", [space_id])
    )


def item_texts_after(
    space_id: int, after: int, *, page: int = 2000
) -> Iterator[tuple[int, str, str, str]]:
    """(id, text, subject, object) of every fact of the space past id
    `after`, live or not, in id order, a page at a time (for word statistics
    over a whole space)."""
    for pk, text, subject, obj in _pages(_ITEM_TEXTS, space_id, after, page):
        yield pk, text or "", subject or "", obj or ""


_ITEM_TEXTS = (
    f"SELECT i.id, i.text, i.subject, i.object FROM {MemoryItem._meta.db_table} i "
    "WHERE i.space_id = %s AND i.id > %s ORDER BY i.id LIMIT %s"
)


def item_texts_read(
    space_id: int, after: int, *, page: int = 2000
) -> batch.Read[list[tuple[int, str, str, str]]]:
    """item_texts_after as a read to send with others: its first page goes
    with them, any further pages are read when it is parsed."""

    def parse(found: batch.Rows) -> list[tuple[int, str, str, str]]:
        texts = [(pk, text or "", subject or "", obj or "") for pk, text, subject, obj in found]
        if len(found) == page:
            texts += item_texts_after(space_id, found[-1][0], page=page)
        return texts

    return batch.Read(_ITEM_TEXTS, [space_id, after, page], parse)


def live_items(space_id: int, ids: Collection[int], *, when: TimeView | None = None) -> set[int]:
    """The facts among `ids` that recall may show in the view (the search
    filters, memory.search._filters): as they are now, active, unexpired and
    screened clean; in a history view, former facts too."""
    return batch.one(live_items_read(space_id, ids, when=when)) if ids else set()


def live_items_read(
    space_id: int, ids: Collection[int], *, when: TimeView | None = None
) -> batch.Read[set[int]]:
    """live_items as a read to send with others."""
    where, params = row_filters("item", prefix="i.", space_id=space_id, live_only=True, when=when)
    sql = (
        f"SELECT i.id FROM {MemoryItem._meta.db_table} i "
        f"WHERE {' AND '.join(where)} AND i.id {_in(ids)}"
    )
    return batch.Read(sql, [*params, *_bound(ids)], lambda found: {pk for (pk,) in found})


def _turns_read(
    space_id: int, ids: Collection[int], *, when: TimeView | None
) -> batch.Read[dict[int, TurnRow]]:
    """Everything recall shows of the turns among `ids` that it may show."""
    where, params = _turn_filters(space_id, when)
    sql = (
        "SELECT t.id, s.external_id, t.text, t.ref, t.ts, t.created_at, t.screen_status "
        f"FROM {Turn._meta.db_table} t JOIN {Session._meta.db_table} s ON s.id = t.session_id "
        f"WHERE {' AND '.join(where)} AND t.id {_in(ids)}"
    )

    def parse(found: batch.Rows) -> dict[int, TurnRow]:
        return {
            pk: TurnRow(pk, session, text or "", ref, _time(ts), _time(created), screen)
            for pk, session, text, ref, ts, created, screen in found
        }

    return batch.Read(sql, [*params, *_bound(ids)], parse)


def _items_read(space_id: int, ids: Collection[int]) -> batch.Read[dict[int, ItemRow]]:
    """The items among `ids`, whatever their state: the caller's temporal
    filter decides which may be shown."""
    sql = (
        "SELECT i.id, i.text, i.kind, i.importance, i.frequency, i.last_seen, i.valid_from, "
        "i.valid_to, i.created_at, i.expired_at, i.status, i.screen_status, "
        "i.source_turn_refs, s.external_id, i.superseded_by_id "
        f"FROM {MemoryItem._meta.db_table} i "
        f"LEFT JOIN {Session._meta.db_table} s ON s.id = i.source_session_id "
        f"WHERE i.space_id = %s AND i.id {_in(ids)}"
    )

    def parse(found: batch.Rows) -> dict[int, ItemRow]:
        out: dict[int, ItemRow] = {}
        for row in found:
            pk, text, kind, importance, frequency, last_seen, valid_from, valid_to = row[:8]
            created, expired, status, screen, refs, session, superseded_by = row[8:]
            out[pk] = ItemRow(
                pk,
                text,
                kind,
                float(importance or 0.0),
                int(frequency or 1),
                _time(last_seen),
                _time(valid_from),
                _time(valid_to),
                _time(created),
                _time(expired),
                status,
                screen,
                [str(r) for r in (_json(refs) or [])],
                session,
                superseded_by,
            )
        return out

    return batch.Read(sql, [space_id, *_bound(ids)], parse)


def revisions(ids: Collection[int]) -> dict[int, list[tuple[datetime, Window]]]:
    """Each item's recorded window changes, oldest first: (recorded_at, the
    window before the change). Only a known_at read needs them."""
    if not ids:
        return {}
    sql = (
        "SELECT item_id, recorded_at, prior_valid_from, prior_valid_to, prior_expired_at, "
        f"prior_superseded_by FROM {FactRevision._meta.db_table} "
        f"WHERE item_id {_in(ids)} ORDER BY item_id, recorded_at, id"
    )
    out: dict[int, list[tuple[datetime, Window]]] = {}
    for item_id, recorded, vfrom, vto, expired, by in _fetch(sql, _bound(ids)):
        out.setdefault(item_id, []).append(
            (_time(recorded), Window(_time(vfrom), _time(vto), _time(expired), by))
        )
    return out


class Statement(NamedTuple):
    """A fact a turn stated, with what is known of it now."""

    item_id: int
    created_at: datetime
    window: Window


def _statements_read(space_id: int, ids: Collection[int]) -> batch.Read[dict[int, list[Statement]]]:
    """The facts of the space each of these turns stated (TurnFact), for
    telling a turn whose fact was since superseded or retracted from one
    still true."""
    sql = (
        "SELECT tf.turn_id, i.id, i.created_at, i.valid_from, i.valid_to, i.expired_at, "
        f"i.superseded_by_id FROM {TurnFact._meta.db_table} tf "
        f"JOIN {MemoryItem._meta.db_table} i ON i.id = tf.item_id "
        f"WHERE tf.turn_id {_in(ids)} AND i.space_id = %s "
        "AND i.status = 'active' AND i.screen_status = 'ok'"
    )

    def parse(found: batch.Rows) -> dict[int, list[Statement]]:
        out: dict[int, list[Statement]] = {}
        for turn_id, pk, created, vfrom, vto, expired, by in found:
            out.setdefault(turn_id, []).append(
                Statement(pk, _time(created), Window(_time(vfrom), _time(vto), _time(expired), by))
            )
        return out

    return batch.Read(sql, [*_bound(ids), space_id], parse)


def load(
    space_id: int, *, items: Collection[int], turns: Collection[int], when: TimeView | None
) -> tuple[dict[int, ItemRow], dict[int, TurnRow], dict[int, list[Statement]]]:
    """The facts among `items`, the turns among `turns` and what those turns
    stated, at once: independent reads, so on PostgreSQL they are one round
    trip instead of three (engram_site/db/batch.py). What the turns stated
    is read for every id asked for; the caller keeps it for the turns it may
    show."""
    reads: dict[str, batch.Read[Any]] = {}
    if items:
        reads["items"] = _items_read(space_id, items)
    if turns:
        reads["turns"] = _turns_read(space_id, turns, when=when)
        reads["stated"] = _statements_read(space_id, turns)
    found = dict(zip(reads, batch.run(*reads.values()), strict=True))
    return found.get("items", {}), found.get("turns", {}), found.get("stated", {})


def summaries(space_id: int, ids: Collection[int]) -> dict[int, SummaryRow]:
    if not ids:
        return {}
    sql = (
        "SELECT m.id, m.text, m.first_ts, m.last_ts, m.created_at, s.external_id "
        f"FROM {SessionSummary._meta.db_table} m "
        f"JOIN {Session._meta.db_table} s ON s.id = m.session_id "
        f"WHERE m.space_id = %s AND m.id {_in(ids)}"
    )
    return {
        pk: SummaryRow(pk, text, _time(first), _time(last), _time(created), session)
        for pk, text, first, last, created, session in _fetch(sql, [space_id, *_bound(ids)])
    }


def _skill_filters(when: TimeView | None) -> tuple[str, list[Any]]:
    # Enabled skills only (drafts wait for a person); with known_at, those that existed then.
    if when is None or when.known_at is None:
        return "enabled = %s", [True]
    return "enabled = %s AND created_at <= %s", [True, when.known_at]


def skill_texts(space_id: int, *, when: TimeView | None) -> dict[int, tuple[str, str, str]]:
    """Name, description and body of every skill recall may show."""
    where, params = _skill_filters(when)
    sql = (
        f"SELECT id, name, description, body FROM {Skill._meta.db_table} "
        f"WHERE space_id = %s AND {where}"
    )
    return {
        pk: (name, description or "", body or "")
        for pk, name, description, body in _fetch(sql, [space_id, *params])
    }


def skills(space_id: int, ids: Collection[int], *, when: TimeView | None) -> dict[int, SkillRow]:
    if not ids:
        return {}
    where, params = _skill_filters(when)
    sql = (
        "SELECT id, name, description, body, created_at, evidence_turn_refs "
        f"FROM {Skill._meta.db_table} WHERE space_id = %s AND {where} AND id {_in(ids)}"
    )
    return {
        pk: SkillRow(
            pk,
            name,
            description or "",
            body or "",
            _time(created),
            [str(r) for r in (_json(refs) or [])],
        )
        for pk, name, description, body, created, refs in _fetch(
            sql, [space_id, *params, *_bound(ids)]
        )
    }


class ChunkRow(NamedTuple):
    id: int
    text: str
    section: str
    document_id: int
    title: str
    path: str
    created_at: datetime


def chunks(space_id: int, ids: Collection[int]) -> dict[int, ChunkRow]:
    """The unquarantined document chunks among `ids`, with their document."""
    if not ids:
        return {}
    sql = (
        "SELECT c.id, c.text, c.section, d.id, d.title, d.path, d.updated_at "
        f"FROM {DocumentChunk._meta.db_table} c JOIN {Document._meta.db_table} d "
        "ON d.id = c.document_id "
        f"WHERE c.space_id = %s AND c.screen_status = 'ok' AND c.id {_in(ids)}"
    )
    return {
        pk: ChunkRow(pk, text, section or "", doc, title, path or "", _time(updated))
        for pk, text, section, doc, title, path, updated in _fetch(sql, [space_id, *_bound(ids)])
    }


def chunk_similarity(space_id: int, vec: np.ndarray) -> dict[int, float]:
    """Cosine of `vec` with every unquarantined chunk vector of the space
    stored under the configured model (a space holds a few thousand chunks
    at most; one matrix product)."""
    model = embeddings.model_name()
    sql = (
        f"SELECT id, vec FROM {DocumentChunk._meta.db_table} "
        "WHERE space_id = %s AND screen_status = 'ok' AND vec_model = %s AND vec IS NOT NULL"
    )
    found = _fetch(sql, [space_id, model])
    if not found:
        return {}
    dim = vec.shape[0]
    blobs = [bytes(blob) for _, blob in found]
    if any(len(b) != dim * 4 for b in blobs):
        raise embeddings.DimensionMismatch(
            model=model, stored=len(blobs[0]) // 4, configured=int(dim)
        )
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(found), dim)
    scores = matrix @ vec.astype(np.float32)
    return {int(pk): float(score) for (pk, _), score in zip(found, scores, strict=True)}

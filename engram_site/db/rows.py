"""Model instances from one hand-written SELECT.

On the hottest paths, building an ORM query costs more than running it: the
API key lookup with its two spaces (a select_related over two joins) took
about 1.3 ms to compile and 0.05 ms to run on SQLite, on every request. Here
a statement names a model's columns once (`columns`) and each row becomes an
instance (`instance`, `first`) or a dict (`values`) through the converters
the ORM itself would apply: SQLite's text datetimes made aware, its integer
booleans, JSON text. So what is read this way equals what a QuerySet gives
(tests/foundation/test_db_rows.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper

from engram_site.db import batch

M = TypeVar("M", bound=models.Model)

Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]


def columns(model: type[models.Model], alias: str, connection: BaseDatabaseWrapper) -> str:
    """The SELECT list of the model's concrete fields, in `instance`'s order."""
    key = (model, alias, connection.vendor)
    found = _columns.get(key)
    if found is None:
        qn = connection.ops.quote_name
        found = ", ".join(f"{alias}.{qn(f.column)}" for f in model._meta.concrete_fields)
        _columns[key] = found
    return found


_columns: dict[tuple[type[models.Model], str, str], str] = {}


def width(model: type[models.Model]) -> int:
    """How many values of a row `columns` selects for the model."""
    return len(model._meta.concrete_fields)


def first(model: type[M], where: str, params: Sequence[Any], *, order: str = "") -> M | None:
    """The model's first row WHERE `where` (constant SQL, values as %s) in
    `order` (constant SQL too), as an instance; None when there is none."""
    return batch.one(first_read(model, where, params, order=order))


def first_read(
    model: type[M], where: str, params: Sequence[Any], *, order: str = ""
) -> batch.Read[M | None]:
    """`first` as a read to send with others (engram_site/db/batch.py)."""
    conn = connections[DEFAULT_DB_ALIAS]
    sql = _select(model, where, conn)
    if order:
        sql += f" ORDER BY {order}"

    def parse(found: batch.Rows) -> M | None:
        return instance(model, found[0], conn) if found else None

    return batch.Read(sql + " LIMIT 1", params, parse)


def every(model: type[M], where: str, params: Sequence[Any]) -> list[M]:
    """The model's rows WHERE `where` (constant SQL, values as %s), as
    instances, in no particular order."""
    return batch.one(every_read(model, where, params))


def every_read(model: type[M], where: str, params: Sequence[Any]) -> batch.Read[list[M]]:
    """`every` as a read to send with others (engram_site/db/batch.py)."""
    conn = connections[DEFAULT_DB_ALIAS]

    def parse(found: batch.Rows) -> list[M]:
        return [instance(model, row, conn) for row in found]

    return batch.Read(_select(model, where, conn), params, parse)


def _select(model: type[models.Model], where: str, conn: BaseDatabaseWrapper) -> str:
    table = conn.ops.quote_name(model._meta.db_table)
    return f"SELECT {columns(model, 't', conn)} FROM {table} t WHERE {where}"


def instance(model: type[M], values: Sequence[Any], connection: BaseDatabaseWrapper) -> M:
    """The model instance for one row's values of `columns(model, ...)`."""
    fields = model._meta.concrete_fields
    return model.from_db(
        connection.alias, [f.attname for f in fields], _convert(model, fields, values, connection)
    )


def values(
    model: type[models.Model],
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    connection: BaseDatabaseWrapper,
) -> list[dict[str, Any]]:
    """Rows selecting the model's columns `names` (attnames, in that order)
    as QuerySet.values(*names) gives them."""
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    fields = tuple(by_attname[n] for n in names)
    return [dict(zip(names, _convert(model, fields, row, connection), strict=True)) for row in rows]


def _convert(
    model: type[models.Model],
    fields: Sequence[Any],
    row: Sequence[Any],
    connection: BaseDatabaseWrapper,
) -> list[Any]:
    converted = list(row)
    for i, (convert, expression) in _converters(model, tuple(fields), connection):
        value = converted[i]
        for c in convert:
            value = c(value, expression, connection)
        converted[i] = value
    return converted


def _converters(
    model: type[models.Model], fields: tuple[Any, ...], connection: BaseDatabaseWrapper
) -> list[tuple[int, tuple[list[Converter], Any]]]:
    # Worked out once per field list and connection: the backend's
    # converters are bound to its connection (SQLite makes datetimes aware
    # in its time zone). django.db.connection is a proxy shared by every
    # thread, so the cache goes on the thread's own wrapper behind it.
    wrapper = connections[connection.alias]
    cache: dict[tuple[Any, ...], Any] = wrapper.__dict__.setdefault("_engram_row_converters", {})
    found = cache.get(fields)
    if found is None:
        found = []
        for i, field in enumerate(fields):
            col = field.get_col(model._meta.db_table)
            convert = wrapper.ops.get_db_converters(col) + col.get_db_converters(wrapper)
            if convert:
                found.append((i, (convert, col)))
        cache[fields] = found
    return found

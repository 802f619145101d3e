"""Model instances from one hand-written SELECT.

On the hottest paths, building an ORM query costs more than running it: the
API key lookup with its two spaces (a select_related over two joins) took
about 1.3 ms to compile and 0.05 ms to run on SQLite, on every request. Here
a statement names a model's columns once (`columns`) and each row becomes an
instance through the converters the ORM itself would apply (`instance`):
SQLite's text datetimes made aware, its integer booleans, JSON text. So an
instance read this way equals the one a QuerySet gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

M = TypeVar("M", bound=models.Model)

Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]


def columns(model: type[models.Model], alias: str, connection: BaseDatabaseWrapper) -> str:
    """The SELECT list of the model's concrete fields, in `instance`'s order."""
    qn = connection.ops.quote_name
    return ", ".join(f"{alias}.{qn(f.column)}" for f in model._meta.concrete_fields)


def width(model: type[models.Model]) -> int:
    """How many values of a row `columns` selects for the model."""
    return len(model._meta.concrete_fields)


def instance(model: type[M], values: Sequence[Any], connection: BaseDatabaseWrapper) -> M:
    """The model instance for one row's values of `columns(model, ...)`."""
    fields = model._meta.concrete_fields
    converted = list(values)
    for i, (convert, expression) in _converters(model, connection):
        value = converted[i]
        for c in convert:
            value = c(value, expression, connection)
        converted[i] = value
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


def _converters(
    model: type[models.Model], connection: BaseDatabaseWrapper
) -> list[tuple[int, tuple[list[Converter], Any]]]:
    # Worked out once per model and connection: the backend's converters are
    # bound to its connection (SQLite makes datetimes aware in its time zone).
    cache: dict[type[models.Model], Any] = connection.__dict__.setdefault(
        "_engram_row_converters", {}
    )
    found = cache.get(model)
    if found is None:
        found = []
        for i, field in enumerate(model._meta.concrete_fields):
            col = field.get_col(model._meta.db_table)
            convert = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            if convert:
                found.append((i, (convert, col)))
        cache[model] = found
    return found

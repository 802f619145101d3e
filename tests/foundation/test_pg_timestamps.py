"""The PostgreSQL backend's timestamp loader (engram_site/db/postgresql)
reads every value as Django's own loader does, only faster."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from django.db import DataError, connection
from django.db.backends.postgresql.psycopg_any import register_tzloader

pytestmark = pytest.mark.django_db

VALUES = [
    "2024-01-04 11:20:00+00",
    "2024-01-04 11:20:00.388979+00",
    "2024-01-04 11:20:00.5+05:30",
    "1969-12-31 23:59:59.999999-08",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
]


def _read(sql: str) -> list[tuple[datetime, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


@pytest.fixture
def postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("a loader of the PostgreSQL backend")
    connection.ensure_connection()


def test_timestamps_read_as_with_djangos_loader(postgres) -> None:
    sql = "SELECT " + ", ".join(f"'{v}'::timestamptz" for v in VALUES)
    loader = connection.connection.adapters.get_loader(1184, psycopg.pq.Format.TEXT)
    assert loader.__name__ == "UtcTimestampLoader"
    fast = _read(sql)
    # Django's loader, on this connection only, for the same values.
    register_tzloader(UTC, connection.connection)
    try:
        assert _read(sql) == fast
    finally:
        connection.connection.adapters.register_loader("timestamptz", loader)
    row = fast[0]
    assert row[2] == datetime(2024, 1, 4, 5, 50, 0, 500000, tzinfo=UTC)
    assert all(value.tzinfo is UTC for value in row)


def test_what_cannot_be_read_fails_as_before(postgres) -> None:
    for value in ("0044-03-15 00:00:00+00 BC", "infinity"):
        with pytest.raises(DataError):
            _read(f"SELECT '{value}'::timestamptz")

"""Django's PostgreSQL backend, reading timestamps with a faster loader and
offering a cursor whose statements are prepared (`prepared_cursor`, for
engram_site/db/prepared.py) and several reads in one round trip
(`fetch_together`, for engram_site/db/batch.py).

Django reads every timestamptz through a Python subclass of psycopg's loader
that parses the value in C, converts it to the connection's time zone and
then replaces its tzinfo: about 4 us a value. Recall loads a few hundred
timestamps a query (a turn's time and creation, a fact's validity window):
200 rows of two timestamps took 2.2 ms to read, against 0.6 ms for their
ids alone and 1.0 ms with this loader; recall at 100k facts + 100k turns,
the two loaders alternating query by query on one thread: p50 9.2 -> 8.8 ms.

The session runs in UTC (Django sets its time zone; USE_TZ is on), so the
server sends "2024-01-04 11:20:00.388979+00", which datetime.fromisoformat
reads directly in about 1 us, to an equal value with the same tzinfo Django
gives (datetime.UTC). A value in another offset is converted to
UTC, and anything fromisoformat cannot read (a BC date, "infinity") goes to
Django's own loader, so every value reads as it did before.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from django.db.backends.postgresql import base, operations
from django.db.backends.postgresql.psycopg_any import BaseTzLoader, errors


class UtcTimestampLoader(BaseTzLoader):  # type: ignore[misc]
    # Django compares this with the connection's time zone before every
    # cursor (DatabaseWrapper.create_cursor) and registers its own loader
    # when they differ; equal, it keeps this one.
    timezone = UTC

    def load(self, data: Any) -> datetime:
        try:
            value = datetime.fromisoformat(bytes(data).decode())
        except ValueError:
            return super().load(data)  # type: ignore[no-any-return]
        if value.tzinfo is UTC:
            return value
        return value.astimezone(UTC)


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str | None:  # type: ignore[override]
        # What DEBUG logs and tests capture: Django reads a client-side
        # cursor's query, which a prepared cursor does not keep; its values
        # are composed in, as Django does under server-side binding.
        if isinstance(cursor, base.ServerBindingCursor):  # type: ignore[attr-defined]
            try:
                return self.compose_sql(sql, params)  # type: ignore[no-any-return]
            except errors.DataError:
                return None
        return super().last_executed_query(cursor, sql, params)  # type: ignore[no-any-return]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        # Only where Django's loader would give UTC: with USE_TZ off, or a
        # database TIME_ZONE of its own, its loader stays.
        if self.timezone is UTC:
            connection.adapters.register_loader("timestamptz", UtcTimestampLoader)
        return connection

    def prepared_cursor(self) -> Any:
        """A cursor binding its parameters on the server, so that psycopg
        prepares a statement once this connection has run it
        `prepare_threshold` times (ENGRAM_DB_PREPARED): PostgreSQL then stops
        parsing and planning it. For the hand-written reads every request
        makes (engram_site/db/prepared.py); everything else keeps Django's
        client-side binding, which sets no limit on a statement's parameters
        (server-side binding takes at most 65,535: a bulk insert or a long
        IN list of the ORM can pass that). An ordinary cursor when preparing
        is off."""
        if self.settings_dict["OPTIONS"].get("prepare_threshold") is None:
            return self.cursor()
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            # Django's own server-binding cursor class, wrapped as it wraps
            # every cursor (its stubs know neither).
            raw = base.ServerBindingCursor(self.connection)  # type: ignore[attr-defined]
            return self._prepare_cursor(raw)  # type: ignore[attr-defined]

    def fetch_together(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Each statement's rows, the statements sent at once in pipeline
        mode: one round trip for all of them (engram_site/db/batch.py)."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        cursors = [self.prepared_cursor() for _ in statements]
        try:
            if not psycopg.Pipeline.is_supported():  # a libpq older than 14
                for cursor, (sql, params) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params)
                return [cursor.fetchall() for cursor in cursors]
            with self.wrap_database_errors, self.connection.pipeline():
                for cursor, (sql, params) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params)
            # The pipeline's end waited for every answer.
            return [cursor.fetchall() for cursor in cursors]
        finally:
            for cursor in cursors:
                cursor.close()

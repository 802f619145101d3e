"""The cursor for the hand-written reads every request makes.

Each request runs the same few statements with new values: the API key
with its spaces, recall's rows (facts, turns, what turns stated, which facts
are live), the context's core blocks, environment, palace directory and due
count. On PostgreSQL parsing and planning them was most of the server's work
for them (the palace directory alone 0.16 ms to plan and under 0.1 ms to
run). This cursor lets psycopg prepare each of them on the connection
(engram_site/db/postgresql/base.py), so a connection plans it once. On
SQLite, and with ENGRAM_DB_PREPARED=false, it is the ordinary cursor.

Only statements written for it belong here: constant SQL text whose values
are all parameters, with a list of ids passed as one array (see
memory/services/recall/rows.py `_in`), never one placeholder per id.
"""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper


def cursor(conn: BaseDatabaseWrapper | None = None) -> Any:
    conn = conn if conn is not None else connections[DEFAULT_DB_ALIAS]
    make = getattr(conn, "prepared_cursor", None)
    return make() if make is not None else conn.cursor()

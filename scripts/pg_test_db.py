"""The PostgreSQL database of one ./test run.

    pg_test_db.py prepare BASE_URL   print the URL of a new database of this run
                                     (BASE_URL's name + a unique suffix), made now
    pg_test_db.py drop URL           drop it, and the test_ copy pytest-django made

Each run gets a database of its own, so two people (or two worktrees) sharing
one server never drop each other's test database. `prepare` exits 3 when no
server answers at BASE_URL, 1 when one answers but the database cannot be
made, with the reason on stderr."""

from __future__ import annotations

import os
import secrets
import sys
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

UNREACHABLE = 3


def _with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _db_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/") or "engram"


def _admin(url: str) -> psycopg.Connection:
    # CREATE/DROP DATABASE run outside a transaction, from the maintenance db.
    return psycopg.connect(_with_db(url, "postgres"), connect_timeout=3, autocommit=True)


def prepare(base: str) -> int:
    # Short enough for PostgreSQL's 63-byte names once pytest-django adds "test_".
    name = f"{_db_name(base)[:30]}_run{os.getpid()}_{secrets.token_hex(3)}"
    try:
        admin = _admin(base)
    except psycopg.OperationalError as exc:
        print(f"no PostgreSQL answers at {base}: {exc}".strip(), file=sys.stderr)
        return UNREACHABLE
    try:
        with admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        print(f"PostgreSQL at {base} answers but cannot make {name}: {exc}", file=sys.stderr)
        return 1
    print(_with_db(base, name))
    return 0


def drop(url: str) -> int:
    name = _db_name(url)
    try:
        with _admin(url) as admin:
            for db in (f"test_{name}", name):
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db))
                )
    except psycopg.Error as exc:
        print(f"could not drop {name}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("prepare", "drop"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(prepare(sys.argv[2]) if sys.argv[1] == "prepare" else drop(sys.argv[2]))

"""On PostgreSQL, statements a connection runs again and again are prepared
(server-side binding, psycopg's automatic preparation), unless
ENGRAM_DB_PREPARED=false asks for Django's client-side binding. The search
that turns plain index scans off for one statement works under both
(tests/memory/test_search.py has it with the binding configured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from memory.search import _pg

postgres_only = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "engram_site.db.postgresql",
    reason="PostgreSQL only",
)


def _options(env: dict[str, str]) -> dict[str, object]:
    """The database OPTIONS the settings give for a PostgreSQL URL (read,
    not connected: no server is needed)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, django; django.setup(); from django.conf import settings; "
            "print(json.dumps(settings.DATABASES['default']['OPTIONS']))",
        ],
        cwd=settings.BASE_DIR,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "engram_site.settings",
            "ENGRAM_DATA_DIR": str(settings.DATA_DIR),
            "ENGRAM_DATABASE_URL": "postgres://nobody@127.0.0.1:1/nothing",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_postgresql_binds_on_the_server_and_prepares_by_default():
    assert _options({}) == {"server_side_binding": True, "prepare_threshold": 5}


def test_prepared_statements_can_be_turned_off_for_a_pooler():
    assert _options({"ENGRAM_DB_PREPARED": "false"}) == {}


@postgres_only
@pytest.mark.django_db
def test_a_statement_run_often_is_prepared():
    sql = "SELECT count(*) FROM memory_space WHERE id = %s"
    with connection.cursor() as cursor:
        for n in range(7):
            cursor.execute(sql, [n])
            cursor.fetchall()
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%FROM memory_space WHERE id = $1%"],
        )
        assert cursor.fetchone()[0] == 1


def _indexscan() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_indexscan")
        return str(cursor.fetchone()[0])


@postgres_only
@pytest.mark.django_db
def test_index_walks_are_turned_off_for_one_statement_with_client_side_binding(monkeypatch):
    import psycopg

    connection.ensure_connection()
    monkeypatch.setattr(_pg, "_client_binding", lambda: True)
    with psycopg.ClientCursor(connection.connection) as cursor:
        inside = _pg._without_index_walks(
            cursor, "SELECT current_setting('enable_indexscan'), %s::int", [7]
        )
    assert inside == [("off", 7)]
    assert _indexscan() == "on"

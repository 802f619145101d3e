"""On PostgreSQL the reads every request makes go through a cursor whose
statements are prepared once a connection has run them 5 times
(engram_site/db/prepared.py), unless ENGRAM_DB_PREPARED=false; everything
else keeps Django's client-side binding, which has no limit on a
statement's parameters."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engram_site.db import prepared
from memory.models import Space

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


def test_postgresql_prepares_by_default_and_can_be_told_not_to():
    assert _options({}) == {"prepare_threshold": 5}
    # Behind a pooler that hands a session's statements to other connections.
    assert _options({"ENGRAM_DB_PREPARED": "false"}) == {}


def _prepared(text: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", [f"%{text}%"]
        )
        return int(cursor.fetchone()[0])


@postgres_only
@pytest.mark.django_db
def test_a_hot_read_run_often_is_prepared_and_nothing_else_is():
    for n in range(7):
        with prepared.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_space WHERE id = %s", [n])
            assert cursor.fetchall() == [(0,)]
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_space WHERE id <> %s", [n])
            cursor.fetchall()
    assert _prepared("FROM memory_space WHERE id = $1") == 1
    assert _prepared("FROM memory_space WHERE id <>") == 0


@postgres_only
@pytest.mark.django_db
def test_a_prepared_read_is_logged_with_its_values():
    with CaptureQueriesContext(connection) as captured, prepared.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_space WHERE name = %s", ["x"])
    assert captured.captured_queries[-1]["sql"] == (
        "SELECT count(*) FROM memory_space WHERE name = 'x'"
    )


@postgres_only
@pytest.mark.django_db
def test_the_orm_still_takes_more_parameters_than_server_binding_allows():
    # 70,000 values: past the 65,535 a server-bound statement may carry.
    space = Space.objects.create(name="many")
    assert Space.objects.filter(pk__in=[space.pk, *range(-70_000, 0)]).count() == 1

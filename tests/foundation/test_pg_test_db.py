"""scripts/pg_test_db.py, which ./test uses: every run gets a PostgreSQL
database of its own (made, then dropped), and an unreachable server is told
apart from one that refuses, so ./test can fail loudly on a configured one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings
from django.db import connection

SCRIPT = Path(settings.BASE_DIR) / "scripts" / "pg_test_db.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def server_url() -> str:
    # The server this pass runs on, or the usual local one.
    s = connection.settings_dict
    if connection.vendor == "postgresql":
        return (
            f"postgres://{s['USER'] or 'postgres'}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}"
        )
    return "postgres://postgres@127.0.0.1:5432"


def exists(base: str, name: str) -> bool:
    with psycopg.connect(f"{base}/postgres", connect_timeout=3) as conn:
        row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    return row is not None


def test_an_unreachable_server_is_exit_3_with_the_reason():
    result = run("prepare", "postgres://postgres@127.0.0.1:1/engram")
    assert result.returncode == 3
    assert "no PostgreSQL answers at postgres://postgres@127.0.0.1:1/engram" in result.stderr
    assert result.stdout == ""


def test_each_run_gets_its_own_database_and_drop_removes_it():
    base = server_url()
    try:
        psycopg.connect(f"{base}/postgres", connect_timeout=3).close()
    except psycopg.OperationalError:
        pytest.skip(f"no PostgreSQL at {base}")
    first, second = (
        run("prepare", f"{base}/engram_h13_probe"),
        run("prepare", f"{base}/engram_h13_probe"),
    )
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    names = [urlsplit(r.stdout.strip()).path.lstrip("/") for r in (first, second)]
    try:
        assert names[0] != names[1]
        assert all(n.startswith("engram_h13_probe_run") for n in names)
        assert all(exists(base, n) for n in names)
    finally:
        for result in (first, second):
            assert run("drop", result.stdout.strip()).returncode == 0
    assert not any(exists(base, n) for n in names)

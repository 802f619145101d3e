"""`manage.py backup` while two writers post turns, then a restore into a
fresh database: PRAGMA integrity_check passes (SQLite), every table's row
count equals the backup's manifest, and the copy is a point in time (a
turn and its ingest job, which commit together, are both there or neither;
as many turns as were acknowledged before the backup began, at least)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from memory.models import IngestJob, Turn
from memory.services import backup

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


WRITERS = 2


def _writers(api_key: str, acked: list[str], stop: threading.Event, n: int = WRITERS) -> list:  # type: ignore[type-arg]
    def write(w: int) -> None:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {api_key}")
        i = 0
        try:
            while not stop.is_set():
                ref = f"w{w}-{i}"
                body = {"session_id": f"s{w}", "role": "user", "text": f"I like tea number {ref}."}
                response = client.post(
                    "/api/v1/turns", {**body, "ref": ref}, content_type="application/json"
                )
                assert response.status_code == 202, response.content
                acked.append(ref)
                i += 1
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(n)]
    for t in threads:
        t.start()
    return threads


@pytest.fixture
def restore_target(tmp_path):  # type: ignore[no-untyped-def]
    """A database of its own to restore into (a settings dict)."""
    if connection.vendor == "sqlite":
        yield {**connection.settings_dict, "NAME": str(tmp_path / "restored.sqlite3")}
        return
    name = f"engram_restore_{uuid.uuid4().hex[:8]}"
    target = {**connection.settings_dict, "NAME": name}
    url = backup.pg_url(target).rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", url, "-qc", f"CREATE DATABASE {name}"], check=True)
    yield target
    subprocess.run(["psql", url, "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)


def test_backup_under_write_load_restores_every_row(api_key, tmp_path, restore_target):
    acked: list[str] = []
    stop = threading.Event()
    threads = _writers(api_key, acked, stop)
    try:
        time.sleep(1.5)
        before = len(acked)
        dest = tmp_path / "backup"
        call_command("backup", str(dest))
        after = len(acked)
        deadline = time.monotonic() + 30
        while len(acked) <= after and time.monotonic() < deadline:
            time.sleep(0.05)  # a write after the snapshot, which it must not hold
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert after >= before > 0  # writers ran before, during and after the backup
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["complete"] and "secret_key" in manifest["files"]

    report = backup.restore(dest, database=restore_target, data_dir=tmp_path / "data")
    assert report.counts == manifest["counts"]
    turns = report.counts[Turn._meta.db_table]
    assert report.counts[IngestJob._meta.db_table] == turns
    # (a turn can be committed while its 202 is on the way: one per writer)
    assert before <= turns <= after + WRITERS
    assert Turn.objects.count() > turns  # the source went on past the snapshot
    if connection.vendor == "sqlite":
        assert backup.sqlite_counts(tmp_path / "restored.sqlite3")[1] == "ok"
    assert (tmp_path / "data" / "secret_key").is_file()

    # a second restore over the first needs --force
    with pytest.raises(backup.BackupError, match="force"):
        backup.restore(dest, database=restore_target, data_dir=tmp_path / "data")
    again = backup.restore(dest, database=restore_target, data_dir=tmp_path / "data", force=True)
    assert again.counts == manifest["counts"]

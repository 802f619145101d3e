"""Whole-instance backup and restore, online.

A backup is a directory: a point-in-time copy of the database, the data
directory's files that are not in it (the secret key that signs sessions,
the first API key and admin password files `engram_run` wrote, the Markdown
mirror), and `manifest.json` with the row count of every table at the
snapshot, so a restore can prove it got all of them back.

SQLite: `VACUUM INTO` copies the database inside one read transaction, so
writers go on (WAL) and the copy is consistent and compact. PostgreSQL:
`pg_dump --format=custom` run on a snapshot exported from the transaction
that counts the rows, so the counts are those of the dump. Vectors, FTS
indexes and the audit log live in the database and travel with it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection
from django.utils import timezone

MANIFEST = "manifest.json"
SQLITE_FILE = "engram.sqlite3"
PG_FILE = "engram.pgdump"
# Files of the data directory a restored instance needs; the broker queue,
# beat's schedule, locks and control sockets are rebuilt by the next start.
DATA_FILES = ("secret_key", "api-key.txt", "admin-password.txt")
MIRROR = "mirror"


class BackupError(Exception):
    """Something an operator must fix; the message says what."""


@dataclass
class Report:
    path: Path
    engine: str
    counts: dict[str, int]
    integrity: str
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    command: str = ""  # PostgreSQL without pg_dump: what to run instead


# --- the database this process uses ------------------------------------------------


def _engine(settings_dict: dict[str, Any]) -> str:
    return "sqlite" if "sqlite" in settings_dict["ENGINE"] else "postgresql"


def pg_url(settings_dict: dict[str, Any]) -> str:
    user = quote(settings_dict.get("USER") or "postgres", safe="")
    if settings_dict.get("PASSWORD"):
        user += ":" + quote(settings_dict["PASSWORD"], safe="")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgresql://{user}@{host}:{port}/{settings_dict['NAME']}"


def sqlite_counts(path: Path) -> tuple[dict[str, int], str]:
    """Row counts of every table and `PRAGMA integrity_check` of a file."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        # Table names come from the catalog, not from input.
        counts = {
            t: int(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])  # noqa: S608
            for t in tables
        }
        integrity = "; ".join(row[0] for row in db.execute("PRAGMA integrity_check"))
    finally:
        db.close()
    return counts, integrity


def _pg_counts(cursor: Any) -> dict[str, int]:
    cursor.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
    )
    tables = [row[0] for row in cursor.fetchall()]
    counts = {}
    for table in tables:
        cursor.execute(f'SELECT count(*) FROM "{table}"')  # noqa: S608 (from the catalog)
        counts[table] = int(cursor.fetchone()[0])
    return counts


# --- backup ------------------------------------------------------------------------


def backup(dest: Path) -> Report:
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise BackupError(f"{dest} exists and is not empty; name a new directory")
    dest.mkdir(parents=True, exist_ok=True)
    started = timezone.now()
    engine = _engine(connection.settings_dict)
    if engine == "sqlite":
        report = _backup_sqlite(dest)
    else:
        report = _backup_pg(dest)
    report.files = _copy_data_files(Path(settings.DATA_DIR), dest)
    report.seconds = (timezone.now() - started).total_seconds()
    manifest = {
        "format": 1,
        "created_at": started.isoformat(),
        "engine": engine,
        "database": SQLITE_FILE if engine == "sqlite" else PG_FILE,
        "counts": report.counts,
        "integrity": report.integrity,
        "files": report.files,
        "complete": not report.command,
    }
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return report


def _backup_sqlite(dest: Path) -> Report:
    source = Path(connection.settings_dict["NAME"])
    out = dest / SQLITE_FILE
    # Our own connection, not Django's: VACUUM cannot run inside the atomic
    # block a caller may hold, and this one waits on a writer's lock for as
    # long as the server's own connections do.
    db = sqlite3.connect(source, timeout=60, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 60000")
        db.execute("VACUUM INTO ?", (str(out),))
    finally:
        db.close()
    counts, integrity = sqlite_counts(out)
    if integrity != "ok":
        raise BackupError(f"the copy in {out} failed PRAGMA integrity_check: {integrity}")
    return Report(path=dest, engine="sqlite", counts=counts, integrity=integrity)


def pg_dump_command(url: str, out: Path, snapshot: str = "") -> list[str]:
    command = ["pg_dump", "--format=custom", "--no-owner", "--file", str(out)]
    if snapshot:
        command += ["--snapshot", snapshot]
    return [*command, url]


def _backup_pg(dest: Path) -> Report:
    import psycopg

    url = pg_url(connection.settings_dict)
    out = dest / PG_FILE
    if shutil.which("pg_dump") is None:
        # Counted now; a dump taken later holds whatever was written since.
        with connection.cursor() as cursor:
            counts = _pg_counts(cursor)
        command = " ".join(pg_dump_command(url, out))
        return Report(path=dest, engine="postgresql", counts=counts, integrity="", command=command)
    # The exported snapshot lives as long as the transaction that made it:
    # count in it, dump from it, then let it go.
    with psycopg.connect(url, autocommit=False) as db:
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        row = db.execute("SELECT pg_export_snapshot()").fetchone()
        assert row is not None
        with db.cursor() as cursor:
            counts = _pg_counts(cursor)
        done = subprocess.run(
            pg_dump_command(url, out, snapshot=str(row[0])), capture_output=True, text=True
        )
        db.rollback()
    if done.returncode != 0:
        raise BackupError(f"pg_dump failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return Report(path=dest, engine="postgresql", counts=counts, integrity="pg_dump ok")


def _copy_data_files(data_dir: Path, dest: Path) -> list[str]:
    copied = []
    for name in DATA_FILES:
        if (data_dir / name).is_file():
            shutil.copy2(data_dir / name, dest / name)
            copied.append(name)
    mirror = Path(settings.ENGRAM["MIRROR_DIR"])
    if mirror.is_dir():
        shutil.copytree(mirror, dest / MIRROR)
        copied.append(MIRROR)
    return copied


# --- restore -----------------------------------------------------------------------


def read_manifest(src: Path) -> dict[str, Any]:
    path = Path(src) / MANIFEST
    if not path.is_file():
        raise BackupError(f"{src} is not an Engram backup: no {MANIFEST}")
    manifest: dict[str, Any] = json.loads(path.read_text())
    if not manifest.get("complete", True):
        raise BackupError(
            f"{src} holds no database dump (pg_dump was not available when it was made)"
        )
    return manifest


def restore(src: Path, *, database: dict[str, Any], data_dir: Path, force: bool = False) -> Report:
    """Put a backup back into `database` (a Django settings dict) and
    `data_dir`, then count every table and compare with the manifest. The
    caller makes sure no Engram process uses them meanwhile."""
    src = Path(src)
    manifest = read_manifest(src)
    engine = _engine(database)
    if manifest["engine"] != engine:
        raise BackupError(
            f"{src} is a {manifest['engine']} backup; this instance uses {engine}. "
            "Move between databases with export_space / import_space instead."
        )
    started = timezone.now()
    if engine == "sqlite":
        counts, integrity = _restore_sqlite(src, Path(database["NAME"]), force=force)
    else:
        counts, integrity = _restore_pg(src, pg_url(database), force=force)
    if counts != manifest["counts"]:
        differ = sorted(
            t
            for t in set(counts) | set(manifest["counts"])
            if counts.get(t) != manifest["counts"].get(t)
        )
        raise BackupError(f"restored row counts differ from the backup's in: {', '.join(differ)}")
    files = _restore_data_files(src, Path(data_dir))
    return Report(
        path=src,
        engine=engine,
        counts=counts,
        integrity=integrity,
        files=files,
        seconds=(timezone.now() - started).total_seconds(),
    )


def _restore_sqlite(src: Path, target: Path, *, force: bool) -> tuple[dict[str, int], str]:
    if target.exists() and target.stat().st_size > 0 and not force:
        raise BackupError(f"{target} exists; pass --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(target.name + ".restoring")
    shutil.copyfile(src / SQLITE_FILE, staged)
    counts, integrity = sqlite_counts(staged)
    if integrity != "ok":
        staged.unlink()
        raise BackupError(f"{src / SQLITE_FILE} failed PRAGMA integrity_check: {integrity}")
    # The old file's WAL would be replayed onto the restored one.
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    os.replace(staged, target)
    return counts, integrity


def _restore_pg(src: Path, url: str, *, force: bool) -> tuple[dict[str, int], str]:
    import psycopg

    if shutil.which("pg_restore") is None:
        raise BackupError(
            "pg_restore is not on PATH; run: "
            f"pg_restore --clean --if-exists --no-owner --dbname {url} {src / PG_FILE}"
        )
    with psycopg.connect(url, autocommit=True) as db:
        with db.cursor() as cursor:
            existing = _pg_counts(cursor)
    if existing and not force:
        raise BackupError(f"{url.rsplit('/', 1)[-1]} already has tables; pass --force")
    done = subprocess.run(
        ["pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction"]
        + ["--dbname", url, str(src / PG_FILE)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BackupError(f"pg_restore failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    with psycopg.connect(url, autocommit=True) as db:
        with db.cursor() as cursor:
            return _pg_counts(cursor), "pg_restore ok"


def _restore_data_files(src: Path, data_dir: Path) -> list[str]:
    # Always replaced: they belong to the database just restored (settings
    # made a fresh secret_key when this data directory was first used, and
    # the key files name keys of the database that is gone).
    data_dir.mkdir(parents=True, exist_ok=True)
    restored = []
    for name in DATA_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, data_dir / name)
            restored.append(name)
    if (src / MIRROR).is_dir():
        # The mirror is rebuilt from the database anyway; copying it back
        # saves the wait for the first full re-render.
        mirror = Path(settings.ENGRAM["MIRROR_DIR"])
        if data_dir != Path(settings.DATA_DIR):
            mirror = data_dir / mirror.name
        shutil.copytree(src / MIRROR, mirror, dirs_exist_ok=True)
        restored.append(MIRROR)
    return restored

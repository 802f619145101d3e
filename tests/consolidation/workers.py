"""Real Redis, Celery worker and beat processes for integration tests, all
pointed at the pytest test database and torn down by the pids we started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_database_url() -> str:
    db = settings.DATABASES["default"]
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


@contextmanager
def redis_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@contextmanager
def celery_processes(
    *, redis_url: str, data_dir: Path, beat: bool = True, extra_env: dict[str, str] | None = None
) -> Iterator[Path]:
    """Start a worker (and beat) on the test database; yields the log directory."""
    env = {
        **os.environ,
        "ENGRAM_DATABASE_URL": test_database_url(),
        "ENGRAM_REDIS_URL": redis_url,
        "ENGRAM_DATA_DIR": str(data_dir),
        "ENGRAM_SECRET_KEY": "integration-test",
        **(extra_env or {}),
    }
    env.pop("ENGRAM_CELERY_EAGER", None)
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    commands = [
        (
            "worker",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "engram_site",
                "worker",
                "-P",
                "solo",
                "-l",
                "info",
            ],
        ),
    ]
    if beat:
        commands.append(
            (
                "beat",
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "engram_site",
                    "beat",
                    "-l",
                    "info",
                    "-s",
                    str(data_dir / "beat-schedule"),
                ],
            )
        )
    procs = []
    try:
        for name, cmd in commands:
            out = open(logs / f"{name}.log", "wb")
            procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        yield logs
    finally:
        for proc in procs:
            _stop(proc)


def wait_for(predicate, *, timeout: float, interval: float = 0.5) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())

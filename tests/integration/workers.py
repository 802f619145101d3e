"""Real Celery worker / beat processes and a private redis-server for
integration tests, pointed at the pytest test database.

Each process gets its own session (process group) so a test can SIGKILL a
prefork worker together with its children, the way a crash or OOM kill would."""

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

from memory.management.commands.engram_run import WORKER_CLASS

ROOT = Path(settings.BASE_DIR)


def free_port(start: int = 6390) -> int:
    for port in range(start, start + 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port for redis-server")


def database_url() -> str:
    """The URL of the database this test process uses (the test database)."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] or "postgres"
    if s.get("PASSWORD"):
        auth += f":{s['PASSWORD']}"
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Redis:
    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on {self.port} did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def celery_env(*, redis_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "engram_site.settings",
        "ENGRAM_DATA_DIR": str(settings.DATA_DIR),
        "ENGRAM_DATABASE_URL": database_url(),
        "ENGRAM_REDIS_URL": redis_url,
        "ENGRAM_LLM_PROVIDERS": "[]",
        "ENGRAM_EMBEDDINGS": "none",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    env.update(extra or {})
    # Worker processes must really consume from the broker.
    env.pop("ENGRAM_CELERY_EAGER", None)
    return env


def wait_for(predicate, *, timeout: float, interval: float = 0.5) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


class Proc:
    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.args, self.env, self.log = args, env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Proc:
        self.proc = subprocess.Popen(
            self.args,
            env=self.env,
            cwd=ROOT,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def kill(self) -> None:
        """SIGKILL the process and its children: no cleanup, no acks."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                self.kill()


def worker(env: dict[str, str], log: Path, *, concurrency: int = 2, name: str = "w") -> Proc:
    return Proc(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "engram_site",
            "worker",
            "--loglevel",
            "WARNING",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        env,
        log,
    )


def beat(env: dict[str, str], log: Path, schedule: Path) -> Proc:
    return Proc(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "engram_site",
            "beat",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(schedule),
        ],
        env,
        log,
    )


@contextmanager
def broker(app, url: str) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Point this process's Celery app (the API's task sends) at `url`."""
    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.task_always_eager)
    app.conf.broker_url = url
    app.conf.broker_transport_options = {
        "socket_timeout": 2,
        "socket_connect_timeout": 2,
        "max_retries": 1,
    }
    app.conf.broker_connection_timeout = 2
    app.conf.task_publish_retry = False
    app.conf.task_always_eager = False
    # The connection and producer pools are built lazily from broker_url and
    # cached; drop them so the next send connects to the new broker.
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield
    finally:
        app.conf.broker_url, app.conf.broker_transport_options, app.conf.task_always_eager = saved
        app.conf.task_publish_retry = True
        if app._pool is not None:
            app._pool.force_close_all()
        app._pool = None
        app.amqp._producer_pool = None


def web(env: dict[str, str], log: Path, port: int, *, workers: int = 2, asgi: bool = False) -> Proc:
    """gunicorn serving the API; with `asgi`, exactly as ./run starts it
    (uvicorn workers)."""
    app = ["engram_site.asgi:application", "--worker-class", WORKER_CLASS]
    return Proc(
        [
            sys.executable,
            "-m",
            "gunicorn",
            *(app if asgi else ["engram_site.wsgi:application"]),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--control-socket",
            str(Path(settings.DATA_DIR) / f"gunicorn-{port}.ctl"),
        ],
        env,
        log,
    )


def wait_http(url: str, *, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


def purge_local_broker() -> None:
    """Drop messages an earlier test left in the filesystem broker."""
    queue = Path(settings.DATA_DIR) / "broker" / "queue"
    for message in queue.glob("*.msg"):
        message.unlink(missing_ok=True)

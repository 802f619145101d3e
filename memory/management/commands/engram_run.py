"""Run Engram: the web server, a Celery worker and Celery beat, together.

Migrates, makes sure a default space, API key and admin user exist, then
supervises the three processes; Ctrl-C (or SIGTERM) stops all of them. One
that dies is restarted; one that dies more than RESTARTS times within
RESTART_WINDOW seconds stops the others too."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from engram_site import runguard
from engram_site.celery import DEFAULT_QUEUE, INGEST_QUEUE
from memory.models import ApiKey
from memory.services.spaces import create_api_key

RESTARTS = 5
RESTART_WINDOW = 60.0
# gunicorn's worker class: ASGI, so the same server answers MCP's Streamable
# HTTP at /mcp. Every command and test that starts the web server names it
# from here.
WORKER_CLASS = "uvicorn_worker.UvicornWorker"


def default_web_workers() -> int:
    """ENGRAM_WEB_WORKERS, else one web process per core (at least 2, at
    most 8). One more than the cores serves more recalls but slows writes
    under mixed load: its readers take the CPU the writer holding SQLite's
    write lock needs (the README's "Production" section has the figures)."""
    configured = os.environ.get("ENGRAM_WEB_WORKERS")
    if configured:
        return int(configured)
    return max(2, min(os.cpu_count() or 2, 8))


def web_command(
    python: str, bind: str, workers: int, *, control: str = "gunicorn.ctl"
) -> list[str]:
    """The web server as ./run starts it (bench_http starts the same;
    `control` names its control socket in the data directory, one per
    server)."""
    return [
        python,
        "-m",
        "gunicorn",
        "engram_site.asgi:application",
        "--worker-class",
        WORKER_CLASS,
        "--bind",
        bind,
        "--workers",
        str(workers),
        "--access-logfile",
        "-",
        "--graceful-timeout",
        "5",
        # gunicorn's control socket defaults to ~/.gunicorn, shared by
        # every instance of the user; keep ours with the data.
        "--control-socket",
        str(Path(settings.DATA_DIR) / control),
    ]


class Command(BaseCommand):
    help = "Start Engram: web server, Celery worker and Celery beat (Ctrl-C stops all)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=os.environ.get("ENGRAM_BIND", "127.0.0.1:8000"))
        parser.add_argument("--space", default="default", help="the space the first API key is for")
        parser.add_argument("--web-workers", type=int, default=default_web_workers())
        parser.add_argument(
            "--concurrency", type=int, default=int(os.environ.get("ENGRAM_WORKER_CONCURRENCY", "2"))
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Refuse before touching anything: a second Engram on this data
        # directory, or a port someone else has, would otherwise only show up
        # once a second worker and beat were already running.
        try:
            lock = runguard.acquire(Path(settings.DATA_DIR))
        except runguard.AlreadyRunning as exc:
            raise CommandError(
                f"Engram is already running on the data directory {settings.DATA_DIR} "
                f"({exc.holder or 'lock held'}; {exc.path}). Stop it first, or give this "
                "one its own ENGRAM_DATA_DIR."
            ) from None
        try:
            runguard.check_port_free(options["bind"])
        except runguard.PortInUse as exc:
            lock.release()
            raise CommandError(
                f"Cannot serve on {exc.bind}: {exc.reason}. Nothing was started; choose "
                "another address with --bind HOST:PORT (or ENGRAM_BIND)."
            ) from None
        call_command("migrate", interactive=False, verbosity=0)
        # Collected once so the web server serves hashed, compressed admin and
        # dashboard assets instead of looking them up on every request.
        call_command("collectstatic", interactive=False, verbosity=0)
        self._ensure_key(options["space"])
        self._ensure_admin()
        python = sys.executable
        base = Path(settings.BASE_DIR)
        commands = {
            "web": web_command(python, options["bind"], options["web_workers"]),
            "worker": [
                python,
                "-m",
                "celery",
                "-A",
                "engram_site",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                str(options["concurrency"]),
                "--hostname",
                "engram@%h",
                # Both queues, interactive work first in the list; see
                # engram_site/celery.py for why ingest cannot starve it.
                "--queues",
                f"{DEFAULT_QUEUE},{INGEST_QUEUE}",
            ],
            "beat": [
                python,
                "-m",
                "celery",
                "-A",
                "engram_site",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ],
        }
        broker = (
            "Redis" if settings.REDIS_URL else f"local broker in {settings.DATA_DIR / 'broker'}"
        )
        self.stdout.write(
            f"Engram on http://{options['bind']}  (API /api/v1/docs, admin /admin/; {broker})"
        )
        self.stdout.write("Ctrl-C stops the server, the worker and beat.")

        # The children inherit the lock, so it outlives this process if it is
        # killed while they keep running.
        def spawn(name: str) -> subprocess.Popen[bytes]:
            return subprocess.Popen(commands[name], cwd=base, pass_fds=(lock.fd,))

        procs = {name: spawn(name) for name in commands}
        try:
            self._supervise(procs, spawn)
        finally:
            lock.release()

    def _supervise(
        self,
        procs: dict[str, subprocess.Popen[bytes]],
        spawn: Callable[[str], subprocess.Popen[bytes]],
    ) -> None:
        stopping = False

        def stop(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        exits: dict[str, list[float]] = {name: [] for name in procs}
        while not stopping:
            for name, proc in procs.items():
                if proc.poll() is None:
                    continue
                # A crash is restarted (a Celery worker exits when the
                # broker connection drops mid-ack; the outbox re-sends what
                # it held). One that keeps exiting is a configuration error:
                # stop everything and say so.
                now = time.monotonic()
                exits[name] = [t for t in exits[name] if now - t < RESTART_WINDOW] + [now]
                if len(exits[name]) > RESTARTS:
                    self.stderr.write(
                        f"{name} exited with {proc.returncode} {len(exits[name])} times in "
                        f"{RESTART_WINDOW:.0f} s; stopping the others"
                    )
                    exit_code = proc.returncode or 1
                    stopping = True
                    break
                self.stderr.write(f"{name} exited with {proc.returncode}; restarting it")
                procs[name] = spawn(name)
            time.sleep(0.5)
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        deadline = started + 15
        for name, proc in procs.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop in time; killing it")
                proc.kill()
                proc.wait()
            self.stdout.write(f"{name} stopped after {time.monotonic() - started:.1f}s")
        self.stdout.write("Engram stopped.")
        if exit_code:
            sys.exit(exit_code)

    def _ensure_key(self, space_name: str) -> None:
        key_file = Path(settings.DATA_DIR) / "api-key.txt"
        if (
            ApiKey.objects.filter(space__name=space_name, revoked_at=None).exists()
            and key_file.exists()
        ):
            self.stdout.write(f"API key for space '{space_name}': in {key_file}")
            return
        _, plain = create_api_key(space_name=space_name, name="created by engram_run")
        key_file.write_text(plain + "\n")
        key_file.chmod(0o600)
        self.stdout.write(f"Created an API key for space '{space_name}'; it is in {key_file}")

    def _ensure_admin(self) -> None:
        user_model = get_user_model()
        password_file = Path(settings.DATA_DIR) / "admin-password.txt"
        if user_model.objects.filter(is_superuser=True).exists():
            if password_file.exists():
                self.stdout.write(f"Admin login: user 'admin', password in {password_file}")
            return
        password = secrets.token_urlsafe(16)
        user_model.objects.create_superuser("admin", "", password)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
        self.stdout.write(f"Created admin user 'admin'; the password is in {password_file}")

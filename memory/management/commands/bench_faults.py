"""Fault and load scenarios on a real stack, with their figures:

    python manage.py bench_faults --scenario all             # full length, SQLite
    python manage.py bench_faults --scenario load --postgres postgres://postgres@127.0.0.1:5432

- flaky: 10,000 saves while the LLM (a local OpenAI-format server) answers
  2% garbage and lets 2% time out, and the worker is SIGKILLed every 10 s;
- redis: 5,000 saves at 40/s; Redis is SIGKILLed 30 s in and restarted
  empty 60 s later: every POST still answers 202, the backlog drains;
- gunicorn: writers post nonstop while gunicorn is SIGKILLed 15 times;
- load: 16 writers and 32 readers for 10 minutes on ./run's web settings.

Afterwards each reads the database: acknowledged turns missing or doubled,
ingest jobs not done, facts missing or doubled. Everything runs in a
throwaway data directory and database (SQLite, or a database of its own on
the PostgreSQL server given); nothing touches the configured instance. The
scenarios live in tests/integration/faults.py, which the integration tests
run at small sizes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.management.commands.engram_run import default_web_workers

SCENARIOS = ("flaky", "redis", "gunicorn", "load")
# options handed on to the run in the throwaway instance
PASSED = (
    "saves",
    "kill_every",
    "garbage",
    "timeouts",
    "rate",
    "outage_at",
    "outage",
    "duration",
    "writers",
    "readers",
    "web_workers",
    "web_kills",
)

# figure -> (target description, check)
TARGETS: dict[str, tuple[str, Any]] = {
    "turns_missing": ("0", lambda v: v == 0),
    "turns_duplicated": ("0", lambda v: v == 0),
    "turns_without_job": ("0", lambda v: v == 0),
    "facts_missing": ("0", lambda v: v == 0),
    "facts_duplicated": ("0", lambda v: v == 0),
    "jobs_dead": ("0", lambda v: v == 0),
    "jobs_open": ("0", lambda v: v == 0),
    "drained_after_redis_back_s": ("<= 300", lambda v: 0 <= v <= 300),
    "database_locked": ("0", lambda v: v == 0),
    "write_p99_ms": ("< 1000", lambda v: v < 1000),
    "errors": ("{}", lambda v: not v),
}


class Command(BaseCommand):
    help = "Run fault and load scenarios (flaky LLM, Redis outage, gunicorn kills, mixed load)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="all")
        parser.add_argument(
            "--postgres",
            default="",
            metavar="URL",
            help="a PostgreSQL server (postgres://user@host:port); a database is made and dropped",
        )
        parser.add_argument("--saves", type=int, default=0, help="flaky 10000, redis 5000")
        parser.add_argument("--kill-every", type=float, default=10.0, help="flaky: seconds")
        parser.add_argument("--garbage", type=float, default=0.02)
        parser.add_argument("--timeouts", type=float, default=0.02)
        parser.add_argument("--rate", type=float, default=40.0, help="redis: saves per second")
        parser.add_argument("--outage-at", type=float, default=30.0, help="redis: seconds")
        parser.add_argument("--outage", type=float, default=60.0, help="redis: seconds down")
        parser.add_argument("--duration", type=float, default=600.0, help="load: seconds")
        parser.add_argument("--writers", type=int, default=16)
        parser.add_argument("--readers", type=int, default=32)
        parser.add_argument("--web-workers", type=int, default=default_web_workers())
        parser.add_argument("--web-kills", type=int, default=15, help="gunicorn: SIGKILLs")
        parser.add_argument("--keep", action="store_true", help="keep the data directory (logs)")
        parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
        parser.add_argument("--inner", action="store_true", help="internal")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["inner"]:
            self._inner(options)
            return
        data_dir = Path(tempfile.mkdtemp(prefix="engram-faults-"))
        db_name = f"engram_faults_{os.getpid()}"
        server = options["postgres"].rstrip("/")
        if server:
            url = f"{server}/{db_name}"
            self._psql(server, f"CREATE DATABASE {db_name}")
        else:
            url = f"sqlite:///{data_dir / 'engram.sqlite3'}"
        env = {
            **os.environ,
            "ENGRAM_DATA_DIR": str(data_dir),
            "ENGRAM_DATABASE_URL": url,
            "ENGRAM_EMBEDDINGS": "none",
            "ENGRAM_LLM_PROVIDERS": "[]",
        }
        env.pop("ENGRAM_CELERY_EAGER", None)
        argv = ["--inner", "--scenario", options["scenario"]]
        for name in PASSED:
            argv += [f"--{name.replace('_', '-')}", str(options[name])]
        if options["json"]:
            argv.append("--json")
        self.stdout.write(f"data directory {data_dir}, database {url}")
        try:
            done = subprocess.run(
                [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "bench_faults"] + argv,
                env=env,
                cwd=settings.BASE_DIR,
            )
        finally:
            if server:
                self._psql(server, f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
            if not options["keep"]:
                shutil.rmtree(data_dir, ignore_errors=True)
        if done.returncode != 0:
            raise CommandError(f"bench_faults failed ({done.returncode})")

    def _psql(self, server: str, sql: str) -> None:
        import psycopg

        with psycopg.connect(f"{server}/postgres", autocommit=True) as db:
            db.execute(sql)  # type: ignore[arg-type]

    def _inner(self, options: dict[str, Any]) -> None:
        from tests.integration import faults

        call_command("migrate", interactive=False, verbosity=0)
        logs = Path(settings.DATA_DIR) / "logs"
        chosen = SCENARIOS if options["scenario"] == "all" else (options["scenario"],)
        results = []
        for name in chosen:
            load_before = faults.load_average()
            self.stdout.write(f"\n== {name} (load average {load_before}) ==")
            if name == "flaky":
                result = faults.flaky_llm(
                    logs / name,
                    saves=options["saves"] or 10_000,
                    kill_every=options["kill_every"],
                    garbage=options["garbage"],
                    timeouts=options["timeouts"],
                )
            elif name == "redis":
                result = faults.redis_outage(
                    logs / name,
                    saves=options["saves"] or 5_000,
                    rate=options["rate"],
                    outage_at=options["outage_at"],
                    outage=options["outage"],
                )
            elif name == "gunicorn":
                result = faults.gunicorn_kill(logs / name, kills=options["web_kills"])
            else:
                result = faults.mixed_load(
                    logs / name,
                    duration=options["duration"],
                    writers=options["writers"],
                    readers=options["readers"],
                    web_workers=options["web_workers"],
                )
            result["load_average"] = f"{load_before} -> {faults.load_average()}"
            results.append(result)
            self._table(result)
        failed = [
            f"{r['scenario']}.{k}"
            for r in results
            for k, (_, ok) in TARGETS.items()
            if k in r and not ok(r[k])
        ]
        if options["json"]:
            self.stdout.write(json.dumps(results))
        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        if failed:
            raise CommandError(f"{engine}: below target: {', '.join(failed)}")
        self.stdout.write(f"\n{engine}: every figure at its target")

    def _table(self, result: dict[str, Any]) -> None:
        width = max(len(k) for k in result)
        for key, value in result.items():
            shown = json.dumps(value) if isinstance(value, dict) else str(value)
            target = TARGETS.get(key)
            mark = ""
            if target is not None:
                mark = f"   target {target[0]}: {'ok' if target[1](value) else 'MISSED'}"
            self.stdout.write(f"  {key:<{width}}  {shown}{mark}")

"""Benchmark the write path: turn-accept latency over real HTTP and write
pipeline throughput per worker, with the rule-based extractor and with a local
fake OpenAI-compatible server answering instantly.

Everything runs against a throwaway SQLite database in a temporary data
directory: a gunicorn server for the HTTP part, and child processes of this
command for the pipeline part (one process = one worker)."""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

NAMES = [
    "Anna",
    "Ben",
    "Chloe",
    "Dev",
    "Eli",
    "Farah",
    "Gus",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
]
CITIES = [
    "Lisbon",
    "Berlin",
    "Porto",
    "Oslo",
    "Nairobi",
    "Osaka",
    "Lima",
    "Austin",
    "Pune",
    "Leeds",
]
ORGS = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Hooli", "Stark Works", "Wayne Tech"]
THINGS = ["hiking", "jazz", "sushi", "chess", "running", "board games", "espresso", "pottery"]
TEMPLATES = [
    "I live in {city} these days and I like it a lot.",
    "I moved to {city} last month for a new job.",
    "I work at {org} as a data engineer on the platform team.",
    "My sister {name} lives in {city} and teaches piano.",
    "I really love {thing}, it is my favourite way to relax.",
    "I can't stand {thing} to be honest.",
    "Please always answer in short bullet points from now on.",
    "On {day} I have a dentist appointment in {city} at nine.",
    "I don't live in {city} anymore, that chapter is over.",
    "My name is {name} but everyone calls me {name} anyway.",
    "Can you explain how Python generators work in detail?",
    "What is the weather usually like in {city} in spring?",
    "ok",
    "thanks!",
    "open the settings page",
    "Here is the stack trace I got when running the tests yesterday, any idea?",
]


def turn_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    days = ["Monday", "Friday", "2025-03-14", "tomorrow", "next week"]
    return [
        rng.choice(TEMPLATES).format(
            city=rng.choice(CITIES),
            org=rng.choice(ORGS),
            name=rng.choice(NAMES),
            thing=rng.choice(THINGS),
            day=rng.choice(days),
        )
        for _ in range(n)
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Command(BaseCommand):
    help = "Measure turn-accept latency (HTTP) and write-pipeline throughput."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--turns", type=int, default=500, help="turns per measurement")
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--phase", choices=["all", "pipeline"], default="all")
        parser.add_argument("--llm", choices=["none", "fake"], default="none")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["phase"] == "pipeline":
            print(json.dumps(self._pipeline(options["turns"], options["llm"])))
            return
        data_dir = Path(tempfile.mkdtemp(prefix="engram-bench-"))
        env = {
            **os.environ,
            "ENGRAM_DATA_DIR": str(data_dir),
            "ENGRAM_DATABASE_URL": f"sqlite:///{data_dir / 'bench.sqlite3'}",
            "ENGRAM_LLM_PROVIDERS": "[]",
            "ENGRAM_REDIS_URL": "",
            "ENGRAM_EMBEDDINGS": "none",
            "ENGRAM_LOG_LEVEL": "WARNING",
        }
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        subprocess.run([*manage, "migrate", "-v", "0"], env=env, check=True)
        key = subprocess.run(
            [*manage, "create_api_key", "--space", "bench"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        accept = self._accept(env, key, options["turns"], options["web_workers"])
        self.stdout.write(
            f"accept latency over HTTP (POST /api/v1/turns, SQLite, {options['web_workers']} "
            f"gunicorn workers, {accept['n']} turns): p50 {accept['p50']:.2f} ms, "
            f"p95 {accept['p95']:.2f} ms, p99 {accept['p99']:.2f} ms"
        )
        for llm_mode, label in (("none", "rule-based extractor"), ("fake", "fake OpenAI server")):
            out = subprocess.run(
                [
                    *manage,
                    "bench_ingest",
                    "--phase",
                    "pipeline",
                    "--turns",
                    str(options["turns"]),
                    "--llm",
                    llm_mode,
                ],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            self.stdout.write(
                f"pipeline throughput, one worker, {label}: {r['turns_per_s']:.1f} turns/s "
                f"({r['turns']} turns in {r['seconds']:.2f} s; {r['salient']} salient; "
                f"LLM calls {r['llm_calls']}: max {r['max_calls_salient']} per salient turn, "
                f"max {r['max_calls_skipped']} per skipped turn; items {r['items']})"
            )
        self.stdout.write(f"(data left in {data_dir})")

    def _accept(self, env: dict[str, str], key: str, n: int, workers: int) -> dict[str, float]:
        port = _free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "engram_site.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=settings.BASE_DIR,
        )
        base = f"http://127.0.0.1:{port}/api/v1"
        try:
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=10) as client:
                for _ in range(100):
                    try:
                        if client.get(f"{base}/health").status_code == 200:
                            break
                    except httpx.TransportError:
                        time.sleep(0.1)
                texts = turn_texts(n + 20, seed=11)
                latencies: list[float] = []
                for i, text in enumerate(tqdm(texts, desc="POST /turns", unit="turn")):
                    body = {
                        "session_id": f"bench-{i // 20}",
                        "role": "user",
                        "text": text,
                        "ref": f"b{i}",
                    }
                    started = time.perf_counter()
                    response = client.post(f"{base}/turns", json=body)
                    elapsed = (time.perf_counter() - started) * 1000
                    if response.status_code != 202:
                        raise RuntimeError(
                            f"POST /turns answered {response.status_code}: {response.text}"
                        )
                    if i >= 20:  # the first requests warm up connections and caches
                        latencies.append(elapsed)
        finally:
            server.terminate()
            server.wait(timeout=20)
        return {
            "n": len(latencies),
            "p50": statistics.median(latencies),
            "p95": _pct(latencies, 95),
            "p99": _pct(latencies, 99),
        }

    def _pipeline(self, n: int, llm_mode: str) -> dict[str, Any]:
        from memory.models import IngestJob, MemoryItem, Space
        from memory.services.pipeline import run_job
        from memory.services.turns import TurnData, accept_turns

        fake = None
        if llm_mode == "fake":
            # The same wire-level fake the tests use, answering instantly.
            sys.path.insert(0, str(settings.BASE_DIR))
            from tests.fakes.llm_server import FakeLLM

            fake = FakeLLM().start()
            settings.ENGRAM["LLM_PROVIDERS"] = [fake.provider()]
            settings.ENGRAM["LLM_BUDGET_PER_HOUR"] = 0
        space = Space.objects.create(name=f"bench-{llm_mode}-{int(time.time() * 1000)}")
        texts = turn_texts(n, seed=3)
        accepted = accept_turns(
            space=space,
            turns=[
                TurnData(session_id=f"p{i // 20}", role="user", text=t, ref=f"p{i}")
                for i, t in enumerate(texts)
            ],
        )
        job_ids = list(
            IngestJob.objects.filter(turn__in=[a.turn for a in accepted])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        started = time.perf_counter()
        for job_id in tqdm(job_ids, desc=f"pipeline ({llm_mode})", unit="turn", file=sys.stderr):
            run_job(job_id)
        seconds = time.perf_counter() - started
        if fake is not None:
            fake.stop()
        results = [
            r for r in IngestJob.objects.filter(pk__in=job_ids).values_list("result", flat=True)
        ]
        salient = [r for r in results if r.get("skip_reason") == ""]
        skipped = [r for r in results if r.get("skip_reason")]
        return {
            "turns": len(job_ids),
            "seconds": seconds,
            "turns_per_s": len(job_ids) / seconds if seconds else 0.0,
            "salient": len(salient),
            "llm_calls": sum(r.get("llm_calls", 0) for r in results),
            "max_calls_salient": max((r.get("llm_calls", 0) for r in salient), default=0),
            "max_calls_skipped": max((r.get("llm_calls", 0) for r in skipped), default=0),
            "items": MemoryItem.objects.filter(space=space).count(),
            "not_done": IngestJob.objects.filter(pk__in=job_ids).exclude(status="done").count(),
        }

"""Benchmark the write path the way a user meets it.

`stack` (the headline figure): a `./run` stack — `manage.py engram_run` in a
throwaway data directory, so gunicorn, a Celery worker and beat on the local
filesystem broker, or on Redis with `--broker redis` — gets turns posted over
HTTP in batches; the clock runs until `/api/v1/status` shows `pending_jobs` 0.
It reports turns/s from the first POST to the last job done, and p50/p95
"posted → fact live": per turn, from the POST's answer to its ingest job's
`finished_at` (when its facts became recallable). `--target URL --key KEY`
measures a server that is already running instead; the job times are then
read from the database this command's own ENGRAM_* settings point at, so run
it with the server's environment.

Beside it, for comparison: turn-accept latency over HTTP (`accept`) and the
write pipeline called in-process, one job after another (`pipeline`), with
the rule-based extractor and with a local fake OpenAI-compatible server
answering instantly."""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory.management.commands.engram_run import default_web_workers

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


def job_times(tag: str) -> dict[str, Any]:
    """When each benchmark turn's ingest job finished (epoch seconds, by
    ref), and how many were dead-lettered: read from the database."""
    from memory.models import IngestJob

    jobs = IngestJob.objects.filter(turn__ref__startswith=f"b{tag}-")
    finished = {
        ref: at.timestamp()
        for ref, at in jobs.filter(status=IngestJob.Status.DONE).values_list(
            "turn__ref", "finished_at"
        )
        if at is not None
    }
    return {"finished": finished, "dead": jobs.filter(status=IngestJob.Status.DEAD).count()}


@contextmanager
def _private_redis(data_dir: Path) -> Iterator[str]:
    if shutil.which("redis-server") is None:
        raise CommandError("--broker redis: no redis-server on PATH; pass --redis-url")
    port = _free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        + ["--appendonly", "no", "--dir", str(data_dir)],
        stdout=(data_dir / "redis.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Command(BaseCommand):
    help = (
        "Measure the write path: turns posted over HTTP to a ./run stack until processed "
        "(turns/s, posted-to-live latency), turn-accept latency, in-process pipeline turns/s."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--phase",
            choices=["all", "stack", "accept", "pipeline", "report"],
            default="all",
            help="all = stack, then accept, then pipeline (report is internal)",
        )
        parser.add_argument("--turns", type=int, default=1000, help="turns posted to the stack")
        parser.add_argument("--batch", type=int, default=100, help="turns per POST /turns/batch")
        parser.add_argument(
            "--pipeline-turns", type=int, default=500, help="turns for accept and pipeline"
        )
        parser.add_argument("--broker", choices=["filesystem", "redis"], default="filesystem")
        parser.add_argument(
            "--redis-url",
            default="",
            help="with --broker redis; default: a private redis-server on a free port",
        )
        parser.add_argument("--target", default="", help="base URL of a running Engram")
        parser.add_argument("--key", default="", help="API key for --target")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
        parser.add_argument("--web-workers", type=int, default=default_web_workers())
        parser.add_argument("--timeout", type=float, default=900, help="seconds to wait")
        parser.add_argument("--llm", choices=["none", "fake"], default="none")
        parser.add_argument("--tag", default="", help=argparse.SUPPRESS)
        parser.add_argument("--json", action="store_true", help="print figures as JSON too")

    def handle(self, *args: Any, **options: Any) -> None:
        # httpx logs every request at INFO: thousands of lines over the bars.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        phase = options["phase"]
        if phase == "pipeline" and options["tag"] == "child":
            print(json.dumps(self._pipeline(options["pipeline_turns"], options["llm"])))
            return
        if phase == "report":
            print(json.dumps(job_times(options["tag"])))
            return
        if options["turns"] < 1 or options["batch"] < 1 or options["pipeline_turns"] < 1:
            raise CommandError("--turns, --batch and --pipeline-turns must be at least 1")
        figures: dict[str, Any] = {}
        if phase in ("all", "stack"):
            figures["stack"] = self._stack(options)
        if phase in ("all", "accept", "pipeline"):
            figures.update(self._in_process(options, accept=phase != "pipeline"))
        if options["json"]:
            self.stdout.write(json.dumps(figures))

    # --- the ./run stack over HTTP -------------------------------------------------------

    def _stack(self, options: dict[str, Any]) -> dict[str, Any]:
        n, batch = options["turns"], options["batch"]
        tag = f"{int(time.time())}{os.getpid()}"
        with ExitStack() as stack:
            if options["target"]:
                if not options["key"]:
                    raise CommandError("--target needs --key")
                base, key = options["target"].rstrip("/"), options["key"]
                env = dict(os.environ)
                label = f"{base} (already running)"
            else:
                base, key, env, label = stack.enter_context(self._run_stack(options))
            self.stdout.write(f"posting {n} turns in batches of {batch} to {label}")
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
                answered, started = self._post_all(client, base, n, batch, tag)
                self._wait_drained(client, base, n, options["timeout"], started)
            report = self._report(env, tag)
        finished = report["finished"]
        missing = [ref for ref in answered if ref not in finished]
        if missing:
            raise CommandError(
                f"{len(missing)} of {n} turns have no finished job "
                f"({report['dead']} dead-lettered); first: {missing[:3]}"
            )
        last = max(finished.values())
        seconds = last - started
        latencies = [(finished[ref] - answered[ref]) * 1000 for ref in answered]
        result = {
            "broker": options["broker"] if not options["target"] else "target",
            "turns": n,
            "batch": batch,
            "concurrency": options["concurrency"],
            "seconds": seconds,
            "turns_per_s": n / seconds if seconds > 0 else 0.0,
            "post_seconds": max(answered.values()) - started,
            "live_p50_ms": statistics.median(latencies),
            "live_p95_ms": _pct(latencies, 95),
            "dead": report["dead"],
        }
        self.stdout.write(
            f"end to end, {label}: {n} turns posted over HTTP ({batch} per POST /turns/batch, "
            f"posting took {result['post_seconds']:.1f} s) all processed in {seconds:.1f} s: "
            f"{result['turns_per_s']:.1f} turns/s; posted -> fact live p50 "
            f"{result['live_p50_ms'] / 1000:.2f} s, p95 {result['live_p95_ms'] / 1000:.2f} s"
        )
        return result

    @contextmanager
    def _run_stack(self, options: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, str], str]]:
        data_dir = Path(tempfile.mkdtemp(prefix="engram-bench-stack-"))
        with ExitStack() as stack:
            stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
            redis_url = ""
            if options["broker"] == "redis":
                redis_url = options["redis_url"] or stack.enter_context(_private_redis(data_dir))
            port = _free_port()
            env = {
                **os.environ,
                "ENGRAM_DATA_DIR": str(data_dir),
                "ENGRAM_DATABASE_URL": f"sqlite:///{data_dir / 'engram.sqlite3'}",
                "ENGRAM_REDIS_URL": redis_url,
                "ENGRAM_LLM_PROVIDERS": "[]",
                "ENGRAM_EMBEDDINGS": "none",
                "ENGRAM_LOG_LEVEL": "WARNING",
            }
            log = (data_dir / "run.log").open("wb")
            stack.callback(log.close)
            # The run command itself, as ./run starts it.
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(Path(settings.BASE_DIR) / "manage.py"),
                    "engram_run",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--concurrency",
                    str(options["concurrency"]),
                    "--web-workers",
                    str(options["web_workers"]),
                ],
                env=env,
                cwd=settings.BASE_DIR,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(_stop, proc)
            base = f"http://127.0.0.1:{port}/api/v1"
            key_file = data_dir / "api-key.txt"
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    raise CommandError(
                        f"engram_run exited with {proc.returncode}:\n"
                        + (data_dir / "run.log").read_text()[-2000:]
                    )
                if time.monotonic() > deadline:
                    raise CommandError("engram_run did not answer /health within 120 s")
                try:
                    if key_file.exists() and httpx.get(f"{base}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            broker = "Redis" if redis_url else "the filesystem broker"
            label = (
                f"./run (engram_run: gunicorn x{options['web_workers']}, a worker of "
                f"concurrency {options['concurrency']} and beat on {broker}, SQLite)"
            )
            yield base, key_file.read_text().strip(), env, label

    def _post_all(
        self, client: httpx.Client, base: str, n: int, batch: int, tag: str
    ) -> tuple[dict[str, float], float]:
        texts = turn_texts(n, seed=5)
        answered: dict[str, float] = {}
        started = time.time()
        with tqdm(total=n, desc="POST /turns/batch", unit="turn", file=sys.stderr) as bar:
            for start in range(0, n, batch):
                refs = [f"b{tag}-{i}" for i in range(start, min(n, start + batch))]
                body = {
                    "turns": [
                        {
                            "session_id": f"bench-{tag}-{i // 20}",
                            "role": "user",
                            "text": texts[i],
                            "ref": ref,
                        }
                        for i, ref in zip(range(start, start + len(refs)), refs, strict=True)
                    ]
                }
                response = client.post(f"{base}/turns/batch", json=body)
                now = time.time()
                if response.status_code != 202:
                    raise CommandError(
                        f"POST /turns/batch answered {response.status_code}: {response.text}"
                    )
                answered.update(dict.fromkeys(refs, now))
                bar.update(len(refs))
        return answered, started

    def _wait_drained(
        self, client: httpx.Client, base: str, n: int, timeout: float, started: float
    ) -> None:
        deadline = time.monotonic() + timeout
        with tqdm(total=n, desc="processed", unit="turn", file=sys.stderr) as bar:
            while True:
                status = client.get(f"{base}/status").json()
                pending = int(status["pending_jobs"])
                bar.n = max(0, n - pending)
                bar.refresh()
                if pending == 0:
                    return
                if time.monotonic() > deadline:
                    raise CommandError(
                        f"{pending} jobs still pending after {time.time() - started:.0f} s"
                    )
                time.sleep(0.25)

    def _report(self, env: dict[str, str], tag: str) -> dict[str, Any]:
        out = subprocess.run(
            [
                sys.executable,
                str(Path(settings.BASE_DIR) / "manage.py"),
                "bench_ingest",
                "--phase",
                "report",
                "--tag",
                tag,
            ],
            env=env,
            cwd=settings.BASE_DIR,
            check=True,
            capture_output=True,
            text=True,
        )
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    # --- accept latency and the in-process pipeline ------------------------------------

    def _in_process(self, options: dict[str, Any], *, accept: bool) -> dict[str, Any]:
        n = options["pipeline_turns"]
        figures: dict[str, Any] = {}
        data_dir = Path(tempfile.mkdtemp(prefix="engram-bench-"))
        try:
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
            if accept:
                key = subprocess.run(
                    [*manage, "create_api_key", "--space", "bench"],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.strip()
                figures["accept"] = r = self._accept(env, key, n, options["web_workers"])
                self.stdout.write(
                    f"accept latency over HTTP (POST /api/v1/turns, SQLite, "
                    f"{options['web_workers']} gunicorn workers, {r['n']} turns): "
                    f"p50 {r['p50']:.2f} ms, p95 {r['p95']:.2f} ms, p99 {r['p99']:.2f} ms"
                )
            for llm_mode, label in (
                ("none", "rule-based extractor"),
                ("fake", "fake OpenAI server"),
            ):
                out = subprocess.run(
                    [
                        *manage,
                        "bench_ingest",
                        "--phase",
                        "pipeline",
                        "--tag",
                        "child",
                        "--pipeline-turns",
                        str(n),
                        "--llm",
                        llm_mode,
                    ],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                r = json.loads(out.stdout.strip().splitlines()[-1])
                figures[f"pipeline_{llm_mode}"] = r
                self.stdout.write(
                    f"pipeline in-process, one job after another, {label}: "
                    f"{r['turns_per_s']:.1f} turns/s ({r['turns']} turns in {r['seconds']:.2f} s; "
                    f"{r['salient']} salient; LLM calls {r['llm_calls']}: max "
                    f"{r['max_calls_salient']} per salient turn, max {r['max_calls_skipped']} "
                    f"per skipped turn; items {r['items']})"
                )
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)
        return figures

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

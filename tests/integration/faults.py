"""Fault and load scenarios against a real stack: gunicorn, Celery worker and
beat processes, a private redis-server and, for the flaky-LLM scenario, the
fake OpenAI-format server answering garbage or nothing some of the time.

Each scenario posts turns over HTTP, breaks something on a schedule, waits
for the backlog to drain and then reads the database: every acknowledged
turn is there once, every ingest job is done, every turn's fact exists once.
It returns a dict of figures. The integration tests run them small; the
`bench_faults` command runs them at full length and prints the table.

They use whatever database this process is configured for (the pytest test
database, or the throwaway one bench_faults makes)."""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.db import close_old_connections
from django.db.models import Count

from tests.integration import workers

# httpx logs every request at INFO
logging.getLogger("httpx").setLevel(logging.WARNING)

TEMPLATES = (
    "I really love hobby{n} more than anything else.",
    "I collect old stamps from town{n} and keep them in a blue album.",
    "My favourite board game is game{n}, we play it every Friday.",
    "I have been learning to cook dish{n} on weekends this year.",
)


def text(i: int, *, varied: bool = False) -> str:
    """One distinct fact per turn, so what must exist afterwards is exactly
    known. The rule-based extractor (no LLM) reads the first template as one
    preference; the fake LLM takes any turn's first sentence as its fact."""
    template = TEMPLATES[i % len(TEMPLATES)] if varied else TEMPLATES[0]
    return template.format(n=f"{i:06d}")


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- the stack ----------------------------------------------------------------------


@dataclass
class Stack:
    """Web, one worker and beat on one broker; each can be killed and restarted."""

    env: dict[str, str]
    logs: Path
    port: int
    web_workers: int = 2
    concurrency: int = 2
    redis: workers.Redis | None = None
    web: workers.Proc | None = None
    worker: workers.Proc | None = None
    beat: workers.Proc | None = None
    worker_starts: int = 0
    crashes: int = 0  # workers or beats found dead and restarted

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def start_web(self) -> None:
        self.web = workers.web(
            self.env, self.logs / "web.log", self.port, workers=self.web_workers, asgi=True
        ).start()
        workers.wait_http(f"{self.base}/health")

    def start_worker(self) -> None:
        self.worker_starts += 1
        self.worker = workers.worker(
            self.env, self.logs / "worker.log", concurrency=self.concurrency
        ).start()

    def start_beat(self) -> None:
        self.beat = workers.beat(
            self.env, self.logs / "beat.log", self.logs / f"beat-{self.port}"
        ).start()

    def watch(self) -> None:
        """Restart a worker or beat that died, as ./run and the compose file's
        restart policy do (a Celery worker exits when Redis drops mid-ack)."""
        if self.worker is not None and self.worker.proc and self.worker.proc.poll() is not None:
            self.crashes += 1
            self.start_worker()
        if self.beat is not None and self.beat.proc and self.beat.proc.poll() is not None:
            self.crashes += 1
            self.start_beat()

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.watch()
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    def stop(self) -> None:
        for proc in (self.worker, self.beat, self.web):
            if proc is not None:
                proc.stop()
        if self.redis is not None:
            self.redis.kill()


@contextmanager
def stack(
    logs: Path,
    *,
    redis: bool = True,
    llm: list[dict[str, Any]] | None = None,
    engram: dict[str, str] | None = None,
    web_workers: int = 2,
    concurrency: int = 2,
    beat: bool = True,
    worker: bool = True,
) -> Iterator[Stack]:
    """`engram` are ENGRAM_* settings for the processes, e.g.
    {"JOB_LEASE_SECONDS": "20"}; they are also applied to this process."""
    import json

    logs.mkdir(parents=True, exist_ok=True)
    r = workers.Redis(workers.free_port(), logs / "redis.log") if redis else None
    if r is not None:
        r.start()
    else:
        workers.purge_local_broker()
    # Clients here post as fast as answers come, far past the per-key limit
    # an agent never reaches; what is measured is the stack, not the limiter.
    extra = {"ENGRAM_RATE_LIMIT": "off"}
    extra.update({f"ENGRAM_{k}": v for k, v in (engram or {}).items()})
    if llm:
        extra["ENGRAM_LLM_PROVIDERS"] = json.dumps(llm)
    env = workers.celery_env(redis_url=r.url if r else "", extra=extra)
    s = Stack(
        env=env,
        logs=logs,
        port=workers.free_port(8400),
        web_workers=web_workers,
        concurrency=concurrency,
        redis=r,
    )
    try:
        s.start_web()
        if worker:
            s.start_worker()
        if beat:
            s.start_beat()
        yield s
    finally:
        s.stop()


def new_key(name: str) -> tuple[int, str]:
    from memory.services.spaces import create_api_key

    key, plain = create_api_key(space_name=name)
    return key.space_id, plain


def client(key: str, timeout: float = 30) -> httpx.Client:
    return httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=timeout)


# --- reading the outcome ------------------------------------------------------------


def open_jobs(space_id: int) -> int:
    from memory.models import IngestJob

    close_old_connections()
    return IngestJob.objects.filter(space_id=space_id, status__in=["pending", "running"]).count()


def wait_drained(
    s: Stack, space_id: int, timeout: float, *, tick: Callable[[], None] | None = None
) -> float:
    """Seconds until no job of the space is pending or running (-1 if not
    within `timeout`). `tick` runs every half second meanwhile."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if open_jobs(space_id) == 0:
            return time.monotonic() - started
        if tick is not None:
            tick()
        s.sleep(0.5)
    return -1.0


def verify(space_id: int, refs: list[str], *, facts: bool = True) -> dict[str, int]:
    """What the database holds for the acknowledged turn refs."""
    from memory.models import IngestJob, MemoryItem, Turn

    close_old_connections()
    expected = set(refs)
    turns = Turn.objects.filter(space_id=space_id)
    stored = list(turns.values_list("ref", flat=True))
    per_ref = Count("id")
    out = {
        "acknowledged": len(expected),
        "turns": len(stored),
        "turns_missing": len(expected - set(stored)),
        "turns_duplicated": turns.values("session_id", "ref")
        .annotate(n=per_ref)
        .filter(n__gt=1)
        .count(),
    }
    jobs = IngestJob.objects.filter(space_id=space_id)
    by_status = dict(jobs.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    out["jobs"] = sum(by_status.values())
    out["jobs_done"] = by_status.get("done", 0)
    out["jobs_dead"] = by_status.get("dead", 0)
    out["jobs_open"] = by_status.get("pending", 0) + by_status.get("running", 0)
    out["turns_without_job"] = turns.filter(jobs__isnull=True).count()
    if facts:
        items = MemoryItem.objects.filter(space_id=space_id)
        seen: dict[str, int] = {}
        for item_refs in items.values_list("source_turn_refs", flat=True):
            for ref in item_refs:
                seen[ref] = seen.get(ref, 0) + 1
        out["facts"] = items.count()
        out["facts_missing"] = len([r for r in expected if r not in seen])
        out["facts_duplicated"] = (
            len([r for r, n in seen.items() if n > 1])
            + items.values("content_hash").annotate(n=per_ref).filter(n__gt=1).count()
            + items.filter(frequency__gt=1).count()
        )
    return out


# --- posting ------------------------------------------------------------------------


@dataclass
class Poster:
    """Posts turns in batches on a thread, recording what was acknowledged
    (202), what failed and how long each POST took."""

    key: str
    base: Callable[[], str]
    total: int
    batch: int = 50
    rate: float = 0.0  # turns per second; 0 = as fast as the server answers
    prefix: str = "f"
    varied: bool = False  # phrasings only an LLM extracts (see text())
    offset: int = 0  # posters side by side post different texts
    acked: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    timeline: list[tuple[float, int, float]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        start = time.monotonic()
        with client(self.key) as http:
            for first in range(0, self.total, self.batch):
                if self.stop.is_set():
                    break
                if self.rate:
                    wait = start + first / self.rate - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                refs = [
                    f"{self.prefix}{i}" for i in range(first, min(self.total, first + self.batch))
                ]
                body = {
                    "turns": [
                        {
                            "session_id": f"s{i % 13}",
                            "role": "user",
                            "text": text(self.offset + i, varied=self.varied),
                            "ref": r,
                        }
                        for i, r in zip(range(first, first + len(refs)), refs, strict=True)
                    ]
                }
                # A client retries what was not acknowledged; the (session, ref)
                # pair makes a retried POST create nothing twice.
                while not self.stop.is_set():
                    t0 = time.monotonic()
                    try:
                        response = http.post(f"{self.base()}/turns/batch", json=body)
                        code = str(response.status_code)
                    except httpx.TransportError as exc:
                        response, code = None, exc.__class__.__name__
                    took = time.monotonic() - t0
                    self.statuses[code] = self.statuses.get(code, 0) + 1
                    self.latencies.append(took)
                    self.timeline.append(
                        (t0 - start, response.status_code if response else 0, took)
                    )
                    if response is not None and response.status_code == 202:
                        self.acked.extend(refs)
                        break
                    time.sleep(0.2)
        self.done.set()

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        return thread


# --- scenarios ----------------------------------------------------------------------


def flaky_llm(
    logs: Path,
    *,
    saves: int = 10_000,
    kill_every: float = 10.0,
    garbage: float = 0.02,
    timeouts: float = 0.02,
    llm_timeout: float = 2.0,
    drain_timeout: float = 1800.0,
    redis: bool = True,
    lease: int = 15,
) -> dict[str, Any]:
    """Saves while the LLM answers garbage or hangs now and then and the
    worker is SIGKILLed every `kill_every` seconds and restarted."""
    from tests.fakes.llm_server import FakeLLM

    # A short lease so a killed job is taken over in seconds, not minutes,
    # and a sweeper to match (the production defaults are 300 s and 60 s).
    engram = {
        "JOB_LEASE_SECONDS": str(lease),
        "SWEEP_INTERVAL_SECONDS": str(max(1, lease // 3)),
        "SWEEP_UNSENT_AFTER_SECONDS": str(max(1, lease * 2 // 3)),
        "JOB_MAX_ATTEMPTS": "10",
        "LLM_BUDGET_PER_HOUR": "10000000",
    }
    space_id, key = new_key("faults-flaky")
    started = time.monotonic()
    with ExitStack() as es:
        fake = es.enter_context(FakeLLM(garbage=garbage, timeouts=timeouts, hang=llm_timeout + 1.0))
        s = es.enter_context(
            stack(logs, redis=redis, llm=[fake.provider(timeout=llm_timeout)], engram=engram)
        )
        poster = Poster(key=key, base=lambda: s.base, total=saves, varied=True)
        thread = poster.start()
        kills = 0
        last_kill = time.monotonic()

        def tick() -> None:
            nonlocal kills, last_kill
            if time.monotonic() - last_kill >= kill_every:
                assert s.worker is not None
                s.worker.kill()
                kills += 1
                s.start_worker()
                last_kill = time.monotonic()

        while not poster.done.is_set():
            tick()
            s.sleep(0.5)
        thread.join()
        posted = time.monotonic() - started
        drained = wait_drained(s, space_id, drain_timeout, tick=tick)
        requests = len(fake.requests)
        faults = dict(fake.faults)
    figures = verify(space_id, poster.acked)
    return {
        "scenario": "flaky",
        "saves": saves,
        "posted_s": round(posted, 1),
        "drained_after_post_s": round(drained, 1),
        "worker_sigkills": kills,
        "llm_requests": requests,
        "llm_garbage": faults["garbage"],
        "llm_timeouts": faults["timeout"],
        "post_statuses": poster.statuses,
        **figures,
    }


def redis_outage(
    logs: Path,
    *,
    saves: int = 5_000,
    rate: float = 40.0,
    outage_at: float = 30.0,
    outage: float = 60.0,
    drain_timeout: float = 600.0,
    engram: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Saves at `rate` turns/s; `outage_at` s in, Redis is SIGKILLed (every
    queued message is lost) and comes back empty `outage` s later. The
    sweeper and lease settings are the production defaults unless `engram`
    overrides them."""
    space_id, key = new_key("faults-redis")
    with stack(logs, redis=True, engram=engram) as s:
        assert s.redis is not None
        poster = Poster(key=key, base=lambda: s.base, total=saves, rate=rate)
        t0 = time.monotonic()
        thread = poster.start()
        s.sleep(max(0.0, outage_at - (time.monotonic() - t0)))
        down_at = time.monotonic() - t0
        s.redis.kill()
        s.sleep(outage)
        s.redis.start()
        up_at = time.monotonic() - t0
        while thread.is_alive():
            s.sleep(0.5)
        posted = time.monotonic() - t0
        drained = wait_drained(s, space_id, drain_timeout)
        after_up = (time.monotonic() - t0) - up_at if drained >= 0 else -1.0
        crashes = s.crashes
    during = [(code, took) for at, code, took in poster.timeline if down_at <= at < up_at]
    figures = verify(space_id, poster.acked)
    return {
        "scenario": "redis",
        "saves": saves,
        "redis_down_s": round(up_at - down_at, 1),
        "posts_while_down": len(during),
        "posts_while_down_202": sum(1 for code, _ in during if code == 202),
        "post_p99_while_down_ms": round(pct([t for _, t in during], 99) * 1000),
        "post_statuses": poster.statuses,
        "posted_s": round(posted, 1),
        "drained_after_redis_back_s": round(after_up, 1),
        "worker_or_beat_restarts": crashes,
        **figures,
    }


def gunicorn_kill(
    logs: Path,
    *,
    kills: int = 15,
    kill_every: float = 4.0,
    writers: int = 4,
    batch: int = 5,
    drain_timeout: float = 300.0,
    drain: bool = True,
) -> dict[str, Any]:
    """Writers post turns nonstop while the whole gunicorn (master and
    workers) is SIGKILLed `kills` times, `kill_every` s after it answers
    again: every turn that was answered 202 must be stored, once, with its
    ingest job, and (`drain`) the jobs must all run once."""
    space_id, key = new_key("faults-web")
    with stack(logs, redis=False, worker=drain, beat=drain) as s:
        posters = [
            Poster(
                key=key,
                base=lambda: s.base,
                total=10**9,
                batch=batch,
                prefix=f"g{w}-",
                offset=w * 10**7,
            )
            for w in range(writers)
        ]
        threads = [p.start() for p in posters]
        for _ in range(kills):
            s.sleep(kill_every)
            assert s.web is not None
            s.web.kill()
            s.start_web()
        for p in posters:
            p.stop.set()
        for t in threads:
            t.join(timeout=60)
        drained = wait_drained(s, space_id, drain_timeout) if drain else 0.0
    acked = [ref for p in posters for ref in p.acked]
    statuses: dict[str, int] = {}
    for p in posters:
        for code, n in p.statuses.items():
            statuses[code] = statuses.get(code, 0) + n
    return {
        "scenario": "gunicorn",
        "gunicorn_sigkills": kills,
        "post_statuses": statuses,
        "drained_s": round(drained, 1),
        **verify(space_id, acked, facts=drain),
    }


def mixed_load(
    logs: Path,
    *,
    duration: float = 600.0,
    writers: int = 16,
    readers: int = 32,
    seed_turns: int = 2_000,
    web_workers: int = 2,
) -> dict[str, Any]:
    """`writers` threads POST /turns and `readers` threads alternate POST
    /recall and GET /context, each as fast as answers come, for `duration`
    s, while a worker runs the write pipeline behind them."""
    space_id, key = new_key("faults-load")
    lock = threading.Lock()
    write_ms: list[float] = []
    read_ms: list[float] = []
    errors: dict[str, int] = {}
    locked = [0]
    with stack(logs, redis=False, web_workers=web_workers) as s:
        seed = Poster(key=key, base=lambda: s.base, total=seed_turns, batch=200, prefix="seed")
        seed.run()
        stop = threading.Event()

        def note(
            response: httpx.Response | None, took: float, sink: list[float], what: str
        ) -> None:
            with lock:
                sink.append(took * 1000)
                if response is None or response.status_code >= 300:
                    code = f"{what} {response.status_code if response is not None else 'transport'}"
                    errors[code] = errors.get(code, 0) + 1
                if response is not None and "locked" in response.text:
                    locked[0] += 1

        def call(
            http: httpx.Client, method: str, url: str, **kw: Any
        ) -> tuple[httpx.Response | None, float]:
            t = time.monotonic()
            try:
                return http.request(method, url, **kw), time.monotonic() - t
            except httpx.TransportError:
                return None, time.monotonic() - t

        def writer(w: int) -> None:
            i = 0
            with client(key) as http:
                while not stop.is_set():
                    body = {
                        "session_id": f"w{w}",
                        "role": "user",
                        "text": text(10**6 + w * 10**5 + i),
                        "ref": f"w{w}-{i}",
                    }
                    response, took = call(http, "POST", f"{s.base}/turns", json=body)
                    note(response, took, write_ms, "write")
                    i += 1

        def reader(r: int) -> None:
            i = 0
            with client(key) as http:
                while not stop.is_set():
                    topic = TEMPLATES[i % len(TEMPLATES)].split()[2]
                    if i % 2:
                        response, took = call(
                            http,
                            "POST",
                            f"{s.base}/recall",
                            json={"query": f"what {topic} {r}", "k": 8},
                        )
                    else:
                        response, took = call(
                            http, "GET", f"{s.base}/context", params={"query": f"{topic} {i}"}
                        )
                    note(response, took, read_ms, "read")
                    i += 1

        threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
        threads += [threading.Thread(target=reader, args=(r,), daemon=True) for r in range(readers)]
        load_before = load_average()
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(duration)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        elapsed = time.monotonic() - t0
        load_after = load_average()
    return {
        "scenario": "load",
        "seconds": round(elapsed, 1),
        "writers": writers,
        "readers": readers,
        "writes": len(write_ms),
        "reads": len(read_ms),
        "writes_per_s": round(len(write_ms) / elapsed, 1),
        "reads_per_s": round(len(read_ms) / elapsed, 1),
        "write_p50_ms": round(statistics.median(write_ms)) if write_ms else 0,
        "write_p99_ms": round(pct(write_ms, 99)),
        "read_p50_ms": round(statistics.median(read_ms)) if read_ms else 0,
        "read_p99_ms": round(pct(read_ms, 99)),
        "errors": errors,
        "database_locked": locked[0],
        "load_before": load_before,
        "load_after": load_after,
        "engine": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
    }

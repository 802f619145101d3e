"""HTTP throughput of POST /api/v1/recall and GET /api/v1/context.

    ENGRAM_DATA_DIR=/tmp/bench python manage.py bench_http --items 100000 --turns 100000

Builds (or, as bench_recall --reuse does, finds) a space of that many facts
and turns, starts the web server exactly as ./run starts it (gunicorn with
uvicorn workers, `engram_run.web_command`), and drives it from this process
with `--concurrency` keep-alive connections for `--seconds` per endpoint,
each request with a query of its own (never a repeat a cache could answer).
Prints requests/s, p50/p95/p99, errors and the load average. `--url` and
`--key` measure a server that is already running instead.

The load generator is a plain asyncio HTTP/1.1 client: a few tens of
microseconds per request, so on a small machine it leaves the cores to the
server it measures (httpx would take about as much CPU as the server).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import psutil
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections

from memory.management.commands import bench_recall
from memory.management.commands.engram_run import web_command
from memory.models import Space
from memory.services.spaces import create_api_key


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class _Connection:
    """One keep-alive HTTP/1.1 connection; answers must carry Content-Length
    (uvicorn sends it for Django's answers)."""

    def __init__(self, host: str, port: int, headers: str) -> None:
        self.host, self.port, self.headers = host, port, headers
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.headers}"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        status_line = await self.reader.readline()
        if not status_line:
            await self.close()
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split()[1])
        length = 0
        close = False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and "close" in value.lower():
                close = True
        payload = await self.reader.readexactly(length)
        if close:
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def _drive(
    url: str,
    key: str,
    requests: list[tuple[str, str, bytes]],
    *,
    concurrency: int,
    seconds: float,
    warmup: float,
    cpu: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Send `requests` in order from `concurrency` connections until they or
    the time run out; the first `warmup` seconds are not counted (each worker
    process builds its term statistics on its first recall)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    headers = f"Authorization: Bearer {key}\r\n"
    queue = iter(requests)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors = 0
    start = time.perf_counter()
    warm_until = start + warmup
    stop_at = warm_until + seconds
    first_error = ""

    async def client() -> None:
        nonlocal errors, first_error
        conn = _Connection(host, port, headers)
        for method, path, body in queue:
            now = time.perf_counter()
            if now >= stop_at:
                break
            try:
                status, payload = await conn.request(method, path, body)
            except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
                errors += 1
                first_error = first_error or repr(exc)
                await conn.close()
                conn = _Connection(host, port, headers)
                continue
            done = time.perf_counter()
            if now >= warm_until:
                latencies.append((done - now) * 1000)
                statuses[status] = statuses.get(status, 0) + 1
                if status != 200 and not first_error:
                    first_error = f"{status}: {payload[:200]!r}"
        await conn.close()

    cpu_used: list[float] = []

    async def sample_cpu() -> None:
        # The server's CPU seconds over the measured window only.
        if cpu is None:
            return
        await asyncio.sleep(max(0.0, warm_until - time.perf_counter()))
        before = cpu()
        await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
        cpu_used.append(cpu() - before)

    probe = asyncio.ensure_future(sample_cpu())
    await asyncio.gather(*(client() for _ in range(concurrency)))
    measured = min(time.perf_counter(), stop_at) - warm_until
    if not probe.done():
        if time.perf_counter() >= stop_at:
            # The clients stopped at the end of the window, the probe wakes
            # there too: its reading is a moment away.
            await probe
        else:  # the queries ran out first
            probe.cancel()
    return {
        "latencies": sorted(latencies),
        "statuses": statuses,
        "errors": errors,
        "seconds": measured,
        "first_error": first_error,
        "ran_out": next(queue, None) is None,
        "server_cpu": cpu_used[0] if cpu_used else None,
    }


def _cpu_of(server: subprocess.Popen[bytes]) -> Callable[[], float]:
    """CPU seconds of the server and its worker processes so far."""
    master = psutil.Process(server.pid)

    def used() -> float:
        total = 0.0
        for proc in [master, *master.children(recursive=True)]:
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    return used


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Command(BaseCommand):
    help = "HTTP throughput of POST /recall and GET /context at scale (requests/s, p50/p95/p99)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=100_000)
        parser.add_argument("--turns", type=int, default=100_000)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--k", type=int, default=8)
        parser.add_argument("--concurrency", type=int, default=16, help="open connections")
        parser.add_argument("--seconds", type=float, default=15.0, help="per endpoint")
        parser.add_argument(
            "--warmup", type=float, default=5.0, help="seconds of load before measuring"
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("ENGRAM_WEB_WORKERS", "2")),
            help="gunicorn workers of the server this command starts (as ./run --web-workers)",
        )
        parser.add_argument(
            "--endpoint", choices=("recall", "context", "both"), default="both", help="what to load"
        )
        parser.add_argument("--url", help="measure this running server instead of starting one")
        parser.add_argument("--key", help="API key for --url (its space is what is searched)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if bool(opts["url"]) != bool(opts["key"]):
            raise CommandError("--url and --key go together")
        rng = random.Random(opts["seed"])
        texts = self._space_texts(opts) if not opts["url"] else self._texts_of_key(opts["key"])
        endpoints = ("recall", "context") if opts["endpoint"] == "both" else (opts["endpoint"],)
        # Far more distinct queries than any run sends: none is ever repeated,
        # within an endpoint or across them.
        wanted = int(opts["seconds"] + opts["warmup"] + 1) * 1500
        queries = self._queries(rng, texts, wanted * len(endpoints))
        server = None
        url, key = opts["url"], opts["key"]
        try:
            if url is None:
                url, key, server = self._start_server(opts)
            for n, endpoint in enumerate(endpoints):
                mine = queries[n * wanted : (n + 1) * wanted]
                requests = [self._request(endpoint, q, opts["k"]) for q in mine]
                self.stdout.write(
                    f"{endpoint}: {opts['concurrency']} connections for {opts['seconds']:.0f} s "
                    f"(load average before: {_loadavg()})"
                )
                result = asyncio.run(
                    _drive(
                        url,
                        key,
                        requests,
                        concurrency=opts["concurrency"],
                        seconds=opts["seconds"],
                        warmup=opts["warmup"],
                        cpu=_cpu_of(server) if server is not None else None,
                    )
                )
                self._report(endpoint, result)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=15)

    def _request(self, endpoint: str, query: str, k: int) -> tuple[str, str, bytes]:
        if endpoint == "recall":
            return "POST", "/api/v1/recall", json.dumps({"query": query, "k": k}).encode()
        return "GET", f"/api/v1/context?query={quote(query)}", b""

    def _report(self, endpoint: str, result: dict[str, Any]) -> None:
        lat = result["latencies"]
        ok = result["statuses"].get(200, 0)
        rate = len(lat) / result["seconds"] if result["seconds"] > 0 else 0.0
        self.stdout.write(
            f"  {endpoint}: {rate:7.1f} requests/s  p50 {_percentile(lat, 0.5):6.1f} ms  "
            f"p95 {_percentile(lat, 0.95):6.1f} ms  p99 {_percentile(lat, 0.99):6.1f} ms  "
            f"(n={len(lat)}, 200: {ok}, other: {len(lat) - ok}, errors: {result['errors']})"
        )
        if result["server_cpu"] is not None and lat:
            self.stdout.write(
                f"  server CPU: {result['server_cpu'] * 1000 / len(lat):.2f} ms per request "
                f"({result['server_cpu'] / result['seconds']:.2f} cores busy)"
            )
        self.stdout.write(f"  load average after: {_loadavg()}")
        if result["first_error"]:
            self.stdout.write(f"  first failure: {result['first_error']}")
        if result["ran_out"]:
            self.stdout.write("  (ran out of distinct queries before the time was up)")

    # --- the space -------------------------------------------------------------------
    def _space_texts(self, opts: dict[str, Any]) -> list[str]:
        """The bench_recall --reuse space of this size and seed, built if missing."""
        call_command("migrate", verbosity=0, interactive=False)
        name = f"bench-recall-{opts['items']}-{opts['turns']}-{opts['seed']}"
        builder = bench_recall.Command()
        space = Space.objects.filter(name=name).first()
        if space is not None and not builder._complete(space, opts["items"], opts["turns"]):
            self.stdout.write(f"{name} is incomplete (an interrupted build): rebuilding")
            builder._delete(space)
            space = None
        self.stdout.write(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        if space is None:
            space = Space.objects.create(name=name)
            rng = random.Random(opts["seed"])
            vocab = bench_recall._vocabulary(rng, 20_000)
            weights = bench_recall.zipf_weights(len(vocab))
            started = time.perf_counter()
            texts = builder._build(
                space, rng, vocab, weights, items=opts["items"], turns=opts["turns"]
            )
            self.stdout.write(f"built {name} in {time.perf_counter() - started:.0f} s")
        else:
            texts = builder._sample(space)
            self.stdout.write(f"reusing {name}")
        self._space = space
        return texts

    def _texts_of_key(self, key: str) -> list[str]:
        # Queries for a running server: texts drawn as bench_recall draws
        # the space's (its vocabulary, by frequency), so their words are as
        # common as the stored ones. Words taken evenly from the vocabulary
        # were mostly rare ones, which match few rows: the same server did
        # 280-320 /context requests/s on those against 220 on these.
        rng = random.Random(7)
        vocab = bench_recall._vocabulary(rng, 20_000)
        cum_weights = list(itertools.accumulate(bench_recall.zipf_weights(len(vocab))))
        return [bench_recall.sentence(rng, vocab, cum_weights) for _ in range(3000)]

    def _queries(self, rng: random.Random, texts: list[str], n: int) -> list[str]:
        seen: set[str] = set()
        queries: list[str] = []
        attempts = 0
        while len(queries) < n and attempts < n * 5:
            attempts += 1
            words = rng.choice(texts).split()
            picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
            query = "what about " + " ".join(picked) + "?"
            if query not in seen:
                seen.add(query)
                queries.append(query)
        return queries

    # --- the server --------------------------------------------------------------------
    def _start_server(self, opts: dict[str, Any]) -> tuple[str, str, subprocess.Popen[bytes]]:
        _, key = create_api_key(space_name=self._space.name, name="bench_http")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        bind = f"127.0.0.1:{port}"
        env = dict(os.environ)
        env.setdefault("ENGRAM_DATA_DIR", str(settings.DATA_DIR))
        # The load is one key at hundreds of requests a second: more than the
        # default limit lets through, which is the point of a limit.
        env.setdefault("ENGRAM_RATE_LIMIT", "off")
        command = web_command(sys.executable, bind, opts["workers"])
        connections.close_all()
        # Its access log (one line a request, as under ./run) goes to a file.
        log = open(Path(settings.DATA_DIR) / "bench_http-server.log", "ab")
        server = subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        url = f"http://{bind}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise CommandError("the web server did not start")
            time.sleep(0.2)
        self.stdout.write(f"server: {' '.join(command[2:])}")
        return url, key, server

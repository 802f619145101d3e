"""HTTP throughput of POST /api/v1/recall and GET /api/v1/context.

    ENGRAM_DATA_DIR=/tmp/bench python manage.py bench_http --items 100000 --turns 100000

Builds (or, as bench_recall --reuse does, finds) a space of that many facts
and turns, starts the web server exactly as ./run starts it (gunicorn with
uvicorn workers, `engram_run.web_command`), and drives it from this process
with `--concurrency` keep-alive connections for `--seconds` per endpoint,
each request with a query of its own (never a repeat a cache could answer).
Prints requests/s, p50/p95/p99, errors and the load average. `--url` and
`--key` measure a server that is already running instead. The load client
is memory/evaluation/http_load.py.

`--against "ENGRAM_WEB_RUNNING=1 ..."` compares two servers instead: the
second started with those environment variables set on top. Both run at
once and are loaded in turn, `--seconds` each, A B B A A B ... for
`--rounds` rounds, and the ratio B/A is printed round by round: on a shared
machine whose speed drifts by a third from one minute to the next, two
separate runs cannot tell a 10% change from the drift, while windows
seconds apart see the same machine.

`--checkout DIR` runs B from another checkout of Engram (with or without
`--against`), so two builds are compared the same way: for example
`git worktree add ../before HEAD~1`, then `--checkout ../before`. B uses
this command's interpreter and database, so the checkout must need the same
packages and migrations.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import random
import shlex
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections

from memory.evaluation.http_load import cpu_of, drive, percentile
from memory.management.commands import bench_recall
from memory.management.commands.engram_run import default_web_workers, web_command
from memory.models import Space
from memory.services.spaces import create_api_key

# A server's URL, an API key for it, and its process when this command started it.
Server = tuple[str, str, "subprocess.Popen[bytes] | None"]


def _overrides(spec: str) -> dict[str, str]:
    """--against's "NAME=VALUE NAME=VALUE" as a dict."""
    try:
        parts = shlex.split(spec)
    except ValueError as exc:  # an unclosed quote
        raise CommandError(f"--against: {exc}") from None
    out: dict[str, str] = {}
    for part in parts:
        name, sep, value = part.partition("=")
        if not sep or not name:
            raise CommandError(f"--against: {part!r} is not NAME=VALUE")
        out[name] = value
    if not out:
        raise CommandError("--against needs at least one NAME=VALUE")
    return out


def _checkout(path: Path) -> Path:
    """--checkout's directory, checked to hold Engram."""
    if not (path / "manage.py").is_file() or not (path / "engram_site" / "asgi.py").is_file():
        raise CommandError(f"--checkout: {path} is not a checkout of Engram (no manage.py)")
    return path.resolve()


def _endpoints(opts: dict[str, Any]) -> tuple[str, ...]:
    return ("recall", "context") if opts["endpoint"] == "both" else (opts["endpoint"],)


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    """Stop a server this command started (None: it started none)."""
    if process is not None:
        process.terminate()
        process.wait(timeout=15)


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
            default=default_web_workers(),
            help="gunicorn workers of the server this command starts (as ./run --web-workers)",
        )
        parser.add_argument(
            "--endpoint", choices=("recall", "context", "both"), default="both", help="what to load"
        )
        parser.add_argument("--url", help="measure this running server instead of starting one")
        parser.add_argument("--key", help="API key for --url (its space is what is searched)")
        parser.add_argument(
            "--against",
            metavar="'NAME=VALUE ...'",
            help="compare with a second server started with these environment variables set",
        )
        parser.add_argument(
            "--checkout",
            type=Path,
            help="compare with a second server run from this checkout of Engram "
            "(same interpreter and database)",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=6,
            help="with --against or --checkout: windows of each server",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if bool(opts["url"]) != bool(opts["key"]):
            raise CommandError("--url and --key go together")
        if opts["against"] is not None or opts["checkout"] is not None:
            if opts["url"]:
                raise CommandError("--against and --checkout start both servers: leave out --url")
            if opts["rounds"] < 1:
                raise CommandError("--rounds must be at least 1")
            checkout = _checkout(opts["checkout"]) if opts["checkout"] is not None else None
            overrides = _overrides(opts["against"]) if opts["against"] is not None else {}
            self._compare(opts, overrides, checkout)
            return
        rng = random.Random(opts["seed"])
        texts = self._space_texts(opts) if not opts["url"] else self._texts_of_key(opts["key"])
        endpoints = _endpoints(opts)
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
                result = self._window(
                    opts,
                    (url, key, server),
                    requests,
                    seconds=opts["seconds"],
                    warmup=opts["warmup"],
                )
                self._report(endpoint, result)
        finally:
            _stop(server)

    def _compare(
        self, opts: dict[str, Any], overrides: dict[str, str], checkout: Path | None
    ) -> None:
        """Two servers, the second with `overrides` and run from `checkout`
        (None: this one), loaded in turn (A B B A ...) so both see the
        machine as it is that minute."""
        rng = random.Random(opts["seed"])
        texts = self._space_texts(opts)
        endpoints = _endpoints(opts)
        # Distinct queries for every window, far more than it can send.
        warm_n, round_n = (int(s + 2) * 1500 for s in (opts["warmup"], opts["seconds"]))
        per_endpoint = 2 * warm_n + 2 * opts["rounds"] * round_n
        queries = iter(self._queries(rng, texts, per_endpoint * len(endpoints)))
        label = " and ".join(
            part
            for part in (
                "with " + " ".join(f"{k}={v}" for k, v in overrides.items()) if overrides else "",
                f"run from {checkout}" if checkout is not None else "",
            )
            if part
        )
        servers: list[Server] = []
        try:
            servers.append(self._start_server(opts))
            servers.append(self._start_server(opts, overrides, checkout=checkout))
            for endpoint in endpoints:
                self.stdout.write(
                    f"{endpoint}: A as configured, B {label}; {opts['concurrency']} "
                    f"connections, {opts['rounds']} rounds of {opts['seconds']:.0f} s each"
                )

                def requests(n: int, endpoint: str = endpoint) -> list[tuple[str, str, bytes]]:
                    return [
                        self._request(endpoint, q, opts["k"]) for q in itertools.islice(queries, n)
                    ]

                for server in servers:  # each builds its term statistics first
                    self._window(opts, server, requests(warm_n), seconds=1, warmup=opts["warmup"])
                self._rounds(opts, servers, lambda: requests(round_n))
        finally:
            for _, _, process in servers:
                _stop(process)

    def _rounds(
        self,
        opts: dict[str, Any],
        servers: list[Server],
        requests: Callable[[], list[tuple[str, str, bytes]]],
    ) -> None:
        """--rounds windows of each server, A first in odd rounds and B in
        even ones; a line per round and the median ratios B/A (requests/s and
        server CPU a request)."""
        ratios: list[float] = []
        cpu_ratios: list[float] = []
        for n in range(opts["rounds"]):
            order = (0, 1) if n % 2 == 0 else (1, 0)
            got = {
                w: self._window(opts, servers[w], requests(), seconds=opts["seconds"])
                for w in order
            }
            rates = [len(got[w]["latencies"]) / got[w]["seconds"] for w in (0, 1)]
            cpus = [_cpu_per_request(got[w]) for w in (0, 1)]
            line = []
            for which, rate in enumerate(rates):
                result = got[which]
                other = len(result["latencies"]) - result["statuses"].get(200, 0)
                notes = (f" non-200 {other}" if other else "") + (
                    f" errors {result['errors']}" if result["errors"] else ""
                )
                line.append(
                    f"{'AB'[which]} {rate:6.1f}/s p95 "
                    f"{percentile(result['latencies'], 0.95):5.1f} ms "
                    f"cpu {cpus[which]:5.2f} ms{notes}"
                )
            ratio = rates[1] / rates[0] if rates[0] else float("nan")
            if rates[0]:
                ratios.append(ratio)
            if cpus[0] and not any(math.isnan(c) for c in cpus):
                cpu_ratios.append(cpus[1] / cpus[0])
            self.stdout.write(f"  round {n + 1}: {'  '.join(line)}  B/A {ratio:.3f}")
        if ratios:
            ratios.sort()
            self.stdout.write(
                f"  B/A requests/s: median {statistics.median(ratios):.3f} "
                f"(min {ratios[0]:.3f}, max {ratios[-1]:.3f}; B ahead in "
                f"{sum(r > 1 for r in ratios)} of {len(ratios)} rounds)"
            )
        if cpu_ratios:
            # CPU a request drifts with the machine less than requests/s do.
            cpu_ratios.sort()
            self.stdout.write(
                f"  B/A server CPU per request: median {statistics.median(cpu_ratios):.3f} "
                f"(min {cpu_ratios[0]:.3f}, max {cpu_ratios[-1]:.3f}; B cheaper in "
                f"{sum(r < 1 for r in cpu_ratios)} of {len(cpu_ratios)} rounds)"
            )

    def _window(
        self,
        opts: dict[str, Any],
        server: Server,
        requests: list[tuple[str, str, bytes]],
        *,
        seconds: float,
        warmup: float = 0.0,
    ) -> dict[str, Any]:
        """One window of load on a server; its CPU is read when this
        command started it."""
        url, key, process = server
        return asyncio.run(
            drive(
                url,
                key,
                requests,
                concurrency=opts["concurrency"],
                seconds=seconds,
                warmup=warmup,
                cpu=cpu_of(process) if process is not None else None,
            )
        )

    def _request(self, endpoint: str, query: str, k: int) -> tuple[str, str, bytes]:
        if endpoint == "recall":
            return "POST", "/api/v1/recall", json.dumps({"query": query, "k": k}).encode()
        return "GET", f"/api/v1/context?query={quote(query)}", b""

    def _report(self, endpoint: str, result: dict[str, Any]) -> None:
        lat = result["latencies"]
        ok = result["statuses"].get(200, 0)
        rate = len(lat) / result["seconds"] if result["seconds"] > 0 else 0.0
        self.stdout.write(
            f"  {endpoint}: {rate:7.1f} requests/s  p50 {percentile(lat, 0.5):6.1f} ms  "
            f"p95 {percentile(lat, 0.95):6.1f} ms  p99 {percentile(lat, 0.99):6.1f} ms  "
            f"(n={len(lat)}, 200: {ok}, other: {len(lat) - ok}, errors: {result['errors']})"
        )
        if result["server_cpu"] is not None and lat:
            self.stdout.write(
                f"  server CPU: {_cpu_per_request(result):.2f} ms per request "
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
    def _start_server(
        self,
        opts: dict[str, Any],
        overrides: dict[str, str] | None = None,
        *,
        checkout: Path | None = None,
    ) -> Server:
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
        env.update(overrides or {})
        # Two servers at once (--against) each need a control socket of their own.
        # ENGRAM_WEB_WORKERS among the overrides sets B's processes, as it does ./run's.
        workers = int((overrides or {}).get("ENGRAM_WEB_WORKERS", opts["workers"]))
        command = web_command(sys.executable, bind, workers, control=f"gunicorn-{port}.ctl")
        connections.close_all()
        # Its access log (one line a request, as under ./run) goes to a file.
        log = open(Path(settings.DATA_DIR) / "bench_http-server.log", "ab")
        server = subprocess.Popen(
            # `python -m gunicorn` imports the application from its working
            # directory first: a checkout's server runs that checkout's code.
            command,
            cwd=checkout or settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
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


def _cpu_per_request(result: dict[str, Any]) -> float:
    """Milliseconds of the server's CPU a measured request, NaN when unread."""
    n = len(result["latencies"])
    cpu = result["server_cpu"]
    return 1000 * cpu / n if cpu is not None and n else float("nan")

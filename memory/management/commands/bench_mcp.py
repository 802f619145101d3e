"""Tool-call latency over MCP Streamable HTTP.

    ENGRAM_DATA_DIR=$(mktemp -d) python manage.py bench_mcp --items 10000

Builds a synthetic space (the same generator as bench_recall), starts the
web server as ./run does (gunicorn with uvicorn workers on the ASGI app),
connects the official MCP client to /mcp with a Bearer key and times
`memory_search` tool calls end to end (client request to parsed result),
printing p50/p95/p99. Run it on a scratch data directory: it migrates the
configured database and deletes the bench space afterwards (unless --reuse).
"""

from __future__ import annotations

import logging
import os
import random
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from memory.management.commands.bench_recall import Command as RecallBench
from memory.management.commands.bench_recall import (
    _loadavg,
    _percentiles,
    _vocabulary,
    zipf_weights,
)
from memory.management.commands.engram_run import WORKER_CLASS
from memory.models import MemoryItem, Space
from memory.services.spaces import create_api_key

logging.getLogger("httpx2").setLevel(logging.WARNING)


class Command(BaseCommand):
    help = "Benchmark memory_search latency over MCP Streamable HTTP."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument("--turns", type=int, default=0)
        parser.add_argument("--calls", type=int, default=300)
        parser.add_argument("--k", type=int, default=8)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--workers", type=int, default=1)
        parser.add_argument("--reuse", action="store_true", help="keep and reuse the space")

    def handle(self, *args: Any, **opts: Any) -> None:
        rng = random.Random(opts["seed"])
        call_command("migrate", verbosity=0, interactive=False)
        self.stdout.write(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        name = f"bench-mcp-{opts['items']}-{opts['turns']}-{opts['seed']}"
        space = Space.objects.filter(name=name).first() if opts["reuse"] else None
        helper = RecallBench()
        if space is not None and not helper._complete(space, opts["items"], opts["turns"]):
            helper._delete(space)
            space = None
        if space is None:
            space = Space.objects.create(
                name=name if opts["reuse"] else f"bench-mcp-{int(time.time())}"
            )
            vocab = _vocabulary(rng, 20_000)
            weights = zipf_weights(len(vocab))
            started = time.perf_counter()
            texts = helper._build(
                space, rng, vocab, weights, items=opts["items"], turns=opts["turns"]
            )
            self.stdout.write(
                f"built {opts['items']} items + {opts['turns']} turns in "
                f"{time.perf_counter() - started:.1f}s"
            )
        else:
            texts = helper._sample(space)
            self.stdout.write(f"reusing {name}")
        self.stdout.write(f"items in the space: {MemoryItem.objects.filter(space=space).count()}")
        queries = []
        for _ in range(opts["calls"]):
            words = rng.choice(texts).split()
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
        _, key = create_api_key(space_name=space.name)
        try:
            self._measure(key, queries, k=opts["k"], workers=opts["workers"])
        finally:
            if not opts["reuse"]:
                helper._delete(space)

    def _measure(self, key: str, queries: list[str], *, k: int, workers: int) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ)
        env.setdefault("ENGRAM_DATA_DIR", str(settings.DATA_DIR))
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "engram_site.asgi:application",
                "--worker-class",
                WORKER_CLASS,
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--log-level",
                "warning",
                "--control-socket",
                str(settings.DATA_DIR / f"gunicorn-bench-{port}.ctl"),
            ],
            cwd=settings.BASE_DIR,
            env=env,
        )
        try:
            samples, server_ms, rest = anyio.run(
                self._calls, f"http://127.0.0.1:{port}", key, queries, k
            )
        finally:
            server.terminate()
            server.wait(timeout=15)
        self.stdout.write(
            f"MCP tools/call memory_search (k={k}), end to end: {_percentiles(samples)}"
        )
        self.stdout.write(
            f"  of which recall inside the server (took_ms): {_percentiles(server_ms)}"
        )
        self.stdout.write(
            f"REST POST /api/v1/tools/memory_search, same server: {_percentiles(rest)}"
        )
        self.stdout.write(f"load average: {_loadavg()}")

    async def _calls(
        self, base: str, key: str, queries: list[str], k: int
    ) -> tuple[list[float], list[float], list[float]]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        deadline = time.monotonic() + 60
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=30
        ) as http:
            while True:
                try:
                    if (await http.get(f"{base}/api/v1/health")).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise CommandError("the server did not start")
                await anyio.sleep(0.2)
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                for q in queries[:30]:  # warm caches, connections and the thread pool
                    await client.call_tool("memory_search", {"query": q, "k": k})
                samples: list[float] = []
                server_ms: list[float] = []
                for q in queries:
                    t = time.perf_counter()
                    result = await client.call_tool("memory_search", {"query": q, "k": k})
                    samples.append((time.perf_counter() - t) * 1000)
                    if result.is_error or result.structured_content is None:
                        raise CommandError(f"memory_search failed: {result.content}")
                    server_ms.append(float(result.structured_content["took_ms"]))
            rest: list[float] = []
            for q in queries:
                t = time.perf_counter()
                response = await http.post(
                    f"{base}/api/v1/tools/memory_search", json={"query": q, "k": k}
                )
                response.json()
                rest.append((time.perf_counter() - t) * 1000)
                response.raise_for_status()
        return samples, server_ms, rest

"""The load client of `manage.py bench_http`: keep-alive HTTP/1.1
connections driven from one asyncio loop, latencies per request, and the
CPU the server's processes spent in the measured window.

A plain asyncio client rather than httpx: a few tens of microseconds per
request, so on a small machine it leaves the cores to the server it
measures (httpx would take about as much CPU as the server)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import psutil


def percentile(ordered: list[float], q: float) -> float:
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


async def drive(
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


def cpu_of(server: subprocess.Popen[bytes]) -> Callable[[], float]:
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

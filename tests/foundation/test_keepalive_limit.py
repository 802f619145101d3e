"""Keep-alive connections are ended after ENGRAM_KEEPALIVE_REQUESTS answers
(engram_site/serving.py), so the connections a client opens together spread
over the worker processes instead of all landing on the first one awake."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from django.conf import settings
from django.db import connection

from engram_site.serving import KeepAliveLimit
from memory.management.commands.engram_run import web_command
from memory.models import MemoryItem, Space
from memory.services.spaces import create_api_key


async def _answer(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x", b"1")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _headers(app: KeepAliveLimit, client: tuple[str, int]) -> list[tuple[bytes, bytes]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "client": client, "server": ("127.0.0.1", 8000)}
    asyncio.run(app(scope, None, send))
    return list(sent[0]["headers"])


def test_every_nth_answer_on_a_connection_closes_it() -> None:
    app = KeepAliveLimit(_answer, requests=3)
    one, other = ("127.0.0.1", 50001), ("127.0.0.1", 50002)
    closes = [(b"connection", b"close") in _headers(app, one) for _ in range(7)]
    assert closes == [False, False, True, False, False, True, False]
    # Counted per connection: another one starts at its own first answer.
    assert (b"connection", b"close") not in _headers(app, other)
    assert (b"x", b"1") in _headers(app, other)


def test_zero_keeps_connections_open_and_other_scopes_pass() -> None:
    app = KeepAliveLimit(_answer, requests=0)
    assert all((b"connection", b"close") not in _headers(app, ("h", 1)) for _ in range(5))
    seen: list[str] = []

    async def lifespan(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    asyncio.run(KeepAliveLimit(lifespan, requests=1)({"type": "lifespan"}, None, None))
    assert seen == ["lifespan"]


# --- over real HTTP, two workers as ./run starts them ---------------------------------


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.fixture
def two_workers(request: pytest.FixtureRequest) -> Iterator[tuple[int, str, list[int]]]:
    space = Space.objects.create(name="spread")
    MemoryItem.objects.bulk_create(
        MemoryItem(space=space, text=f"kayak trip number {i} along the coast of fjord {i % 37}")
        for i in range(3000)
    )
    _, key = create_api_key(space_name="spread")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {
        **os.environ,
        "ENGRAM_DATABASE_URL": _database_url(),
        "ENGRAM_RATE_LIMIT": "off",
        "ENGRAM_KEEPALIVE_REQUESTS": request.param,
    }
    command = web_command(sys.executable, f"127.0.0.1:{port}", 2)
    command[command.index("--control-socket") + 1] = str(settings.DATA_DIR / f"g-{port}.ctl")
    proc = subprocess.Popen(
        command,
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [c.pid for c in psutil.Process(proc.pid).children()]
            time.sleep(0.2)
        while time.monotonic() < deadline:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request(
                    "GET", "/api/v1/health"
                )
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(2)  # both workers up and listening
        yield port, key, workers
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _load(port: int, key: str, *, connections: int, seconds: float) -> int:
    done = [0]
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    # All connected before the first request, as a client's pool is: idle
    # workers, so the kernel gives every one of them to the same worker.
    opened = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(connections)]
    for conn in opened:
        conn.connect()

    def client(n: int) -> None:
        conn = opened[n]
        i = 0
        while time.monotonic() < stop:
            body = json.dumps({"query": f"kayak fjord {n} {i % 37} coast", "k": 8})
            conn.request(
                "POST",
                "/api/v1/recall",
                body,
                {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            response.read()
            assert response.status == 200
            if response.getheader("connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            i += 1
            with lock:
                done[0] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0]


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("two_workers", ["20"], indirect=True)
def test_connections_opened_together_spread_over_both_workers(two_workers) -> None:  # type: ignore[no-untyped-def]
    port, key, workers = two_workers
    before = {pid: psutil.Process(pid).cpu_times() for pid in workers}
    served = _load(port, key, connections=12, seconds=8)
    used = {pid: sum(psutil.Process(pid).cpu_times()[:2]) - sum(before[pid][:2]) for pid in workers}
    share = min(used.values()) / sum(used.values())
    assert served > 100
    # Without the limit one worker took 15 of 16 such connections (a tenth of
    # the work); spread, each does a fair part.
    assert share > 0.25, used

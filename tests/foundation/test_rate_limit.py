"""Rate limits: 429 JSON with Retry-After per API key and per client address
for requests without a valid key, counted in the shared cache (the SQLite
cache file, atomic across processes, and Redis), across gunicorn workers."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client

from engram_site.cache import SQLiteCache
from engram_site.ratelimit import Rate, parse_rate
from memory.management.commands.engram_run import WORKER_CLASS
from memory.services.spaces import create_api_key

TURN = {"session_id": "s1", "role": "user", "text": "Anna moved to Lisbon in May."}


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("600/min", Rate(600, 60)),
        ("20/s", Rate(20, 1)),
        ("10000/hour", Rate(10000, 3600)),
        ("100/10s", Rate(100, 10)),
        (" 5 / minutes ", Rate(5, 60)),
        ("off", None),
        ("0", None),
    ],
)
def test_it_reads_rates(text, rate):
    assert parse_rate("ENGRAM_RATE_LIMIT", text) == rate


@pytest.mark.parametrize("text", ["600", "600/fortnight", "0/min", "-5/min", "many/min"])
def test_it_refuses_rates_it_cannot_read(text):
    with pytest.raises(ImproperlyConfigured, match="ENGRAM_RATE_LIMIT"):
        parse_rate("ENGRAM_RATE_LIMIT", text)


# --- over the API, in-process -----------------------------------------------------


@pytest.fixture
def limits(settings):  # type: ignore[no-untyped-def]
    def set_limits(per_key: Rate | None, anonymous: Rate | None) -> None:
        settings.RATE_LIMIT = per_key
        settings.RATE_LIMIT_ANONYMOUS = anonymous

    return set_limits


@pytest.mark.django_db
def test_a_key_over_its_limit_gets_429_json_with_retry_after(limits, api, client_for):
    limits(Rate(3, 60), None)
    assert [api.get("/api/v1/status").status_code for _ in range(3)] == [200, 200, 200]
    response = api.post("/api/v1/turns", json.dumps(TURN), content_type="application/json")
    assert response.status_code == 429
    assert response["Content-Type"].startswith("application/json")
    assert "rate limit" in response.json()["detail"] and "3 requests" in response.json()["detail"]
    assert 1 <= int(response["Retry-After"]) <= 60
    # Another key has a count of its own.
    _, other = create_api_key(space_name="other-space")
    assert client_for(other).get("/api/v1/status").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header", [None, "Bearer eng_nothere_abcdef", "Bearer not-our-format", "Basic dXNlcjpwYXNz"]
)
def test_requests_without_a_valid_key_are_limited_per_address(limits, api, header):
    limits(Rate(100, 60), Rate(2, 60))
    address = f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    client = Client(REMOTE_ADDR=address, **({"HTTP_AUTHORIZATION": header} if header else {}))
    assert [client.get("/api/v1/status").status_code for _ in range(3)] == [401, 401, 429]
    assert "client address" in client.get("/api/v1/status").json()["detail"]
    # A valid key from the same address is not held back by the guesses.
    assert api.get("/api/v1/status", REMOTE_ADDR=address).status_code == 200


@pytest.mark.django_db
def test_health_is_never_limited(limits, client):
    limits(Rate(1, 60), Rate(1, 60))
    assert {client.get("/api/v1/health").status_code for _ in range(5)} == {200}


# --- the counters: atomic across processes --------------------------------------


def _hammer(path: str, key: str, times: int) -> None:
    cache = SQLiteCache(path, {})
    for _ in range(times):
        try:
            cache.incr(key)
        except ValueError:
            if not cache.add(key, 1, timeout=60):
                cache.incr(key)


def test_the_sqlite_cache_counts_exactly_across_processes(tmp_path: Path):
    path = str(tmp_path / "cache.sqlite3")
    # fork: the children need nothing but the cache class and the file.
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_hammer, args=(path, "n", 300)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert SQLiteCache(path, {}).get("n") == 1200


def test_the_sqlite_cache_keeps_values_and_expires_them(tmp_path: Path):
    cache = SQLiteCache(str(tmp_path / "c.sqlite3"), {})
    cache.set("obj", {"a": [1, 2]})
    cache.set("flag", True)
    assert cache.get("obj") == {"a": [1, 2]} and cache.get("flag") is True
    assert cache.add("n", 5, timeout=60) and not cache.add("n", 9, timeout=60)
    assert cache.incr("n", 2) == 7 and cache.decr("n") == 6
    cache.set("gone", 1, timeout=0)
    assert cache.get("gone", "missing") == "missing"
    assert cache.add("gone", 2, timeout=60)  # an expired key can be added again
    with pytest.raises(ValueError):
        cache.incr("never-set")
    with pytest.raises(ValueError):
        cache.incr("obj")
    assert cache.delete("obj") and not cache.has_key("obj")


def test_redis_counts_the_same_way(settings):  # type: ignore[no-untyped-def]
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    settings.CACHES = {
        **settings.CACHES,
        "limits": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/0",
            "KEY_PREFIX": f"engram-test-{uuid.uuid4().hex}",
        },
    }
    settings.RATE_LIMIT_CACHE = "limits"
    from django.core.cache import caches

    from engram_site import ratelimit

    assert isinstance(caches["limits"], RedisCache)
    rate = Rate(3, 60)
    outcomes = []
    for _ in range(4):
        try:
            ratelimit.check("key:redis-test", rate, what="API key")
            outcomes.append("ok")
        except ratelimit.RateLimited as exc:
            outcomes.append(f"429 after {exc.retry_after}")
    assert outcomes[:3] == ["ok"] * 3 and outcomes[3].startswith("429")


def test_an_unreachable_cache_lets_requests_through(settings):  # type: ignore[no-untyped-def]
    settings.CACHES = {
        **settings.CACHES,
        "down": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        },
    }
    settings.RATE_LIMIT_CACHE = "down"
    from engram_site import ratelimit

    for _ in range(3):
        ratelimit.check("key:x", Rate(1, 60), what="API key")


# --- across gunicorn workers, as ./run serves it ------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "ENGRAM_DATABASE_URL": _database_url(),
        "ENGRAM_RATE_LIMIT": "20/min",
        "ENGRAM_RATE_LIMIT_ANONYMOUS": "5/min",
        # Counts of its own: the cache file is in the data directory.
        "ENGRAM_DATA_DIR": str(tmp_path),
    }
    env.pop("ENGRAM_REDIS_URL", None)  # the embedded default: the SQLite cache file
    proc = subprocess.Popen(
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
            "2",
            "--control-socket",
            str(tmp_path / "gunicorn.ctl"),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _get(url: str, authorization: str) -> int:
    # A new connection per request, so both workers take requests.
    return httpx.get(url, headers={"Authorization": authorization}, timeout=10).status_code


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_workers_share_one_count(server):
    _, key = create_api_key(space_name="limited")
    if time.time() % 60 > 50:  # keep the whole test inside one window
        time.sleep(61 - time.time() % 60)
    statuses = [_get(f"{server}/api/v1/status", f"Bearer {key}") for _ in range(30)]
    # Counters per process would let up to 40 through the two workers.
    assert statuses == [200] * 20 + [429] * 10
    guesses = [_get(f"{server}/api/v1/status", "Bearer eng_x_y") for _ in range(8)]
    assert guesses == [401] * 5 + [429] * 3
    # MCP counts against the same limits, before any tool runs.
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for authorization in (f"Bearer {key}", "Bearer eng_x_y", ""):
        response = httpx.post(
            f"{server}/mcp",
            json=listing,
            headers={
                "Authorization": authorization,
                "Accept": "application/json, text/event-stream",
            },
            timeout=10,
        )
        assert response.status_code == 429, authorization
        assert "rate limit" in response.json()["detail"]
        assert int(response.headers["retry-after"]) >= 1

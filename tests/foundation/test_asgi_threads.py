"""The ASGI application runs Django's views on a fixed pool of threads, each
keeping its database connection between requests (engram_site/asgi.py): a
burst of requests opens at most one connection per pool thread, where
Django's own ASGI handler opened one per request."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connections
from django.db.backends.signals import connection_created

from memory.services.spaces import create_api_key

pytestmark = pytest.mark.django_db(transaction=True)


async def _call(app: Any, path: str, key: str) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {key}".encode())],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }
    messages = [{"type": "http.request", "body": b"", "more_body": False}]
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.sleep(3600)  # no disconnect while the request runs
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["body"]


@pytest.fixture
def pooled_app() -> Iterator[Any]:
    from engram_site import asgi

    yield asgi.application
    # Close each pool thread's connection (PostgreSQL will not drop the test
    # database while they hold one): one task per thread, held at a barrier
    # so that no thread takes two.
    size = settings.WEB_THREADS
    barrier = threading.Barrier(size, timeout=10)

    def close() -> None:
        barrier.wait()
        connections.close_all()

    for future in [asgi.django_app.executor.submit(close) for _ in range(size)]:
        future.result(timeout=20)


def test_a_burst_of_requests_reuses_the_pool_threads_connections(pooled_app):
    application = pooled_app

    _, key = create_api_key(space_name="pooled")
    opened: list[int] = []

    def count(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(threading.get_ident())

    async def burst() -> list[tuple[int, bytes]]:
        limit = asyncio.Semaphore(4)

        async def one() -> tuple[int, bytes]:
            async with limit:
                return await _call(application, "/api/v1/status", key)

        return await asyncio.gather(*(one() for _ in range(40)))

    connection_created.connect(count)
    try:
        answers = asyncio.run(burst())
    finally:
        connection_created.disconnect(count)
    assert {status for status, _ in answers} == {200}, answers[0]
    assert "turns" in json.loads(answers[0][1])
    # One connection per pool thread at most, not one per request.
    assert len(opened) <= settings.WEB_THREADS
    assert len(set(opened)) == len(opened)

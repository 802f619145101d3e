"""At most ENGRAM_WEB_RUNNING of a worker's threads run views at once, and a
request gives its slot up for good at a wait that is not computing
(engram_site/running.py)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from engram_site import running
from engram_site.wsgi_bridge import WsgiBridge
from memory.models import Space


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


def _most_at_once(requests: int) -> int:
    """How many of `requests` concurrent requests a bridge of 4 threads ran
    in its application at the same time (each computes for 50 ms)."""
    inside = 0
    most = 0
    lock = threading.Lock()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with lock:
            inside -= 1
        start_response("200 OK", [])
        return [b"ok"]

    bridge = WsgiBridge(app, workers=4)

    async def one(n: int) -> None:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: dict[str, Any]) -> None:
            pass

        await bridge(_scope(f"/{n}"), receive, send)

    async def all_of_them() -> None:
        await asyncio.gather(*(one(n) for n in range(requests)))

    asyncio.run(all_of_them())
    return most


def test_the_bridge_runs_at_most_web_running_views_at_once(settings) -> None:
    settings.WEB_RUNNING = 1
    assert _most_at_once(4) == 1
    settings.WEB_RUNNING = 2
    assert _most_at_once(4) == 2
    settings.WEB_RUNNING = 0  # no limit: every thread of the pool
    assert _most_at_once(4) == 4


def test_a_request_that_steps_aside_lets_the_next_one_run(settings) -> None:
    settings.WEB_RUNNING = 1
    stepped, second_ran = threading.Event(), threading.Event()

    def first() -> None:
        with running.slot():
            assert running.holding()
            running.step_aside()
            assert not running.holding()
            stepped.set()
            # Still answering, without a slot, while the next one runs.
            assert second_ran.wait(5)

    thread = threading.Thread(target=first)
    with running.slot():
        thread.start()
        time.sleep(0.1)
        assert not stepped.is_set()  # waiting for the slot this thread holds
    assert stepped.wait(5)
    started = time.monotonic()
    with running.slot():
        assert running.holding()
        assert time.monotonic() - started < running.SLOT_WAIT
        second_ran.set()
    thread.join(5)
    assert not thread.is_alive()


def test_a_request_runs_without_a_slot_after_waiting_slot_wait(settings, monkeypatch) -> None:
    settings.WEB_RUNNING = 1
    monkeypatch.setattr(running, "SLOT_WAIT", 0.1)
    outcome: dict[str, Any] = {}

    def late() -> None:
        started = time.monotonic()
        with running.slot():
            outcome["waited"] = time.monotonic() - started
            outcome["holding"] = running.holding()

    with running.slot():
        thread = threading.Thread(target=late)
        thread.start()
        thread.join(5)
    assert 0.1 <= outcome["waited"] < 1
    assert outcome["holding"] is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write queue")
def test_a_writer_queued_behind_another_gives_up_its_slot(settings) -> None:
    settings.WEB_RUNNING = 1
    fd = os.open(f"{connection.settings_dict['NAME']}-writers", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer holds the queue
    queued = threading.Event()
    done: list[bool] = []

    def writer() -> None:
        try:
            with running.slot():
                queued.set()
                with transaction.atomic():
                    Space.objects.create(name="queued-writer")
                done.append(running.holding())
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    try:
        thread.start()
        assert queued.wait(5)
        # The writer waits on the queue; its slot is free for a reader.
        started = time.monotonic()
        with running.slot():
            assert running.holding()
            assert time.monotonic() - started < running.SLOT_WAIT
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    thread.join(10)
    assert done == [False]  # it went on without a slot
    assert Space.objects.filter(name="queued-writer").exists()

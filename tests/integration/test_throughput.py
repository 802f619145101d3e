"""The first hour, end to end: turns posted over HTTP to a real web server
and ONE Celery worker are all through the write pipeline in bounded time,
on the embedded default (the filesystem broker) and on Redis; and a
consolidation asked for while that backlog is queued starts at once instead
of waiting behind it (ingest has a queue of its own)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from memory.management.commands.bench_ingest import turn_texts
from memory.models import IngestJob, Space
from memory.services.spaces import create_api_key
from tests.integration import workers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(420),
]

# 3,000 turns within 60 s is the goal for the embedded default (SQLite), and
# `manage.py bench_ingest --phase stack` is what measures it: the figure
# depends on the machine (the same build did 86-98 turns/s on one session's
# machine and 52-60 on another's). This test guards the path itself: every
# turn gets through, and at a rate no broker stall allows (the old broker
# path did 1 job/s, 3,000 s for these turns). PostgreSQL costs a network
# round trip per query (about 25 a turn) to a server sharing the two cores.
# ENGRAM_THROUGHPUT_TURNS makes a quicker or a longer check.
TURNS = int(os.environ.get("ENGRAM_THROUGHPUT_TURNS", "3000"))
BATCH = 100
LIMIT_SECONDS = 200 if settings.DATABASES["default"]["ENGINE"].endswith("postgresql") else 150


@contextmanager
def stack(tmp_path: Path, *, redis_url: str) -> Iterator[str]:
    """Web + one worker (concurrency 2, both queues, as ./run starts it)."""
    env = workers.celery_env(redis_url=redis_url)
    port = workers.free_port(8300)
    if not redis_url:
        workers.purge_local_broker()
    web = workers.web(env, tmp_path / "web.log", port).start()
    worker = workers.worker(env, tmp_path / "worker.log").start()
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        workers.wait_http(f"{base}/health")
        yield base
    finally:
        worker.stop()
        web.stop()


def post_backlog(client: httpx.Client, base: str) -> float:
    texts = turn_texts(TURNS, seed=13)
    started = time.monotonic()
    for start in range(0, TURNS, BATCH):
        body = {
            "turns": [
                {"session_id": f"t{i // 20}", "role": "user", "text": texts[i], "ref": f"t{i}"}
                for i in range(start, start + BATCH)
            ]
        }
        response = client.post(f"{base}/turns/batch", json=body)
        assert response.status_code == 202, response.text
        assert response.json()["queued"] == BATCH
    return started


def wait_drained(client: httpx.Client, base: str, started: float, log: Path) -> float:
    deadline = started + LIMIT_SECONDS
    while time.monotonic() < deadline:
        if client.get(f"{base}/status").json()["pending_jobs"] == 0:
            return time.monotonic() - started
        time.sleep(0.25)
    pending = client.get(f"{base}/status").json()["pending_jobs"]
    pytest.fail(
        f"{pending} of {TURNS} turns still pending {LIMIT_SECONDS} s after the first POST\n"
        + log.read_text()[-3000:]
    )


def check_all_done(space: Space) -> None:
    jobs = IngestJob.objects.filter(space=space)
    assert jobs.count() == TURNS
    assert jobs.filter(status="done").count() == TURNS
    assert not jobs.filter(attempts__gt=1).exists()  # nothing ran twice


@pytest.fixture
def key_and_space(db):  # type: ignore[no-untyped-def]
    key, plain = create_api_key(space_name="first-hour")
    return plain, key.space


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_turns_on_the_filesystem_broker_within_the_limit_and_consolidation_does_not_wait(
    tmp_path, key_and_space
):
    key, space = key_and_space
    with stack(tmp_path, redis_url="") as base, httpx.Client(headers=headers(key)) as client:
        started = post_backlog(client, base)
        asked = time.monotonic()
        run = client.post(f"{base}/consolidate", json={"steps": ["decay"]})
        assert run.status_code == 202, run.text
        run_id = run.json()["run_id"]
        # The run is done while most of the backlog is still queued: it did
        # not wait for the ingest queue to drain.
        pending_when_done = None
        while time.monotonic() < asked + 20:
            state = client.get(f"{base}/consolidation/runs/{run_id}").json()
            if state["status"] == "done":
                pending_when_done = client.get(f"{base}/status").json()["pending_jobs"]
                break
            time.sleep(0.1)
        waited = time.monotonic() - asked
        assert pending_when_done is not None, f"run {run_id} not done {waited:.1f} s after asked"
        assert pending_when_done > 300, (pending_when_done, waited)
        assert waited < 10, waited
        seconds = wait_drained(client, base, started, tmp_path / "worker.log")
    check_all_done(space)
    print(f"filesystem broker: {TURNS} turns in {seconds:.1f} s ({TURNS / seconds:.0f}/s)")


def test_turns_on_redis_within_the_limit(tmp_path, key_and_space):
    key, space = key_and_space
    redis = workers.Redis(workers.free_port(), tmp_path / "redis.log")
    redis.start()
    try:
        with (
            stack(tmp_path, redis_url=redis.url) as base,
            httpx.Client(headers=headers(key)) as client,
        ):
            started = post_backlog(client, base)
            seconds = wait_drained(client, base, started, tmp_path / "worker.log")
    finally:
        redis.kill()
    check_all_done(space)
    print(f"Redis: {TURNS} turns in {seconds:.1f} s ({TURNS / seconds:.0f}/s)")

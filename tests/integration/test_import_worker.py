"""A large graph import runs in a real Celery worker, not in the request,
and while it runs a concurrent POST /turns never fails with "database is
locked": the worker commits a chunk at a time, so a writer waits at most one
chunk on SQLite's busy_timeout."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from engram_site.celery import app
from memory.models import Entity, Relation, Turn
from tests.integration import workers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

NODES = 900  # 1,800 rows with the edges: seven chunks


def dump() -> dict:
    nodes = [
        {"id": f"n{i}", "name": f"Station {i:04d}", "type": "place", "description": f"stop {i}"}
        for i in range(NODES)
    ]
    edges = [
        {"source": f"n{i}", "target": f"n{(i + 1) % NODES}", "relation": "next stop"}
        for i in range(NODES)
    ]
    return {"nodes": nodes, "edges": edges}


@pytest.fixture(autouse=True)
def _no_helper_connections(django_db_blocker):  # type: ignore[no-untyped-def]
    # Helper threads of earlier in-process tests keep SQLite connections to
    # the test file; with other processes writing it, the flush around this
    # test then fails with "disk I/O error". Closed before and after.
    from engram_site.threads import close_all_connections

    with django_db_blocker.unblock():
        close_all_connections()
    yield
    with django_db_blocker.unblock():
        close_all_connections()


def test_a_large_import_runs_in_the_worker_while_turns_keep_being_accepted(api, space, tmp_path):
    redis = workers.Redis(workers.free_port(), tmp_path / "redis.log")
    redis.start()
    # The sweeper as deployed (beat), at test speed: a job whose send was
    # lost (a broker timeout under load) is sent again, as in production.
    env = workers.celery_env(
        redis_url=redis.url,
        extra={"ENGRAM_SWEEP_INTERVAL_SECONDS": "2", "ENGRAM_SWEEP_UNSENT_AFTER_SECONDS": "4"},
    )
    beat = workers.beat(env, tmp_path / "beat.log", tmp_path / "beat-schedule").start()
    worker = workers.worker(env, tmp_path / "worker.log").start()
    statuses: list[int] = []
    latencies: list[float] = []
    try:
        with workers.broker(app, redis.url):
            started = time.perf_counter()
            response = api.post("/api/v1/import/graph", dump(), content_type="application/json")
            answered = time.perf_counter() - started
            assert response.status_code == 202, response.content
            # The request only stored the job: the import itself is the worker's.
            assert answered < 5, answered
            status_url = response.json()["status_url"]
            seen_progress: set[int] = set()
            deadline = time.monotonic() + 240
            i = 0
            while time.monotonic() < deadline:
                t = time.perf_counter()
                turn = api.post(
                    "/api/v1/turns",
                    {
                        "session_id": "live",
                        "role": "user",
                        "text": f"still here {i}",
                        "ref": f"l{i}",
                    },
                    content_type="application/json",
                )
                latencies.append(time.perf_counter() - t)
                statuses.append(turn.status_code)
                assert turn.status_code == 202, turn.content  # never "database is locked"
                i += 1
                job = api.get(status_url).json()
                seen_progress.add(job["done"])
                if job["status"] in ("done", "dead"):
                    break
                time.sleep(0.05)
    finally:
        worker.stop()
        beat.stop()
        redis.kill()
        # The worker's processes are gone: reopen this process's connection
        # rather than keep one that shared the file with them.
        connection.close()
    latencies.sort()
    print(
        f"import answered in {answered:.2f}s; {len(statuses)} turns posted during it, "
        f"p50 {latencies[len(latencies) // 2] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    assert job["status"] == "done", job
    # Progress was visible while it ran, chunk by chunk.
    assert len(seen_progress - {0, 2 * NODES}) >= 2, sorted(seen_progress)
    assert Entity.objects.filter(space=space).count() == NODES
    assert Relation.objects.filter(space=space).count() == NODES
    assert Turn.objects.filter(space=space, session__external_id="live").count() == len(statuses)

"""2,000 turns posted over the API while a real Celery worker on a real Redis
is SIGKILLed several times and Redis itself is restarted once: no turn or fact
is lost or duplicated, and the backlog drains by itself (the beat sweeper
re-sends what the broker lost, leases let killed jobs be taken over)."""

from __future__ import annotations

import time

import pytest
from django.db.models import Count

from engram_site.celery import app
from memory.models import IngestJob, MemoryItem, Turn
from tests.integration import workers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(600),
]

TURNS = 2000
BATCH = 50


def text(i: int) -> str:
    # One distinct preference per turn, so the expected facts are exactly known.
    return f"I really love hobby{i:05d} more than anything else."


def test_no_turn_or_fact_is_lost_or_duplicated(api, space, tmp_path, settings):
    settings.ENGRAM = {
        **settings.ENGRAM,
        "JOB_LEASE_SECONDS": 6,
        "SWEEP_UNSENT_AFTER_SECONDS": 4,
        "JOB_MAX_ATTEMPTS": 50,
    }
    redis = workers.Redis(workers.free_port(), tmp_path / "redis.log")
    redis.start()
    env = workers.celery_env(
        redis_url=redis.url,
        extra={
            "ENGRAM_JOB_LEASE_SECONDS": "6",
            "ENGRAM_SWEEP_INTERVAL_SECONDS": "2",
            "ENGRAM_SWEEP_UNSENT_AFTER_SECONDS": "4",
            "ENGRAM_JOB_MAX_ATTEMPTS": "50",
        },
    )
    beat = workers.beat(env, tmp_path / "beat.log", tmp_path / "beat-schedule").start()
    worker = workers.worker(env, tmp_path / "worker.log").start()
    kills = 0
    try:
        with workers.broker(app, redis.url):
            batches = TURNS // BATCH
            for b in range(batches):
                turns = [
                    {
                        "session_id": f"chaos-{b % 7}",
                        "role": "user",
                        "text": text(i),
                        "ref": f"c{i}",
                    }
                    for i in range(b * BATCH, (b + 1) * BATCH)
                ]
                response = api.post(
                    "/api/v1/turns/batch", {"turns": turns}, content_type="application/json"
                )
                assert response.status_code == 202, response.content
                if b == batches // 2:
                    redis.kill()  # queued messages are gone with it
                    time.sleep(1)
                    # posting while the broker is down still answers 202: the
                    # turns are durable, the sweeper sends them later
                    again = api.post(
                        "/api/v1/turns/batch", {"turns": turns}, content_type="application/json"
                    )
                    assert again.status_code == 202 and again.json()["queued"] == 0
                    redis.start()
                if b % 8 == 4:
                    time.sleep(0.5)  # let the worker get mid-job
                    worker.kill()
                    kills += 1
                    worker = workers.worker(env, tmp_path / "worker.log").start()
            # a retried post of an already stored batch creates nothing
            dup = api.post(
                "/api/v1/turns/batch",
                {
                    "turns": [
                        {"session_id": "chaos-0", "role": "user", "text": text(0), "ref": "c0"}
                    ]
                },
                content_type="application/json",
            )
            assert dup.json()["queued"] == 0
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                open_jobs = IngestJob.objects.filter(
                    space=space, status__in=["pending", "running"]
                ).count()
                if open_jobs == 0:
                    break
                time.sleep(1)
            status = api.get("/api/v1/status").json()
    finally:
        worker.stop()
        beat.stop()
        redis.kill()

    log_tail = (tmp_path / "worker.log").read_text()[-3000:]
    assert kills >= 4
    assert status["pending_jobs"] == 0, log_tail
    assert Turn.objects.filter(space=space).count() == TURNS
    assert IngestJob.objects.filter(space=space).count() == TURNS
    assert IngestJob.objects.filter(space=space, status="done").count() == TURNS, log_tail
    assert not Turn.objects.filter(space=space, skip_reason=None).exists()
    items = MemoryItem.objects.filter(space=space)
    assert items.count() == TURNS
    assert not items.values("content_hash").annotate(n=Count("id")).filter(n__gt=1).exists()
    refs = sorted(ref for refs in items.values_list("source_turn_refs", flat=True) for ref in refs)
    assert refs == sorted(f"c{i}" for i in range(TURNS))
    assert set(items.values_list("frequency", flat=True)) == {1}

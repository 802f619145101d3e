"""The idle check and the daily run, driven by a real beat and worker over a
real Redis broker, with shortened intervals."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from consolidation.models import ConsolidationRun
from memory.models import MemoryItem, Space
from tests.integration import workers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_beat_runs_the_idle_check_and_the_daily_run(tmp_path):  # type: ignore[no-untyped-def]
    now = timezone.now()
    idle = Space.objects.create(name="idle", last_activity_at=now - timedelta(minutes=10))
    busy = Space.objects.create(name="busy", last_activity_at=now)
    for space in (idle, busy):
        for _ in range(2):
            MemoryItem.objects.create(
                space=space,
                text="Sam keeps bees on the roof",
                subject="sam",
                predicate="keeps",
                object="bees",
            )
    # The daily run is due at the next whole minute. Beat never fires a
    # crontab for the minute it started in, and on a loaded machine it takes
    # seconds to start: begin in the first half of a minute, so it is up
    # before that minute ends.
    second = timezone.now().second
    if second > 30:
        time.sleep(61 - second)
    daily_at = (timezone.now() + timedelta(minutes=1)).strftime("%H:%M")
    env = {
        "ENGRAM_CONSOLIDATE_CHECK_SECONDS": "1",
        "ENGRAM_CONSOLIDATE_IDLE_MINUTES": "5",
        "ENGRAM_CONSOLIDATE_DAILY_AT": daily_at,
        "ENGRAM_ENV_REFRESH_MINUTES": "60",
    }
    redis = workers.Redis(workers.free_port(), tmp_path / "redis.log")
    redis.start()
    proc_env = workers.celery_env(
        redis_url=redis.url, extra={**env, "ENGRAM_DATA_DIR": str(tmp_path)}
    )
    worker = workers.worker(proc_env, tmp_path / "worker.log", concurrency=1).start()
    beat = workers.beat(proc_env, tmp_path / "beat.log", tmp_path / "beat-schedule").start()
    try:

        def idle_done() -> bool:
            return ConsolidationRun.objects.filter(
                space=idle, trigger="idle", status="done"
            ).exists()

        # Generous: worker start-up is slow on a loaded 2-core machine.
        ok = workers.wait_for(idle_done, timeout=150)
        assert ok, worker.log.read_text()[-3000:] + beat.log.read_text()[-2000:]
        # The busy space is not idle: no idle run for it.
        assert not ConsolidationRun.objects.filter(space=busy, trigger="idle").exists()
        idle_run = ConsolidationRun.objects.get(space=idle, trigger="idle")
        assert idle_run.steps["merge"]["counts"]["merged"] == 1
        assert "merged 1" in idle_run.report

        def daily_done() -> bool:
            return ConsolidationRun.objects.filter(
                space=busy, trigger="daily", status="done"
            ).exists()

        ok = workers.wait_for(daily_done, timeout=150)
        assert ok, beat.log.read_text()[-3000:]
    finally:
        beat.stop()
        worker.stop()
        redis.kill()
    busy.refresh_from_db()
    assert busy.last_consolidated_at is not None
    assert MemoryItem.objects.filter(space=busy, expired_at=None).count() == 1

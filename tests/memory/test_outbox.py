"""The durable outbox: claim with a lease, finish under the lease, sweep, retry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import IngestJob
from memory.services import outbox
from memory.services.turns import TurnData, accept_turns

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(space):  # type: ignore[no-untyped-def]
    [accepted] = accept_turns(
        space=space,
        turns=[TurnData(session_id="s", role="user", text="I live in Oslo now, finally")],
    )
    return IngestJob.objects.get(turn=accepted.turn)


def test_only_one_worker_claims_a_job(job):
    first = outbox.claim(job.pk)
    assert first is not None and first.attempts == 1
    assert outbox.claim(job.pk) is None


def test_a_worker_that_lost_its_lease_cannot_finish(job):
    stale = outbox.claim(job.pk)
    IngestJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    fresh = outbox.claim(job.pk)
    assert fresh is not None and fresh.attempts == 2
    assert not outbox.finish(stale, result={})
    assert outbox.finish(fresh, result={"ok": True})
    assert IngestJob.objects.get(pk=job.pk).status == "done"


def test_the_sweeper_resends_unsent_and_expired_jobs(job, settings):
    old = timezone.now() - timedelta(hours=1)
    IngestJob.objects.filter(pk=job.pk).update(created_at=old, sent_at=None)
    assert outbox.sweep() == 1
    IngestJob.objects.filter(pk=job.pk).update(
        status="running", lease_until=timezone.now() - timedelta(seconds=5)
    )
    assert outbox.sweep() == 1
    IngestJob.objects.filter(pk=job.pk).update(status="done", lease_until=None)
    assert outbox.sweep() == 0


def test_dead_jobs_keep_their_error_and_can_be_retried(
    job, settings, django_capture_on_commit_callbacks
):
    settings.ENGRAM = {**settings.ENGRAM, "JOB_MAX_ATTEMPTS": 1}
    claimed = outbox.claim(job.pk)
    assert outbox.fail(claimed, error="boom") is False
    dead = IngestJob.objects.get(pk=job.pk)
    assert dead.status == "dead" and dead.last_error == "boom"
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox.retry_dead([job.pk]) == 1
    done = IngestJob.objects.get(pk=job.pk)
    assert done.status == "done" and done.attempts == 1  # re-run eagerly on commit

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


def test_one_sweep_resends_every_lost_job_page_by_page(space):
    # After a broker outage thousands of jobs wait; one sweep sends them all.
    # The sends never happen here (no commit in this test), as if the broker
    # were still down: the sweep must still end, and find them all again.
    accept_turns(
        space=space,
        turns=[
            TurnData(session_id="s", role="user", text=f"I like tea number {i} a lot", ref=f"r{i}")
            for i in range(12)
        ],
    )
    IngestJob.objects.update(created_at=timezone.now() - timedelta(hours=1), sent_at=None)
    assert outbox.sweep(limit=5) == 12
    assert outbox.sweep(limit=5) == 12
    assert outbox.sweep(limit=12) == 12


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


# --- chunks: one broker message per ENGRAM_INGEST_CHUNK jobs --------------------------


def test_a_batch_is_sent_as_messages_of_chunk_size(
    space, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from memory.tasks import process_ingest_jobs

    settings.ENGRAM = {**settings.ENGRAM, "INGEST_CHUNK": 2}
    sent: list[list[int]] = []
    monkeypatch.setattr(process_ingest_jobs, "delay", lambda ids: sent.append(list(ids)))
    with django_capture_on_commit_callbacks(execute=True):
        accept_turns(
            space=space,
            turns=[
                TurnData(session_id="s", role="user", text=f"turn number {i}") for i in range(5)
            ],
        )
    ids = list(IngestJob.objects.filter(space=space).order_by("pk").values_list("pk", flat=True))
    assert sent == [ids[0:2], ids[2:4], ids[4:5]]
    assert not IngestJob.objects.filter(space=space, sent_at=None).exists()


def test_a_chunk_runs_every_job_and_returns_the_transient_failures(space):
    from memory.llm import TransientError

    accepted = accept_turns(
        space=space,
        turns=[
            TurnData(session_id="s", role="user", text=f"I live in Oslo, turn {i}")
            for i in range(3)
        ],
    )
    ids = [IngestJob.objects.get(turn=a.turn).pk for a in accepted]
    ran: list[int] = []

    def run(job_id: int) -> None:
        ran.append(job_id)
        if job_id == ids[1]:
            raise TransientError("the LLM timed out")

    assert outbox.run_each(ids, run=run) == [ids[1]]
    assert ran == ids  # the failure did not stop the jobs after it


def test_a_redelivered_chunk_runs_nothing_twice(space):
    from memory.services.pipeline import run_job

    accepted = accept_turns(
        space=space,
        turns=[
            TurnData(session_id="s", role="user", text=f"I really love hobby{i} a lot")
            for i in range(3)
        ],
    )
    ids = [IngestJob.objects.get(turn=a.turn).pk for a in accepted]
    assert outbox.run_each(ids, run=run_job) == []
    assert outbox.run_each(ids, run=run_job) == []
    jobs = IngestJob.objects.filter(pk__in=ids)
    assert set(jobs.values_list("status", "attempts")) == {("done", 1)}


def _chunk(space, n):  # type: ignore[no-untyped-def]
    accepted = accept_turns(
        space=space,
        turns=[
            TurnData(session_id="s", role="user", text=f"I really love hobby{i} a lot")
            for i in range(n)
        ],
    )
    return [IngestJob.objects.get(turn=a.turn).pk for a in accepted]


def test_a_chunk_of_fresh_jobs_is_leased_in_one_write(space, django_assert_max_num_queries):
    ids = _chunk(space, 4)
    with django_assert_max_num_queries(2):  # the UPDATE and reading the jobs back
        claimed = outbox.claim_fresh(ids)
    assert sorted(claimed) == ids
    assert {(j.status, j.attempts) for j in claimed.values()} == {("running", 1)}
    assert all(j.space == space for j in claimed.values())
    # Leased: no one else claims them, singly or as a chunk.
    assert outbox.claim(ids[0]) is None
    assert outbox.claim_fresh(ids) == {}


def test_a_job_tried_before_is_left_to_its_own_claim(space):
    """A job that killed its worker counts against itself alone: after its
    lease runs out it is claimed on its own, not with the next chunk."""
    ids = _chunk(space, 3)
    outbox.claim(ids[1])
    IngestJob.objects.filter(pk=ids[1]).update(lease_until=timezone.now() - timedelta(seconds=1))
    claimed = outbox.claim_fresh(ids)
    assert sorted(claimed) == [ids[0], ids[2]]
    again = outbox.claim(ids[1])
    assert again is not None and again.attempts == 2


def test_a_chunk_task_without_an_llm_runs_every_job_once(space, settings):
    from memory.tasks import process_ingest_jobs

    settings.ENGRAM = {**settings.ENGRAM, "LLM_PROVIDERS": []}
    ids = _chunk(space, 5)
    process_ingest_jobs.apply(args=(ids,)).get()
    process_ingest_jobs.apply(args=(ids,)).get()  # redelivered: nothing runs twice
    jobs = IngestJob.objects.filter(pk__in=ids)
    assert set(jobs.values_list("status", "attempts")) == {("done", 1)}

"""The durable ingest outbox.

A turn and its IngestJob commit together; the Celery task is sent on commit.
Workers claim a job with a conditional UPDATE that takes a lease, so a job
redelivered by the broker, or re-sent by the sweeper while another worker holds
it, runs once. A worker that dies leaves its lease to run out; the sweeper then
re-sends the job. After ENGRAM_JOB_MAX_ATTEMPTS failures a job is dead-lettered
with its last error kept for a curator to read and retry."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from memory.models import IngestJob

log = logging.getLogger(__name__)


def _lease() -> timedelta:
    return timedelta(seconds=settings.ENGRAM["JOB_LEASE_SECONDS"])


def enqueue_on_commit(job_ids: list[int], *, stamp_first: bool = True) -> None:
    """Send the pipeline task for these jobs once the surrounding transaction
    commits, ENGRAM_INGEST_CHUNK job ids per message.

    The jobs are stamped sent inside that transaction, for the send that
    follows its commit. Stamping them after the send took SQLite's write
    lock a second time for every posted turn, and under load a POST /turns
    spent as long waiting for that second turn at the lock as for the first.
    A send that fails (the broker is down) leaves the jobs to the sweeper,
    which re-sends pending jobs sent longer ago than
    ENGRAM_SWEEP_UNSENT_AFTER_SECONDS: a lost message and a failed send are
    found the same way, after the same wait. The sweeper's own re-sends
    (`stamp_first=False`) are stamped only once sent, so a sweep whose sends
    fail leaves them for the next sweep, not for that wait."""
    from memory.tasks import process_ingest_jobs

    if not job_ids:
        return
    stamped = stamp_first and transaction.get_connection().in_atomic_block
    if stamped:
        IngestJob.objects.filter(pk__in=job_ids).update(sent_at=timezone.now())

    def send() -> None:
        now = timezone.now()
        size = settings.ENGRAM["INGEST_CHUNK"]
        sent: list[int] = []
        for start in range(0, len(job_ids), size):
            chunk = job_ids[start : start + size]
            try:
                process_ingest_jobs.delay(chunk)
                sent.extend(chunk)
            except Exception:  # broker down: the sweeper re-sends later
                log.warning(
                    "could not send ingest jobs %s..%s; the sweeper will retry",
                    chunk[0],
                    chunk[-1],
                    exc_info=True,
                )
                break
        if sent and not stamped:
            IngestJob.objects.filter(pk__in=sent, sent_at=None).update(sent_at=now)

    transaction.on_commit(send)


def run_each(job_ids: Sequence[int], *, run: Callable[[int], object]) -> list[int]:
    """Run the jobs of one message in turn, each claimed on its own (`run` is
    the pipeline's run_job: claim, process, finish under the lease). A job
    that fails transiently has its failure recorded by `run` and is returned
    for a retry with backoff, without holding up the others; a job already
    done or leased elsewhere (a redelivered message, the sweeper's re-send)
    is skipped by its claim."""
    from memory.llm import TransientError

    retry: list[int] = []
    for job_id in job_ids:
        try:
            run(job_id)
        except TransientError:
            retry.append(job_id)
    return retry


def claim(job_id: int) -> IngestJob | None:
    """Take the lease on a pending job (or one whose lease ran out). Returns
    None if it is done, dead, or leased by someone else."""
    now = timezone.now()
    claimable = Q(status=IngestJob.Status.PENDING) | Q(
        status=IngestJob.Status.RUNNING, lease_until__lt=now
    )
    updated = IngestJob.objects.filter(claimable, pk=job_id).update(
        status=IngestJob.Status.RUNNING,
        lease_until=now + _lease(),
        attempts=F("attempts") + 1,
        updated_at=now,
    )
    if updated != 1:
        return None
    # Not the turn: the pipeline loads it with its session, and a turn can be
    # a long text to fetch twice.
    return IngestJob.objects.select_related("space").get(pk=job_id)


def claim_fresh(job_ids: Sequence[int]) -> dict[int, IngestJob]:
    """Take the lease on every job of a chunk that was never tried, in one
    UPDATE, for a worker whose jobs are all quick (no LLM to wait on): one
    write instead of one per job, while the database's write lock is the
    bottleneck. A job tried before is left to claim() when its turn comes, so
    a job that kills its worker is counted against itself alone, not against
    the chunk it came in."""
    now = timezone.now()
    # A lease time of our own, to tell our rows from a concurrent claimer's.
    lease = now + _lease() + timedelta(microseconds=random.randrange(1, 1_000_000))
    taken = IngestJob.objects.filter(
        pk__in=list(job_ids), status=IngestJob.Status.PENDING, attempts=0
    ).update(status=IngestJob.Status.RUNNING, lease_until=lease, attempts=1, updated_at=now)
    if not taken:
        return {}
    mine = IngestJob.objects.select_related("space").filter(
        pk__in=list(job_ids), status=IngestJob.Status.RUNNING, lease_until=lease
    )
    return {job.pk: job for job in mine}


def finish(job: IngestJob, *, result: dict) -> bool:
    """Mark the job done if we still hold its lease. Run it inside the
    transaction that writes the job's effects, so they commit together: of
    two workers holding the job (one took over an expired lease), only one
    finds it still running, and the other rolls back its own writes. False
    means our lease is gone."""
    now = timezone.now()
    return (
        IngestJob.objects.filter(
            pk=job.pk, status=IngestJob.Status.RUNNING, lease_until=job.lease_until
        ).update(
            status=IngestJob.Status.DONE,
            result=result,
            finished_at=now,
            updated_at=now,
            lease_until=None,
            last_error="",
        )
        == 1
    )


def complete(job: IngestJob, *, result: dict) -> None:
    now = timezone.now()
    IngestJob.objects.filter(pk=job.pk, status=IngestJob.Status.RUNNING).update(
        status=IngestJob.Status.DONE,
        result=result,
        finished_at=now,
        updated_at=now,
        lease_until=None,
        last_error="",
    )


def fail(job: IngestJob, *, error: str, permanent: bool = False) -> bool:
    """Record a failure. Returns True if the job may be retried, False if it
    was dead-lettered."""
    now = timezone.now()
    job.refresh_from_db(fields=["attempts"])
    dead = permanent or job.attempts >= settings.ENGRAM["JOB_MAX_ATTEMPTS"]
    IngestJob.objects.filter(pk=job.pk).update(
        status=IngestJob.Status.DEAD if dead else IngestJob.Status.PENDING,
        last_error=error[:4000],
        lease_until=None,
        updated_at=now,
        finished_at=now if dead else None,
    )
    return not dead


def retry_dead(job_ids: list[int]) -> int:
    """A curator's "retry": dead jobs go back to pending with fresh attempts."""
    ids = list(
        IngestJob.objects.filter(pk__in=job_ids, status=IngestJob.Status.DEAD).values_list(
            "pk", flat=True
        )
    )
    with transaction.atomic():
        IngestJob.objects.filter(pk__in=ids).update(
            status=IngestJob.Status.PENDING,
            attempts=0,
            sent_at=None,
            finished_at=None,
            updated_at=timezone.now(),
        )
        enqueue_on_commit(ids)
    return len(ids)


def sweep(*, limit: int = 500) -> int:
    """Re-send jobs that were never sent, were sent long ago and are still
    pending (message lost), or whose lease expired (worker died).

    All of them, `limit` at a time: after a broker outage (or Redis coming
    back empty) thousands are waiting, and re-sending only one page per
    sweep interval would take many minutes to drain them. A job sent twice
    runs once (its claim is conditional)."""
    now = timezone.now()
    stale_send = now - timedelta(seconds=settings.ENGRAM["SWEEP_UNSENT_AFTER_SECONDS"])
    lost = IngestJob.objects.filter(
        Q(status=IngestJob.Status.PENDING, sent_at=None, created_at__lt=stale_send)
        | Q(status=IngestJob.Status.PENDING, sent_at__lt=stale_send)
        | Q(status=IngestJob.Status.RUNNING, lease_until__lt=now)
    ).order_by("pk")
    total, after = 0, 0
    while True:
        # By id, not by state: a page whose send failed (broker still down)
        # keeps matching and would be taken again.
        ids = list(lost.filter(pk__gt=after).values_list("pk", flat=True)[:limit])
        if not ids:
            return total
        with transaction.atomic():
            IngestJob.objects.filter(pk__in=ids).update(sent_at=None)
            enqueue_on_commit(ids, stamp_first=False)
        total += len(ids)
        after = ids[-1]
        if len(ids) < limit:
            return total


def pending_count(space_id: int) -> int:
    return IngestJob.objects.filter(
        space_id=space_id, status__in=[IngestJob.Status.PENDING, IngestJob.Status.RUNNING]
    ).count()

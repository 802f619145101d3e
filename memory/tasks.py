"""Celery tasks of the memory app: thin wrappers that fetch by id and call one
service."""

from __future__ import annotations

from celery import Task, shared_task
from celery.utils.time import get_exponential_backoff_interval

from memory.llm import TransientError
from memory.services import outbox


@shared_task(
    name="memory.process_ingest_job",
    acks_late=True,
    ignore_result=True,
    # Only transient failures (LLM timeouts/5xx, a locked database) are retried,
    # with exponential backoff and jitter; run_job records each failure on the
    # job and stops raising once the job is dead-lettered, so the outbox, not
    # Celery, decides when to give up. A lost retry message is re-sent by the
    # outbox sweeper.
    autoretry_for=(TransientError,),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=None,
)
def process_ingest_job(job_id: int) -> None:
    # One job per message: what Engram sent before ingest messages carried a
    # chunk of jobs, kept so messages already queued at an upgrade still run.
    from memory.services.pipeline import run_job

    run_job(job_id)


@shared_task(
    name="memory.process_ingest_jobs",
    bind=True,
    acks_late=True,
    ignore_result=True,
    max_retries=None,
)
def process_ingest_jobs(self: Task, job_ids: list[int]) -> None:
    # A chunk of jobs per message (outbox.enqueue_on_commit). The jobs that
    # failed transiently are retried together, with the same backoff and
    # jitter as a single job, as a new message carrying only them; the outbox
    # dead-letters a job that runs out of attempts, and its sweeper re-sends
    # a job whose retry message was lost.
    from memory import llm
    from memory.services import mirror
    from memory.services.pipeline import run_job

    # Without an LLM every job is quick: the chunk is leased in one write.
    claimed = {} if llm.providers_configured() else outbox.claim_fresh(job_ids)
    with mirror.deferred():  # the chunk's core-memory files, written once each
        retry = outbox.run_each(
            job_ids, run=lambda job_id: run_job(job_id, claimed=claimed.get(job_id))
        )
    if retry:
        countdown = get_exponential_backoff_interval(
            factor=2, retries=self.request.retries, maximum=300, full_jitter=True
        )
        raise self.retry(args=(retry,), countdown=countdown)


@shared_task(name="memory.sweep_outbox", ignore_result=True)
def sweep_outbox() -> int:
    return outbox.sweep()


@shared_task(name="memory.embed_pending", ignore_result=True)
def embed_pending() -> int:
    from django.conf import settings

    from memory import embeddings

    return embeddings.embed_pending_everywhere(limit_per_space=settings.ENGRAM["EMBED_SWEEP_LIMIT"])

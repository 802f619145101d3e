"""Celery tasks of the memory app: thin wrappers that fetch by id and call one
service."""

from __future__ import annotations

from celery import shared_task

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
    from memory.services.pipeline import run_job

    run_job(job_id)


@shared_task(name="memory.sweep_outbox", ignore_result=True)
def sweep_outbox() -> int:
    return outbox.sweep()


@shared_task(name="memory.embed_pending", ignore_result=True)
def embed_pending() -> int:
    from django.conf import settings

    from memory import embeddings

    return embeddings.embed_pending_everywhere(limit_per_space=settings.ENGRAM["EMBED_SWEEP_LIMIT"])

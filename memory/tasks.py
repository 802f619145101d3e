"""Celery tasks of the memory app: thin wrappers that fetch by id and call one
service."""

from __future__ import annotations

from celery import shared_task

from memory.services import outbox


@shared_task(name="memory.process_ingest_job", acks_late=True, ignore_result=True)
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

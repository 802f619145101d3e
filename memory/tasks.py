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


# One slotting task per space at a time: the cache key is its claim, taken by
# whoever schedules it and given back when the backlog is gone.
_SLOTTING_KEY = "palace-slotting:{}"
_SLOTTING_CLAIM_SECONDS = 900


@shared_task(name="memory.slot_palace", ignore_result=True, acks_late=True)
def slot_palace(space_id: int) -> None:
    """Give a space's backlog its palace places, a bounded share per task:
    it runs on the ingest queue between the pipeline's own chunks, and sends
    itself again until the backlog is gone."""
    from django.conf import settings
    from django.core.cache import cache

    from memory.services.palace import slots

    if slots.clear_backlog(space_id, limit=settings.ENGRAM["PALACE_SLOT_TASK_LIMIT"]):
        cache.delete(_SLOTTING_KEY.format(space_id))
    else:
        cache.touch(_SLOTTING_KEY.format(space_id), _SLOTTING_CLAIM_SECONDS)
        slot_palace.delay(space_id)


def schedule_slotting(space_id: int) -> bool:
    """Send the slotting task for a space unless one is already on its way."""
    from django.core.cache import cache

    try:
        claimed = cache.add(_SLOTTING_KEY.format(space_id), 1, _SLOTTING_CLAIM_SECONDS)
    except Exception:  # the cache is away: a second task is harmless (idempotent)
        claimed = True
    if claimed:
        slot_palace.delay(space_id)
    return bool(claimed)


@shared_task(name="memory.slot_palaces", ignore_result=True)
def slot_palaces() -> int:
    """Beat: every space still marked with a backlog gets its slotting task
    (a store upgraded from before the palace is slotted while it idles,
    whether or not anyone reads its palace)."""
    from memory.models import Space

    ids = Space.objects.filter(palace_backlog_at__isnull=False).values_list("pk", flat=True)
    return sum(schedule_slotting(pk) for pk in ids)


@shared_task(name="memory.mirror_to_providers", ignore_result=True, acks_late=True)
def mirror_to_providers(space_name: str, item_ids: list[int]) -> dict[str, int]:
    # Its own queue (engram_site/celery.py); failures are logged, never retried
    # into a backlog: the provider is a copy, Engram keeps the original.
    from memory.services.providers import mirror

    return mirror.mirror(space_name=space_name, item_ids=item_ids)

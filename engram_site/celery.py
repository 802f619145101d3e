"""The one Celery app. Every background job in Engram runs through it."""

from __future__ import annotations

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "engram_site.settings")

DEFAULT_QUEUE = "celery"
INGEST_QUEUE = "ingest"
# Copies of saved facts to external providers: a slow provider backs up
# only this queue, never ingest or interactive work.
PROVIDERS_QUEUE = "providers"

app = Celery("engram")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    result_serializer="json",
    task_ignore_result=True,
    # A task is acknowledged only after it finishes, so a worker killed mid-job
    # leaves the message to be redelivered; the outbox lease makes reruns safe.
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    timezone="UTC",
    # Two queues, so that a backlog of ingest work never delays interactive
    # work (a consolidation someone asked for, beat's sweeps): `ingest` holds
    # the write pipeline, `celery` everything else. A worker started with no
    # -Q consumes both, alternating between them, and every ingest message is
    # a short task (ENGRAM_INGEST_CHUNK jobs), so a task sent to `celery`
    # waits for at most about one ingest chunk, however long the backlog.
    task_queues=(Queue(DEFAULT_QUEUE), Queue(INGEST_QUEUE), Queue(PROVIDERS_QUEUE)),
    task_default_queue=DEFAULT_QUEUE,
    task_routes={
        "memory.process_ingest_job": {"queue": INGEST_QUEUE},
        "memory.process_ingest_jobs": {"queue": INGEST_QUEUE},
        # Bulk work on behalf of no one waiting: behind the pipeline's chunks.
        "memory.slot_palace": {"queue": INGEST_QUEUE},
        "memory.mirror_to_providers": {"queue": PROVIDERS_QUEUE},
    },
)
app.autodiscover_tasks()

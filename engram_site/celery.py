"""The one Celery app. Every background job in Engram runs through it."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "engram_site.settings")

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
)
app.autodiscover_tasks()

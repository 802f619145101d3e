"""The write pipeline. `run_job` claims an ingest job and runs the steps."""

from __future__ import annotations

from django.utils import timezone

from memory.models import Turn
from memory.services import outbox


def run_job(job_id: int) -> None:
    job = outbox.claim(job_id)
    if job is None:
        return
    if job.turn_id is not None:
        Turn.objects.filter(pk=job.turn_id, skip_reason=None).update(skip_reason="")
    outbox.complete(job, result={"processed_at": timezone.now().isoformat()})

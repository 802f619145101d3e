"""`/status`: pending_jobs is ingest work (the contract: 0 once every posted
turn has been through the write pipeline); queued imports are pending_imports."""

from __future__ import annotations

import pytest

from memory.models import IngestJob

pytestmark = pytest.mark.django_db


def test_a_queued_import_is_not_pending_ingest_work(api, space) -> None:  # type: ignore[no-untyped-def]
    IngestJob.objects.create(space=space, kind="import_space", idempotency_key="import:t1")
    IngestJob.objects.create(
        space=space, kind="import_graph", idempotency_key="import:t2", status="running"
    )
    IngestJob.objects.create(
        space=space, kind="import_history", idempotency_key="import:t3", status="done"
    )
    status = api.get("/api/v1/status").json()
    assert status["pending_jobs"] == 0
    assert status["pending_imports"] == 2

"""Long imports as background jobs on the ingest outbox.

An import too big to answer within a request (more than SYNC_ROWS rows, or
asked for with `background`) becomes an IngestJob of kind "import_graph",
"import_space" or "import_history" (backfill) carrying its payload. It is committed, sent to the Celery
worker on commit, claimed with the outbox's lease and re-sent by its sweeper
exactly like a turn's job. The worker writes in chunks, each its own short
transaction, and in each chunk's transaction records how far it got and
renews its lease; a worker that dies leaves the lease to run out, and the
job resumes where its last chunk committed. When done the payload is
dropped (a dead job keeps it, for a retry)."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory.errors import NotFound
from memory.models import IngestJob, Space
from memory.screening import redact, redact_json
from memory.services import audit, outbox
from memory.services.export import HASH_KEYS
from memory.services.imports import graph as graph_import
from memory.services.imports import history
from memory.services.imports import space as space_import
from memory.services.imports.chunks import pause_between_chunks

GRAPH = "import_graph"
SPACE = "import_space"
HISTORY = "import_history"
KINDS = frozenset({GRAPH, SPACE, HISTORY})
# Rows (nodes + edges, or turns + items + ...) an import may have and still
# run inside the request, answering 200 as it always has.
SYNC_ROWS = 1_000
# How long an estimated, not yet run, dashboard backfill stays staged.
STAGED_HOURS = 24


class LeaseLost(Exception):
    """Another worker took the job over; what this one was doing is void."""


class Paused(LeaseLost):
    """A curator paused the job: the worker stops after the chunk it just
    committed (recorded as done), and a resume goes on from there."""


def handles(job: IngestJob) -> bool:
    return job.kind in KINDS


def _redacted(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The payload as the import itself would redact it: the job row is a
    write like any other, and no secret reaches the database, not even
    waiting to be imported. Redaction is idempotent, so the import's own
    pass changes nothing more."""
    if kind == SPACE:
        return dict(redact_json(data, keep_keys=HASH_KEYS))
    if kind == HISTORY:
        lines, seen = [], Counter[str]()
        for line in str(data.get("jsonl", "")).splitlines():
            try:
                raw = json.loads(line)
                if not isinstance(raw, dict):
                    raise ValueError("not an object")
                # A line without a ref gets the one backfill derives from its
                # text as sent, so the turn is the same one a backfill in the
                # request stores (found, not added twice, on a rerun).
                raw["ref"] = history.parse_line(raw, seen).ref
                lines.append(json.dumps(redact_json(raw), ensure_ascii=False))
            except ValueError:
                lines.append(redact(line))  # a bad line stays bad, without its secrets
        return {"jsonl": "\n".join(lines)}
    return dict(redact_json(data))


def stage_history(text: str) -> str:
    """Keep an uploaded backfill (redacted, as a job would store it) between
    its estimate and its run; answers a token for `staged_history`."""
    token = uuid.uuid4().hex
    folder = Path(settings.DATA_DIR) / "staged-backfills"
    folder.mkdir(parents=True, exist_ok=True)
    # An estimate nobody ran is not kept for ever.
    stale = timezone.now().timestamp() - STAGED_HOURS * 3600
    for old in folder.glob("*.jsonl"):
        if old.stat().st_mtime < stale:
            old.unlink(missing_ok=True)
    (folder / f"{token}.jsonl").write_text(_redacted(HISTORY, {"jsonl": text})["jsonl"], "utf-8")
    return token


def staged_history(token: str) -> Path | None:
    """The staged file of `token` (None if unknown or gone)."""
    if not token.isalnum() or len(token) != 32:
        return None
    path = Path(settings.DATA_DIR) / "staged-backfills" / f"{token}.jsonl"
    return path if path.is_file() else None


def start(
    *, space: Space, kind: str, data: dict[str, Any], total: int, **options: Any
) -> IngestJob:
    """Store the job and send it to a worker once it commits."""
    with transaction.atomic():
        job = IngestJob.objects.create(
            space=space,
            kind=kind,
            idempotency_key=f"{kind}:{uuid.uuid4().hex}",
            payload={"data": _redacted(kind, data), **options},
            progress={"done": 0, "total": total},
        )
        outbox.enqueue_on_commit([job.pk])
    return job


def get(*, space: Space, job_id: int) -> IngestJob:
    job = IngestJob.objects.filter(space=space, pk=job_id, kind__in=KINDS).first()
    if job is None:
        raise NotFound(f"import job {job_id} not found")
    return job


def view(job: IngestJob) -> dict[str, Any]:
    """The job as GET /import/jobs/{id} answers it."""
    progress = dict(job.progress or {})
    return {
        "job_id": str(job.pk),
        "kind": job.kind,
        "status": job.status,
        "status_url": f"/api/v1/import/jobs/{job.pk}",
        "done": int(progress.get("done", 0)),
        "total": int(progress.get("total", 0)),
        "counts": progress.get("counts") or {},
        "result": (job.result or None) if job.status == IngestJob.Status.DONE else None,
        "error": job.last_error or None,
        "attempts": job.attempts,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
    }


def _reporter(job: IngestJob) -> Any:
    """Record progress and renew the lease, inside the chunk's transaction:
    the conditional UPDATE fails if another worker took the job over, which
    rolls the chunk back and stops this run."""

    def report(done: int, total: int, counts: dict[str, Any]) -> None:
        now = timezone.now()
        lease = now + timedelta(seconds=settings.ENGRAM["JOB_LEASE_SECONDS"])
        updated = IngestJob.objects.filter(
            pk=job.pk, status=IngestJob.Status.RUNNING, lease_until=job.lease_until
        ).update(
            progress={"done": done, "total": total, "counts": counts},
            lease_until=lease,
            updated_at=now,
        )
        if updated != 1:
            paused = IngestJob.objects.filter(pk=job.pk, status=IngestJob.Status.PAUSED).update(
                progress={"done": done, "total": total, "counts": counts}, updated_at=now
            )
            if paused:
                raise Paused(f"import job {job.pk}: paused")
            raise LeaseLost(f"import job {job.pk}: lease lost")
        job.lease_until = lease

    return report


def _run_graph(job: IngestJob) -> dict[str, Any]:
    payload, progress = job.payload, job.progress or {}
    dry_run = bool(payload.get("dry_run"))
    report = _reporter(job)
    result = graph_import.import_graph(
        space=job.space,
        dump=payload["data"],
        dry_run=dry_run,
        actor=str(payload.get("actor") or graph_import.SOURCE),
        # A dry run's counts live in memory only: a taken-over one restarts.
        start=0 if dry_run else int(progress.get("done", 0)),
        counts=None if dry_run else progress.get("counts"),
        progress=lambda done, total, rep: report(done, total, dict(rep.counts)),
    )
    return {"dry_run": result.dry_run, "counts": dict(result.counts)}


def _run_space(job: IngestJob) -> dict[str, Any]:
    payload, progress = job.payload, job.progress or {}
    if not int(progress.get("done", 0)):
        # All or nothing: the whole file is checked before the first slice commits.
        space_import.validate(payload["data"])
    slices = space_import.slices(payload["data"])
    report = _reporter(job)
    created: Counter[str] = Counter(progress.get("counts", {}).get("created", {}))
    skipped: Counter[str] = Counter(progress.get("counts", {}).get("skipped", {}))
    notes: list[str] = list(progress.get("counts", {}).get("notes", []))
    for index in range(int(progress.get("done", 0)), len(slices)):
        with transaction.atomic():
            part = space_import.import_space(
                space=job.space, data=slices[index], actor="", record_audit=False
            )
            created.update(part.created)
            skipped.update(part.skipped)
            notes += part.notes
            report(index + 1, len(slices), _answer(created, skipped, notes))
        pause_between_chunks()
    result = _answer(created, skipped, notes)
    audit.record(
        space=job.space,
        action="import",
        target_type="space",
        target_id=job.space.pk,
        actor=str(payload.get("actor") or "import")[:60],
        kind="json",
        job=job.pk,
        source_space=str((payload["data"].get("space") or {}).get("name", ""))[:64],
        **result,
    )
    return result


def _answer(created: Counter[str], skipped: Counter[str], notes: list[str]) -> dict[str, Any]:
    # The shape of POST /import's own answer (ImportReport.as_dict).
    return {
        "created": {k: v for k, v in created.items() if v},
        "skipped": {k: v for k, v in skipped.items() if v},
        "notes": notes,
    }


def _run_history(job: IngestJob) -> dict[str, Any]:
    # Backfill commits a batch of turns at a time and is idempotent by each
    # turn's (session, ref): a taken-over job simply starts again, and the
    # turns an earlier run stored are found, not added twice.
    payload = job.payload
    text = str(payload["data"].get("jsonl", ""))
    total = sum(1 for line in text.splitlines() if line.strip())
    # Resumed after a pause: the chunks committed before it are not read again.
    start = int((job.progress or {}).get("done", 0))
    report, done = _reporter(job), start
    before = (job.progress or {}).get("counts") or {}
    so_far = history.Result(
        created=int(before.get("created", 0)), existing=int(before.get("existing", 0))
    )

    def progress(batch: int) -> None:
        nonlocal done
        done += batch
        report(done, total, {"created": so_far.created, "existing": so_far.existing})

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        path.write_text(text, encoding="utf-8")
        result = history.run(
            space=job.space,
            path=path,
            progress=progress,
            actor=str(payload.get("actor") or "backfill"),
            start=start,
            batch_size=int(payload.get("batch_size") or 200),
            result=so_far,
        )
    return {
        "dry_run": False,
        "created": result.created,
        "existing": result.existing,
        "bad_lines": [f"line {b.line}: {b.error}" for b in result.bad_lines],
    }


def pause(*, job: IngestJob, actor: str) -> bool:
    """Pause a pending or running backfill; its worker stops at the next
    chunk. False when it is neither (done, dead, paused already)."""
    if job.kind != HISTORY:
        return False
    with transaction.atomic():
        changed = IngestJob.objects.filter(
            pk=job.pk, status__in=[IngestJob.Status.PENDING, IngestJob.Status.RUNNING]
        ).update(status=IngestJob.Status.PAUSED, lease_until=None, updated_at=timezone.now())
        if changed:
            audit.record(
                space=job.space_id, action="pause", target_type="job", target_id=job.pk, actor=actor
            )
    return bool(changed)


def resume(*, job: IngestJob, actor: str) -> bool:
    """A paused job back to the queue; it goes on from its last committed
    chunk. False when it was not paused."""
    with transaction.atomic():
        changed = IngestJob.objects.filter(pk=job.pk, status=IngestJob.Status.PAUSED).update(
            status=IngestJob.Status.PENDING, sent_at=None, updated_at=timezone.now()
        )
        if changed:
            audit.record(
                space=job.space_id,
                action="resume",
                target_type="job",
                target_id=job.pk,
                actor=actor,
            )
            outbox.enqueue_on_commit([job.pk])
    return bool(changed)


_RUNNERS = {GRAPH: _run_graph, SPACE: _run_space, HISTORY: _run_history}


def run(job: IngestJob) -> dict[str, Any]:
    """Run a claimed import job to the end and mark it done. Raises what the
    import raises (Invalid: the pipeline's run_job dead-letters the job with
    the reason) and LeaseLost."""
    result = _RUNNERS[job.kind](job)
    with transaction.atomic():
        if not outbox.finish(job, result=result):
            raise LeaseLost(f"import job {job.pk}: lease lost")
        IngestJob.objects.filter(pk=job.pk).update(payload={})
    return result

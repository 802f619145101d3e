"""Running consolidation: one run per space at a time, made of the steps in
consolidation.jobs.

A run is a ConsolidationRun row. `start_run` creates it pending (the partial
unique constraint refuses a second active run of the same space, so an
existing one is returned instead) and sends the task on commit. `execute`
claims it with a conditional UPDATE that takes a lease; the lease's expiry
time is the holder's token, renewed after every step, so a worker that lost
its lease stops at the next step boundary. Each finished step is written to
the row before the next starts: a run killed halfway is taken over once its
lease runs out (the idle check re-sends it) and carries on from the first
step not yet recorded, and every step is idempotent besides."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from consolidation.jobs import STEPS, StepContext
from consolidation.jobs import report as report_step
from consolidation.models import ConsolidationRun
from memory.errors import Invalid
from memory.models import Space
from memory.services import audit

log = logging.getLogger(__name__)

ACTIVE = [ConsolidationRun.Status.PENDING, ConsolidationRun.Status.RUNNING]
TRIGGERS = ("idle", "daily", "manual", "cli", "admin")


class LeaseLost(Exception):
    """Another worker took the run over; this one must stop touching it."""


def _lease() -> timedelta:
    return timedelta(seconds=settings.ENGRAM["CONSOLIDATE_LEASE_SECONDS"])


def step_names() -> list[str]:
    return list(STEPS)


def _check_steps(names: Iterable[str], *, field: str) -> list[str]:
    names = list(names)
    unknown = [n for n in names if n not in STEPS]
    if unknown:
        raise Invalid(f"{field}: unknown step(s) {', '.join(unknown)}; known: {', '.join(STEPS)}")
    return names


def send(run_id: int) -> None:
    from consolidation.tasks import run_consolidation

    try:
        run_consolidation.delay(run_id)
    except Exception:  # broker down: the idle check re-sends pending runs
        log.warning(
            "could not send consolidation run %s; it will be re-sent", run_id, exc_info=True
        )


def start_run(
    *,
    space: Space,
    trigger: str,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    enqueue: bool = True,
) -> tuple[ConsolidationRun, bool]:
    """Create a pending run of this space (and send it on commit), or return
    the run already active. Returns (run, created). `only` / `skip` choose
    steps; steps skipped by settings (CONSOLIDATE_SKIP_STEPS) are added."""
    if trigger not in TRIGGERS:
        raise Invalid(f"trigger: must be one of {', '.join(TRIGGERS)}")
    skipped = set(_check_steps(skip, field="skip"))
    skipped |= set(
        _check_steps(
            settings.ENGRAM["CONSOLIDATE_SKIP_STEPS"], field="ENGRAM_CONSOLIDATE_SKIP_STEPS"
        )
    )
    if only is not None:
        chosen = set(_check_steps(only, field="steps"))
        skipped |= {n for n in STEPS if n not in chosen}
    plan = {name: {"status": "skipped"} for name in STEPS if name in skipped}
    try:
        with transaction.atomic():
            run = ConsolidationRun.objects.create(space=space, trigger=trigger, steps=plan)
            if enqueue:
                transaction.on_commit(lambda: send(run.pk))
    except IntegrityError:
        existing = ConsolidationRun.objects.filter(space=space, status__in=ACTIVE).first()
        if existing is None:  # it finished between our insert and this read
            return start_run(space=space, trigger=trigger, only=only, skip=skip, enqueue=enqueue)
        if enqueue and _stale(existing):
            send(existing.pk)
        return existing, False
    return run, True


def _stale(run: ConsolidationRun, now: datetime | None = None) -> bool:
    """A run nobody is working on: pending for a while (its message was lost)
    or running with an expired lease (its worker died)."""
    now = now or timezone.now()
    resend_after = timedelta(seconds=settings.ENGRAM["SWEEP_UNSENT_AFTER_SECONDS"])
    if run.status == ConsolidationRun.Status.PENDING:
        return run.created_at < now - resend_after
    return run.status == ConsolidationRun.Status.RUNNING and (
        run.lease_until is None or run.lease_until < now
    )


def resend_stale() -> list[int]:
    now = timezone.now()
    ids = [r.pk for r in ConsolidationRun.objects.filter(status__in=ACTIVE) if _stale(r, now)]
    for run_id in ids:
        send(run_id)
    return ids


def claim(run_id: int) -> tuple[ConsolidationRun, datetime] | None:
    """Take the lease on a pending run, or on a running one whose lease ran
    out. Returns the run and the lease token, or None."""
    now = timezone.now()
    token = now + _lease()
    claimable = Q(status=ConsolidationRun.Status.PENDING) | Q(
        status=ConsolidationRun.Status.RUNNING, lease_until__lt=now
    )
    if not ConsolidationRun.objects.filter(claimable, pk=run_id).update(
        status=ConsolidationRun.Status.RUNNING, lease_until=token
    ):
        return None
    run = ConsolidationRun.objects.select_related("space").get(pk=run_id)
    if run.started_at is None:
        ConsolidationRun.objects.filter(pk=run_id, started_at=None).update(started_at=now)
        run.started_at = now
    return run, token


def _save(run_id: int, token: datetime, **fields: Any) -> datetime:
    """Write to the run only while holding the lease; renews it. Returns the new token."""
    new_token = timezone.now() + _lease()
    if fields.get("status") in (ConsolidationRun.Status.DONE, ConsolidationRun.Status.FAILED):
        new_token = None  # type: ignore[assignment]
    updated = ConsolidationRun.objects.filter(
        pk=run_id, status=ConsolidationRun.Status.RUNNING, lease_until=token
    ).update(lease_until=new_token, **fields)
    if updated != 1:
        raise LeaseLost(f"consolidation run {run_id} was taken over")
    return new_token


def _previous_start(run: ConsolidationRun) -> datetime | None:
    return (
        ConsolidationRun.objects.filter(space_id=run.space_id, status=ConsolidationRun.Status.DONE)
        .exclude(pk=run.pk)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )


Progress = Callable[[str, dict[str, Any]], None]


def execute(run_id: int, *, progress: Progress | None = None) -> ConsolidationRun | None:
    """Claim the run and take its remaining steps. Returns the finished run,
    or None if someone else holds it or it is already finished."""
    from memory import llm

    claimed = claim(run_id)
    if claimed is None:
        return None
    run, token = claimed
    steps: dict[str, Any] = dict(run.steps or {})
    errors: list[Any] = list(run.errors or [])
    run_budget = settings.ENGRAM["CONSOLIDATE_MAX_LLM_CALLS"]
    step_budget = settings.ENGRAM["CONSOLIDATE_STEP_LLM_CALLS"]
    ctx = StepContext(space=run.space, run_id=run.pk, since=_previous_start(run), max_llm_calls=0)
    llm_total = int(run.llm_calls)
    try:
        for name, step in STEPS.items():
            if (steps.get(name) or {}).get("status") in ("done", "skipped", "failed"):
                if progress:
                    progress(name, steps[name])
                continue
            ctx.max_llm_calls = ctx.llm_calls + max(0, min(step_budget, run_budget - ctx.llm_calls))
            started = time.monotonic()
            with llm.count_calls() as counter:
                try:
                    result = step(ctx)
                    entry: dict[str, Any] = {"status": "done", "counts": result.counts}
                    if result.detail:
                        entry["detail"] = result.detail
                except LeaseLost:
                    raise
                except Exception as exc:
                    # One broken step must not cost the others their run; its
                    # work so far is committed and the next run retries it.
                    log.exception("consolidation step %s failed for space %s", name, run.space_id)
                    entry = {
                        "status": "failed",
                        "counts": {},
                        "error": f"{type(exc).__name__}: {exc}"[:2000],
                    }
                    errors.append({"step": name, "error": entry["error"]})
            entry["seconds"] = round(time.monotonic() - started, 3)
            entry["llm_calls"] = counter.calls
            llm_total += counter.calls
            steps[name] = entry
            token = _save(run.pk, token, steps=steps, errors=errors, llm_calls=llm_total)
            if progress:
                progress(name, entry)
        text = report_step.build(steps)
        finished = timezone.now()
        _save(
            run.pk,
            token,
            status=ConsolidationRun.Status.DONE,
            report=text,
            finished_at=finished,
        )
        Space.objects.filter(pk=run.space_id).update(last_consolidated_at=run.started_at)
        audit.record(
            space=run.space_id,
            action="consolidate",
            target_type="space",
            target_id=run.space_id,
            actor="consolidation",
            run=run.pk,
            report=text,
        )
    except LeaseLost:
        log.warning("consolidation run %s was taken over by another worker", run_id)
        return None
    run.refresh_from_db()
    return run


def run_now(
    *,
    space: Space,
    trigger: str = "cli",
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    progress: Progress | None = None,
) -> ConsolidationRun | None:
    """Start and execute a run in this process (the management command). If
    a run of the space is already active, takes it over when it is stale,
    else returns None."""
    run, _ = start_run(space=space, trigger=trigger, only=only, skip=skip, enqueue=False)
    return execute(run.pk, progress=progress)


def figures(run: ConsolidationRun) -> dict[str, int]:
    return report_step.figures(run.steps or {})


def duration_seconds(run: ConsolidationRun) -> float | None:
    if run.started_at is None or run.finished_at is None:
        return None
    return round((run.finished_at - run.started_at).total_seconds(), 3)

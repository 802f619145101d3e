"""Operations: the audit log, the ingest jobs and consolidation runs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory.dashboard.common import page, space_for
from memory.models import AuditEvent, IngestJob


@staff_member_required
def audit(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    events = AuditEvent.objects.filter(space=space)
    action = request.GET.get("action", "")[:30]
    if action:
        events = events.filter(action=action)
    actions = (
        AuditEvent.objects.filter(space=space)
        .order_by()
        .values_list("action", flat=True)
        .distinct()
    )
    return page(
        request,
        "memory/audit.html",
        "audit",
        space=space,
        events=events[:200],
        action=action,
        actions=sorted(set(actions)),
    )


@staff_member_required
def jobs(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    rows = IngestJob.objects.filter(space=space).select_related("turn")
    status = request.GET.get("status", "")[:10]
    if status:
        rows = rows.filter(status=status)
    return page(
        request,
        "memory/jobs.html",
        "jobs",
        space=space,
        jobs=rows[:200],
        job_status=status,
        statuses=IngestJob.Status.choices,
    )


@staff_member_required
@require_POST
def jobs_retry(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.outbox import retry_dead

    space = space_for(request)
    wanted = [int(x) for x in request.POST.getlist("job") if x.isdigit()]
    ids = list(
        IngestJob.objects.filter(space=space, status=IngestJob.Status.DEAD)
        .filter(**({"pk__in": wanted} if wanted else {}))
        .values_list("pk", flat=True)
    )
    count = retry_dead(ids)
    messages.success(
        request, f"Sent {count} dead-lettered job{'s' if count != 1 else ''} back to the queue."
    )
    return redirect("memory:jobs")


@staff_member_required
def consolidation(request: HtmxHttpRequest) -> HttpResponse:
    from consolidation.models import ConsolidationRun

    space = space_for(request)
    runs = list(ConsolidationRun.objects.filter(space=space)[:30])
    last = next((r for r in runs if r.status in ("done", "failed")), None)
    active = next((r for r in runs if r.status in ("pending", "running")), None)
    return page(
        request,
        "memory/consolidation.html",
        "consolidation",
        space=space,
        runs=runs,
        last=last,
        active=active,
    )


@staff_member_required
@require_POST
def consolidation_run(request: HtmxHttpRequest) -> HttpResponse:
    from consolidation.services import start_run

    run, created = start_run(space=space_for(request), trigger="manual")
    if created:
        messages.success(
            request, f"Consolidation run {run.pk} queued; this page shows it when it finishes."
        )
    else:
        messages.info(request, f"Run {run.pk} is already {run.status}.")
    return redirect("memory:consolidation")

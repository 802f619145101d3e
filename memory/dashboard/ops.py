"""Operations: the audit log, and the Ops view: history backfill (estimate,
run, pause, resume), consolidation runs, the environment card, provider
status with a connection test, the judge's adjudications and the jobs."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError
from memory.models import IngestJob, Space

# Why the salience filter skips a turn (salience.skip_reason), as shown.
SKIP_LABELS = {
    "assistant": gettext_lazy("assistant turn (context only)"),
    "quarantined": gettext_lazy("quarantined by the screen"),
    "short": gettext_lazy("too short to hold a fact"),
    "paste": gettext_lazy("pasted code or a dump"),
    "command": gettext_lazy("a command to the agent"),
}
SESSION_STAGED = "ops_backfill_token"
SESSION_ESTIMATE = "ops_backfill_estimate"


# --- the Ops view ------------------------------------------------------------------


def _environment(space: Space) -> dict[str, Any]:
    from environment import selectors as env_selectors
    from environment import services as env_services

    card: dict[str, Any] = {"host_access": space.host_access, "server": None, "agent": None}
    agent = env_selectors.latest_agent(space=space)
    if agent is not None:
        card["agent"] = {"snap": agent, "block": env_services.render_environment(agent.data)}
    if space.host_access:
        server = env_selectors.latest_probe()
        if server is not None:
            card["server"] = {"snap": server, "block": env_services.render_environment(server.data)}
    return card


def _steps(run: Any) -> list[dict[str, Any]]:
    """A run's steps as (name, seconds, counts) rows for the table."""
    out = []
    for name, raw in (run.steps or {}).items():
        data = raw if isinstance(raw, dict) else {}
        counts = {k: v for k, v in data.items() if k != "seconds"}
        out.append({"name": name, "seconds": data.get("seconds"), "counts": counts})
    return out


@staff_member_required
def ops(request: HtmxHttpRequest) -> HttpResponse:
    from consolidation.models import ConsolidationRun
    from memory.services import connections
    from memory.services.providers import health

    space = space_for(request)
    runs = list(ConsolidationRun.objects.filter(space=space).order_by("-id")[:10])
    for run in runs:
        run.step_rows = _steps(run)  # type: ignore[attr-defined]
    last = next((r for r in runs if r.status in ("done", "failed")), None)
    active = next((r for r in runs if r.status in ("pending", "running")), None)
    job_status = request.GET.get("status", "")
    job_status = job_status if job_status in IngestJob.Status.values else ""
    return page(
        request,
        "memory/ops.html",
        "ops",
        space=space,
        estimate=_estimate_shown(request.session.get(SESSION_ESTIMATE)),
        backfills=selectors.backfill_jobs(space=space),
        runs=runs,
        last=last,
        active=active,
        environment=_environment(space),
        providers=connections.providers(),
        external_providers=health.rows(),
        embeddings=connections.embeddings_config(),
        adjudications=selectors.adjudications(space=space),
        jobs=selectors.jobs_page(space=space, status=job_status, page=request.GET.get("page")),
        job_status=job_status,
        statuses=IngestJob.Status.choices,
        max_upload=settings.MAX_BODY_BYTES,
    )


def _estimate_shown(estimate: dict[str, Any] | None) -> dict[str, Any] | None:
    if not estimate:
        return None
    reasons = [(SKIP_LABELS.get(r, r), n) for r, n in estimate.get("skip_reasons", [])]
    return {**estimate, "skip_reasons": reasons}


def _to_ops(anchor: str = "") -> HttpResponse:
    response = redirect("memory:ops")
    if anchor:
        response["Location"] += f"#{anchor}"
    return response


@staff_member_required
@require_POST
def backfill_estimate(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.imports import history
    from memory.services.imports import jobs as import_jobs

    space = space_for(request)
    upload = request.FILES.get("file")
    raw = upload.read() if upload is not None else request.POST.get("jsonl", "").encode()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        messages.error(request, _("The file is not UTF-8 text; nothing was estimated."))
        return _to_ops("backfill")
    if not text.strip():
        messages.error(request, _("Choose a JSONL file (one turn a line) to estimate."))
        return _to_ops("backfill")
    earlier = import_jobs.staged_history(str(request.session.get(SESSION_STAGED) or ""))
    if earlier is not None:  # a new estimate replaces the one not run
        earlier.unlink(missing_ok=True)
    token = import_jobs.stage_history(text)
    path = import_jobs.staged_history(token)
    assert path is not None
    est = history.estimate(space=space, path=path)
    request.session[SESSION_STAGED] = token
    request.session[SESSION_ESTIMATE] = {
        "file": str(upload.name if upload is not None else "pasted")[:200],
        "turns": est.turns,
        "sessions": est.sessions,
        "salient": est.salient,
        "already_present": est.already_present,
        "estimated_llm_calls": est.estimated_llm_calls,
        "llm_budget_per_hour": est.llm_budget_per_hour,
        "skip_reasons": sorted(est.skip_reasons.items()),
        "bad_lines": [f"line {b.line}: {b.error}" for b in est.bad_lines[:20]],
        "bad_count": len(est.bad_lines),
    }
    return _to_ops("backfill")


@staff_member_required
@require_POST
def backfill_run(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.imports import jobs as import_jobs

    space = space_for(request)
    token = str(request.session.get(SESSION_STAGED) or "")
    path = import_jobs.staged_history(token)
    if path is None:
        messages.error(request, _("Estimate a file first; there is nothing staged to run."))
        return _to_ops("backfill")
    text = path.read_text("utf-8")
    lines = sum(1 for line in text.splitlines() if line.strip())
    job = import_jobs.start(
        space=space,
        kind=import_jobs.HISTORY,
        data={"jsonl": text},
        total=lines,
        actor=actor(request),
    )
    path.unlink(missing_ok=True)
    request.session.pop(SESSION_STAGED, None)
    request.session.pop(SESSION_ESTIMATE, None)
    messages.success(request, _("Backfill job %(id)s started.") % {"id": job.pk})
    return _to_ops("backfill")


def _backfill(space: Space, job_id: int) -> IngestJob | None:
    return (
        IngestJob.objects.filter(space=space, pk=job_id, kind="import_history")
        .defer("payload")
        .first()
    )


@staff_member_required
def backfill_progress(request: HtmxHttpRequest, job_id: int) -> HttpResponse:
    job = _backfill(space_for(request), job_id)
    if job is None:
        return HttpResponse(_("Not found"), status=404)
    return render(request, "memory/_backfill_job.html", {"job": job})


@staff_member_required
@require_POST
def backfill_control(request: HtmxHttpRequest, job_id: int, action: str) -> HttpResponse:
    from memory.services.imports import jobs as import_jobs

    job = _backfill(space_for(request), job_id)
    if job is None:
        messages.error(request, _("That backfill job is not in this space."))
    elif action == "pause":
        if import_jobs.pause(job=job, actor=actor(request)):
            messages.success(request, _("Paused; the worker stops after its current chunk."))
        else:
            messages.info(request, _("Only a pending or running backfill is paused."))
    elif action == "resume":
        if import_jobs.resume(job=job, actor=actor(request)):
            messages.success(request, _("Resumed from the last committed chunk."))
        else:
            messages.info(request, _("That backfill was not paused."))
    return _to_ops("backfill")


@staff_member_required
@require_POST
def environment_refresh(request: HtmxHttpRequest) -> HttpResponse:
    from environment import services as env_services

    space = space_for(request)
    try:
        env_services.require_host_access(space)
        env_services.refresh_probe()
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, _("The server environment was probed again."))
    return _to_ops("environment")


@staff_member_required
@require_POST
def test_connection(request: HtmxHttpRequest, target: str) -> HttpResponse:
    from memory.services import connections

    if target == "embeddings":
        outcome = connections.check_embeddings()
    else:
        raw = request.POST.get("provider", "")
        outcome = (
            connections.check_llm(int(raw))
            if raw.isdigit()
            else connections.Outcome(False, "?", "no provider chosen", 0.0)
        )
    text = _("%(target)s: %(detail)s (%(ms)s ms)") % {
        "target": outcome.target,
        "detail": outcome.detail,
        "ms": outcome.elapsed_ms,
    }
    (messages.success if outcome.ok else messages.error)(request, text)
    return _to_ops("providers")


@staff_member_required
@require_POST
def test_external(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """An external provider's connection test: its tools, listed now. htmx
    swaps the answer into the provider's card; without it, a message."""
    from memory.services.providers import health

    outcome = health.check(name)
    if request.htmx:
        return render(request, "memory/_provider_check.html", {"check": outcome})
    text = _("%(target)s: %(detail)s (%(ms)s ms)") % {
        "target": outcome.provider,
        "detail": outcome.detail,
        "ms": outcome.elapsed_ms,
    }
    (messages.success if outcome.ok else messages.error)(request, text)
    return _to_ops("providers")


# --- the pages Ops absorbed, and their actions ----------------------------------------


@staff_member_required
def jobs(request: HtmxHttpRequest) -> HttpResponse:
    query = request.GET.urlencode()
    response = redirect("memory:ops")
    response["Location"] += (f"?{query}" if query else "") + "#jobs"
    return response


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
        request,
        ngettext(
            "Sent %(count)d dead-lettered job back to the queue.",
            "Sent %(count)d dead-lettered jobs back to the queue.",
            count,
        )
        % {"count": count},
    )
    return _to_ops("jobs")


@staff_member_required
def consolidation(request: HtmxHttpRequest) -> HttpResponse:
    return _to_ops("consolidation")


@staff_member_required
@require_POST
def consolidation_run(request: HtmxHttpRequest) -> HttpResponse:
    from consolidation.services import start_run

    run, created = start_run(space=space_for(request), trigger="manual")
    if created:
        messages.success(
            request,
            _("Consolidation run %(id)s queued; this page shows it when it finishes.")
            % {"id": run.pk},
        )
    else:
        messages.info(
            request,
            _("Run %(id)s is already %(status)s.")
            % {"id": run.pk, "status": run.get_status_display()},
        )
    return _to_ops("consolidation")

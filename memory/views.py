"""The curation dashboard: server-rendered pages with htmx for the small
updates. Views read through memory.selectors and write through the same
services the API calls; they only translate forms and pick templates."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import F
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.errors import EngramError
from memory.models import AuditEvent, IngestJob, MemoryItem, Space
from memory.timeview import TimeView


def _space(request: HtmxHttpRequest) -> Space:
    """The space being curated: ?space=name switches and is remembered in the
    session; with none chosen, the space in use (the latest activity, so a
    curator lands on the memory an agent is writing, not on the alphabetically
    first space), made if there is none."""
    wanted = request.GET.get("space")
    space: Space | None
    if wanted:
        space = get_object_or_404(Space, name=wanted)
        request.session["space_id"] = space.pk
        return space
    space_id = request.session.get("space_id")
    space = Space.objects.filter(pk=space_id).first() if space_id else None
    if space is None:
        in_use = Space.objects.order_by(F("last_activity_at").desc(nulls_last=True), "name")
        if (space := in_use.first()) is None:
            from memory.services.spaces import DEFAULT_SPACE, get_or_create_space

            space = get_or_create_space(name=DEFAULT_SPACE)
        request.session["space_id"] = space.pk
    return space


def _actor(request: HtmxHttpRequest) -> str:
    return f"curator:{request.user.get_username()}"


def _page(request: HtmxHttpRequest, template: str, tab: str, **context: Any) -> HttpResponse:
    space = context.pop("space", None) or _space(request)
    status = selectors.space_status(space=space)
    return render(
        request,
        template,
        {
            "space": space,
            "spaces": Space.objects.order_by("name"),
            "status": status,
            "last_consolidation": parse_datetime(str(status["last_consolidation"]))
            if status["last_consolidation"]
            else None,
            "tab": tab,
            **context,
        },
    )


@staff_member_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("memory:facts")


# --- facts ---------------------------------------------------------------------


@staff_member_required
def facts(request: HtmxHttpRequest) -> HttpResponse:
    space = _space(request)
    filters = {
        key: request.GET.get(key, "").strip()[:200]
        for key in ("kind", "status", "entity", "live", "q")
    }
    items = selectors.facts_page(
        space=space,
        kind=filters["kind"],
        status=filters["status"],
        entity=filters["entity"],
        live=filters["live"],
        q=filters["q"],
    )
    template = (
        "memory/_fact_rows.html"
        if request.htmx and request.htmx.target == "fact-rows"
        else "memory/facts.html"
    )
    return _page(
        request,
        template,
        "facts",
        space=space,
        items=items,
        filters=filters,
        kinds=MemoryItem.Kind.choices,
        statuses=MemoryItem.Status.choices,
    )


@staff_member_required
def fact_history(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    space = _space(request)
    try:
        chain = selectors.fact_chain(space=space, item_id=item_id)
    except MemoryItem.DoesNotExist:
        return HttpResponse("Not found", status=404)
    events = AuditEvent.objects.filter(
        space=space, target_type="item", target_id__in=[str(i.pk) for i in chain]
    )[:50]
    return render(
        request,
        "memory/_fact_history.html",
        {"chain": chain, "events": events, "item_id": item_id},
    )


@staff_member_required
@require_POST
def fact_edit(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.facts import save_fact, supersede

    space = _space(request)
    old = get_object_or_404(MemoryItem, space=space, pk=item_id)
    text = request.POST.get("text", "").strip()
    if not text or len(text) > 2000:
        messages.error(request, "A fact needs a text of 1 to 2000 characters.")
        return redirect("memory:facts")
    # The new text goes through the same screening and resolution as any
    # fact (its structure is read from the text, not copied from the old one).
    # A correction of the same fact: it keeps the subject (as stored) and the
    # time the fact became true; only the wording and what it says change.
    result = save_fact(
        space=space,
        text=text,
        subject=old.subject,
        kind=old.kind,
        importance=old.importance,
        valid_from=old.valid_from,
        stated_at=timezone.now(),
        source="manual",
        actor=_actor(request),
    )
    if result.item is None:
        messages.error(request, f"Not saved: {result.reason or result.action}")
        return redirect("memory:facts")
    if result.item.pk != old.pk and old.pk not in result.superseded:
        # The curator said this text replaces that fact, even where the
        # resolver saw no conflict between them.
        supersede(old=old, new=result.item, actor=_actor(request))
    messages.success(
        request, "Saved as a new version." if result.item.pk != old.pk else "No change."
    )
    return redirect("memory:facts")


@staff_member_required
@require_POST
def fact_forget(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.forget import forget

    space = _space(request)
    get_object_or_404(MemoryItem, space=space, pk=item_id)
    try:
        count = forget(
            space=space,
            item_id=item_id,
            hard=request.POST.get("hard") == "1",
            actor=_actor(request),
        )
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, f"Forgot {count} fact{'s' if count != 1 else ''}.")
    return redirect(request.POST.get("next") or "memory:facts")


@staff_member_required
@require_POST
def fact_restore(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.forget import restore

    space = _space(request)
    get_object_or_404(MemoryItem, space=space, pk=item_id)
    try:
        restore(space=space, item_id=item_id, actor=_actor(request))
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, "Restored.")
    return redirect(request.POST.get("next") or "memory:facts")


# --- core memory -------------------------------------------------------------------


@staff_member_required
def core(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services import core as core_service

    space = _space(request)
    cards = []
    for label in ("user", "agent"):
        block = core_service.load_block(space=space, label=label)
        cards.append(
            {
                "block": block,
                "usage": core_service.usage(block=block),
                "percent": min(100, round(core_service.usage(block=block) * 100)),
                "tokens": core_service.tokens(block=block),
                "history": core_service.history(block=block, limit=20),
            }
        )
    return _page(request, "memory/core.html", "core", space=space, cards=cards)


@staff_member_required
@require_POST
def core_edit(request: HtmxHttpRequest, label: str) -> HttpResponse:
    from memory.services import core as core_service

    try:
        expected = int(request.POST.get("expected_version", ""))
    except ValueError:
        messages.error(request, "The form lost its version number; reload the page.")
        return redirect("memory:core")
    try:
        block = core_service.set_text(
            space=_space(request),
            label=label,
            text=request.POST.get("text", ""),
            author=_actor(request),
            reason="edited in the dashboard",
            expected_version=expected,
        )
    except EngramError as exc:
        messages.error(request, f"Not saved: {exc.detail}")
    else:
        messages.success(request, f"Saved the {label} block as version {block.version}.")
    return redirect("memory:core")


@staff_member_required
def core_diff(request: HtmxHttpRequest, label: str, version: int) -> HttpResponse:
    from memory.services import core as core_service

    try:
        block = core_service.load_block(space=_space(request), label=label)
        diff = core_service.diff(block=block, from_version=max(0, version - 1), to_version=version)
    except EngramError as exc:
        diff = exc.detail
    return render(request, "memory/_diff.html", {"diff": diff, "label": label, "version": version})


@staff_member_required
@require_POST
def core_rollback(request: HtmxHttpRequest, label: str, version: int) -> HttpResponse:
    from memory.services import core as core_service

    try:
        block = core_service.rollback(
            space=_space(request), label=label, version=version, author=_actor(request)
        )
    except EngramError as exc:
        messages.error(request, f"Not rolled back: {exc.detail}")
    else:
        messages.success(
            request, f"Rolled back to version {version} (now version {block.version})."
        )
    return redirect("memory:core")


# --- recall ------------------------------------------------------------------------


@staff_member_required
def ask(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.recall import recall

    space = _space(request)
    query = request.GET.get("q", "").strip()[:1000]
    as_of_raw = request.GET.get("as_of", "").strip()
    known_raw = request.GET.get("known_at", "").strip()
    as_of, known_at = _instant(request, "as_of"), _instant(request, "known_at")
    error = ""
    if (as_of_raw and as_of is None) or (known_raw and known_at is None):
        error = "as of and known at must each be a date (YYYY-MM-DD) or a date and time"
    response = (
        recall(space=space, query=query, k=20, as_of=as_of, known_at=known_at)
        if query and not error
        else None
    )
    template = "memory/_recall_results.html" if request.htmx else "memory/ask.html"
    return _page(
        request,
        template,
        "ask",
        space=space,
        q=query,
        as_of=as_of_raw,
        known_at=known_raw,
        response=response,
        error=error,
    )


# --- audit, jobs, consolidation --------------------------------------------------------


@staff_member_required
def audit(request: HtmxHttpRequest) -> HttpResponse:
    space = _space(request)
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
    return _page(
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
    space = _space(request)
    rows = IngestJob.objects.filter(space=space).select_related("turn")
    status = request.GET.get("status", "")[:10]
    if status:
        rows = rows.filter(status=status)
    return _page(
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

    space = _space(request)
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

    space = _space(request)
    runs = list(ConsolidationRun.objects.filter(space=space)[:30])
    last = next((r for r in runs if r.status in ("done", "failed")), None)
    active = next((r for r in runs if r.status in ("pending", "running")), None)
    return _page(
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

    run, created = start_run(space=_space(request), trigger="manual")
    if created:
        messages.success(
            request, f"Consolidation run {run.pk} queued; this page shows it when it finishes."
        )
    else:
        messages.info(request, f"Run {run.pk} is already {run.status}.")
    return redirect("memory:consolidation")


# --- graph --------------------------------------------------------------------------


@staff_member_required
def graph(request: HtmxHttpRequest) -> HttpResponse:
    return _page(request, "memory/graph.html", "graph")


@staff_member_required
def graph_json(request: HtmxHttpRequest) -> JsonResponse:
    as_of, known_at = _instant(request, "as_of"), _instant(request, "known_at")
    when = TimeView(as_of=as_of or None, known_at=known_at or None)
    return JsonResponse(selectors.graph_data(space=_space(request), when=when))


def _instant(request: HtmxHttpRequest, name: str) -> datetime | None:
    """A date (YYYY-MM-DD) or date-time from the query string; None when
    missing or unreadable (the views say which in their own words)."""
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    value = parse_datetime(raw) or parse_datetime(f"{raw}T00:00:00")
    if value is not None and value.tzinfo is None:
        value = timezone.make_aware(value)
    return value

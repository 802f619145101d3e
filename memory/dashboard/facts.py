"""Facts: the list with filters, each fact's history chain, correction,
forget and restore."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError
from memory.models import AuditEvent, MemoryItem


@staff_member_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("memory:facts")


# --- facts ---------------------------------------------------------------------


@staff_member_required
def facts(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
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
    return page(
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
    space = space_for(request)
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

    space = space_for(request)
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
        actor=actor(request),
    )
    if result.item is None:
        messages.error(request, f"Not saved: {result.reason or result.action}")
        return redirect("memory:facts")
    if result.item.pk != old.pk and old.pk not in result.superseded:
        # The curator said this text replaces that fact, even where the
        # resolver saw no conflict between them.
        supersede(old=old, new=result.item, actor=actor(request))
    messages.success(
        request, "Saved as a new version." if result.item.pk != old.pk else "No change."
    )
    return redirect("memory:facts")


@staff_member_required
@require_POST
def fact_forget(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.forget import forget

    space = space_for(request)
    get_object_or_404(MemoryItem, space=space, pk=item_id)
    try:
        count = forget(
            space=space,
            item_id=item_id,
            hard=request.POST.get("hard") == "1",
            actor=actor(request),
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

    space = space_for(request)
    get_object_or_404(MemoryItem, space=space, pk=item_id)
    try:
        restore(space=space, item_id=item_id, actor=actor(request))
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, "Restored.")
    return redirect(request.POST.get("next") or "memory:facts")

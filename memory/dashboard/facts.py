"""One memory's endpoints (the Library lists them): its history chain,
correction, forget and restore."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import actor, space_for
from memory.dashboard.library import back
from memory.errors import EngramError
from memory.models import AuditEvent, MemoryItem


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
    """Edit as supersede: the same correction the admin and the
    memory_update tool make (a new version keeping the old one's valid time
    and history)."""
    from memory.services.curation import correct

    space = space_for(request)
    old = get_object_or_404(MemoryItem, space=space, pk=item_id)
    text = request.POST.get("text", "").strip()
    if not text or len(text) > 2000:
        messages.error(request, _("A memory needs a text of 1 to 2000 characters."))
        return back(request)
    if text == old.text:
        messages.info(request, _("No change."))
        return back(request)
    try:
        new = correct(space=space, old=old, text=text, actor=actor(request), source="manual")
    except EngramError as exc:
        messages.error(request, _("Not saved: %(why)s") % {"why": exc.detail})
    else:
        messages.success(request, _("Saved as a new version (memory %(id)s).") % {"id": new.pk})
    return back(request)


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
        messages.success(
            request, ngettext("Forgot %(n)d fact.", "Forgot %(n)d facts.", count) % {"n": count}
        )
    return back(request)


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
        messages.success(request, _("Restored."))
    return back(request)

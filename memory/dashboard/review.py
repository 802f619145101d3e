"""Review: contradictions the pipeline kept pending review (accept, reject,
merge) and quarantined entries (release, forget). Every decision goes
through the service that audits it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError
from memory.models import MemoryItem, Space


@staff_member_required
def review(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    return page(
        request,
        "memory/review.html",
        "review",
        space=space,
        pending=selectors.pending_review(space=space, page=request.GET.get("page")),
        quarantined=selectors.quarantined(space=space, page=request.GET.get("qpage")),
    )


def _item(space: Space, item_id: int) -> MemoryItem | None:
    return MemoryItem.objects.filter(space=space, pk=item_id).first()


def _back() -> HttpResponse:
    return redirect("memory:review")


@staff_member_required
@require_POST
def decide(request: HtmxHttpRequest, item_id: int, decision: str) -> HttpResponse:
    from memory.services import review as service

    space = space_for(request)
    item = _item(space, item_id)
    if item is None:
        messages.error(request, _("That fact is not in this space."))
        return _back()
    try:
        if decision == "accept":
            superseded = service.accept(space=space, item=item, actor=actor(request))
            messages.success(
                request,
                ngettext(
                    "Accepted; it supersedes %(count)d fact.",
                    "Accepted; it supersedes %(count)d facts.",
                    len(superseded),
                )
                % {"count": len(superseded)},
            )
        elif decision == "reject":
            service.reject(space=space, item=item, actor=actor(request))
            messages.success(
                request, _("Rejected; the candidate is forgotten, the old fact stays.")
            )
        elif decision == "merge":
            raw = request.POST.get("into", "")
            into = _item(space, int(raw)) if raw.isdigit() else None
            if into is None:
                messages.error(request, _("Choose the fact to merge into."))
                return _back()
            service.merge(space=space, item=item, into=into, actor=actor(request))
            messages.success(request, _("Merged into fact %(id)s.") % {"id": into.pk})
        else:
            messages.error(request, _("Unknown decision."))
    except EngramError as exc:
        messages.error(request, exc.detail)
    return _back()


@staff_member_required
@require_POST
def release(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.curation import release as release_item

    space = space_for(request)
    item = _item(space, item_id)
    if item is None:
        messages.error(request, _("That entry is not in this space."))
    elif release_item(item=item, actor=actor(request)):
        messages.success(request, _("Released from quarantine; it is recalled from now on."))
    else:
        messages.info(request, _("That entry was not quarantined."))
    return _back()


@staff_member_required
@require_POST
def discard(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    from memory.services.forget import forget

    space = space_for(request)
    if _item(space, item_id) is None:
        messages.error(request, _("That entry is not in this space."))
        return _back()
    try:
        forget(space=space, item_id=item_id, actor=actor(request))
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, _("Forgotten (restorable from the fact's history)."))
    return _back()

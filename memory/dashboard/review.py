"""Review: contradictions the pipeline kept pending review (accept, reject,
merge) and quarantined entries (release, forget). Every decision goes
through the service that audits it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
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
        proposals=selectors.proposals(space=space, page=request.GET.get("ppage")),
        approval_mode=approval_mode(),
    )


def approval_mode() -> str:
    from memory.services import approval

    return approval.mode()


@staff_member_required
@require_POST
def decide_proposal(request: HtmxHttpRequest, proposal_id: int, decision: str) -> HttpResponse:
    """Approve or reject a proposed write. With htmx the card is swapped for
    the outcome; without, back to Review with a message."""
    from memory.models import ProposedWrite
    from memory.services import approval

    space = space_for(request)
    proposal = ProposedWrite.objects.filter(space=space, pk=proposal_id).first()
    ok, text = False, _("That proposal is not in this space.")
    if proposal is not None:
        try:
            if decision == "approve":
                approval.approve(space=space, proposal=proposal, actor=actor(request))
                ok, text = True, _("Approved and applied.")
            elif decision == "reject":
                approval.reject(space=space, proposal=proposal, actor=actor(request))
                ok, text = True, _("Rejected; nothing was written, the proposal is kept.")
            else:
                text = _("Unknown decision.")
        except EngramError as exc:
            text = exc.detail
    if request.htmx:
        return render(
            request,
            "memory/_proposal_outcome.html",
            # 200 either way: htmx swaps only successful answers, and a
            # refusal (stale, decided already) is an outcome to show.
            {"proposal_id": proposal_id, "ok": ok, "text": text},
        )
    (messages.success if ok else messages.error)(request, text)
    return _back()


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

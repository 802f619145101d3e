"""Core memory: the two always-in-prompt blocks, their edits, diffs and
rollbacks."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError


def _block_name(label: str) -> str:
    """The block's name in the curator's language; the label itself is stored
    in English."""
    names = {
        "user": pgettext("core block", "User"),
        "agent": pgettext("core block", "Agent"),
    }
    return names.get(label, label)


@staff_member_required
def core(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services import core as core_service

    space = space_for(request)
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
    return page(request, "memory/core.html", "core", space=space, cards=cards)


@staff_member_required
@require_POST
def core_edit(request: HtmxHttpRequest, label: str) -> HttpResponse:
    from memory.services import core as core_service

    try:
        expected = int(request.POST.get("expected_version", ""))
    except ValueError:
        messages.error(request, _("The form lost its version number; reload the page."))
        return redirect("memory:core")
    try:
        block = core_service.set_text(
            space=space_for(request),
            label=label,
            text=request.POST.get("text", ""),
            author=actor(request),
            # Stored in the block's history, which agents and the API read: English.
            reason="edited in the dashboard",
            expected_version=expected,
        )
    except EngramError as exc:
        messages.error(request, _("Not saved: %(detail)s") % {"detail": exc.detail})
    else:
        messages.success(
            request,
            _("Saved the %(label)s block as version %(version)s.")
            % {"label": _block_name(label), "version": block.version},
        )
    return redirect("memory:core")


@staff_member_required
def core_diff(request: HtmxHttpRequest, label: str, version: int) -> HttpResponse:
    from memory.services import core as core_service

    try:
        block = core_service.load_block(space=space_for(request), label=label)
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
            space=space_for(request), label=label, version=version, author=actor(request)
        )
    except EngramError as exc:
        messages.error(request, _("Not rolled back: %(detail)s") % {"detail": exc.detail})
    else:
        messages.success(
            request,
            _("Rolled back to version %(version)s (now version %(current)s).")
            % {"version": version, "current": block.version},
        )
    return redirect("memory:core")

"""Beliefs: what consolidation concluded from many facts, ranked by the
evidence they rest on, filtered by their stored status."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.utils.translation import gettext as _

from engram_site.types import HtmxHttpRequest
from memory import selectors_knowledge as reads
from memory.dashboard.common import page, space_for


@staff_member_required
def beliefs(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    status = request.GET.get("status", "").strip()
    q = request.GET.get("q", "").strip()[:200]
    if status and status not in reads.BELIEF_FILTERS:
        messages.error(
            request,
            _("Unknown filter “%(status)s”; showing every belief.") % {"status": status[:40]},
        )
        status = ""
    return page(
        request,
        "memory/beliefs.html",
        "beliefs",
        space=space,
        chosen=status,
        q=q,
        rows=reads.beliefs_page(space=space, status=status, q=q, number=request.GET.get("page")),
    )

"""Ask: recall as the agent gets it, with time travel."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.utils.translation import gettext as _

from engram_site.types import HtmxHttpRequest
from memory.dashboard.common import instant, page, space_for


@staff_member_required
def ask(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.recall import recall

    space = space_for(request)
    query = request.GET.get("q", "").strip()[:1000]
    as_of_raw = request.GET.get("as_of", "").strip()
    known_raw = request.GET.get("known_at", "").strip()
    as_of, known_at = instant(request, "as_of"), instant(request, "known_at")
    error = ""
    if (as_of_raw and as_of is None) or (known_raw and known_at is None):
        error = _("as of and known at must each be a date (YYYY-MM-DD) or a date and time")
    response = (
        recall(space=space, query=query, k=20, as_of=as_of, known_at=known_at)
        if query and not error
        else None
    )
    template = "memory/_recall_results.html" if request.htmx else "memory/ask.html"
    return page(
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

"""The entity graph page and its data: time travel over valid time
(`as_of`, optionally "as known then" with `known_at`)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext as _

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import instant, page, space_for
from memory.timeview import TimeView


@staff_member_required
def graph(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    first, last = selectors.validity_range(space=space)
    as_of = instant(request, "as_of")
    error = ""
    if request.GET.get("as_of", "").strip() and as_of is None:
        error = _("“%(value)s” is not a date (YYYY-MM-DD); showing now.") % {
            "value": request.GET["as_of"][:40]
        }
    return page(
        request,
        "memory/graph.html",
        "graph",
        space=space,
        first=first,
        last=last,
        as_of=as_of,
        known_then=bool(request.GET.get("known_at", "").strip()),
        error=error,
    )


@staff_member_required
def graph_json(request: HtmxHttpRequest) -> JsonResponse:
    as_of, known_at = instant(request, "as_of"), instant(request, "known_at")
    bad = [
        name
        for name, value in (("as_of", as_of), ("known_at", known_at))
        if request.GET.get(name, "").strip() and value is None
    ]
    if bad:
        return JsonResponse(
            {"error": _("Not a date (YYYY-MM-DD): %(names)s") % {"names": ", ".join(bad)}},
            status=400,
        )
    when = TimeView(as_of=as_of or None, known_at=known_at or None)
    return JsonResponse(selectors.graph_data(space=space_for(request), when=when))

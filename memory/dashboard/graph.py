"""The entity graph page and its data."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, JsonResponse

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.dashboard.common import instant, page, space_for
from memory.timeview import TimeView


@staff_member_required
def graph(request: HtmxHttpRequest) -> HttpResponse:
    return page(request, "memory/graph.html", "graph")


@staff_member_required
def graph_json(request: HtmxHttpRequest) -> JsonResponse:
    as_of, known_at = instant(request, "as_of"), instant(request, "known_at")
    when = TimeView(as_of=as_of or None, known_at=known_at or None)
    return JsonResponse(selectors.graph_data(space=space_for(request), when=when))

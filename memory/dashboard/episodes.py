"""Episodes: sessions with their summaries, newest first; one session's
turns, or the turns around one of them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from engram_site.types import HtmxHttpRequest
from memory import selectors_knowledge as reads
from memory.dashboard.common import page, space_for
from memory.models import Session, Turn

MAX_SPAN = 50


@staff_member_required
def episodes(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    q = request.GET.get("q", "").strip()[:200]
    return page(
        request,
        "memory/episodes.html",
        "episodes",
        space=space,
        q=q,
        rows=reads.episodes_page(space=space, q=q, number=request.GET.get("page")),
    )


@staff_member_required
def episode(request: HtmxHttpRequest, session_id: int) -> HttpResponse:
    space = space_for(request)
    session = get_object_or_404(
        Session.objects.select_related("summary"), space=space, pk=session_id
    )
    around = None
    raw_anchor, raw_span = request.GET.get("around", ""), request.GET.get("span", "5")
    span = int(raw_span) if raw_span.isdigit() else 5
    span = max(1, min(span, MAX_SPAN))
    if raw_anchor:
        anchor = (
            Turn.objects.filter(session=session, pk=int(raw_anchor)).first()
            if raw_anchor.isdigit()
            else None
        )
        if anchor is None:
            messages.error(request, _("There is no such turn in this episode; showing all turns."))
        else:
            around = reads.turns_around(session=session, anchor=anchor, span=span)
    return page(
        request,
        "memory/episode.html",
        "episodes",
        space=space,
        session=session,
        summary=getattr(session, "summary", None),
        around=around,
        span=span,
        wider=min(span * 2, MAX_SPAN),
        turns=None if around else reads.turns_page(session=session, number=request.GET.get("page")),
    )

"""What every dashboard page shares: the space being curated, the curator
as an audit actor, the page frame, and reading instants from the query."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from engram_site.types import HtmxHttpRequest
from memory import selectors
from memory.models import Space


def space_for(request: HtmxHttpRequest) -> Space:
    """The space being curated: ?space=name switches and is remembered in the
    session; with none chosen, the space in use (the latest activity, so a
    curator lands on the memory an agent is writing, not on the alphabetically
    first space), made if there is none."""
    wanted = request.GET.get("space")
    space: Space | None
    if wanted:
        space = get_object_or_404(Space, name=wanted)
        request.session["space_id"] = space.pk
        return space
    space_id = request.session.get("space_id")
    space = Space.objects.filter(pk=space_id).first() if space_id else None
    if space is None:
        in_use = Space.objects.order_by(F("last_activity_at").desc(nulls_last=True), "name")
        if (space := in_use.first()) is None:
            from memory.services.spaces import DEFAULT_SPACE, get_or_create_space

            space = get_or_create_space(name=DEFAULT_SPACE)
        request.session["space_id"] = space.pk
    return space


def actor(request: HtmxHttpRequest) -> str:
    return f"curator:{request.user.get_username()}"


def page(request: HtmxHttpRequest, template: str, tab: str, **context: Any) -> HttpResponse:
    space = context.pop("space", None) or space_for(request)
    status = selectors.space_status(space=space)
    return render(
        request,
        template,
        {
            "space": space,
            "spaces": Space.objects.order_by("name"),
            "status": status,
            "last_consolidation": parse_datetime(str(status["last_consolidation"]))
            if status["last_consolidation"]
            else None,
            "tab": tab,
            **context,
        },
    )


def instant(request: HtmxHttpRequest, name: str) -> datetime | None:
    """A date (YYYY-MM-DD) or date-time from the query string; None when
    missing or unreadable (the views say which in their own words)."""
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    value = parse_datetime(raw) or parse_datetime(f"{raw}T00:00:00")
    if value is not None and value.tzinfo is None:
        value = timezone.make_aware(value)
    return value

"""Log: the audit trail, 50 a page, by class, actor and date, each event
told as a sentence."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from engram_site.types import HtmxHttpRequest
from memory import curation_reads
from memory.dashboard.common import instant, page, space_for
from memory.dashboard.log_sentences import sentence

CLASS_LABELS = {
    "writes": gettext_lazy("Writes"),
    "corrections": gettext_lazy("Corrections"),
    "forgetting": gettext_lazy("Forgetting"),
    "core": gettext_lazy("Core memory"),
    "consolidation": gettext_lazy("Consolidation"),
    "review": gettext_lazy("Review"),
    "security": gettext_lazy("Security and quarantine"),
    "admin": gettext_lazy("Admin"),
    "other": gettext_lazy("Other"),
}


@staff_member_required
def log(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    cls = request.GET.get("class", "").strip()
    who = request.GET.get("actor", "").strip()[:60]
    since, until = instant(request, "from"), instant(request, "to")
    if cls and cls not in CLASS_LABELS:
        messages.error(
            request, _("“%(value)s” is not a class of event; showing all.") % {"value": cls[:40]}
        )
        cls = ""
    for name, value in (("from", since), ("to", until)):
        if request.GET.get(name, "").strip() and value is None:
            messages.error(
                request, _("“%(name)s” must be a date (YYYY-MM-DD); ignored.") % {"name": name}
            )
    if until is not None and len(request.GET.get("to", "").strip()) == 10:
        until += timedelta(days=1)  # a date "to" includes that day
    events = curation_reads.log_events(space=space, cls=cls, actor=who, since=since, until=until)
    paged = Paginator(events, 50).get_page(request.GET.get("page"))
    rows = []
    for e in paged:
        family = curation_reads.class_of(e.action)
        rows.append({"event": e, "cls": family, "label": CLASS_LABELS[family], "text": sentence(e)})
    query = request.GET.copy()
    query.pop("page", None)
    return page(
        request,
        "memory/log.html",
        "log",
        space=space,
        rows=rows,
        paged=paged,
        classes=list(CLASS_LABELS.items()),
        chosen={
            "class": cls,
            "actor": who,
            "from": request.GET.get("from", ""),
            "to": request.GET.get("to", ""),
        },
        query=query.urlencode(),
    )


def audit_redirect(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("memory:log", permanent=True)

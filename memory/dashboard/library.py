"""Library: every memory with filters, sorting and pages; edit-as-supersede,
batch forget and restore, and the danger zone (forget by query, wipe)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponsePermanentRedirect, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from engram_site.types import HtmxHttpRequest
from memory import curation_reads
from memory.dashboard.common import actor, page, space_for
from memory.errors import EngramError
from memory.models import MemoryItem
from memory.services.palace import rooms

PER_PAGE = 50
FILTERS = ("room", "kind", "status", "entity", "q", "redacted", "sort")


def back(request: HtmxHttpRequest) -> HttpResponseRedirect:
    """Where the form came from (the library with its filters), if it is ours."""
    nxt = request.POST.get("next", "")
    if nxt and url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        return HttpResponseRedirect(nxt)
    return redirect("memory:library")


@staff_member_required
def library(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    f = {key: request.GET.get(key, "").strip()[:200] for key in FILTERS}
    kinds = dict(MemoryItem.Kind.choices)
    if f["kind"] and f["kind"] not in kinds:
        messages.error(
            request, _("“%(value)s” is not a kind; showing every kind.") % {"value": f["kind"][:40]}
        )
        f["kind"] = ""
    if f["status"] and f["status"] not in curation_reads.LIBRARY_STATUSES:
        messages.error(
            request,
            _("“%(value)s” is not a status; showing every status.") % {"value": f["status"][:40]},
        )
        f["status"] = ""
    if f["sort"] and f["sort"] not in curation_reads.LIBRARY_SORTS:
        messages.error(
            request,
            _("“%(value)s” is not a sort order; showing the newest first.")
            % {"value": f["sort"][:40]},
        )
        f["sort"] = ""
    try:
        items = curation_reads.library_items(
            space=space,
            room=f["room"],
            kind=f["kind"],
            status=f["status"],
            entity=f["entity"],
            q=f["q"],
            redacted=f["redacted"] == "1",
            sort=f["sort"] or "newest",
        )
    except EngramError as exc:
        messages.error(request, exc.detail)
        f["room"] = ""
        items = curation_reads.library_items(
            space=space,
            kind=f["kind"],
            status=f["status"],
            entity=f["entity"],
            q=f["q"],
            redacted=f["redacted"] == "1",
            sort=f["sort"] or "newest",
        )
    paged = Paginator(items, PER_PAGE).get_page(request.GET.get("page"))
    rows = []
    for item in paged:
        entry = getattr(item, "palace", None)
        rows.append(
            (item, rooms.coordinate(entry.wing, entry.room_no, entry.slot) if entry else "")
        )
    query = urlencode({k: v for k, v in f.items() if v})
    preview = None
    danger_q = request.GET.get("forget_q", "").strip()[:200]
    if danger_q:
        from memory.services.forget import items_for_query

        try:
            preview = len(items_for_query(space=space, query=danger_q, include_inactive=False))
        except EngramError as exc:
            messages.error(request, exc.detail)
    statuses = list(MemoryItem.Status.choices) + [
        ("quarantined", _("Quarantined")),
        ("superseded", _("Superseded")),
    ]
    return page(
        request,
        "memory/library.html",
        "library",
        space=space,
        paged=paged,
        rows=rows,
        filters=f,
        query=query,
        here=f"{reverse('memory:library')}?{query}"
        + (f"&page={paged.number}" if paged.number > 1 else ""),
        kinds=MemoryItem.Kind.choices,
        statuses=statuses,
        room_names=curation_reads.room_names(space=space),
        sorts=[
            ("newest", _("Newest first")),
            ("oldest", _("Oldest first")),
            ("tour", _("Tour order")),
        ],
        forget_q=danger_q,
        preview=preview,
    )


def facts_redirect(request: HtmxHttpRequest) -> HttpResponse:
    url = reverse("memory:library")
    if request.META.get("QUERY_STRING"):
        url += "?" + request.META["QUERY_STRING"]
    return HttpResponsePermanentRedirect(url)


@staff_member_required
@require_POST
def batch(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.forget import forget, restore

    space = space_for(request)
    ids = [int(x) for x in request.POST.getlist("item") if x.isdigit()]
    what = request.POST.get("do", "")
    if what not in ("forget", "restore"):
        messages.error(request, _("Choose forget or restore."))
        return back(request)
    if not ids:
        messages.error(request, _("Tick at least one memory first."))
        return back(request)
    done, refused = 0, []
    mine = set(MemoryItem.objects.filter(space=space, pk__in=ids).values_list("pk", flat=True))
    for pk in ids:
        if pk not in mine:
            refused.append(str(pk))
            continue
        try:
            if what == "forget":
                done += forget(space=space, item_id=pk, actor=actor(request))
            else:
                restore(space=space, item_id=pk, actor=actor(request))
                done += 1
        except EngramError:
            refused.append(str(pk))
    if what == "forget":
        messages.success(
            request, ngettext("Forgot %(n)d memory.", "Forgot %(n)d memories.", done) % {"n": done}
        )
    else:
        messages.success(
            request,
            ngettext("Restored %(n)d memory.", "Restored %(n)d memories.", done) % {"n": done},
        )
    if refused:
        messages.info(request, _("Left as they were: %(ids)s.") % {"ids": ", ".join(refused[:20])})
    return back(request)


@staff_member_required
@require_POST
def forget_query(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.forget import forget

    space = space_for(request)
    text = request.POST.get("query", "").strip()[:200]
    if not text:
        messages.error(request, _("Type the words the memories to forget contain."))
        return redirect("memory:library")
    try:
        count = forget(space=space, query=text, actor=actor(request))
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(
            request,
            ngettext("Forgot %(n)d memory.", "Forgot %(n)d memories.", count) % {"n": count},
        )
    return redirect("memory:library")


@staff_member_required
@require_POST
def wipe(request: HtmxHttpRequest) -> HttpResponse:
    from memory.services.forget import forget

    space = space_for(request)
    typed = request.POST.get("confirm", "")
    if typed != space.name:
        messages.error(
            request,
            _("Not wiped: type the space's name, “%(name)s”, exactly.") % {"name": space.name},
        )
        return redirect("memory:library")
    try:
        count = forget(space=space, everything=True, confirm=typed, actor=actor(request))
    except EngramError as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(
            request,
            ngettext(
                "Wiped the space: %(n)d row deleted.", "Wiped the space: %(n)d rows deleted.", count
            )
            % {"n": count},
        )
    return redirect("memory:library")

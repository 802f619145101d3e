"""Entities: the lexicon (kinds, aliases, fact counts) and each entity's
fact chain, superseded and invalidated facts included."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from engram_site.types import HtmxHttpRequest
from memory import selectors_knowledge as reads
from memory.dashboard.common import page, space_for
from memory.models import Entity

# Stored kinds stay English; the page shows them in the reader's language.
KIND_LABELS = {
    "person": pgettext_lazy("entity kind", "Person"),
    "place": pgettext_lazy("entity kind", "Place"),
    "org": pgettext_lazy("entity kind", "Organisation"),
    "project": pgettext_lazy("entity kind", "Project"),
    "tool": pgettext_lazy("entity kind", "Tool"),
    "concept": pgettext_lazy("entity kind", "Concept"),
    "thing": pgettext_lazy("entity kind", "Thing"),
}


@staff_member_required
def entities(request: HtmxHttpRequest) -> HttpResponse:
    space = space_for(request)
    kind = request.GET.get("kind", "").strip()
    q = request.GET.get("q", "").strip()[:200]
    if kind and kind not in Entity.Type.values:
        messages.error(
            request, _("Unknown kind “%(kind)s”; showing every kind.") % {"kind": kind[:40]}
        )
        kind = ""
    rows = reads.entities_page(space=space, kind=kind, q=q, number=request.GET.get("page"))
    for row in rows:
        row.kind_label = KIND_LABELS.get(row.type, row.type)
    return page(
        request,
        "memory/entities.html",
        "entities",
        space=space,
        kind=kind,
        q=q,
        kinds=list(KIND_LABELS.items()),
        rows=rows,
    )


@staff_member_required
def entity(request: HtmxHttpRequest, entity_id: int) -> HttpResponse:
    space = space_for(request)
    found = get_object_or_404(Entity, space=space, pk=entity_id)
    return page(
        request,
        "memory/entity.html",
        "entities",
        space=space,
        entity=found,
        kind_label=KIND_LABELS.get(found.type, found.type),
        aliases=found.aliases.order_by("alias"),
        rows=reads.entity_facts(space=space, entity=found, number=request.GET.get("page")),
    )

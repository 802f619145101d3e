"""Today: the KPI hero with sparklines, the activity heatmap, the palace's
refurb list and room directory, the resident profile and the last
consolidation."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse

from engram_site.types import HtmxHttpRequest
from memory import curation_reads
from memory.dashboard.common import page, space_for


@staff_member_required
def today(request: HtmxHttpRequest) -> HttpResponse:
    from consolidation.models import ConsolidationRun
    from memory.services import core as core_service
    from memory.services.palace import tour

    space = space_for(request)
    kpis = curation_reads.today_kpis(space=space)
    for key in ("live", "open", "clarity", "due"):
        kpis[f"{key}_points"] = curation_reads.sparkline(kpis[f"{key}_series"])
    blocks = [core_service.load_block(space=space, label=label) for label in ("user", "agent")]
    last_run = (
        ConsolidationRun.objects.filter(space=space, status__in=("done", "failed"))
        .order_by("-finished_at", "-pk")
        .first()
    )
    return page(
        request,
        "memory/today.html",
        "today",
        space=space,
        kpis=kpis,
        clear_at=curation_reads.CLEAR_PLACARD,
        heat=curation_reads.activity(space=space),
        refurb=tour.refurb(space, limit=10),
        directory=tour.directory(space),
        blocks=blocks,
        last_run=last_run,
    )

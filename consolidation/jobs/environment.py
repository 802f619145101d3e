"""Step 8: refresh the host environment snapshot (L5), picking up drift such
as a new drive or a moved folder.

The server probe describes the one machine Engram runs on, not a space: it
is refreshed only for a space allowed to see that host (Space.host_access),
and at most once within PROBE_FRESH however many such spaces consolidate
(a daily sweep runs them one after another). A space without host access
skips the server part."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from consolidation.jobs._common import StepContext, StepResult

# A server probe this recent is the host as it is now: no second one.
PROBE_FRESH = timedelta(minutes=10)


def run(ctx: StepContext) -> StepResult:
    from environment.models import EnvironmentSnapshot
    from environment.services import refresh_probe

    if not ctx.space.host_access:
        return StepResult(counts={"refreshed": 0, "drift": 0}, detail={"server": "no host access"})
    recent = (
        EnvironmentSnapshot.objects.filter(
            space=None, source="probe", created_at__gte=timezone.now() - PROBE_FRESH
        )
        .order_by("-created_at")
        .first()
    )
    if recent is not None:
        return StepResult(
            counts={"refreshed": 0, "drift": 0}, detail={"snapshot": recent.pk, "fresh": True}
        )
    snapshot = refresh_probe()
    return StepResult(
        counts={"refreshed": 1, "drift": len(snapshot.drift or {})},
        detail={"snapshot": snapshot.pk},
    )

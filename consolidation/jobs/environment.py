"""Step 8: refresh the host environment snapshot (L5), picking up drift such
as a new drive or a moved folder."""

from __future__ import annotations

from consolidation.jobs._common import StepContext, StepResult


def run(ctx: StepContext) -> StepResult:
    from environment.services import refresh_probe

    snapshot = refresh_probe()
    return StepResult(
        counts={"refreshed": 1, "drift": len(snapshot.drift or {})},
        detail={"snapshot": snapshot.pk},
    )

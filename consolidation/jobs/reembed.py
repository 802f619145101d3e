"""Lazy re-embedding: rows with no vector under the configured model (new
rows whose embedding failed, or everything after a model switch) get one, a
bounded batch per run, so merge and recall compare like with like."""

from __future__ import annotations

from consolidation.jobs._common import StepContext, StepResult, cfg


def run(ctx: StepContext) -> StepResult:
    from memory import embeddings

    if not embeddings.enabled():
        return StepResult(counts={"embedded": 0})
    done = embeddings.reembed_pending(space_id=ctx.space.pk, limit=cfg("CONSOLIDATE_REEMBED_LIMIT"))
    return StepResult(counts={"embedded": done})

"""Beliefs keep their evidence: new evidence refines them, withdrawn
evidence refutes them, and a refuted belief's insight leaves recall."""

from __future__ import annotations

import pytest
from django.utils import timezone

from consolidation import services
from memory.models import Belief, MemoryItem
from memory.services.facts import invalidate
from tests.consolidation.messy import item

pytestmark = pytest.mark.django_db


def reflect(space):  # type: ignore[no-untyped-def]
    run = services.run_now(space=space, only=["reflect"])
    assert run is not None and run.status == "done", run and run.errors
    return run.steps["reflect"]["counts"]


def test_a_belief_is_formed_refined_and_refuted(space):  # type: ignore[no-untyped-def]
    evidence = [
        item(space, "Dana plays cello in a community orchestra", subject="Dana"),
        item(space, "Dana practises cello every evening", subject="Dana"),
        item(space, "Dana bought a new cello bow", subject="Dana"),
    ]
    counts = reflect(space)
    assert counts["formed"] == 1 and counts["insights"] == 1
    belief = Belief.objects.get(space=space)
    assert belief.status == "active" and belief.proof_count == 3
    assert [h["verdict"] for h in belief.history] == ["form"]

    # New evidence about the same subject: stale, then refined with it.
    newer = item(space, "Dana joined a string quartet", subject="Dana", created_at=timezone.now())
    counts = reflect(space)
    assert counts["stale"] == 1 and counts["refined"] == 1
    belief.refresh_from_db()
    assert belief.status == "active" and belief.proof_count == 4
    assert belief.evidence.filter(pk=newer.pk).exists()
    insight = MemoryItem.objects.get(
        space=space, kind="insight", expired_at=None, metadata__belief_id=belief.pk
    )
    assert newer.pk in insight.metadata["evidence"]

    # Most evidence withdrawn: refuted, kept with its evidence, out of recall.
    for e in [*evidence, newer][:3]:
        invalidate(item=e, actor="test", reason="wrong")
    counts = reflect(space)
    assert counts["refuted"] == 1
    belief.refresh_from_db()
    assert belief.status == "refuted" and belief.evidence.count() == 4
    insight.refresh_from_db()
    assert insight.expired_at is not None
    assert [h["verdict"] for h in belief.history][-2:] == ["stale", "refute"]


def test_near_identical_beliefs_merge(space):  # type: ignore[no-untyped-def]
    a = Belief.objects.create(space=space, text="Dana loves playing the cello every day")
    b = Belief.objects.create(space=space, text="Dana loves playing the cello every day.")
    e = item(space, "Dana practises cello every evening", subject="Dana")
    b.evidence.add(e)
    counts = reflect(space)
    assert counts["beliefs_merged"] == 1
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.status == "active" and a.evidence.filter(pk=e.pk).exists()
    assert b.status == "refuted" and b.history[-1] == {
        **b.history[-1],
        "verdict": "merged",
        "into": a.pk,
    }

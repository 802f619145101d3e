"""One run over a messy space makes it measurably tighter, and its report
agrees with the database."""

from __future__ import annotations

import pytest

from consolidation.models import ConsolidationRun
from memory.models import AuditEvent, Belief, MemoryItem, SessionSummary, Skill
from memory.services import core
from tests.consolidation.messy import build, fill_core

pytestmark = pytest.mark.django_db


def live(space):  # type: ignore[no-untyped-def]
    return MemoryItem.objects.filter(
        space=space, status="active", expired_at=None, screen_status="ok"
    )


def start_and_finish(api, capture):  # type: ignore[no-untyped-def]
    with capture(execute=True):
        r = api.post("/api/v1/consolidate", {}, content_type="application/json")
    assert r.status_code == 202, r.content
    run_id = r.json()["run_id"]
    r = api.get(f"/api/v1/consolidation/runs/{run_id}")
    assert r.status_code == 200
    return r.json()


def test_it_makes_a_messy_space_tighter(space, api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    messy = build(space, api)
    usage_before = fill_core(space)
    assert usage_before > 0.9
    live_before = live(space).count()
    assert not live(space).filter(text__icontains="pottery class").exists()

    run = start_and_finish(api, django_capture_on_commit_callbacks)
    assert run["status"] == "done", run
    assert run["errors"] == []
    f = run["figures"]

    # duplicates: one of the three hiking facts is left, the others point at it
    dups = MemoryItem.objects.filter(pk__in=messy.duplicates)
    survivors = [d for d in dups if d.expired_at is None]
    assert len(survivors) == 1
    keep = survivors[0]
    assert keep.frequency == 3
    assert all(d.superseded_by_id == keep.pk for d in dups if d.pk != keep.pk)
    # the contradiction: the newer value stands
    old = MemoryItem.objects.get(pk=messy.contradiction_old)
    assert old.superseded_by_id == messy.contradiction_new and old.expired_at is not None
    # promoted: the pottery class, with provenance
    promoted = live(space).filter(text__icontains="pottery class", source="consolidation")
    assert promoted.count() == 1
    assert len(promoted[0].source_turn_refs) == 1 and promoted[0].source_turn_refs[0] in {
        "s0-1",
        "s1-1",
        "s2-1",
    }
    # decayed and expired
    assert MemoryItem.objects.get(pk=messy.stale_fact).status == "archived"
    assert MemoryItem.objects.get(pk=messy.old_event).expired_at is not None
    # core below 80%, nothing lost: demoted lines became facts
    block = core.get_block(space=space, label="user")
    assert core.usage(block=block) < 0.8
    assert "NAME: DANA WHITFIELD" not in block.text  # the shouted duplicate was merged
    assert run["steps"]["compact_core"]["counts"]["demoted"] >= 1
    # an insight with evidence links
    belief = Belief.objects.get(space=space, status="active", history__0__subject="dana")
    assert set(belief.evidence.values_list("pk", flat=True)) >= set(messy.old_belief_evidence)
    assert belief.proof_count >= 3
    insight = live(space).get(kind="insight", metadata__belief_id=belief.pk)
    assert set(insight.metadata["evidence"]) >= set(messy.old_belief_evidence)
    # summaries and a skill draft, disabled
    assert SessionSummary.objects.filter(space=space).count() == 3
    draft = Skill.objects.get(space=space, source="consolidation")
    assert draft.is_draft and not draft.enabled
    assert "git pull" in draft.body and "make deploy" in draft.body

    # the report's figures are the database's
    r = ConsolidationRun.objects.get(pk=run["id"])
    started = r.started_at
    merged_db = MemoryItem.objects.filter(
        space=space, superseded_by__isnull=False, expired_at__gte=started
    ).count()
    assert f["merged"] + f["contradictions"] == merged_db
    assert f["archived"] == MemoryItem.objects.filter(space=space, status="archived").count()
    assert (
        f["expired"]
        == AuditEvent.objects.filter(
            space=space,
            action="delete",
            actor="consolidation",
            detail__reason="event past its horizon",
        ).count()
    )
    new_facts = MemoryItem.objects.filter(
        space=space, source="consolidation", created_at__gte=started
    ).exclude(kind="insight")
    assert f["facts"] == new_facts.count()
    assert f["insights"] == MemoryItem.objects.filter(space=space, kind="insight").count()
    assert f["skill_drafts"] == Skill.objects.filter(space=space, is_draft=True).count()
    assert f["summaries"] == 3
    assert f"+{f['facts']} fact" in run["report"] and f"merged {f['merged']}" in run["report"]
    assert f"archived {f['archived']}" in run["report"]
    assert "new insight" in run["report"]
    # measurably tighter overall
    assert live(space).count() < live_before + f["facts"] + f["insights"]
    assert r.llm_calls == 0


def test_a_second_run_finds_little_left_to_do(space, api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    build(space, api)
    fill_core(space)
    start_and_finish(api, django_capture_on_commit_callbacks)
    again = start_and_finish(api, django_capture_on_commit_callbacks)
    assert again["status"] == "done"
    f = again["figures"]
    assert f["merged"] == f["facts"] == f["archived"] == f["insights"] == f["skill_drafts"] == 0
    assert f["summaries"] == 0

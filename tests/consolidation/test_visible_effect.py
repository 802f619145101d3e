"""Consolidation whose effect a person can see, on a messy multi-session
space (tests/consolidation/life.py): readable insights about one entity
each, a promoted name, a skill draft from a routine typed three ways, skill
use that feeds reinforcement, demoted core entries that keep their kind, and
a report that says exactly what changed."""

from __future__ import annotations

from typing import Any

import pytest

from consolidation import services
from consolidation.models import ConsolidationRun
from memory.models import AuditEvent, Belief, MemoryItem, SessionSummary, Skill, Space
from memory.services import core
from tests.consolidation import messy
from tests.consolidation.life import LATER_FACT, build

pytestmark = pytest.mark.django_db


def run(space: Space) -> ConsolidationRun:
    done = services.run_now(space=space, skip=["environment"])
    assert done is not None and done.status == "done", done and done.errors
    assert done.errors == []
    return done


def belief_of(space: Space, key: str) -> Belief:
    return Belief.objects.get(space=space, status="active", history__0__subject=key)


def insight_of(belief: Belief) -> MemoryItem:
    return MemoryItem.objects.get(
        kind="insight", metadata__belief_id=belief.pk, expired_at=None, status="active"
    )


def test_insights_are_sentences_about_one_entity(space, api):  # type: ignore[no-untyped-def]
    life = build(space, api)
    first = run(space)

    anna = belief_of(space, "anna")
    # "Anna", "anna" and "Anna K." are one person; all three facts are her evidence.
    anna_facts = [life.fact_ids[t] for t in life.fact_ids if t.lower().startswith("anna")]
    assert set(anna.evidence.values_list("pk", flat=True)) == set(anna_facts)
    assert anna.text == "Anna lives in Lyon, works as a teacher and has a dog named Max."
    assert insight_of(anna).text == anna.text
    assert insight_of(anna).subject == "Anna"

    # The user under "user", "me" and their own name "Maria" is one entity.
    user = belief_of(space, "user")
    assert "The user likes hiking and jazz and dislikes crowds." in user.text
    assert "recurring across" not in user.text and "I dislike" not in user.text
    assert "2 new insights" in first.report

    # The insight is the belief's own item: its evidence stays live and unchanged.
    for pk in anna_facts:
        fact = MemoryItem.objects.get(pk=pk)
        assert fact.expired_at is None and fact.superseded_by_id is None


def test_a_name_that_opens_sentences_in_three_sessions_is_promoted(space, api, settings):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "CONSOLIDATE_PROMOTE_MIN_SESSIONS": 3}
    build(space, api)
    done = run(space)
    promoted = MemoryItem.objects.get(space=space, source="consolidation", subject="Priya")
    assert promoted.text.startswith("The user mentioned Priya in 3 sessions: ")
    assert len(promoted.source_turn_refs) == 1
    # Commands are not conversation: nothing was promoted from the deploy lines.
    texts = " ".join(
        MemoryItem.objects.filter(space=space, source="consolidation")
        .exclude(kind="insight")
        .values_list("text", flat=True)
    )
    assert "rsync" not in texts and "srv" not in texts
    assert done.steps["promote"]["counts"]["promoted"] == 1
    # A fourth session is needed when the setting asks for four.
    settings.ENGRAM = {**settings.ENGRAM, "CONSOLIDATE_PROMOTE_MIN_SESSIONS": 4}
    promoted.status = "archived"
    promoted.save(update_fields=["status"])
    assert run(space).steps["promote"]["counts"]["promoted"] == 0


def test_a_routine_typed_three_ways_becomes_one_disabled_draft(space, api):  # type: ignore[no-untyped-def]
    build(space, api)
    run(space)
    draft = Skill.objects.get(space=space, source="consolidation")
    assert draft.is_draft and not draft.enabled and draft.usage_count == 0
    assert draft.name == "workflow: git pull → npm run build → rsync"
    assert draft.body.splitlines() == [
        "1. git pull",
        "2. npm run build",
        "3. rsync -av dist/ web:/srv/blog",
    ]
    assert "3 sessions" in draft.description


def test_skill_use_is_counted_and_reinforces_what_it_relies_on(space, api, settings):  # type: ignore[no-untyped-def]
    life = build(space, api)
    run(space)
    draft = Skill.objects.get(space=space, source="consolidation")
    # A draft is never returned nor countable until a person enables it.
    r = api.post("/api/v1/memory/report", {"skill_id": draft.pk}, content_type="application/json")
    assert r.status_code == 404
    Skill.objects.filter(pk=draft.pk).update(enabled=True, is_draft=False)

    r = api.post(
        "/api/v1/recall",
        {"query": "how do I publish the blog with npm run build and rsync", "types": ["skill"]},
        content_type="application/json",
    )
    assert r.status_code == 200
    assert [x["id"] for x in r.json()["results"]] == [str(draft.pk)]
    draft.refresh_from_db()
    assert draft.usage_count == 1 and draft.last_used_at is not None

    # A recall that returns no skill counts nothing.
    api.post("/api/v1/recall", {"query": "hiking"}, content_type="application/json")
    r = api.post(
        "/api/v1/memory/report",
        {"skill_id": draft.pk, "note": "published fine"},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert r.json()["usage_count"] == 2
    assert AuditEvent.objects.filter(space=space, action="use", target_id=str(draft.pk)).exists()

    blog = MemoryItem.objects.get(pk=life.fact_ids[next(t for t in life.fact_ids if "blog" in t)])
    second = run(space)
    counts = second.steps["skills"]["counts"]
    assert counts["skills_used"] == 1 and counts["reinforced"] >= 1
    reinforced = AuditEvent.objects.get(space=space, action="reinforce", target_id=str(draft.pk))
    assert blog.pk in reinforced.detail["items"]
    after = MemoryItem.objects.get(pk=blog.pk)
    # Two uses since the last run: twice the configured boost.
    boost = settings.ENGRAM["CONSOLIDATE_SKILL_REINFORCE"]
    assert after.importance == pytest.approx(min(1.0, blog.importance + 2 * boost))
    assert reinforced.detail["uses"] == 2
    assert f"reinforced {counts['reinforced']} fact" in second.report
    # No use since: the next run reinforces nothing, though the skill was used before.
    third = run(space)
    assert third.steps["skills"]["counts"]["skills_used"] == 0
    assert third.steps["skills"]["counts"]["reinforced"] == 0


def test_a_refinement_is_reported_and_the_report_matches_the_database(space, api):  # type: ignore[no-untyped-def]
    build(space, api)
    run(space)
    anna = belief_of(space, "anna")
    old_insight = insight_of(anna)
    # New evidence, stored under yet another spelling without going through
    # the write path's identity resolution.
    text, _, predicate, obj, kind = LATER_FACT
    cello = MemoryItem.objects.create(
        space=space, text=text, subject="ANNA k.", predicate=predicate, object=obj, kind=kind
    )
    messy.fill_core(space)

    second = run(space)
    f = services.figures(second)
    started = second.started_at
    assert started is not None

    anna.refresh_from_db()
    assert cello.pk in set(anna.evidence.values_list("pk", flat=True))
    assert anna.text == (
        "Anna lives in Lyon, works as a teacher, has a dog named Max and plays the cello."
    )
    new_insight = insight_of(anna)
    assert new_insight.text == anna.text
    old_insight.refresh_from_db()
    assert old_insight.superseded_by_id == new_insight.pk

    # Every figure against the rows that changed.
    def since(qs: Any, field: str = "created_at") -> Any:
        return qs.filter(**{f"{field}__gte": started})

    refined = [
        b
        for b in Belief.objects.filter(space=space)
        if any(h["verdict"] == "refine" and h["at"] >= started.isoformat() for h in b.history)
    ]
    assert f["refined"] == len(refined) == 1
    assert "refined 1 belief" in second.report
    items = MemoryItem.objects.filter(space=space)
    rewritten = set(second.steps["reflect"]["detail"].get("refined_items", []))
    assert rewritten == {new_insight.pk}
    assert f["insights"] == since(items.filter(kind="insight")).exclude(pk__in=rewritten).count()
    assert f["facts"] == since(items.filter(source="consolidation").exclude(kind="insight")).count()
    assert (
        f["merged"] + f["contradictions"]
        == since(items.exclude(kind="insight").exclude(superseded_by=None), "expired_at").count()
    )
    assert f["archived"] == items.filter(status="archived").count()
    assert f["summaries"] == since(SessionSummary.objects.filter(space=space)).count()
    assert f["skill_drafts"] == since(Skill.objects.filter(space=space, is_draft=True)).count()
    assert f["core_compacted"] == 1
    demoted = since(items.filter(source="consolidation").exclude(kind="insight"))
    assert f["core_demoted"] == second.steps["compact_core"]["counts"]["demoted"] >= 1
    assert demoted.count() == second.steps["compact_core"]["counts"]["facts_added"]
    assert f"+{f['facts']} fact" in second.report
    assert "nothing to improve" not in second.report


def test_demoted_core_entries_keep_their_kind(space):  # type: ignore[no-untyped-def]
    messy.fill_core(space)
    done = run(space)
    demoted = list(
        MemoryItem.objects.filter(space=space, source="consolidation").exclude(kind="insight")
    )
    assert demoted and done.steps["compact_core"]["counts"]["demoted"] >= len(demoted)
    expected = {line: core.entry_kind(space=space, entry=line) for line in messy.LINES}
    for item in demoted:
        if item.text in expected:
            assert item.kind == expected[item.text], item.text
    kinds = {item.kind for item in demoted}
    assert kinds - {"preference"}, kinds  # not everything is labelled a preference


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        ("Prefers answers with code first, then a short explanation", "preference"),
        ("Does not like emojis in replies", "preference"),
        ("Wants reminders phrased as questions rather than orders", "instruction"),
        ("Always answer in British English", "instruction"),
        ("Works as a marine biologist at the Monterey aquarium", "fact"),
        ("Uses fish shell and tmux for every terminal session", "fact"),
    ],
)
def test_a_core_entry_is_classified_by_its_wording(space, entry, kind):  # type: ignore[no-untyped-def]
    assert core.entry_kind(space=space, entry=entry) == kind


def test_an_entry_made_from_a_fact_keeps_the_fact_kind(space):  # type: ignore[no-untyped-def]
    MemoryItem.objects.create(space=space, text="Answers go in Spanish", kind="instruction")
    assert core.entry_kind(space=space, entry="- Answers go in Spanish") == "instruction"


def test_a_second_run_with_nothing_new_reports_nothing(space, api):  # type: ignore[no-untyped-def]
    build(space, api)
    run(space)
    again = run(space)
    assert again.report == "nothing to improve", again.steps
    assert services.figures(again) == dict.fromkeys(services.figures(again), 0)

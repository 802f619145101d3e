"""The read tools: memory_search (as_of, known_at, include_history, types,
k), the recall aliases, memory_timeline, memory_episodes, memory_examine,
memory_neighbors, memory_review, memory_stats, memory_export, memory_guide;
and the consolidation tools memory_distill and memory_reflect."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import MemoryItem, Turn


@pytest.fixture
def turn(api, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """Post a turn and run the write pipeline on it (eager, as on commit)."""

    def post(session: str, text: str, ref: str, ts: str | None = None) -> None:
        body = {"session_id": session, "role": "user", "text": text, "ref": ref}
        if ts:
            body["ts"] = ts
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/turns", body, content_type="application/json")
        assert response.status_code == 202, response.json()

    return post


def test_search_types_k_and_history(ok):
    ok("memory_save", text="I live in Lisbon")
    ok("memory_save", text="I moved to Berlin")
    now = ok("memory_search", query="live Lisbon Berlin", types=["fact"])
    assert [r["current"] for r in now["results"]] == [True]
    both = ok("memory_search", query="live Lisbon Berlin", types=["fact"], include_history=True)
    assert len(both["results"]) == 2 and {r["current"] for r in both["results"]} == {True, False}
    assert (
        len(ok("memory_search", query="live Lisbon Berlin", include_history=True, k=1)["results"])
        == 1
    )


def test_search_known_at_sees_what_was_known_then(ok):
    ok("memory_save", text="I live in Lisbon")
    before = (timezone.now() - timedelta(days=1)).isoformat()
    assert ok("memory_search", query="Lisbon", known_at=before)["results"] == []
    assert ok("memory_search", query="Lisbon")["results"]


def test_aliases_limit_the_types(ok, turn):
    ok("memory_save", text="The user's sister Anna lives in Porto.")
    turn("s1", "We talked about Anna and her garden in Porto.", "t1")
    facts = ok("recall_facts", query="Anna Porto")["results"]
    turns = ok("search_conversations", query="Anna garden Porto")["results"]
    assert facts and {r["type"] for r in facts} <= {"fact", "insight"}
    assert turns and {r["type"] for r in turns} == {"turn"}
    assert ok("recall_sessions", query="Anna")["results"] == []


def test_timeline_newest_first_by_kind(ok):
    ok("remember_fact", text="The user prefers window seats.", kind="preference")
    ok("remember_fact", text="The user ran a marathon in May.", kind="event")
    ok("remember_fact", text="The user prefers aisle seats on night trains.", kind="preference")
    items = ok("memory_timeline")["items"]
    assert [i["text"] for i in items][0] == "The user prefers aisle seats on night trains."
    assert [i["created_at"] for i in items] == sorted(
        (i["created_at"] for i in items), reverse=True
    )
    prefs = ok("memory_timeline", kind="preference")["items"]
    assert len(prefs) == 2 and {i["kind"] for i in prefs} == {"preference"}


def test_episodes_grouped_by_session_with_drill_in_and_around(ok, turn):
    base = timezone.now() - timedelta(days=3)
    turn("trip", "We planned the trip to Porto.", "a1", base.isoformat())
    turn("trip", "I booked the train to Porto.", "a2", (base + timedelta(minutes=10)).isoformat())
    turn("work", "The deadline at Acme moved.", "b1", (base + timedelta(hours=5)).isoformat())
    groups = ok("memory_episodes")["sessions"]
    assert [g["session_id"] for g in groups] == ["work", "trip"]
    assert [t["ref"] for t in groups[1]["turns"]] == ["a1", "a2"]
    one = ok("memory_episodes", session_id="trip")["sessions"]
    assert [g["session_id"] for g in one] == ["trip"]
    ranged = ok(
        "memory_episodes",
        start=(base + timedelta(hours=1)).isoformat(),
        end=(base + timedelta(hours=6)).isoformat(),
    )["sessions"]
    assert [g["session_id"] for g in ranged] == ["work"]
    space = Turn.objects.get(ref="a1").space
    item = MemoryItem.objects.create(space=space, text="Trip to Porto planned.", stated_at=base)
    near = ok("memory_episodes", around=str(item.pk), window_minutes=60)["sessions"]
    assert [g["session_id"] for g in near] == ["trip"]


def test_examine_up_to_16_with_provenance_and_not_found(ok, call, turn):
    turn("s1", "My sister Anna lives in Porto.", "t1")
    item = MemoryItem.objects.exclude(source_turn_refs=[]).first()
    assert item is not None
    body = ok("memory_examine", ids=[str(item.pk), "999999", "abc"])
    assert [i["id"] for i in body["items"]] == [str(item.pk)]
    assert body["items"][0]["provenance"]["session_id"] == "s1"
    assert body["items"][0]["provenance"]["turn_refs"] == ["t1"]
    assert body["not_found"] == ["999999", "abc"]
    status, body = call("memory_examine", ids=[str(i) for i in range(17)])
    assert status == 422 and "ids" in body["detail"]


def test_neighbors_walk_live_relations_up_to_three_hops(ok, call):
    ok(
        "memory_facts",
        facts=[
            {
                "entity": "Anna",
                "content": "Anna lives in Porto.",
                "predicate": "lives_in",
                "object": "Porto",
            },
            {
                "entity": "Porto",
                "content": "Porto is in Portugal.",
                "predicate": "located_in",
                "object": "Portugal",
            },
        ],
    )
    one = ok("memory_neighbors", entity="Anna")
    assert one["entity"]["name"] == "Anna"
    assert [(n["name"], n["hops"]) for n in one["neighbors"]] == [("Porto", 1)]
    assert "lives_in" in one["neighbors"][0]["via"]
    two = ok("memory_neighbors", entity="Anna", hops=2)
    assert [(n["name"], n["hops"]) for n in two["neighbors"]] == [("Porto", 1), ("Portugal", 2)]
    status, body = call("memory_neighbors", entity="Anna", hops=4)
    assert status == 422 and "hops" in body["detail"]
    status, _ = call("memory_neighbors", entity_id="999999")
    assert status == 404


def test_review_shows_source_turns_and_audit(ok, turn):
    turn("s1", "My sister Anna lives in Porto.", "t1")
    item = MemoryItem.objects.exclude(source_turn_refs=[]).first()
    assert item is not None
    body = ok("memory_review", id=str(item.pk))
    assert [t["ref"] for t in body["source_turns"]] == ["t1"]
    assert body["chain"][-1]["id"] == str(item.pk)
    assert body["audit"] and body["audit"][0]["action"]


def test_stats_count_by_kind_and_state(ok):
    keep = ok("remember_fact", text="The user prefers window seats.", kind="preference")["id"]
    gone = ok("remember_fact", text="The user ran a marathon in May.", kind="event")["id"]
    ok("memory_forget", item_id=gone)
    stats = ok("memory_stats")
    assert stats["by_kind"] == {"preference": 1, "event": 1}
    assert stats["by_status"] == {"active": 1, "forgotten": 1}
    assert stats["live"] == 1 and stats["total"] == 2 and stats["signal_ratio"] == 0.5
    assert stats["pending_jobs"] == 0 and keep


def test_export_json_and_markdown_redacted(ok):
    ok("remember_fact", text="The user's server key is sk-abcdefghijklmnopqrstuvwxyz123456.")
    ok("remember_fact", text="The user prefers window seats.", kind="preference")
    data = json.loads(ok("memory_export", format="json")["content"])
    assert any("window seats" in i["text"] for i in data["items"])
    md = ok("memory_export", format="markdown", redacted=True)["content"]
    assert "window seats" in md and "sk-abcdefghijklmnopqrstuvwxyz123456" not in md


def test_guide_in_the_language_asked_for(ok):
    assert "memory_assess" in ok("memory_guide")["text"]
    # The review loop, in its order: queue, recall, review, grade.
    for code in ("en", "ru", "zh"):
        text = ok("memory_guide", language=code)["text"]
        loop = [
            text.index(w) for w in ("memory_review_queue", "memory_review ", "memory_report grade")
        ]
        assert loop == sorted(loop), code
    ru = ok("memory_guide", language="ru")
    assert ru["language"] == "ru" and "Как" in ru["text"]
    assert ok("memory_guide", language="中文")["language"] == "zh"
    other = ok("memory_guide", language="de")
    assert other["translated"] is False and "translate" in other["text"]


def test_distill_merges_a_cluster_and_dry_run_only_counts(ok, space):
    # Three restatements of one preference (same subject, predicate, object).
    for text in (
        "The user likes green tea in the morning.",
        "The user likes green tea in the mornings.",
        "Every morning the user likes a green tea.",
    ):
        MemoryItem.objects.create(
            space=space,
            text=text,
            kind="preference",
            subject="user",
            predicate="likes",
            object="green tea",
        )
    plan = ok("memory_distill", dry_run=True)
    assert plan["dry_run"] is True and plan["ran"] is False
    assert plan["counts"] == {"clusters": 1, "entries": 3}
    assert MemoryItem.objects.filter(status="active", expired_at=None).count() == 3
    done = ok("memory_distill")
    assert done["ran"] is True and done["counts"]["clusters"] == 1
    live = MemoryItem.objects.filter(status="active", expired_at=None)
    assert live.count() == 1
    assert MemoryItem.objects.filter(superseded_by=live.get()).count() == 2


def test_reflect_runs_the_belief_step(ok):
    for text in (
        "The user climbs on Mondays.",
        "The user climbs on Thursdays.",
        "The user owns climbing shoes.",
    ):
        ok("remember_fact", text=text)
    done = ok("memory_reflect")
    assert done["ran"] is True and isinstance(done["counts"], dict)

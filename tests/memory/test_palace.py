"""The memory palace: rooms and slots, placards and the refurb list, the
fixed tour, room-routed search, SM-2 review and its place in /context."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memory.models import MemoryItem, PalaceEntry, Skill
from memory.services import facts, forget
from memory.services.palace import placards, review, slots, tour
from memory.tokens import estimate_tokens


@pytest.fixture(autouse=True)
def _small_rooms(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "MIRROR_DIR": tmp_path / "mirror",
        "ROOM_CAPACITY": 3,
        "REVIEW_ENROL": True,
    }


def save(space, text: str, **kw: Any) -> MemoryItem:  # type: ignore[no-untyped-def]
    result = facts.save_fact(space=space, text=text, **kw)
    assert result.item is not None and result.action == "ADD", (text, result)
    return result.item


def place(item: MemoryItem) -> str:
    e = PalaceEntry.objects.get(item=item)
    return tour.rooms.coordinate(e.wing, e.room_no, e.slot)


def call(api, name: str, **arguments: Any) -> tuple[int, Any]:  # type: ignore[no-untyped-def]
    response = api.post(f"/api/v1/tools/{name}", arguments, content_type="application/json")
    return response.status_code, response.json()


def ok(api, name: str, **arguments: Any) -> Any:  # type: ignore[no-untyped-def]
    status, body = call(api, name, **arguments)
    assert status == 200, (name, status, body)
    return body


WORDS = "amber basalt cobalt dahlia ember fjord granite heron indigo juniper kestrel lichen".split()


def distinct(n: int, start: int = 0) -> list[str]:
    return [f"The {WORDS[i]} notebook sits on shelf {i}" for i in range(start, start + n)]


# --- rooms and slots --------------------------------------------------------------------------


def test_entries_fill_rooms_by_kind_and_overflow_opens_the_next(space):  # type: ignore[no-untyped-def]
    items = [save(space, t) for t in distinct(7)]
    assert [place(i) for i in items] == [
        "Fact Hall#1",
        "Fact Hall#2",
        "Fact Hall#3",
        "Fact Hall-2#1",
        "Fact Hall-2#2",
        "Fact Hall-2#3",
        "Fact Hall-3#1",
    ]
    pref = save(space, "Prefers green tea over black coffee", kind="preference")
    decision = save(space, "We decided to ship the beta on Friday", kind="decision")
    episode = save(space, "The onboarding call went long", kind="episode")
    assert place(pref) == "Preference Pavilion#1"
    assert place(decision) == "Decision Chamber#1"
    assert place(episode) == "Episode Gallery#1"
    skill = Skill.objects.create(space=space, name="deploy", description="ship it")
    assert PalaceEntry.objects.filter(skill=skill).count() == 0  # made around the write path
    slots.ensure(space)
    assert PalaceEntry.objects.get(skill=skill).wing == "skill"


def test_a_forgotten_entry_keeps_its_slot_empty(space):  # type: ignore[no-untyped-def]
    a, b = (save(space, t) for t in distinct(2))
    forget.forget_with_report(space=space, item_id=str(b.pk), actor="test")
    c = save(space, distinct(1, start=5)[0])
    assert place(b) == "Fact Hall#2"  # still there, vacant
    assert place(c) == "Fact Hall#3"  # not recycled
    stops, _ = tour.fixed(space)
    assert [s["id"] for s in stops] == [str(a.pk), str(c.pk)]


def test_a_hard_forget_leaves_a_blank_vacant_slot(space):  # type: ignore[no-untyped-def]
    a, b = (save(space, t) for t in distinct(2))
    forget.forget_with_report(space=space, item_id=str(b.pk), hard=True, actor="test")
    vacant = PalaceEntry.objects.get(space=space, slot=2)
    assert vacant.item_id is None and vacant.placard == "" and vacant.topic == ""
    c = save(space, distinct(1, start=5)[0])
    assert place(c) == "Fact Hall#3"


def test_a_topic_goes_back_to_its_room_while_it_has_space(space, settings):  # type: ignore[no-untyped-def]
    assert slots.choose((2, 1), (1, 1), capacity=3) == (1, 2)  # the topic's room has space
    assert slots.choose((2, 1), (1, 3), capacity=3) == (2, 2)  # full: the newest room
    assert slots.choose((2, 3), None, capacity=3) == (3, 1)  # all full: a new room
    assert slots.choose(None, None, capacity=3) == (1, 1)
    anna = save(space, "Anna plays the cello", subject="Anna", predicate="plays", object="cello")
    for t in distinct(5):
        save(space, t)
    # Rooms grow: the older rooms have space now, and Anna's goes back to hers.
    settings.ENGRAM = {**settings.ENGRAM, "ROOM_CAPACITY": 5}
    again = save(space, "Anna speaks Danish", subject="Anna", predicate="speaks", object="Danish")
    other = save(space, "The fjord ferry leaves at noon")
    assert place(anna) == "Fact Hall#1" and place(again) == "Fact Hall#4"
    assert place(other) == "Fact Hall-2#4"


def test_slots_are_stable_across_reslotting_and_consolidation(space):  # type: ignore[no-untyped-def]
    from consolidation import services as consolidation

    items = [save(space, t) for t in distinct(5)]
    before = {i.pk: place(i) for i in items}
    # An entry stored around the write path (an import) is slotted on first use, once.
    imported = MemoryItem.objects.create(space=space, text="Imported: the kiln runs hot")
    slots.ensure(space)
    slots.ensure(space)
    assert slots.slot_missing(space.pk) == 0
    assert PalaceEntry.objects.filter(item=imported).count() == 1
    assert PalaceEntry.objects.get(item=imported).due_at is None  # imports are not enrolled
    consolidation.run_now(space=space, trigger="manual")
    assert {i.pk: place(i) for i in items} == before
    assert PalaceEntry.objects.filter(space=space).count() == 6
    # Archived before the palace existed: slotted when it comes back.
    old = MemoryItem.objects.create(
        space=space, text="The old lichen map", status=MemoryItem.Status.ARCHIVED
    )
    slots.ensure(space)
    assert not PalaceEntry.objects.filter(item=old).exists()
    forget.restore(space=space, item_id=old.pk)
    assert place(old) == "Fact Hall-3#1" and {i.pk: place(i) for i in items} == before


# --- placards ----------------------------------------------------------------------------------


def test_placard_scores_on_constructed_cases() -> None:
    assert placards.score("Kiln fired @2024-05-01", unique=True, clash=False).value == 1.0
    assert placards.score("Kiln fired …", unique=True, clash=False).value == 0.7
    clashing = placards.score("Kiln fired @May 3", unique=True, clash=True)
    assert clashing.value == 0.7 and "6 characters" in clashing.hints[0]
    worst = placards.score("Kiln …", unique=False, clash=True)
    assert worst.value == 0.0 and len(worst.hints) == 3
    # The cue never is the whole text, and time-bound kinds carry their date.
    when = timezone.now().replace(year=2025, month=3, day=1)
    cue = placards.make(
        text="We moved the office", subject="", predicate="", kind="event", when=when
    )
    assert cue == "We moved… @2025-03-01"
    assert placards.make(
        text="Anna lives in Oslo", subject="Anna", predicate="lives_in", kind="fact", when=when
    ) == ("Anna lives in …")


def test_write_time_scores_see_the_room_and_the_space(space):  # type: ignore[no-untyped-def]
    first = save(space, "Kestrel notebook sits on the desk")
    # Unique and alone in its room, but undated.
    assert PalaceEntry.objects.get(item=first).placard_score == 0.7
    twin = save(space, "Kestrel notebook sits on the floor today")
    # The same cue ("Kestrel notebook sits…") in the same room: neither unique
    # nor distinct, and the first one's score drops with it.
    assert PalaceEntry.objects.get(item=twin).placard == PalaceEntry.objects.get(item=first).placard
    assert PalaceEntry.objects.get(item=twin).placard_score == 0.0
    assert PalaceEntry.objects.get(item=first).placard_score == 0.0
    # Another room: only uniqueness is shared across rooms.
    save(space, "A heron stands in the reeds")
    far = save(space, "Kestrel notebook sits by the window sill")
    assert place(far).startswith("Fact Hall-2")
    assert PalaceEntry.objects.get(item=far).placard_score == 0.3


def test_the_refurb_list_and_the_eight_entry_rule(space):  # type: ignore[no-untyped-def]
    for i in range(7):
        save(space, f"Shelf item {WORDS[i]} is kept in the drawer number {i}")
    assert tour.refurb(space) == []  # fewer than 8 live entries: not scanned
    save(space, "Shelf item lichen is kept in the drawer number 7")
    low = tour.refurb(space)
    assert low and all(r["score"] < 0.5 for r in low)
    assert any("clash" in h for r in low for h in r["hints"])
    assert all("#" in r["coordinate"] for r in low)


# --- the tour ----------------------------------------------------------------------------------


def test_the_fixed_tour_never_changes_as_entries_are_added(space, api):  # type: ignore[no-untyped-def]
    for t in distinct(4):
        save(space, t)
    first = ok(api, "memory_tour", mode="fixed", limit=3)
    rest = ok(api, "memory_tour", mode="fixed", after=first["next_after"], limit=3)
    route = [s["coordinate"] for s in first["stops"] + rest["stops"]]
    assert rest["next_after"] is None and len(route) == 4
    save(space, "Prefers window seats", kind="preference")
    for t in distinct(3, start=6):
        save(space, t)
    again = ok(api, "memory_tour", mode="fixed", limit=100)
    walked = [s["coordinate"] for s in again["stops"]]
    assert walked[:4] == route and len(walked) == 8
    assert walked[4] == "Preference Pavilion#1"  # appended where it was slotted
    assert [s["route"] for s in again["stops"]] == sorted(s["route"] for s in again["stops"])
    assert [(r["room"], r["rooms"], r["used"]) for r in again["rooms"]] == [
        ("Fact Hall-3", 3, 1),
        ("Preference Pavilion", 1, 1),
    ]


def test_a_thematic_tour_has_three_to_seven_stops(space, api):  # type: ignore[no-untyped-def]
    for t in distinct(9):
        save(space, t)
    save(space, "The granite countertop was installed in May")
    body = ok(api, "memory_tour", mode="thematic", theme="granite")
    assert 3 <= len(body["stops"]) <= 7
    assert any("granite" in s["text"] for s in body["stops"])
    status, bad = call(api, "memory_tour", mode="thematic")
    assert status == 422 and "theme" in bad["detail"]


def test_timeline_in_tour_order(space, api):  # type: ignore[no-untyped-def]
    a = save(space, "Prefers aisle seats", kind="preference")
    b, c = (save(space, t) for t in distinct(2))
    body = ok(api, "memory_timeline", order="tour")
    assert [i["id"] for i in body["items"]] == [str(a.pk), str(b.pk), str(c.pk)]
    assert [i["id"] for i in ok(api, "memory_timeline")["items"]][0] == str(c.pk)


def test_search_inside_one_room_with_neighbours(space, api):  # type: ignore[no-untyped-def]
    facts_ = [
        save(space, f"The {w} coffee grinder is on shelf {n}") for n, w in enumerate(WORDS[:3])
    ]
    pref = save(space, "Prefers coffee without sugar", kind="preference")
    body = ok(api, "memory_search", query="coffee", room="Preference Pavilion")
    assert [r["id"] for r in body["results"]] == [str(pref.pk)]
    assert body["results"][0]["coordinate"] == "Preference Pavilion#1"
    whole = ok(api, "memory_search", query="coffee grinder shelf", k=5)
    middle = next(r for r in whole["results"] if r["id"] == str(facts_[1].pk))
    assert middle["coordinate"] == "Fact Hall#2"
    assert middle["neighbours"] == [str(facts_[0].pk), str(facts_[2].pk)]
    status, bad = call(api, "memory_search", query="coffee", room="Broom Closet")
    assert status == 422 and "room" in bad["detail"] and "Fact Hall" in bad["detail"]


# --- spaced repetition -------------------------------------------------------------------------


def test_sm2_intervals_over_a_sequence_of_grades() -> None:
    s = review.Schedule()
    intervals, eases = [], []
    for grade in (5, 5, 4, 2, 4, 4):
        s = review.sm2(s, grade)
        intervals.append(s.interval_days)
        eases.append(s.ease)
    # 1 -> 6 -> round(6 x 2.7) = 16; a 2 starts over at 1 day; then 1 -> 6 again.
    assert intervals == [1, 6, 16, 1, 1, 6]
    assert eases[:3] == [2.6, 2.7, 2.7]
    assert eases[3] == pytest.approx(2.38)
    for _ in range(10):
        s = review.sm2(s, 0)
    assert s.ease == review.EASE_FLOOR and s.interval_days == 1 and s.repetitions == 0
    with pytest.raises(ValueError):
        review.sm2(s, 6)


def test_new_entries_enrol_and_grades_schedule_them(space, api, settings):  # type: ignore[no-untyped-def]
    item = save(space, "The juniper bonsai needs water on Sundays")
    entry = PalaceEntry.objects.get(item=item)
    assert entry.due_at is not None
    assert timedelta(hours=23) < entry.due_at - timezone.now() <= timedelta(days=1)
    now = timezone.now()
    first = ok(api, "memory_report", id=str(item.pk), grade=5)
    assert first["grade"] == 5
    second = ok(api, "memory_report", id=str(item.pk), outcome="success")  # read as 4
    due = timezone.datetime.fromisoformat(second["next_due"])
    assert timedelta(days=5.9) < due - now < timedelta(days=6.1)
    failed = ok(api, "memory_report", id=str(item.pk), outcome="failure")  # read as 1: reset
    due = timezone.datetime.fromisoformat(failed["next_due"])
    assert due - now < timedelta(days=1.1)
    assert PalaceEntry.objects.get(item=item).repetitions == 0

    settings.ENGRAM = {**settings.ENGRAM, "REVIEW_ENROL": False}
    off = save(space, "The heron statue faces the pond")
    assert PalaceEntry.objects.get(item=off).due_at is None
    imported = save(space, "The ember lamp came from the fair", source="import:notes")
    assert PalaceEntry.objects.get(item=imported).due_at is None


def test_backfilled_turns_do_not_enrol(space, tmp_path, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    from memory.services.imports import history
    from memory.services.turns import TurnData, accept_turns

    live = TurnData(session_id="now", role="user", text="My brother Tom lives in Madrid.", ref="n1")
    with django_capture_on_commit_callbacks(execute=True):
        accept_turns(space=space, turns=[live])
    said_now = PalaceEntry.objects.filter(space=space, item__isnull=False)
    assert said_now.exists() and not said_now.filter(due_at=None).exists()
    PalaceEntry.objects.all().delete()

    path = tmp_path / "log.jsonl"
    line = {
        "session_id": "old",
        "role": "user",
        "text": "My sister Maria lives in Berlin and works as a nurse.",
        "ts": "2025-03-01T10:00:00Z",
        "ref": "old-1",
    }
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        history.run(space=space, path=path)
    written = PalaceEntry.objects.filter(space=space, item__isnull=False)
    assert written.exists()
    assert not written.filter(due_at__isnull=False).exists()


def test_review_entries_are_skipped_by_decay(space):  # type: ignore[no-untyped-def]
    from consolidation import services as consolidation

    kept = save(space, "The cobalt kettle whistles", importance=0.2)
    gone = save(space, "The dahlia vase is chipped", importance=0.2)
    PalaceEntry.objects.filter(item=gone).update(due_at=None)  # not under review
    old = timezone.now() - timedelta(days=400)
    MemoryItem.objects.filter(pk__in=[kept.pk, gone.pk]).update(last_seen=old)
    consolidation.run_now(space=space, trigger="manual", only=["decay"])
    assert MemoryItem.objects.get(pk=kept.pk).status == MemoryItem.Status.ACTIVE
    assert MemoryItem.objects.get(pk=gone.pk).status == MemoryItem.Status.ARCHIVED


def test_the_review_queue_never_contains_the_body(space, api):  # type: ignore[no-untyped-def]
    texts = [
        "The indigo umbrella is in the car boot",
        "Anna's locker code is the year she was born",
        "Decided to move standup to 9:30 on 2026-01-12",
    ]
    items = [save(space, t) for t in texts]
    assert ok(api, "memory_review_queue")["entries"] == []  # nothing due yet
    PalaceEntry.objects.filter(item__in=items[:2]).update(due_at=timezone.now() - timedelta(days=2))
    body = ok(api, "memory_review_queue", limit=10)
    assert body["due"] == 2 and len(body["entries"]) == 2
    assert {e["id"] for e in body["entries"]} == {str(items[0].pk), str(items[1].pk)}
    assert all(e["days_overdue"] >= 1.9 and "#" in e["coordinate"] for e in body["entries"])
    everything = ok(api, "memory_review_queue", include_not_due=True)
    assert len(everything["entries"]) == 3
    dumped = json.dumps(everything)
    for t in texts:
        assert t not in dumped
    # memory_review reveals it.
    revealed = ok(api, "memory_review", id=str(items[0].pk))
    assert revealed["item"]["text"] == texts[0]
    assert revealed["palace"]["coordinate"] == everything["entries"][0]["coordinate"]
    status, bad = call(api, "memory_review_queue", limit=0)
    assert status == 422 and "limit" in bad["detail"]


def test_context_carries_the_room_directory_and_due_count(space, api, monkeypatch):  # type: ignore[no-untyped-def]
    from memory.services import context

    assert api.get("/api/v1/context").json()["blocks"]["palace"] == ""
    items = [save(space, t) for t in distinct(4)]
    save(space, "Prefers tabs over spaces", kind="preference")
    block = api.get("/api/v1/context").json()["blocks"]["palace"]
    assert "Fact Hall-2: 1/3 (after 1 full)" in block and "Fact Hall:" not in block
    latest = PalaceEntry.objects.filter(wing="preference").get().placard
    assert f"Preference Pavilion: 1/3, latest “{latest}”" in block
    assert "due for review" not in block
    PalaceEntry.objects.filter(item__in=items[:3]).update(
        due_at=timezone.now() - timedelta(hours=1)
    )
    body = api.get("/api/v1/context").json()
    assert "3 entries due for review" in body["blocks"]["palace"]
    assert body["blocks"]["palace"] in body["text"]
    assert body["tokens"] == estimate_tokens(body["text"])
    # A large overdue pile is not counted in full on every turn.
    monkeypatch.setattr(context, "DUE_CAP", 2)
    assert "2+ entries due" in api.get("/api/v1/context").json()["blocks"]["palace"]


def test_slotting_a_write_is_cheap(space, django_assert_max_num_queries):  # type: ignore[no-untyped-def]
    for t in distinct(4):
        save(space, t)
    item = MemoryItem.objects.create(space=space, text="The basalt step is loose on the left")
    # The wing's rooms, the placards to score against, then the INSERT (in a savepoint).
    with django_assert_max_num_queries(5):
        entry = slots.place_item(item, enrol=True)
    assert (entry.room_no, entry.slot) == (2, 2)

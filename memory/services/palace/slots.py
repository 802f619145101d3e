"""Slotting: pin an entry to room#slot when it is written.

Rooms of a wing fill in order: a room, once full, stays full (a forgotten
entry leaves its slot empty, never reused). A topic (the entry's subject)
goes back to the room of its latest entry while that room has space (an
older room has space only after ENGRAM_ROOM_CAPACITY was raised); otherwise
the entry takes the next slot of the newest room, or opens the next room.

One query reads the newest room and the topic's room, one the placards the
new one is scored against, one INSERT writes the row."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, Subquery
from django.utils import timezone

from memory.services.palace import placards, rooms

FIRST_REVIEW = timedelta(days=1)


def choose(
    newest: tuple[int, int] | None, topical: tuple[int, int] | None, *, capacity: int
) -> tuple[int, int]:
    """(room_no, slot) for a new entry, from the wing's newest room and the
    room of its topic's latest entry, each as (room_no, highest slot taken)."""
    if topical is not None and topical[1] < capacity:
        return topical[0], topical[1] + 1
    if newest is None:
        return 1, 1
    if newest[1] < capacity:
        return newest[0], newest[1] + 1
    return newest[0] + 1, 1


def _rooms(entry_model: Any, *, space_id: int, wing: str, topic: str) -> tuple[Any, Any]:
    """One query: the wing's newest room and its top slot (a seek down the
    unique slot index, however many rooms the wing has), and the room of
    the topic's latest entry with its top slot."""
    wing_rows = entry_model.objects.filter(space_id=space_id, wing=wing)
    query = wing_rows.order_by("-room_no", "-slot").values("room_no", "slot")
    if topic:
        topic_room = wing_rows.filter(topic=topic).order_by("-id").values("room_no")[:1]
        topic_top = (
            wing_rows.filter(room_no=Subquery(topic_room)).order_by("-slot").values("slot")[:1]
        )
        query = query.annotate(topic_room=Subquery(topic_room), topic_top=Subquery(topic_top))
    row = query.first()
    if row is None:
        return None, None
    newest = (int(row["room_no"]), int(row["slot"]))
    if row.get("topic_room") is None:
        return newest, None
    return newest, (int(row["topic_room"]), int(row["topic_top"]))


def topic_of(subject: str) -> str:
    return " ".join(subject.lower().split())[:200]


def enrolment_on() -> bool:
    return bool(settings.ENGRAM["REVIEW_ENROL"])


def _place(
    entry_model: Any,
    *,
    space_id: int,
    wing: str,
    topic: str,
    placard: str,
    enrol: bool,
    now: datetime,
    **target: Any,
) -> Any:
    cap = rooms.capacity()
    for _attempt in range(3):
        newest, topical = _rooms(entry_model, space_id=space_id, wing=wing, topic=topic)
        room_no, slot = choose(newest, topical, capacity=cap)
        # Two index seeks in one statement: the same placard anywhere in the
        # space, and every placard of the chosen room (at most `cap` rows; the
        # prefix is compared here, as a LIKE would not use the index).
        fields = ("pk", "placard", "wing", "room_no", "placard_unique", "placard_clash")
        same = entry_model.objects.filter(space_id=space_id, placard=placard).order_by()
        room = entry_model.objects.filter(space_id=space_id, wing=wing, room_no=room_no).order_by()
        peers = list(same.values_list(*fields).union(room.values_list(*fields), all=True))
        twins = {p[0] for p in peers if p[1] == placard}
        clashing = {
            p[0]
            for p in peers
            if p[2] == wing
            and p[3] == room_no
            and placards.prefix(p[1]) == placards.prefix(placard)
        }
        scored = placards.score(placard, unique=not twins, clash=bool(clashing))
        try:
            # A savepoint: a concurrent writer that took the slot first
            # (the unique constraint) costs a retry, not the whole write.
            with transaction.atomic():
                entry = entry_model.objects.create(
                    space_id=space_id,
                    wing=wing,
                    room_no=room_no,
                    slot=slot,
                    topic=topic,
                    placard=placard,
                    placard_unique=not twins,
                    placard_clash=bool(clashing),
                    placard_score=scored.value,
                    due_at=now + FIRST_REVIEW if enrol else None,
                    created_at=now,
                    **target,
                )
        except IntegrityError:
            continue
        _downgrade(entry_model, peers, twins=twins, clashing=clashing)
        return entry
    raise RuntimeError(f"no free slot for a {wing} entry after 3 attempts")


def _downgrade(entry_model: Any, peers: list[Any], *, twins: set[int], clashing: set[int]) -> None:
    """The new placard makes its twins no longer unique and its room-mates
    with the same prefix clash: their scores drop now (one UPDATE, only
    when there is something to change), so the refurb list stays current."""
    changed = []
    for pk, placard, _wing, _room, unique, clash in peers:
        now_unique = unique and pk not in twins
        now_clash = clash or pk in clashing
        if (now_unique, now_clash) == (unique, clash):
            continue
        row = entry_model(pk=pk, placard_unique=now_unique, placard_clash=now_clash)
        row.placard_score = placards.score(placard, unique=now_unique, clash=now_clash).value
        changed.append(row)
    if changed:
        entry_model.objects.bulk_update(
            changed, ["placard_unique", "placard_clash", "placard_score"]
        )


def place_item(item: Any, *, enrol: bool, entry_model: Any = None) -> Any:
    """Slot a live memory item (called by the write path). `enrol` puts it
    under review scheduling, unless enrolment is switched off."""
    from memory.models import PalaceEntry

    placard = placards.make(
        text=item.text,
        subject=item.subject,
        predicate=item.predicate,
        kind=item.kind,
        when=item.valid_from or item.created_at,
    )
    return _place(
        entry_model or PalaceEntry,
        space_id=item.space_id,
        wing=rooms.wing_for(item.kind),
        topic=topic_of(item.subject),
        placard=placard,
        enrol=enrol and enrolment_on(),
        now=timezone.now(),
        item_id=item.pk,
    )


def place_skill(skill: Any, *, entry_model: Any = None) -> Any:
    """Slot a skill in the Skill Workshop; skills are practised by use, not reviewed."""
    from memory.models import PalaceEntry

    words = f"{skill.name}: {skill.description}".strip(": ")
    placard = placards.make(text=words, subject="", predicate="", kind="skill", when=None)
    return _place(
        entry_model or PalaceEntry,
        space_id=skill.space_id,
        wing="skill",
        topic=topic_of(skill.name),
        placard=placard,
        enrol=False,
        now=timezone.now(),
        skill_id=skill.pk,
    )


def slot_missing(
    space_id: int, *, item_model: Any = None, skill_model: Any = None, entry_model: Any = None
) -> int:
    """Slot every live item and skill that has no place yet (rows from
    before the palace, imports, entries accepted after review), oldest
    first, never enrolled: they were not learned just now. Idempotent; the
    migration passes its historical models."""
    from memory.models import MemoryItem, PalaceEntry, Skill

    item_model = item_model or MemoryItem
    skill_model = skill_model or Skill
    entry_model = entry_model or PalaceEntry
    placed = 0
    items = item_model.objects.filter(
        space_id=space_id,
        status="active",
        screen_status="ok",
        expired_at=None,
        palace__isnull=True,
    ).order_by("created_at", "pk")
    for item in items.iterator(chunk_size=500):
        place_item(item, enrol=False, entry_model=entry_model)
        placed += 1
    for skill in skill_model.objects.filter(space_id=space_id, palace__isnull=True).order_by("pk"):
        place_skill(skill, entry_model=entry_model)
        placed += 1
    return placed


def ensure(space: Any) -> None:
    """First use: slot what was written around the write path (imports,
    skills made directly). Those rows are newer than anything slotted, so
    the check is two index seeks past the highest item and skill ids in the
    palace, not an anti-join over the whole store; a restored entry is
    slotted when it comes back (forget.bring_back), and rows from before the
    palace by the migration."""
    from memory.models import MemoryItem, PalaceEntry, Skill

    # One MAX per query: SQLite reads a lone MAX off the index's end, two
    # in one SELECT make it scan.
    slotted = PalaceEntry.objects.filter(space=space)
    top = {
        "item": slotted.aggregate(m=Max("item_id"))["m"],
        "skill": slotted.aggregate(m=Max("skill_id"))["m"],
    }
    missing = (
        MemoryItem.objects.filter(
            space=space,
            pk__gt=top["item"] or 0,
            status=MemoryItem.Status.ACTIVE,
            screen_status=MemoryItem.Screen.OK,
            expired_at=None,
        ).exists()
        or Skill.objects.filter(space=space, pk__gt=top["skill"] or 0).exists()
    )
    if missing:
        with transaction.atomic():
            slot_missing(space.pk)

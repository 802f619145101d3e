"""Slotting: pin an entry to room#slot when it is written.

Rooms of a wing fill in order: a room, once full, stays full (a forgotten
entry leaves its slot empty, never reused). A topic (the entry's subject)
goes back to the room of its latest entry while that room has space (an
older room has space only after ENGRAM_ROOM_CAPACITY was raised); otherwise
the entry takes the next slot of the newest room, or opens the next room.

One query reads the newest room and the topic's room, one the placards the
new one is scored against, one INSERT writes the row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
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


# The two reads of a placement are plain SQL: built by the ORM (subqueries,
# a union) they cost ~2-4 ms of Python each, against ~0.05 ms for SQLite to
# run them, inside the write lock that every writer queues on.
_NEWEST = (
    "SELECT room_no, slot FROM {t} WHERE space_id = %s AND wing = %s "
    "ORDER BY room_no DESC, slot DESC LIMIT 1"
)
_TOPIC_ROOM = (
    "SELECT room_no FROM {t} WHERE space_id = %s AND wing = %s AND topic = %s "
    "ORDER BY id DESC LIMIT 1"
)
_NEWEST_AND_TOPIC = (
    "SELECT n.room_no, n.slot, tr.room_no, "  # noqa: S608 (constant SQL)
    "(SELECT slot FROM {t} WHERE space_id = %s AND wing = %s AND room_no = tr.room_no "
    "ORDER BY slot DESC LIMIT 1) "
    "FROM (" + _NEWEST + ") n LEFT JOIN (" + _TOPIC_ROOM + ") tr ON 1 = 1"
)
_PEERS = (
    "SELECT id, placard, wing, room_no, placard_unique, placard_clash FROM {t} "
    "WHERE space_id = %s AND placard = %s "
    "UNION ALL "
    "SELECT id, placard, wing, room_no, placard_unique, placard_clash FROM {t} "
    "WHERE space_id = %s AND wing = %s AND room_no = %s"
)


def _sql(template: str) -> str:
    from memory.models import PalaceEntry

    return template.format(t=connection.ops.quote_name(PalaceEntry._meta.db_table))


def _rooms(*, space_id: int, wing: str, topic: str) -> tuple[Any, Any]:
    """One query: the wing's newest room and its top slot (a seek down the
    unique slot index, however many rooms the wing has), and the room of
    the topic's latest entry with its top slot."""
    with connection.cursor() as cursor:
        if topic:
            cursor.execute(
                _sql(_NEWEST_AND_TOPIC),
                [space_id, wing, space_id, wing, space_id, wing, topic],
            )
        else:
            cursor.execute(_sql(_NEWEST), [space_id, wing])
        row = cursor.fetchone()
    if row is None:
        return None, None
    newest = (int(row[0]), int(row[1]))
    if len(row) < 4 or row[2] is None:
        return newest, None
    return newest, (int(row[2]), int(row[3]))


def _peers(*, space_id: int, placard: str, wing: str, room_no: int) -> list[tuple[Any, ...]]:
    """The same placard anywhere in the space, and every placard of the
    chosen room (at most a room's capacity): two index seeks."""
    with connection.cursor() as cursor:
        cursor.execute(_sql(_PEERS), [space_id, placard, space_id, wing, room_no])
        return [(pk, pl, w, int(r), bool(u), bool(c)) for pk, pl, w, r, u, c in cursor.fetchall()]


def topic_of(subject: str) -> str:
    return " ".join(subject.lower().split())[:200]


def enrolment_on() -> bool:
    return bool(settings.ENGRAM["REVIEW_ENROL"])


def _place(
    *,
    space_id: int,
    wing: str,
    topic: str,
    placard: str,
    enrol: bool,
    now: datetime,
    **target: Any,
) -> Any:
    from memory.models import PalaceEntry

    cap = rooms.capacity()
    for _attempt in range(3):
        newest, topical = _rooms(space_id=space_id, wing=wing, topic=topic)
        room_no, slot = choose(newest, topical, capacity=cap)
        # The prefix is compared here, as a LIKE would not use the index.
        peers = _peers(space_id=space_id, placard=placard, wing=wing, room_no=room_no)
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
                entry = PalaceEntry.objects.create(
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
        _downgrade(peers, twins=twins, clashing=clashing)
        return entry
    raise RuntimeError(f"no free slot for a {wing} entry after 3 attempts")


def _downgrade(peers: list[Any], *, twins: set[int], clashing: set[int]) -> None:
    """The new placard makes its twins no longer unique and its room-mates
    with the same prefix clash: their scores drop now (one UPDATE, only
    when there is something to change), so the refurb list stays current."""
    from memory.models import PalaceEntry

    changed = []
    for pk, placard, _wing, _room, unique, clash in peers:
        now_unique = unique and pk not in twins
        now_clash = clash or pk in clashing
        if (now_unique, now_clash) == (unique, clash):
            continue
        row = PalaceEntry(pk=pk, placard_unique=now_unique, placard_clash=now_clash)
        row.placard_score = placards.score(placard, unique=now_unique, clash=now_clash).value
        changed.append(row)
    if changed:
        PalaceEntry.objects.bulk_update(
            changed, ["placard_unique", "placard_clash", "placard_score"]
        )


def place_item(item: Any, *, enrol: bool) -> Any:
    """Slot a live memory item (called by the write path). `enrol` puts it
    under review scheduling, unless enrolment is switched off."""
    placard = placards.make(
        text=item.text,
        subject=item.subject,
        predicate=item.predicate,
        kind=item.kind,
        when=item.valid_from or item.created_at,
    )
    return _place(
        space_id=item.space_id,
        wing=rooms.wing_for(item.kind),
        topic=topic_of(item.subject),
        placard=placard,
        enrol=enrol and enrolment_on(),
        now=timezone.now(),
        item_id=item.pk,
    )


def place_skill(skill: Any) -> Any:
    """Slot a skill in the Skill Workshop; skills are practised by use, not reviewed."""
    words = f"{skill.name}: {skill.description}".strip(": ")
    placard = placards.make(text=words, subject="", predicate="", kind="skill", when=None)
    return _place(
        space_id=skill.space_id,
        wing="skill",
        topic=topic_of(skill.name),
        placard=placard,
        enrol=False,
        now=timezone.now(),
        skill_id=skill.pk,
    )


# A backlog this small is slotted on the spot by the read that finds it;
# a larger one in the background, so no request waits for it.
INLINE_MAX = 2000
CHUNK = 500


@dataclass
class _Peer:
    """An entry as the planner sees it: its placard and room, and whether
    its score parts changed (existing rows get one bulk UPDATE)."""

    pk: int | None
    placard: str
    wing: str
    room_no: int
    unique: bool
    clash: bool
    changed: bool = False


def _plan_chunk(space_id: int, targets: list[tuple[dict[str, Any], str, str, str]]) -> int:
    """Slot a chunk of entries in a handful of queries, with exactly the
    outcome of placing them one by one with `_place` (same rooms, slots,
    placard scores and twins' downgrades): the rooms, topics and placards
    they can touch are read once, the choices made in memory, the rows
    written in one INSERT. `targets` are (target, wing, topic, placard),
    oldest first."""
    from memory.models import PalaceEntry

    cap = rooms.capacity()
    rows = PalaceEntry.objects.filter(space_id=space_id).order_by()
    wings = {w for _t, w, _tp, _p in targets}
    newest: dict[str, tuple[int, int] | None] = {}
    for wing in wings:
        top = rows.filter(wing=wing).order_by("-room_no", "-slot").values_list("room_no", "slot")
        first = top.first()
        newest[wing] = (int(first[0]), int(first[1])) if first else None
    topics = {(w, tp) for _t, w, tp, _p in targets if tp}
    topic_room: dict[tuple[str, str], int] = {}
    if topics:
        latest = (
            rows.filter(wing__in=wings, topic__in={tp for _w, tp in topics})
            .values("wing", "topic")
            .annotate(last=Max("id"))
            .values_list("last", flat=True)
        )
        for wing, topic, room_no in rows.filter(pk__in=list(latest)).values_list(
            "wing", "topic", "room_no"
        ):
            topic_room[(wing, topic)] = int(room_no)
    known_rooms = {(w, n) for (w, _tp), n in topic_room.items()}
    known_rooms |= {(w, top[0]) for w, top in newest.items() if top}
    room_top: dict[tuple[str, int], int] = {}
    by_room: dict[tuple[str, int], list[_Peer]] = {}
    by_placard: dict[str, list[_Peer]] = {}
    fields = ("pk", "placard", "wing", "room_no", "placard_unique", "placard_clash")
    existing: dict[int, _Peer] = {}
    if known_rooms:
        # One condition per wing (room_no IN ...): an OR of hundreds of
        # (wing, room) pairs made SQLite scan the whole palace per chunk.
        in_rooms = Q(pk=None)
        for wing in {w for w, _n in known_rooms}:
            numbers = sorted({n for w, n in known_rooms if w == wing})
            in_rooms |= Q(wing=wing, room_no__in=numbers)
        for wing, room_no, top_slot in (
            rows.filter(in_rooms)
            .values("wing", "room_no")
            .annotate(top=Max("slot"))
            .values_list("wing", "room_no", "top")
        ):
            room_top[(wing, int(room_no))] = int(top_slot)
        room_rows = rows.filter(in_rooms).values_list(*fields)
    else:
        room_rows = rows.none().values_list(*fields)
    same_rows = rows.filter(placard__in={p for _t, _w, _tp, p in targets}).values_list(*fields)
    for pk, placard, wing, room_no, unique, clash in list(room_rows) + list(same_rows):
        if pk not in existing:
            existing[pk] = _Peer(pk, placard, wing, int(room_no), unique, clash)
    for peer in existing.values():
        if (peer.wing, peer.room_no) in known_rooms:
            by_room.setdefault((peer.wing, peer.room_no), []).append(peer)
        by_placard.setdefault(peer.placard, []).append(peer)

    now = timezone.now()
    new_rows = []
    for target, wing, topic, placard in targets:
        topical = None
        if topic and (wing, topic) in topic_room:
            room = topic_room[(wing, topic)]
            topical = (room, room_top.get((wing, room), 0))
        room_no, slot = choose(newest[wing], topical, capacity=cap)
        mates = by_room.setdefault((wing, room_no), [])
        twins = by_placard.setdefault(placard, [])
        mine = placards.prefix(placard)
        clashing = [m for m in mates if placards.prefix(m.placard) == mine]
        peer = _Peer(None, placard, wing, room_no, unique=not twins, clash=bool(clashing))
        for other in twins:
            other.changed |= other.unique
            other.unique = False
        for other in clashing:
            other.changed |= not other.clash
            other.clash = True
        mates.append(peer)
        twins.append(peer)
        room_top[(wing, room_no)] = slot
        if newest[wing] is None or room_no > newest[wing][0]:  # type: ignore[index]
            newest[wing] = (room_no, slot)
        elif room_no == newest[wing][0]:  # type: ignore[index]
            newest[wing] = (room_no, max(slot, newest[wing][1]))  # type: ignore[index]
        if topic:
            topic_room[(wing, topic)] = room_no
        new_rows.append((peer, target, slot, topic))

    entries = []
    for peer, target, slot, topic in new_rows:
        entries.append(
            PalaceEntry(
                space_id=space_id,
                wing=peer.wing,
                room_no=peer.room_no,
                slot=slot,
                topic=topic,
                placard=peer.placard,
                placard_unique=peer.unique,
                placard_clash=peer.clash,
                placard_score=placards.score(
                    peer.placard, unique=peer.unique, clash=peer.clash
                ).value,
                due_at=None,
                created_at=now,
                **target,
            )
        )
    PalaceEntry.objects.bulk_create(entries)
    changed = [
        PalaceEntry(
            pk=p.pk,
            placard_unique=p.unique,
            placard_clash=p.clash,
            placard_score=placards.score(p.placard, unique=p.unique, clash=p.clash).value,
        )
        for p in existing.values()
        if p.changed
    ]
    if changed:
        PalaceEntry.objects.bulk_update(
            changed, ["placard_unique", "placard_clash", "placard_score"]
        )
    return len(entries)


def _unslotted(space_id: int) -> tuple[Any, Any]:
    from memory.models import MemoryItem, Skill

    items = MemoryItem.objects.filter(
        space_id=space_id,
        status=MemoryItem.Status.ACTIVE,
        screen_status=MemoryItem.Screen.OK,
        expired_at=None,
        palace__isnull=True,
    )
    return items, Skill.objects.filter(space_id=space_id, palace__isnull=True)


def backlog(space_id: int, *, upto: int | None = None) -> int:
    """How many live items and skills of the space have no place (counted
    up to `upto`, which bounds the work when the answer is "many")."""
    items, skills = _unslotted(space_id)
    if upto is None:
        return items.count() + skills.count()
    n = len(items.values_list("pk", flat=True)[: upto + 1])
    return n + len(skills.values_list("pk", flat=True)[: max(0, upto + 1 - n)])


def slot_missing(
    space_id: int,
    *,
    progress: Callable[[int], None] | None = None,
    limit: int | None = None,
) -> int:
    """Slot every live item and skill that has no place yet (rows from
    before the palace, imports, entries accepted after review), oldest
    first, never enrolled: they were not learned just now. In chunks, each
    its own short transaction, so writers go on between them and an
    interrupted run resumes where it stopped. Idempotent. With `limit`, stops
    after about that many (whole chunks); `backlog()` tells what is left."""
    items, skills = _unslotted(space_id)
    placed = 0
    # The ids in slotting order, read once (a keyset over (created_at, pk)
    # is not an index seek in SQLite: it would rescan the store per chunk).
    order = list(items.order_by("created_at", "pk").values_list("pk", flat=True))
    for start in range(0, len(order), CHUNK):
        if limit is not None and placed >= limit:
            return placed
        ids = order[start : start + CHUNK]
        # Still unslotted: another pass may have placed some meanwhile.
        chunk = sorted(items.filter(pk__in=ids), key=lambda i: (i.created_at, i.pk))
        if not chunk:
            continue
        targets = [
            (
                {"item_id": i.pk},
                rooms.wing_for(i.kind),
                topic_of(i.subject),
                placards.make(
                    text=i.text,
                    subject=i.subject,
                    predicate=i.predicate,
                    kind=i.kind,
                    when=i.valid_from or i.created_at,
                ),
            )
            for i in chunk
        ]
        placed += _in_transaction(space_id, targets)
        if progress:
            progress(len(chunk))
    if limit is not None and placed >= limit:
        return placed
    for skill in skills.order_by("pk"):
        with transaction.atomic():
            place_skill(skill)
        placed += 1
        if progress:
            progress(1)
    return placed


def _in_transaction(space_id: int, targets: list[tuple[dict[str, Any], str, str, str]]) -> int:
    from memory.models import PalaceEntry

    for _attempt in range(3):
        try:
            with transaction.atomic():
                return _plan_chunk(space_id, targets) if targets else 0
        except IntegrityError:
            # A live write took a planned slot, or another pass placed some
            # of these entries: plan again for those still without a place.
            placed = set(
                PalaceEntry.objects.filter(
                    item_id__in=[t["item_id"] for t, *_ in targets]
                ).values_list("item_id", flat=True)
            )
            targets = [t for t in targets if t[0]["item_id"] not in placed]
    raise RuntimeError("palace slotting lost its slots to concurrent writes 3 times")


def mark_backlog(space_id: int) -> None:
    """Something was stored around the slotting write path (an import):
    the next read of the palace looks for entries without a place."""
    from memory.models import Space

    Space.objects.filter(pk=space_id).update(palace_backlog_at=timezone.now())


def clear_backlog(space_id: int, *, limit: int | None = None) -> bool:
    """Slot the space's backlog (at most about `limit` entries) and, when
    nothing is left, remove the mark, unless something was stored around
    the write path meanwhile (then the mark stays for the next pass): a
    compare-and-set on the mark's time. True when the space is done."""
    from memory.models import Space

    since = Space.objects.filter(pk=space_id).values_list("palace_backlog_at", flat=True).first()
    if since is None:
        return True
    slot_missing(space_id, limit=limit)
    if limit is not None and backlog(space_id, upto=0):
        return False
    Space.objects.filter(pk=space_id, palace_backlog_at=since).update(palace_backlog_at=None)
    return True


def ensure(space: Any) -> None:
    """Before the palace is read: with no backlog mark, nothing to do (one
    indexed read). A small backlog is slotted now; a large one (a store
    from before the palace, a big import) is handed to the background task,
    and the palace shows what has a place so far."""
    from memory.models import Space

    since = Space.objects.filter(pk=space.pk).values_list("palace_backlog_at", flat=True).first()
    if since is None:
        return
    if backlog(space.pk, upto=INLINE_MAX) <= INLINE_MAX:
        clear_backlog(space.pk)
        return
    from memory.tasks import schedule_slotting

    schedule_slotting(space.pk)

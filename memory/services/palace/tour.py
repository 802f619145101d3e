"""The tour: the palace walked along its route, and what readers need
from the slots (neighbours for search hits, a room's entries, the room
directory for the prompt context).

The route is the PalaceEntry primary key: each entry is appended once,
when it is slotted, and rows are never reordered, so a page of the fixed
tour reads the same however many entries are added after it."""

from __future__ import annotations

import functools
from typing import Any

from django.db import connection
from django.db.models import Q

from engram_site.db import batch
from memory.models import MemoryItem, PalaceEntry, Skill, Space
from memory.services.palace import rooms, slots

THEMATIC_MIN, THEMATIC_MAX = 3, 7


def _live() -> Q:
    """An occupied slot: its item is live, or it holds an enabled skill."""
    return Q(
        item__status=MemoryItem.Status.ACTIVE,
        item__expired_at=None,
        item__screen_status=MemoryItem.Screen.OK,
    ) | Q(skill__enabled=True)


def _stop(e: PalaceEntry) -> dict[str, Any]:
    if e.item_id is not None:
        item = e.item
        assert item is not None
        kind, text, ident = item.kind, item.text, str(item.pk)
    else:
        skill = e.skill
        assert skill is not None
        kind, text, ident = "skill", f"{skill.name}: {skill.description}".strip(": "), str(skill.pk)
    return {
        "route": e.pk,
        "id": ident,
        "type": "skill" if e.skill_id else ("insight" if kind == "insight" else "fact"),
        "kind": kind,
        "coordinate": rooms.coordinate(e.wing, e.room_no, e.slot),
        "room": rooms.room_name(e.wing, e.room_no),
        "slot": e.slot,
        "placard": e.placard,
        "text": text,
    }


def fixed(
    space: Space, *, after: int = 0, limit: int = 20
) -> tuple[list[dict[str, Any]], int | None]:
    """A page of the whole palace in route order, after route position
    `after`; and the position to continue from (None at the end)."""
    slots.ensure(space)
    page = list(
        PalaceEntry.objects.filter(space=space, pk__gt=after)
        .filter(_live())
        .select_related("item", "skill")
        .order_by("pk")[: limit + 1]
    )
    more = len(page) > limit
    page = page[:limit]
    return [_stop(e) for e in page], (page[-1].pk if more and page else None)


def thematic(space: Space, *, theme: str) -> list[dict[str, Any]]:
    """3-7 stops around a theme: the entries recall finds for it, walked in
    route order; when recall finds fewer than 3, the hits' room-mates fill in."""
    from memory.services.recall import recall

    slots.ensure(space)
    found = recall(space=space, query=theme, k=THEMATIC_MAX, types=["fact", "insight", "skill"])
    wanted = Q(pk=None)
    for r in found.results:
        key = "skill_id" if r.type == "skill" else "item_id"
        wanted |= Q(**{key: int(r.id)})
    stops = list(
        PalaceEntry.objects.filter(space=space)
        .filter(wanted)
        .filter(_live())
        .select_related("item", "skill")[:THEMATIC_MAX]
    )
    if stops and len(stops) < THEMATIC_MIN:
        near = Q(pk=None)
        for e in stops:
            near |= Q(wing=e.wing, room_no=e.room_no)
        extra = (
            PalaceEntry.objects.filter(space=space)
            .filter(near)
            .filter(_live())
            .exclude(pk__in=[e.pk for e in stops])
            .select_related("item", "skill")
            .order_by("pk")[: THEMATIC_MIN - len(stops)]
        )
        stops += list(extra)
    return [_stop(e) for e in sorted(stops, key=lambda e: e.pk)]


def room_members(space: Space, room: str) -> tuple[set[int], set[int]]:
    """(item ids, skill ids) slotted in one room, by its name."""
    wing, room_no = rooms.parse_room(room)
    slots.ensure(space)
    rows = (
        PalaceEntry.objects.filter(space=space, wing=wing, room_no=room_no)
        .order_by()
        .values_list("item_id", "skill_id")
    )
    items = {i for i, _ in rows if i is not None}
    skills = {s for _, s in rows if s is not None}
    return items, skills


def neighbours(space: Space, hits: list[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """For each ("item" | "skill", id) hit, its coordinate and the ids in
    the slots beside it in its room (slot - 1 and slot + 1, occupied ones
    only): cues from where it was learned. A few index probes for all hits."""
    if not hits:
        return {}
    # Plain IN probes of the indexes, unordered: an OR, a join for liveness
    # or the model's id ordering makes SQLite walk the space's whole palace
    # down its space index instead.
    item_ids = [pk for kind, pk in hits if kind != "skill"]
    skill_ids = [pk for kind, pk in hits if kind == "skill"]
    rows = PalaceEntry.objects.filter(space=space).order_by()
    mine = list(rows.filter(item_id__in=item_ids)) if item_ids else []
    if skill_ids:
        mine += list(rows.filter(skill_id__in=skill_ids))
    if not mine:
        return {}
    wanted = {(e.wing, e.room_no, s) for e in mine for s in (e.slot - 1, e.slot + 1)}
    nearby = [
        row
        for row in rows.filter(
            wing__in={e.wing for e in mine},
            room_no__in={e.room_no for e in mine},
            slot__in={s for _, _, s in wanted},
        ).values_list("wing", "room_no", "slot", "item_id", "skill_id")
        if row[:3] in wanted
    ]
    live_items = set(
        MemoryItem.objects.filter(
            pk__in=[r[3] for r in nearby if r[3] is not None],
            status=MemoryItem.Status.ACTIVE,
            expired_at=None,
            screen_status=MemoryItem.Screen.OK,
        ).values_list("pk", flat=True)
    )
    live_skills = set(
        Skill.objects.filter(
            pk__in=[r[4] for r in nearby if r[4] is not None], enabled=True
        ).values_list("pk", flat=True)
    )
    beside: dict[tuple[str, int, int], str] = {}
    for wing, room_no, slot, item_id, skill_id in nearby:
        if item_id in live_items or skill_id in live_skills:
            beside[(wing, room_no, slot)] = str(item_id or skill_id)
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for e in mine:
        key = ("skill", int(e.skill_id)) if e.skill_id else ("item", int(e.item_id or 0))
        ids = [beside.get((e.wing, e.room_no, s)) for s in (e.slot - 1, e.slot + 1)]
        out[key] = {
            "coordinate": rooms.coordinate(e.wing, e.room_no, e.slot),
            "neighbours": [i for i in ids if i],
        }
    return out


def directory(space: Space) -> list[dict[str, Any]]:
    """Each wing's rooms: how many, the newest with its slots used
    (vacated ones included: slots are never reused) and its latest placard.
    Rooms before the newest are full by construction, so this is the
    slots used of every room in at most five rows, however big the palace,
    and each row is one seek down the unique (space, wing, room, slot)
    index: cheap enough for every /context. One hand-written statement
    for all wings: building five ORM queries took 18% of a /context's
    interpreter time at 100k facts (py-spy), running them well under 0.1 ms."""
    return batch.one(directory_read(space))


def directory_read(space: Space) -> batch.Read[list[dict[str, Any]]]:
    """`directory` as a read to send with others (engram_site/db/batch.py)."""
    params = [p for wing in rooms.WINGS for p in (space.pk, wing)]
    return batch.Read(_directory_sql(), params, _directory_rows)


def _directory_rows(found: batch.Rows) -> list[dict[str, Any]]:
    tops = {wing: (room_no, slot, placard) for wing, room_no, slot, placard in found}
    out = []
    for wing in rooms.WINGS:
        if wing not in tops:
            continue
        room_no, slot, placard = tops[wing]
        out.append(
            {
                "room": rooms.room_name(wing, room_no),
                "rooms": room_no,
                "used": slot,
                "capacity": rooms.capacity(),
                "latest_placard": placard,
            }
        )
    return out


@functools.cache
def _directory_sql() -> str:
    # Each wing's newest slot as its own LIMIT 1 subquery (the index's last
    # entry for the wing), the wings' rows joined by UNION ALL.
    table = connection.ops.quote_name(PalaceEntry._meta.db_table)
    one = (
        "SELECT * FROM (SELECT wing, room_no, slot, placard FROM {table} "
        "WHERE space_id = %s AND wing = %s ORDER BY room_no DESC, slot DESC LIMIT 1) AS w{n}"
    )
    return " UNION ALL ".join(one.format(table=table, n=n) for n in range(len(rooms.WINGS)))


def refurb(space: Space, *, limit: int = 20) -> list[dict[str, Any]]:
    """Live entries whose placard scores below 0.5, lowest first, with
    rewrite hints: an index read of the scores kept current on write. A
    palace with fewer than 8 live entries is not scanned: with so few
    there is nothing to tell apart yet, only noise."""
    from memory.services.palace import placards

    slots.ensure(space)
    live = PalaceEntry.objects.filter(space=space).filter(_live())
    if len(live.values_list("pk", flat=True)[: placards.MIN_SCANNED]) < placards.MIN_SCANNED:
        return []
    low = live.filter(placard_score__lt=placards.REFURB_BELOW).order_by("placard_score", "pk")
    out = []
    for e in low[:limit]:
        hints = placards.score(e.placard, unique=e.placard_unique, clash=e.placard_clash).hints
        out.append(
            {
                "id": str(e.item_id or e.skill_id),
                "coordinate": rooms.coordinate(e.wing, e.room_no, e.slot),
                "placard": e.placard,
                "score": e.placard_score,
                "hints": list(hints),
            }
        )
    return out

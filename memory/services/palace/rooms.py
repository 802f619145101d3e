"""Rooms: which wing an entry's kind lives in, and how rooms are named.

A wing is a family of rooms of one kind; its first room carries the bare
name ("Fact Hall") and overflow rooms a number ("Fact Hall-2")."""

from __future__ import annotations

import re

from django.conf import settings

from memory.errors import Invalid

WINGS = {
    "fact": "Fact Hall",
    "preference": "Preference Pavilion",
    "decision": "Decision Chamber",
    "episode": "Episode Gallery",
    "skill": "Skill Workshop",
}
# Insights are distilled facts: they hang with the facts they came from.
KIND_WING = {
    "fact": "fact",
    "event": "fact",
    "insight": "fact",
    "preference": "preference",
    "instruction": "preference",
    "decision": "decision",
    "episode": "episode",
}
_NAMED = re.compile(r"^(?P<base>.+?)(?:-(?P<no>\d+))?$")


def capacity() -> int:
    return int(settings.ENGRAM["ROOM_CAPACITY"])


def wing_for(kind: str) -> str:
    return KIND_WING.get(kind, "fact")


def room_name(wing: str, room_no: int) -> str:
    base = WINGS[wing]
    return base if room_no == 1 else f"{base}-{room_no}"


def coordinate(wing: str, room_no: int, slot: int) -> str:
    return f"{room_name(wing, room_no)}#{slot}"


def parse_room(name: str) -> tuple[str, int]:
    """("preference", 2) for "Preference Pavilion-2"; Invalid naming the
    known rooms for anything else."""
    match = _NAMED.match(name.strip())
    by_name = {v.lower(): k for k, v in WINGS.items()}
    if match:
        wing = by_name.get(match["base"].strip().lower())
        no = int(match["no"] or 1)
        if wing is not None and no >= 1:
            return wing, no
    known = ", ".join(WINGS.values())
    raise Invalid(
        f"room: {name!r} is not a room (rooms are {known}, overflow rooms end in -2, -3 …)"
    )

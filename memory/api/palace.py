"""The memory palace over REST: GET /api/v1/palace/rooms (the room
directory /context carries) and GET /api/v1/palace/refurb (the entries
whose placards are hard to tell apart, with rewrite hints). The same
answers memory_tour gives (memory.services.palace.tour), for the key's
own space as the tour walks it."""

from __future__ import annotations

from typing import Any

from ninja import Query, Router, Schema
from pydantic import Field

from engram_site.types import SpaceRequest
from memory.services.palace import tour
from memory.tools.palace import RefurbRow, RoomRow

router = Router(tags=["memory"])


class RoomsOut(Schema):
    rooms: list[RoomRow] = Field(description="One row per wing that has entries.")


class RefurbQuery(Schema):
    limit: int = Field(default=20, ge=1, le=100, description="At most this many, lowest first.")


class RefurbOut(Schema):
    refurb: list[RefurbRow] = Field(
        description="Entries whose placard scores below 0.5, lowest first, with how to rewrite "
        "them (empty while the palace holds fewer than 8 live entries)."
    )


@router.get("/palace/rooms", response=RoomsOut)
def palace_rooms(request: SpaceRequest) -> dict[str, Any]:
    """The room directory: each wing's newest room, its slots used and latest placard."""
    return {"rooms": tour.directory(request.space)}


@router.get("/palace/refurb", response=RefurbOut)
def palace_refurb(request: SpaceRequest, params: Query[RefurbQuery]) -> dict[str, Any]:
    """The refurb list: entries whose placards need rewriting, with hints."""
    return {"refurb": tour.refurb(request.space, limit=params.limit)}

"""The memory palace's tools: memory_tour (walk the palace) and
memory_review_queue (what is due for recall practice). Thin: the work is
in memory/services/palace/."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from memory.services.palace import review, tour
from memory.tools.registry import ToolArgs, ToolContext, ToolResult, tool

# --- memory_tour --------------------------------------------------------------------------------


class TourIn(ToolArgs):
    mode: Literal["fixed", "thematic"] = Field(
        default="fixed",
        description="fixed: the whole palace in route order, paged; thematic: 3-7 stops on a theme.",
    )
    theme: str = Field(
        default="", max_length=500, description="thematic only: what the stops are about."
    )
    after: int = Field(
        default=0, ge=0, description="fixed only: continue after this route position (next_after)."
    )
    limit: int = Field(default=20, ge=1, le=100, description="fixed only: stops per page.")

    @model_validator(mode="after")
    def _theme_for_thematic(self) -> TourIn:
        if self.mode == "thematic" and not self.theme.strip():
            raise ValueError("theme: required for mode=thematic")
        return self


class TourStop(ToolResult):
    route: int = Field(description="Position on the append-only route; never changes.")
    id: str
    type: str
    kind: str
    coordinate: str = Field(description="room#slot")
    room: str
    slot: int
    placard: str
    text: str


class RefurbRow(ToolResult):
    id: str
    coordinate: str
    placard: str
    score: float
    hints: list[str]


class RoomRow(ToolResult):
    room: str = Field(description="The wing's newest room; the rooms before it are full.")
    rooms: int = Field(description="How many rooms the wing has.")
    used: int = Field(
        description="Slots taken in the newest room, vacated ones included (never reused)."
    )
    capacity: int
    latest_placard: str


class TourOut(ToolResult):
    mode: str
    stops: list[TourStop]
    next_after: int | None = Field(
        default=None, description="fixed: pass as after for the next page; null at the end."
    )
    rooms: list[RoomRow]
    refurb: list[RefurbRow] = Field(
        description="Entries whose placard scores below 0.5, with how to rewrite them "
        "(empty while the palace holds fewer than 8 live entries)."
    )


@tool(
    "memory_tour",
    title="Tour the memory palace",
    description=(
        "Walk the memory palace. mode=fixed goes through every entry along the fixed route "
        "(room#slot coordinates, placards, text), page with after=next_after; mode=thematic "
        "gives 3-7 stops around a theme. Also answers the room directory and the refurb list "
        "(entries whose placards are hard to tell apart)."
    ),
    result=TourOut,
    read_only=True,
    examples=({"mode": "fixed", "limit": 20}, {"mode": "thematic", "theme": "the move to Oslo"}),
)
def memory_tour(ctx: ToolContext, args: TourIn) -> dict[str, Any]:
    next_after = None
    if args.mode == "fixed":
        stops, next_after = tour.fixed(ctx.space, after=args.after, limit=args.limit)
    else:
        stops = tour.thematic(ctx.space, theme=args.theme)
    return {
        "mode": args.mode,
        "stops": stops,
        "next_after": next_after,
        "rooms": tour.directory(ctx.space),
        "refurb": tour.refurb(ctx.space),
    }


# --- memory_review_queue ------------------------------------------------------------------------


class QueueIn(ToolArgs):
    limit: int = Field(default=10, ge=1, le=100)
    include_not_due: bool = Field(
        default=False, description="Also entries scheduled later (negative days_overdue)."
    )


class QueueRow(ToolResult):
    id: str
    coordinate: str = Field(description="room#slot")
    room: str
    slot: int
    placard: str = Field(description="The cue: recall the entry from it before you look.")
    due_at: datetime
    days_overdue: float
    repetitions: int


class QueueOut(ToolResult):
    entries: list[QueueRow]
    due: int = Field(description="How many entries are due now.")


@tool(
    "memory_review_queue",
    title="Review queue",
    description=(
        "Entries due for recall practice: their room#slot and placard cue, never the text. "
        "Recall each from its cue first, then memory_review to reveal it and memory_report "
        "with grade 0-5 to schedule the next review."
    ),
    result=QueueOut,
    read_only=True,
    examples=({"limit": 5}, {"limit": 20, "include_not_due": True}),
)
def memory_review_queue(ctx: ToolContext, args: QueueIn) -> dict[str, Any]:
    from memory.services.palace import slots

    slots.ensure(ctx.space)
    return {
        "entries": review.queue(ctx.space, limit=args.limit, include_not_due=args.include_not_due),
        "due": review.due_count(ctx.space),
    }

"""The temporal filter, applied to the rows recall loaded.

Now (the default view): live facts only: active, not expired, not
quarantined. In a time view (memory.timeview): the fact as Engram held it at
`known_at` (rebuilt from its revisions), true in the world at `as_of` (or at
`known_at` when only that is given); with `history`, every known value.
Archived, forgotten and quarantined items never pass, whatever the time:
archived means "out of recall" until a person restores it.
"""

from __future__ import annotations

from datetime import datetime

from memory.services.recall.rows import ItemRow, SummaryRow, TurnRow
from memory.timeview import TimeView, Window, is_current, state_at, visible


def item_window(
    row: ItemRow, *, when: TimeView, revisions: list[tuple[datetime, Window]]
) -> Window | None:
    """The row's window as seen from the view's knowledge, or None if the
    view may not show the row at all."""
    if row.screen_status != "ok" or row.status != "active":
        return None
    if when.known_at is not None and row.created_at > when.known_at:
        return None
    # A fact with no valid_from was true from when it was recorded.
    current = Window(
        row.valid_from or row.created_at, row.valid_to, row.expired_at, row.superseded_by
    )
    return state_at(current, revisions, when.known_at)


def item_visible(
    row: ItemRow, *, when: TimeView, revisions: list[tuple[datetime, Window]], now: datetime
) -> Window | None:
    """The window to report if the view shows the row, else None."""
    window = item_window(row, when=when, revisions=revisions)
    if window is None or not visible(window, when, now=now):
        return None
    return window


def item_current(window: Window, *, when: TimeView, now: datetime) -> bool:
    if when.valid_at is None and window.expired_at is not None:
        return False
    return is_current(window, when.instant(now))


def turn_visible(row: TurnRow, *, when: TimeView) -> bool:
    if row.screen_status != "ok":
        return False
    if when.known_at is not None and row.created_at > when.known_at:
        return False
    return when.valid_at is None or row.ts <= when.valid_at


def summary_visible(row: SummaryRow, *, when: TimeView) -> bool:
    known = when.known_at or when.valid_at
    return known is None or row.created_at <= known

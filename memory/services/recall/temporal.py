"""The temporal filter, applied to the rows recall loaded.

Now (as_of is None): live facts only: active, not expired, not quarantined.
With as_of, bi-temporal: the fact was known to Engram by then (created_at <=
as_of < expired_at) and true in the world then (valid_from <= as_of <
valid_to, an open end counting as unbounded). Archived, forgotten and
quarantined items never pass, whatever the time: archived means "out of
recall" until a person restores it.
"""

from __future__ import annotations

from datetime import datetime

from memory.services.recall.rows import ItemRow, SummaryRow, TurnRow

_RECALLABLE_AS_OF = ("active", "pending_review")


def item_visible(row: ItemRow, *, as_of: datetime | None) -> bool:
    if row.screen_status != "ok":
        return False
    if as_of is None:
        return row.status == "active" and row.expired_at is None
    if row.status not in _RECALLABLE_AS_OF:
        return False
    if row.created_at > as_of:
        return False
    if row.expired_at is not None and row.expired_at <= as_of:
        return False
    if row.valid_from is not None and row.valid_from > as_of:
        return False
    return not (row.valid_to is not None and row.valid_to <= as_of)


def turn_visible(row: TurnRow, *, as_of: datetime | None) -> bool:
    if row.screen_status != "ok":
        return False
    if as_of is None:
        return True
    # Known by then, and said by then.
    return row.created_at <= as_of and row.ts <= as_of


def summary_visible(row: SummaryRow, *, as_of: datetime | None) -> bool:
    return as_of is None or row.created_at <= as_of

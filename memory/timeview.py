"""The two clocks a read can ask about, as one value.

Valid time (`as_of`) is about the world: what was true then, by what Engram
knows now. Transaction time (`known_at`) is about Engram: what it knew then.
A read may give either, both or neither; `history` asks for superseded and
expired facts too. Asked with `known_at` alone, the question is "what would
Engram have said was true at that moment", so the valid instant defaults to
it.

A fact row holds what Engram knows now. Every change to a fact's window
appends a FactRevision with the window as it was before the change, so the
state Engram held at any past moment is the row as it was before the first
change recorded after that moment (`state_at`). History is never rewritten:
nothing here or in the write path updates a revision.

The SQL conditions here are the only definition of which facts, turns and
edges a time view admits; the search backends, recall's row loader and the
graph all use them, so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db.models import Q
from django.utils import timezone


def aware(value: datetime | None) -> datetime | None:
    """A datetime without a zone is read as UTC, like every stored time."""
    if value is not None and timezone.is_naive(value):
        return timezone.make_aware(value, UTC)
    return value


@dataclass(frozen=True, slots=True)
class TimeView:
    as_of: datetime | None = None
    known_at: datetime | None = None
    history: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "as_of", aware(self.as_of))
        object.__setattr__(self, "known_at", aware(self.known_at))

    @property
    def is_now(self) -> bool:
        """Live facts only: the hot path, answered from the rows' columns."""
        return self.as_of is None and self.known_at is None and not self.history

    @property
    def unbounded(self) -> bool:
        """No instant bounds the view: every turn said and known so far, and
        the facts as they are now or, with history, every one held so far
        (current or former)."""
        return self.as_of is None and self.known_at is None

    @property
    def valid_at(self) -> datetime | None:
        """The instant validity is judged at, None meaning now."""
        return self.as_of or self.known_at

    def instant(self, now: datetime) -> datetime:
        return self.valid_at or now

    # --- SQL, for the search backends and the row loader (column names only) ----------

    def item_sql(self, c: str) -> tuple[list[str], list[Any]]:
        """Conditions on a fact's own columns (`c` is the table prefix). With
        known_at the row's window may have changed since, so only what cannot
        change is filtered here; `state_at` decides the rest."""
        if self.is_now:
            return [f"{c}expired_at IS NULL AND {c}status = 'active'"], []
        where = [f"{c}status = 'active'"]
        params: list[Any] = []
        if self.known_at is not None:
            where.append(f"{c}created_at <= %s")
            params.append(self.known_at)
        at = self.valid_at
        if at is not None and not self.history:
            # A fact with no valid_from was true from when it was recorded.
            where.append(f"COALESCE({c}valid_from, {c}created_at) <= %s")
            params.append(at)
            if self.known_at is None:
                where.append(f"({c}valid_to IS NULL OR {c}valid_to > %s)")
                params.append(at)
        return where, params

    def turn_sql(self, c: str) -> tuple[list[str], list[Any]]:
        """Turns said by the valid instant and known by known_at."""
        where: list[str] = []
        params: list[Any] = []
        if self.known_at is not None:
            where.append(f"{c}created_at <= %s")
            params.append(self.known_at)
        if self.valid_at is not None:
            where.append(f"{c}ts <= %s")
            params.append(self.valid_at)
        return where, params

    # --- ORM ------------------------------------------------------------------------------

    def item_q(self, prefix: str = "") -> Q:
        p = prefix
        q = Q(**{f"{p}screen_status": "ok", f"{p}status": "active"})
        if self.is_now:
            return q & Q(**{f"{p}expired_at__isnull": True})
        if self.known_at is not None:
            q &= Q(**{f"{p}created_at__lte": self.known_at})
        at = self.valid_at
        if at is not None and not self.history:
            q &= Q(**{f"{p}valid_from__lte": at}) | Q(
                **{f"{p}valid_from__isnull": True, f"{p}created_at__lte": at}
            )
            if self.known_at is None:
                q &= Q(**{f"{p}valid_to__isnull": True}) | Q(**{f"{p}valid_to__gt": at})
        return q

    def edge_q(self) -> Q:
        """Graph edges in force in this view whose fact, if any, it admits.
        Edges share their fact's window, so the fact decides."""
        if self.is_now:
            edge = Q(expired_at__isnull=True)
        else:
            edge = Q()
        return edge & (Q(item__isnull=True) | self.item_q("item__"))


class Window(NamedTuple):
    """A fact's window as Engram held it at some moment."""

    valid_from: datetime | None
    valid_to: datetime | None
    expired_at: datetime | None
    superseded_by: int | None


def state_at(
    current: Window, revisions: list[tuple[datetime, Window]], known_at: datetime | None
) -> Window:
    """The window Engram held at `known_at`: the prior state recorded by the
    first revision after that moment, or the row as it is now. `revisions`
    are (recorded_at, prior window), oldest first."""
    if known_at is None:
        return current
    for recorded_at, prior in revisions:
        if recorded_at > known_at:
            return prior
    return current


def is_current(window: Window, at: datetime) -> bool:
    """True in the world at `at`, by this window."""
    if window.valid_from is not None and window.valid_from > at:
        return False
    return window.valid_to is None or window.valid_to > at


def visible(window: Window, view: TimeView, *, now: datetime) -> bool:
    """Whether a fact in this (already time-travelled) window belongs in the view."""
    if view.is_now:
        return window.expired_at is None
    if view.history:
        return True
    return is_current(window, view.instant(now))

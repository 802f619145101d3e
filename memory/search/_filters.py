"""Which rows a search may return: the one definition both backends use, so
SQLite and PostgreSQL can never disagree about what is live or what a time
view admits (memory.timeview holds the time conditions). Column names only;
every value is a bound parameter."""

from __future__ import annotations

from typing import Any

from memory.timeview import TimeView

NOW = TimeView()


def row_filters(
    target: str, *, prefix: str, space_id: int, live_only: bool, when: TimeView | None
) -> tuple[list[str], list[Any]]:
    """(SQL conditions on the content table's columns, their parameters)."""
    c = prefix
    view = when or NOW
    where = [f"{c}space_id = %s"]
    params: list[Any] = [space_id]
    if target in ("item", "turn", "chunk"):
        where.append(f"{c}screen_status = 'ok'")
    if target == "chunk":
        # Documents are not facts with a validity window: no time view
        # applies to them.
        return where, params
    if target == "item":
        if live_only or not view.is_now:
            more, more_params = view.item_sql(c)
            where += more
            params += more_params
    elif target == "turn":
        more, more_params = view.turn_sql(c)
        where += more
        params += more_params
    elif view.known_at is not None or view.valid_at is not None:
        # Summaries: written by then.
        where.append(f"{c}created_at <= %s")
        params.append(view.known_at or view.valid_at)
    return where, params

"""What the databases can store, checked where input comes in.

Python's datetime spans the years 1 to 9999 and SQLite and PostgreSQL store
64-bit integers. An instant inside that span can still fall outside it once
converted to UTC (`0001-01-01T00:00:00+14:00` is in year 0 in UTC), and Django
converts every aware datetime to UTC before writing: on SQLite that raises
OverflowError, on PostgreSQL the row is stored and every later read of it
fails. So request schemas type their instants as `Instant`, services parsing
dates out of free-form payloads (imports, LLM answers) call `check_instant`,
and integers get explicit bounds in their schemas (the JSON parser refuses
integers beyond 64 bits anywhere in a body)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from django.utils import timezone
from pydantic import AfterValidator, Field

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# A day inside Python's limits on each side: an accepted instant can still be
# shown in any time zone (offsets reach ±14 h) and moved by a day of window
# arithmetic without overflowing.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
RANGE_TEXT = "0001-01-02T00:00:00Z to 9999-12-30T23:59:59Z"


def instant_problem(value: datetime) -> str | None:
    """Why `value` cannot be stored, or None when it can."""
    if timezone.is_naive(value):
        # Naive instants are read in the default time zone (UTC): as given.
        value = value.replace(tzinfo=UTC)
    offset = value.utcoffset() or timedelta(0)
    # Compared as naive wall times minus the offset, so nothing overflows on
    # the way: `value.astimezone(UTC)` is exactly what fails for these.
    naive = value.replace(tzinfo=None)
    earliest, latest = EARLIEST.replace(tzinfo=None), LATEST.replace(tzinfo=None)
    if naive < earliest + offset or naive > latest + offset:
        return f"out of range: instants must lie within {RANGE_TEXT} once converted to UTC"
    return None


def check_instant(value: datetime) -> datetime:
    """`value` unchanged, or ValueError saying the range (a pydantic validator)."""
    problem = instant_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# A request's datetime: what the databases and every time zone can hold.
Instant = Annotated[datetime, AfterValidator(check_instant)]
# A request's integer with no natural bound of its own (ids, versions).
DbInt = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]

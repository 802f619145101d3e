"""Time a question names, and time a turn tells of (dates.py): "last
Friday" and "last weekend" resolve against when they are said, and a turn
saying "yesterday" on 17 March is about 16 March."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.services.recall import dates
from tests.memory.test_recall_ranking import FILLER, _refs, _turns

THURSDAY = datetime(2022, 3, 17, 15, 47, tzinfo=UTC)


def _days(text: str, now: datetime = THURSDAY) -> list[tuple[str, str]]:
    return [
        (w.start.date().isoformat(), w.end.date().isoformat()) for w in dates.windows(text, now=now)
    ]


def test_a_weekday_named_last_is_the_latest_one_before_the_day_it_is_said() -> None:
    assert _days("we met last Friday") == [("2022-03-11", "2022-03-12")]
    assert _days("last Thursday") == [("2022-03-10", "2022-03-11")]
    assert _days("last Wednesday") == [("2022-03-16", "2022-03-17")]
    assert _days("what did I do last weekend?") == [("2022-03-12", "2022-03-14")]
    # "last week" is its own phrase, not a part of "last weekend".
    assert _days("last week") == [("2022-03-03", "2022-03-11")]


def test_a_turn_tells_of_a_time_by_when_it_was_said() -> None:
    (asked,) = dates.windows("What did James do on March 16, 2022?", now=THURSDAY)
    told = "I'll be looking forward to it. By the way, yesterday I went bowling."
    assert dates.told_within(told, said_at=THURSDAY, within=[asked])
    assert not dates.told_within(told, said_at=datetime(2022, 3, 20, tzinfo=UTC), within=[asked])
    assert not dates.told_within("I went bowling.", said_at=THURSDAY, within=[asked])
    assert not dates.told_within(told, said_at=None, within=[asked])
    # A month of any year ("in March") is matched by the month told of.
    (march,) = dates.windows("what happened in March?", now=THURSDAY)
    assert march.month == 3
    assert dates.told_within(told, said_at=THURSDAY, within=[march])
    # A text telling only of a month of no year says too little.
    assert not dates.told_within("in June we went", said_at=THURSDAY, within=[march])


@pytest.mark.django_db
def test_a_turn_telling_of_the_day_asked_about_ranks_above_one_that_does_not(space) -> None:
    # Both said days after the day asked about; the second matches the
    # words better (it is shorter), the first says it happened that day.
    _turns(
        space,
        [
            (
                "told",
                "yesterday I went bowling with my cousin and his kids and somehow got two strikes",
            )
        ],
        session="a",
        ts=THURSDAY,
    )
    _turns(
        space,
        [("later", "bowling: two strikes")],
        session="b",
        ts=datetime(2022, 3, 21, 10, 0, tzinfo=UTC),
    )
    _turns(space, FILLER, session="c")
    assert _refs(space, "What did James do on March 16, 2022? bowling strikes", k=2)[0] == "told"

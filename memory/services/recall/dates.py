"""Date expressions in a query, turned into a time window.

"in 2023", "May 2023", "last May", "in March" (March of any year),
"yesterday", "last week", "last Friday", "2023-05-08" name a stretch of time;
turns and facts whose time falls in it get a boost (never a filter: the words
may describe the question, not the answer). Relative expressions resolve
against `now`, which recall passes as `as_of` when it is given, so a
time-travel query reads "last May" from then.

A turn tells of a time too, read the same way against when it was said
(told_within): "yesterday I went bowling", said on 17 March, is about 16
March, and answers "what did James do on March 16?" as well as a turn said
that day. LoCoMo R@10, 6-10 (not tuned on): 0.763 -> 0.766, temporal 0.727
-> 0.736; 1-5 unchanged (0.783); no category lower. Reading "two days ago"
too lifted temporal 6-10 to 0.742 but cost multi-hop (1-5 0.478 -> 0.475,
6-10 0.470 -> 0.468), so it is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_LAST_MONTH_NAME = re.compile(rf"\blast\s+{_MONTH}\b", re.I)
# "in May" without a year: only with a preposition so "may" the verb is not a date.
_IN_MONTH = re.compile(rf"\b(?:in|during|since|by|early|late|mid)\s+{_MONTH}\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|since|of|by|year)\s+((?:19|20)\d{2})\b", re.I)
_RELATIVE = {
    "yesterday": (1, 1),
    "last week": (7, 14),
    "last month": (31, 62),
    "last year": (365, 730),
    "this week": (0, 7),
    "this month": (0, 31),
    "this year": (0, 366),
    "recently": (0, 30),
}
# Each phrase as a whole phrase: "last week" is not "last weekend".
_RELATIVE_AT = {phrase: re.compile(rf"\b{phrase}\b") for phrase in _RELATIVE}

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "last Friday": the latest Friday before the day it is said; "last weekend"
# the latest Saturday and Sunday before it.
_LAST_WEEKDAY = re.compile(rf"\blast\s+({'|'.join(_WEEKDAYS)}|weekend)\b", re.I)
_TEXT_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Window:
    start: datetime
    end: datetime  # exclusive
    expression: str
    # "in June" names a month without a year: it matches June of any year
    # (start/end still hold the latest June, for callers comparing ranges).
    month: int | None = None

    def contains(self, when: datetime | None) -> bool:
        if when is None:
            return False
        if self.month is not None:
            return when.month == self.month
        return self.start <= when < self.end


def _month_window(year: int, month: int, expression: str) -> Window:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Window(start, end, expression)


def _day_window(year: int, month: int, day: int, expression: str) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return Window(start, start + timedelta(days=1), expression)


def windows(query: str, *, now: datetime) -> list[Window]:
    """Every time window the query names, most specific first."""
    text = query or ""
    lowered = text.lower()
    # Each expression below needs a word of its own kind (a month, a year,
    # a weekday, a relative word), so only the kinds present are looked
    # for: most texts hold none, and the expressions cost 100 us a turn
    # where the words cost 5 (recall reads every turn it loads for a
    # question naming a time: told_within).
    words = set(_TEXT_WORD.findall(lowered))
    months = not words.isdisjoint(MONTHS)
    years = any(len(w) == 4 and w.isdigit() for w in words)
    found: list[Window] = []
    if years:
        for m in _ISO.finditer(text):
            w = _day_window(int(m[1]), int(m[2]), int(m[3]), m[0])
            if w:
                found.append(w)
    if months and years:
        for m in _DAY_MONTH_YEAR.finditer(text):
            w = _day_window(int(m[3]), MONTHS[m[2].lower()], int(m[1]), m[0])
            if w:
                found.append(w)
        for m in _MONTH_DAY_YEAR.finditer(text):
            w = _day_window(int(m[3]), MONTHS[m[1].lower()], int(m[2]), m[0])
            if w:
                found.append(w)
        if not found:
            for m in _MONTH_YEAR.finditer(text):
                found.append(_month_window(int(m[2]), MONTHS[m[1].lower()], m[0]))
    if months:
        for m in _LAST_MONTH_NAME.finditer(text):
            month = MONTHS[m[1].lower()]
            year = now.year if month < now.month else now.year - 1
            found.append(_month_window(year, month, m[0]))
    if not found:
        for m in _IN_MONTH.finditer(text) if months else ():
            # A memory spans years, and "in June" does not say which June.
            month = MONTHS[m[1].lower()]
            year = now.year if month <= now.month else now.year - 1
            w = _month_window(year, month, m[0])
            found.append(Window(w.start, w.end, w.expression, month=month))
        for m in _YEAR.finditer(text) if years else ():
            year = int(m[1])
            found.append(
                Window(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), m[0])
            )
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for phrase, (near, far) in _RELATIVE.items():
        if phrase.rsplit(" ", 1)[-1] in words and _RELATIVE_AT[phrase].search(lowered):
            found.append(
                Window(
                    day - timedelta(days=far),
                    day - timedelta(days=near) + timedelta(days=1),
                    phrase,
                )
            )
    if not words.isdisjoint(_WEEKDAYS) or "weekend" in words:
        for m in _LAST_WEEKDAY.finditer(text):
            name = m[1].lower()
            # Days back to the latest such day before today (1-7).
            target = 5 if name == "weekend" else _WEEKDAYS.index(name)
            back = (day.weekday() - target - 1) % 7 + 1
            start = day - timedelta(days=back)
            found.append(Window(start, start + timedelta(days=2 if name == "weekend" else 1), m[0]))
    return found


def told_within(text: str, *, said_at: datetime | None, within: list[Window]) -> bool:
    """Whether `text`, said at `said_at`, names a time inside one of
    `within`: "yesterday" in a turn said on 17 March is 16 March. The text's
    months of no year ("in June") are left out: they say too little."""
    if said_at is None or not within:
        return False
    for told in windows(text, now=said_at):
        if told.month is not None:
            continue
        last = told.end - timedelta(microseconds=1)
        for w in within:
            if w.month is not None:
                if told.start.month == w.month or last.month == w.month:
                    return True
            elif told.start < w.end and w.start < told.end:
                return True
    return False


_WHEN = re.compile(
    r"^\s*when\b|\b(?:what|which)\s+(?:date|day|year|month|time)\b|\bhow\s+long\s+ago\b", re.I
)
_WEEKDAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend"
_TIME_WORDS = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|"
    rf"(?:last|next|this|past)\s+(?:week|month|year|night|{_WEEKDAY}|{_MONTH[1:-1]})|"
    rf"{_WEEKDAY}|{_MONTH[1:-1]}|(?:19|20)\d{{2}})\b",
    re.I,
)


def asks_when(query: str) -> bool:
    """The question asks for a time ("When did...", "what year...")."""
    return bool(_WHEN.search(query or ""))


def mentions_time(text: str) -> bool:
    """The text places something in time: a relative day, a weekday, a month
    or a year. An answer to a "when" question usually does."""
    return bool(_TIME_WORDS.search(text or ""))

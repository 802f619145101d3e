"""Dates in a clause ("last month", "on 14 March", "in June 2019", "next
Friday"), resolved against the instant the turn was said. Used by the
rule-based extractor to date facts and to tell plans from past events."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
MONTH_NAMES = tuple(m.capitalize() for m in _MONTHS)
_MONTH_RE = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS if len(m) > 3] + ["sept"])
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
}
_NUM = r"\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

DATE = re.compile(
    rf"\b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|\b(?P<rel>yesterday|today|tonight|tomorrow)(?: (?:morning|afternoon|evening|night))?\b"
    rf"|\b(?P<dir>last|next|this) (?P<unit>week(?:end)?|month|year|"
    rf"{'|'.join(_WEEKDAYS)}|{'|'.join(_SEASONS)})\b"
    rf"|\b(?P<ago>{_NUM}) (?P<agounit>days?|weeks?|months?|years?) ago\b"
    rf"|\b(?:on |this |last )?(?P<wd>{'|'.join(_WEEKDAYS)})\b"
    rf"|\b(?:on )?(?:the )?(?P<md_m>{_MONTH_RE})\.? (?:the )?(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?:,? (?P<md_y>\d{{4}}))?"
    rf"|\b(?:on )?(?:the )?(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<dm_m>{_MONTH_RE})\b"
    rf"(?:,? (?P<dm_y>\d{{4}}))?"
    rf"|\b(?:in |since |back in )?(?:early |late |mid-?)?(?P<m>{_MONTH_RE})\b(?:,? (?P<m_y>\d{{4}}))?"
    rf"|\b(?:in|since|back in) (?P<y>(?:19|20)\d{{2}})\b",
    re.I,
)
# Months that are also words ("may", "march") only count as dates in a
# date-like position.
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "jan", "mar", "jun", "aug", "sat", "sun"})
PAST = re.compile(
    r"\b(?:was|were|went|did|had|moved|started|met|visited|got|ago|last|yesterday|\w+ed)\b", re.I
)
FUTURE = re.compile(
    r"\b(?:will|'ll|going to|gonna|planning|plan to|next|tomorrow|tonight|this weekend|"
    r"upcoming|soon)\b",
    re.I,
)


def month_number(token: str) -> int:
    token = token.lower().rstrip(".")
    for name, number in _MONTHS.items():
        if name.startswith(token[:3]):
            return number
    return 1


def _matches(text: str) -> list[re.Match[str]]:
    out = []
    for m in DATE.finditer(text):
        if m.group("m") and not m.group("m_y") and m.group("m").lower() in _AMBIGUOUS_MONTHS:
            # "I may move", "we march on": a bare month word needs "in", "since", ...
            if not re.match(r"(?:in|since|back in|early|late|mid)\b", m.group(0), re.I):
                continue
        out.append(m)
    return out


def find(text: str) -> re.Match[str] | None:
    """The first date expression in the text."""
    found = _matches(text)
    return found[0] if found else None


def resolve(
    m: re.Match[str], text: str, *, now: datetime, past: bool | None = None
) -> datetime | None:
    """The instant `m` names. `past`: whether the text talks about the past
    (a bare "in March" is then the last March); guessed from its verbs."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if past is None:
        past = bool(PAST.search(text)) and not FUTURE.search(text)
    try:
        if m.group("iso"):
            return datetime.fromisoformat(m.group("iso")).replace(tzinfo=now.tzinfo)
        if m.group("rel"):
            offset = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
            return day + timedelta(days=offset[m.group("rel").lower()])
        if m.group("dir"):
            sign = {"last": -1, "next": 1, "this": 0}[m.group("dir").lower()]
            unit = m.group("unit").lower()
            if unit in _WEEKDAYS:
                # "last Sunday": the latest Sunday before today; "next Friday":
                # the first one after; "this Friday": the one of this week.
                delta = _WEEKDAYS.index(unit) - day.weekday()
                if sign < 0:
                    delta = delta - 7 if delta >= 0 else delta
                elif sign > 0:
                    delta = delta + 7 if delta <= 0 else delta
                return day + timedelta(days=delta)
            if unit in _SEASONS:
                year = day.year + (sign if sign else 0)
                return day.replace(year=year, month=_SEASONS[unit], day=1)
            days = {"week": 7, "weekend": 7, "month": 30, "year": 365}.get(unit, 7)
            return day + timedelta(days=sign * days)
        if m.group("ago"):
            unit = m.group("agounit").lower().rstrip("s")
            days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
            count = m.group("ago").lower()
            n = int(count) if count.isdigit() else _NUMBER_WORDS[count]
            return day - timedelta(days=n * days)
        if m.group("wd"):
            target = _WEEKDAYS.index(m.group("wd").lower())
            delta = target - day.weekday()
            if past:
                return day + timedelta(days=delta if delta <= 0 else delta - 7)
            return day + timedelta(days=delta if delta >= 0 else delta + 7)
        if m.group("md_m") or m.group("dm_m"):
            month = month_number(m.group("md_m") or m.group("dm_m"))
            dom = int(m.group("md_d") or m.group("dm_d"))
            given = m.group("md_y") or m.group("dm_y")
            return _in_year(day, month, dom, given, past)
        if m.group("m"):
            return _in_year(day, month_number(m.group("m")), 1, m.group("m_y"), past)
        if m.group("y"):
            return day.replace(year=int(m.group("y")), month=1, day=1)
    except ValueError:
        return None
    return None


def _in_year(day: datetime, month: int, dom: int, given: str | None, past: bool) -> datetime:
    if given:
        return day.replace(year=int(given), month=month, day=dom)
    when = day.replace(month=month, day=dom)
    if past and when > day:
        return when.replace(year=day.year - 1)
    if not past and when < day - timedelta(days=1):
        return when.replace(year=day.year + 1)
    return when


def find_date(text: str, *, now: datetime) -> datetime | None:
    """The date a clause talks about, resolved against the turn's timestamp."""
    m = find(text)
    return None if m is None else resolve(m, text, now=now)


def strip(text: str) -> str:
    """The text without its date expressions."""
    for m in reversed(_matches(text)):
        text = text[: m.start()] + " " + text[m.end() :]
    return " ".join(text.split())

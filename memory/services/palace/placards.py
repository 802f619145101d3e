"""Placards: the short marker hung on each slot, and its score.

A placard is a cue, not the entry: the subject and predicate of a
structured fact, or the first half (at most five words) of a plain one,
so the review queue can show it without giving the answer away. Time-bound
entries carry a date anchor. The score (0-1) is the palace's marker rule:
unique in the space +0.4, a date anchor +0.3, no other placard in the same
room sharing its first six characters +0.3."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

MAX_CHARS = 120
PREFIX = 6
REFURB_BELOW = 0.5
# A palace this small is all noise to the rule: nothing to tell apart yet.
MIN_SCANNED = 8
TIME_BOUND = {"event", "episode", "decision"}

_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATE = re.compile(
    rf"\b(?:(?:19|20)\d{{2}}(?:-\d{{2}}(?:-\d{{2}})?)?|{_MONTHS}\s+\d{{1,2}}|\d{{1,2}}\s+{_MONTHS})\b",
    re.I,
)


def make(*, text: str, subject: str, predicate: str, kind: str, when: datetime | None) -> str:
    words = text.split()
    if subject and predicate:
        cue = f"{subject} {predicate.replace('_', ' ')} …"
    else:
        n = min(5, max(1, len(words) // 2))
        cue = " ".join(words[:n]) + ("…" if n < len(words) else "")
    dated = DATE.search(text)
    if dated and not DATE.search(cue):
        cue = f"{cue} @{dated.group(0)}"
    elif kind in TIME_BOUND and when is not None and not DATE.search(cue):
        cue = f"{cue} @{when.date().isoformat()}"
    return " ".join(cue.split())[:MAX_CHARS]


def prefix(placard: str) -> str:
    return placard[:PREFIX].lower()


def has_date(placard: str) -> bool:
    return DATE.search(placard) is not None


@dataclass(frozen=True)
class Score:
    value: float
    hints: tuple[str, ...]


def score(placard: str, *, unique: bool, clash: bool) -> Score:
    value = 0.0
    hints: list[str] = []
    if unique:
        value += 0.4
    else:
        hints.append("another entry has the same placard: name what sets this one apart")
    if has_date(placard):
        value += 0.3
    else:
        hints.append("no date anchor: add when it happened or was decided")
    if not clash:
        value += 0.3
    else:
        hints.append(
            f"its first {PREFIX} characters clash with another placard in the room: "
            "start with a different word"
        )
    return Score(round(value, 2), tuple(hints))

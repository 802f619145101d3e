"""Dated events and plans: each its own fact, keyed by what happened."""

from __future__ import annotations

import re

from memory.services.pipeline.candidates import Candidate
from memory.services.pipeline.rules import dates
from memory.services.pipeline.rules import lexicon as lx
from memory.services.pipeline.rules.slots import _OBJECT_END, _Turn
from memory.services.pipeline.rules.text import _MOOD, USER

_EVENT_SUBJECT = re.compile(
    r"^(?:(?:so|and|but|well|oh|also|then|btw|guess what)\W+)*(?P<s>i|we|my|our)\b", re.I
)
_KEY_DROP = frozenset(
    "i we i'm we're i've we've i'll we'll i'd am is are was were be will 'll just finally recently "
    "also really actually so planning going_to have has gonna both all the a an my our "
    "today yesterday tomorrow".split()
)
_EVENT_STARTERS = re.compile(
    r"^(?:i|we)(?:'ve| have)? (?:(?:just|finally|recently|also|both|all|actually) )*(?P<v>[a-z]+)\b"
    r"|^(?:my|our) (?:[\w']+ ){1,2}(?P<pv>was born|passed away|died|got married)\b",
    re.I,
)
_PLAN_STARTERS = re.compile(
    r"^(?:i|we)(?:'m| am|'re| are) (?:(?:also|finally|really|actually) )?(?:(?:going|planning) to (?P<inf>\w+)|"
    r"(?P<ing>\w+ing))\b"
    r"|^(?:i|we)(?:'ll| will) (?P<will>\w+)"
    r"|^(?:i|we) (?:have|'ve got|have got) (?:a|an|my|our) (?P<noun>(?:[\w'-]+ ){0,3}[\w-]+)\b"
    r"|^(?:my|our) (?P<noun2>(?:[\w'-]+ ){0,2}[\w-]+) (?:is|are) (?:on|in|next|this|tomorrow)\b",
    re.I,
)
_NOT_PLANS = frozenset("trying thinking looking heading feeling wondering working".split())


def _event_key(clause: str) -> str:
    text = dates.strip(clause)
    text = _OBJECT_END.split(text, maxsplit=1)[0]
    # What happened, not what came of it: "went to a parade and it was awesome".
    text = re.split(
        r"\s+(?:and|but|so|because|which|where|when|while|though)\s+", text, maxsplit=1
    )[0]
    text = re.sub(r"\b(?:going|planning) to\b", "going_to", text, flags=re.I)
    words = [w.strip('.,!?;:"()').lower() for w in text.split()]
    words = [w for w in words if w and w not in _KEY_DROP and not re.fullmatch(r"[\W_]+", w)]
    while words and words[-1] in {
        "on",
        "in",
        "at",
        "for",
        "of",
        "to",
        "this",
        "last",
        "next",
        "and",
    }:
        words.pop()
    key = " ".join(words[:7]).replace("going_to", "going to")
    return key


def _event(clause: str, t: _Turn) -> Candidate | None:
    """A dated first-person happening ("I ran my first marathon last Sunday")
    or plan ("I'm flying to Tokyo next Friday"): its own fact, keyed by what
    happened, so two events never collapse into one."""
    m = dates.find(clause)
    if m is None or _MOOD.search(clause):
        return None
    # "On Friday I have a dentist appointment": the date comes first.
    rest = clause[m.end() :].lstrip(" ,") if m.start() == 0 else clause
    subject = _EVENT_SUBJECT.match(rest)
    if subject is None or not 3 <= len(clause.split()) <= 40:
        return None
    body = rest[subject.start("s") :]
    # A plan is ahead: "married" is no past tense in "we're getting married in August".
    when = dates.resolve(m, clause, now=t.now, past=False)
    only_today = bool(m.group("rel")) and m.group("rel").lower() in {"today", "tonight"}
    plan = _PLAN_STARTERS.match(body)
    if plan is not None and not only_today:
        ing = (plan.group("ing") or "").lower()
        noun = (plan.group("noun") or plan.group("noun2") or "").lower()
        future = when is not None and when.date() >= t.now.date() or dates.FUTURE.search(clause)
        ok = (
            (plan.group("inf") or plan.group("will") or (ing and ing not in _NOT_PLANS))
            if not noun
            else any(w in lx.PLAN_NOUNS for w in re.findall(r"[\w-]+", noun))
        )
        if ok and future:
            key = _event_key(body)
            if key:
                c = Candidate(
                    text=clause.rstrip(".!?"),
                    kind="event",
                    subject=USER,
                    predicate="plan",
                    object=key,
                    importance=0.5,
                )
                c.meta["undated"] = True  # a plan is known now; its date is in the text
                return c
        return None
    ev = _EVENT_STARTERS.match(body)
    if ev is None or only_today and not ev.group("pv"):
        return None
    verb = (ev.group("v") or "").lower()
    if not ev.group("pv") and verb not in lx.EVENT_VERBS:
        return None
    trivial = lx.TRIVIAL_EVENTS.get(verb)
    if trivial and re.search(trivial, body, re.I):
        return None
    # A past-tense happening: a bare "in March" is the last March.
    when = dates.resolve(m, clause, now=t.now, past=True)
    if when is not None and when.date() > t.now.date():
        return None
    key = _event_key(body)
    if not key or verb in lx.TRIVIAL_EVENTS and len(key.split()) < 2:
        return None  # "I took" says nothing; "I graduated" does
    return Candidate(
        text=clause.rstrip(".!?"),
        kind="event",
        subject=USER,
        predicate="event",
        object=key,
        importance=0.5,
    )

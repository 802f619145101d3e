"""Slot readers: what may fill a name, a place, an employer, a job title or
a thing liked, and the per-turn state the extractor keeps (`Turn`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from memory.services.pipeline.candidates import Candidate
from memory.services.pipeline.rules import dates
from memory.services.pipeline.rules import lexicon as lx
from memory.services.pipeline.rules.text import USER

# Where an object ends: a comma starts another thought ("I live in Hamburg,
# in a small flat"; "Anna lives in Berlin, she is a teacher").
_OBJECT_END = re.compile(r"\s*[,(:\u2014\u2013]|\s+-\s")
_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|which|who|where|when|although|though|while|now|anymore|"
    r"any ?more|these days|nowadays|currently|right now|at the moment|for (?:a|the|about|\d+|my|work|"
    r"years|months|ages)|as of|please|thanks|btw|lol|too|as well|actually|with|together with|near|"
    r"close to|next to|after|before|if|until|especially|mostly|honestly|though|here|every|"
    r"on (?:weekends|the weekend|sundays|saturdays)|at (?:weekends|the weekend)|at all|most days|in (?:the )?(?:spring|summer|autumn|fall|winter)|all the time|to be|to get|to help|again|instead|lately|anyway|"
    r"really|no contest|by the way|i think)\b.*$",
    re.I,
)
_CONNECT = frozenset(
    "de do da dos das del della di du la le el upon am of and & van von der".split()
)
_NON_NAMES = frozenset(
    "I The My Our A An He She They It This That We You Everyone Nobody Someone Monday Tuesday "
    "We've We're They're You're Let's It's That's There's Here's What's "
    "Wednesday Thursday Friday Saturday Sunday Yes No Ok Okay Hi Hello Hey Thanks Sorry Just".split()
) | frozenset(dates.MONTH_NAMES)
_DEICTIC = frozenset(
    "it that this them these those you him her me us when how what to is are was be being so too "
    "doing having everything anything something nothing one everywhere anywhere makes gives "
    "helps keeps feels looks seems sounds brings reminds means".split()
)
# Pronouns that point into the conversation: "the taste of these", "making him happy".
_POINTING = frozenset("it this these those that them him her his their you your".split())
# Vague heads: "I love the smell", "I love the rush", "I love the color".
_ABSTRACT = frozenset(
    "smell color colour feeling thought rush taste sound way idea fact view views vibe vibes "
    "atmosphere structure texture tech acting look looks process energy challenge experience "
    "moment result results sight scent scents details detail part bit stuff".split()
)


def _cut(raw: str) -> str:
    raw = _OBJECT_END.split(raw.strip(), maxsplit=1)[0]
    return _STOP.sub("", raw.strip()).strip(" .!?'\"")


def _proper_run(raw: str, *, max_words: int = 4, connect: bool = True) -> str:
    """The leading run of capitalised words: "Hamburg near the harbour" ->
    "Hamburg", "São Paulo", "Rio de Janeiro", "Paddington 2"."""
    out: list[str] = []
    for word in raw.split():
        core = word.strip(',.;:!?()"').lstrip("'")
        if core.endswith("'") and not core.endswith("s'"):
            core = core.rstrip("'")  # a closing quote, not "St Thomas' Hospital"
        ends = word.rstrip("'") != core.rstrip("'") and word.rstrip("'")[-1:] in ",.;:!?)"
        if not core:
            break
        if core[:1].isupper() or (out and core.isdigit() and len(core) <= 4):
            out.append(core)
        elif connect and out and core.lower() in _CONNECT and not ends:
            out.append(core)
        else:
            break
        if ends or len(out) >= max_words + 1:
            break
    while out and out[-1].lower() in _CONNECT:
        out.pop()
    if len(out) > max_words:
        return ""
    return " ".join(out)


def _lower_run(raw: str, *, max_words: int = 3) -> str:
    """In all-lower-case text: the leading words up to a common word."""
    out: list[str] = []
    for word in raw.split():
        core = word.strip(",.;:!?()\"'")
        if not core or core.lower() in lx.COMMON or not re.fullmatch(r"[^\W\d_][\w'-]*", core):
            break
        out.append(core)
        if word != core:
            break
    if not out or len(out) > max_words:
        return ""
    return " ".join(w[:1].upper() + w[1:] for w in out)


# "the city library", "the children's hospital": a common name for a place of work.
_INSTITUTION = re.compile(
    r"the (?!same |other |first |new |old )(?:[a-z']+ ){0,2}(?:library|hospital|school|university|college|museum|bakery|bank|"
    r"council|clinic|pharmacy|theatre|theater|zoo|airport|factory|hotel|gym|post office|"
    r"town hall|city hall|fire station|police station|laboratory|lab)\b"
)


@dataclass
class _Turn:
    now: datetime
    cased: bool
    found: list[Candidate] = field(default_factory=list)
    seen: set[tuple[str, str, str, bool]] = field(default_factory=set)
    # The person a "she"/"he" refers to, the facts of the last clause (for
    # "that's no longer true") and the thing a "used to" clause was about.
    person: str = ""
    last: list[Candidate] = field(default_factory=list)
    recent: str = ""

    # slot readers -----------------------------------------------------------------------

    def name(self, raw: str, *, loose: bool = False) -> str:
        """A person's (or pet's, or project's) name at the start of `raw`.
        `loose`: after "called"/"named" a lower-case word may be a name."""
        raw = raw.strip()
        prefix = ""
        m = re.match(r"(Dr|Prof|Mr|Mrs|Ms)\.?\s+", raw)
        if m:
            prefix, raw = m.group(1) + " ", raw[m.end() :]
        if self.cased:
            # A trailing possessive is not part of a name ("Sam's brother").
            got = _proper_run(raw, max_words=3).removesuffix("'s")
            if not got and loose:
                m = re.match(r"([^\W\d_][\w'-]+)", raw)
                got = m.group(1) if m and m.group(1).lower() not in lx.COMMON else ""
            if got.split()[:1] and (
                got.split()[0] in _NON_NAMES or re.fullmatch(r"I(?:'\w+)?", got.split()[0])
            ):
                got = ""
        else:
            got = _lower_run(raw, max_words=2)
        return prefix + got if got else ""

    def place(self, raw: str) -> str:
        raw = _OBJECT_END.split(raw.strip(), maxsplit=1)[0]
        raw = re.sub(r"^(?:the city of|the town of)\s+", "", raw, flags=re.I)
        m = re.match(r"(?:a|an|the|our|my|with)\s+[^,]*?\b(?:in|called)\s+(?P<p>.+)", raw, re.I)
        if m:
            raw = m.group("p")
        elif re.match(r"(?:a|an|the|our|my|with)\b", raw, re.I):
            return ""
        if self.cased:
            got = _proper_run(dates.strip(raw), max_words=3)
        else:
            got = _lower_run(_cut(dates.strip(raw)), max_words=3)
        if not got or got.split()[0] in _NON_NAMES or any(ch.isdigit() for ch in got):
            return ""
        return got

    def org(self, raw: str, *, common: bool = True) -> str:
        """An employer (or school). `common`: "the bakery" may be one, as in
        "I work at the bakery"; not after "I joined" (a club, a class)."""
        raw = _OBJECT_END.split(dates.strip(raw.strip()), maxsplit=1)[0]
        m = re.search(r"\b(?:called|named)\s+(?P<n>.+)", raw, re.I)
        if m:
            return self.name(m.group("n"), loose=True)
        if self.cased:
            got = _proper_run(re.sub(r"^the\s+(?=[A-Z])", "", raw), max_words=4)
            if got and got.split()[0] not in _NON_NAMES - {"The"}:
                return got
            m = _INSTITUTION.match(raw)
            if common and m:
                return m.group(0)
            m = re.match(r"the ([a-z]+)\b(?! [a-z]+ (?:team|office|department))", raw)
            if common and m and m.group(1) not in lx.TIME_WORDS and m.group(1) not in lx.COMMON:
                return m.group(1)
            return ""
        if not common and re.match(r"(?:the|a|an)\b", raw, re.I):
            return ""
        return _lower_run(re.sub(r"^the\s+", "", _cut(raw)), max_words=3)

    def thing(self, raw: str, *, words: int = 6) -> str:
        got = _cut(raw).lstrip("-–— ")
        got = re.sub(r"^(?:also|even|really|just)\s+", "", got, flags=re.I)
        got = re.sub(r"^(?:a good|a nice|a|an|some)\s+", "", got, flags=re.I)
        tokens = got.split()
        low = [w.lower().strip(",.!?") for w in tokens]
        if any(w in _POINTING for w in low[1:]) or (low and low[0] in _POINTING - {"that", "this"}):
            return ""
        if low and (
            low[0] in _ABSTRACT or low[0] == "the" and len(low) > 1 and low[1] in _ABSTRACT
        ):
            return ""
        if not tokens or len(tokens) > words:
            return ""
        if tokens[0].lower() in _DEICTIC or tokens[0].lower() in {"the", "my"} and len(tokens) == 1:
            return ""
        if any(
            w.lower().strip(",.") in {"you", "your", "yours", "you've", "you're"} for w in tokens
        ):
            return ""  # about this chat ("the colour you picked"), not a taste
        if tokens[-1].lower() in lx.DEICTIC_HEADS and tokens[0].lower() in {
            "the",
            "that",
            "this",
            "your",
        }:
            return ""
        return got

    def things(self, raw: str) -> list[str]:
        """ "hiking, jazz and sushi" -> three; "cats and dust" -> two."""
        segment = re.split(r"[.;!?]", raw, maxsplit=1)[0]
        segment = re.split(r"\s+(?:but|because|so|though|since|which|when|if|while)\s+", segment)[0]
        m = re.fullmatch(r"\s*([^,]+(?:,\s*[^,]+)+),?\s+(?:and|or|&)\s+([^,]+?)\s*", segment)
        if m:
            parts = [p.strip() for p in m.group(1).split(",")] + [m.group(2)]
            if all(1 <= len(p.split()) <= 3 for p in parts):
                return [t for t in (self.thing(p) for p in parts) if t]
        first = _OBJECT_END.split(segment.strip(), maxsplit=1)[0]
        pair = re.fullmatch(r"\s*(\S+(?: \S+)?) (?:and|or|&) (\S+(?: \S+)?)\s*", first)
        if pair and not re.search(r"\b(?:i|my|we|it|them)\b", first, re.I):
            return [t for t in (self.thing(p) for p in pair.groups()) if t]
        got = self.thing(first)
        return [got] if got else []

    def role(self, raw: str) -> tuple[str, str]:
        """(job title, the rest) when `raw` starts with one: "senior engineer
        at Siemens" -> ("senior engineer", " at Siemens")."""
        m = re.match(
            r"((?:[\w'-]+ ){0,3}?[\w'-]+?)(?=\s*$|[,.;!?]|\s+(?:at|for|with|in|and|who|since|so|but|"
            r"because|from|on|anymore|any more|now|these|full-time|part-time|by|here|there)\b)",
            raw.strip(),
            re.I,
        )
        if not m:
            return "", ""
        title = m.group(1)
        words = title.lower().split()
        if words[-1] not in lx.ROLE_HEADS or any(w in lx.ROLE_FILLERS for w in words):
            return "", ""
        if words[0] in {"not", "no", "the"}:
            return "", ""
        return title, raw.strip()[m.end() :]


Builder = Callable[[re.Match[str], _Turn], list[Candidate]]


def _c(
    predicate: str,
    text: str,
    obj: str,
    *,
    kind: str = "fact",
    importance: float = 0.7,
    subject: str = USER,
    retract: bool = False,
) -> Candidate | None:
    if not obj.strip() and not retract:
        return None
    if len(obj) > 120:
        return None
    return Candidate(
        text=text,
        kind=kind,
        subject=subject,
        predicate=predicate,
        object=obj,
        importance=importance,
        retract=retract,
    )


def _keep(*cands: Candidate | None) -> list[Candidate]:
    return [c for c in cands if c is not None]


def _cap(value: str) -> str:
    return value[:1].upper() + value[1:]


_PHRASE = {
    "lives_in": "lives in",
    "works_at": "works at",
    "studies_at": "studies at",
    "role": "is a",
    "studies": "studies",
}


def _about(subject: str, predicate: str, obj: str, *, importance: float = 0.6) -> Candidate | None:
    """A fact about someone else: "Anna lives in Porto"."""
    display = _cap(subject)
    article = "an" if obj[:1].lower() in "aeiou" else "a"
    phrase = _PHRASE.get(predicate, predicate.replace("_", " "))
    if predicate == "role":
        phrase = f"is {article}"
    return _c(predicate, f"{display} {phrase} {obj}", obj, subject=subject, importance=importance)


_NO_LONGER = {
    "lives_in": "lives in",
    "works_at": "works at",
    "role": "is a",
    "likes": "likes",
    "dislikes": "dislikes",
    "prefers": "prefers",
    "diet": "is",
    "allergic_to": "is allergic to",
    "studies": "studies",
    "studies_at": "studies at",
}


def _retraction(predicate: str, obj: str, *, subject: str = USER) -> Candidate:
    who = "User" if subject == USER else _cap(subject)
    phrase = _NO_LONGER.get(predicate)
    if phrase:
        text = (
            f"{who} no longer {phrase} {obj}" if obj else f"{who} no longer {phrase} anything known"
        )
        if predicate == "works_at" and not obj:
            text = f"{who} no longer works where they worked"
    elif obj:
        text = f"{who}'s {predicate.replace('_', ' ')} is no longer {obj}"
    else:
        text = f"{who} no longer has a {predicate.replace('_', ' ')}"
    return Candidate(
        text=text, subject=subject, predicate=predicate, object=obj, importance=0.7, retract=True
    )

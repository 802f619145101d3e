"""The deterministic extractor used when no LLM provider is configured, so
Engram learns offline: names and nicknames, age, birthday, nationality, role
and employer, home and moves, studies, family, friends and partners with
their own attributes, pets, allergies, diet and conditions, likes, dislikes
and evolving preferences, standing instructions, projects and tools, dated
events and plans, and retractions of any of these.

Precise first: a wrong fact displaces a right one and may reach core memory,
a missed one is only missed. So every slot is checked against what fits it
(a role is a known job title, a place or employer a name: capitalised, or in
all-lower-case text a word that is not common English), and a sentence that
is a question, a hypothetical, quoted text or someone else's opinion teaches
nothing. What it cannot tell for sure gets importance below 0.8, which keeps
it out of core memory.

Facts are written in a canonical third-person form ("User lives in Lisbon"),
so two phrasings of one fact hash the same and resolve to NOOP. Measured
against tests/data/extraction_corpus.jsonl by `manage.py eval_extraction`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from memory.services.pipeline import dates
from memory.services.pipeline import lexicon as lx
from memory.services.pipeline.candidates import Candidate

USER = "user"
find_date = dates.find_date  # kept importable from here


def _alt(words: object) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))  # type: ignore[call-overload]


_REL = _alt(lx.RELATIONS)
_PET = _alt(lx.PETS)
_BREED = _alt(lx.BREEDS)
_DIET = _alt(lx.DIETS)
_NAT = _alt(lx.NATIONALITIES)
_COND = _alt([*lx.CONDITION_PHRASES, *lx.CONDITIONS])
_COND_ADJ = _alt(lx.CONDITION_ADJECTIVES)
_I_AM = r"(?:i'm|i am)"
# "my little brother", "my twin sister", "our cocker spaniel"
_MOD = (
    r"(?:(?:little|big|older|younger|elder|oldest|eldest|youngest|twin|baby|kid|old|dear|dearest|"
    r"closest|childhood|good|cocker|springer|toy|miniature|rescue) )?"
)
_WE_ARE = r"(?:i'm|i am|we're|we are)"
_ADV = (
    r"(?:(?:just|now|also|recently|finally|currently|still|both|actually|really|only|mostly|all) )*"
)
# An object runs to the end of the sentence; a dot inside a word ("Booking.com") is kept.
_O = r"(?P<o>(?:[^.;!?]|\.(?=\w))+)"
# A name slot reads a few words, so what follows it is read by other patterns.
_NAME = r"(?P<o>[\w'.-]+(?: [\w'.-]+){0,3})"

# --- text preparation ------------------------------------------------------------------------

_SPELLING = [
    (re.compile(r"[\u2018\u2019\u02bc]"), "'"),
    (re.compile(r"[\u201c\u201d\u201e]"), '"'),
    (re.compile(r"\b(i|I)m\b"), r"\1'm"),
    (re.compile(r"\b(i|I)ve\b"), r"\1've"),
    (re.compile(r"\b(d|D)ont\b"), r"\1on't"),
    (re.compile(r"\b(c|C)ant\b"), r"\1an't"),
    (re.compile(r"\b(d|D)idnt\b"), r"\1idn't"),
    (re.compile(r"\b(d|D)oesnt\b"), r"\1oesn't"),
    (re.compile(r"\bi\b"), "I"),
]
# Quoted text is someone else's words: "He said 'I live in Paris'".
_QUOTED = re.compile(r'"[^"\n]*"|(?<![\w])\'[^\'\n]{3,}?\'(?![\w])|^\s*>.*$', re.M)
_SENTENCE = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"(?<=[.!?;])\s+|\n+"
)
_PRONOUN_SUBJECT = r"(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our|she|he|she's|he's)"
_FIRST_SUBJECT = r"(?:i|i'm|i've|we|we're|we've)"
# Where one thought ends and the next begins: a comma or conjunction before a
# subject ("I live in Leeds and my wife is a vet"), or, in unpunctuated text,
# a first-person subject that starts over ("my name is sam i live in leeds").
_CLAUSE = re.compile(
    rf"(?:,\s*|\s+)(?:(?:and|but|so|also|plus|though|then)\s+)?(?:(?:now|these days|nowadays)\s+)?"
    rf"(?={_PRONOUN_SUBJECT}\b)(?<!\bme and)"
    rf"|(?:,\s*|\s+)(?:and|but)\s+(?=(?:also |now |still )?(?:live|lives|work|works|study|studies|moved|"
    rf"relocated|grew up|love|loves|like|likes|enjoy|hate|hates|prefer|use|is|am)\b)"
    r"|(?:,\s*|\s+and\s+|,\s*and\s+)(?=(?-i:[A-Z][\w'-]+) (?:lives|works|is|moved|studies|relocated)\b)",
    re.I,
)
_BARE_SPLIT_OK = re.compile(rf"^{_FIRST_SUBJECT}\b", re.I)
_BINDS = frozenset(
    "that what where when how if whether than because since as like with to of for about and "
    "but or who which me".split()
)
_ELIDED = re.compile(
    r"^(?:also |now |still )?(?:live|lives|work|works|study|studies|moved|relocated|grew up|love|"
    r"loves|like|likes|enjoy|hate|hates|prefer|use|is|am)\b",
    re.I,
)

_HYPOTHETICAL = re.compile(
    r"^\W*(?:if|suppose|supposing|imagine|what if|let's say|say|pretend|hypothetically|"
    r"assuming|assume|in the (?:film|book|movie|show|story|song|game)|when i grow up|"
    r"maybe|perhaps|probably|i wonder|wouldn't it)\b",
    re.I,
)
_MODAL = re.compile(
    r"^\W*(?:(?:and|but|so)\s+)?(?:i|we)(?:'d|'ll| would| could| might| should| may| must| wish| hope|"
    r" want to| wanna| need to| have to| plan to| am going to| will)\b(?! (?:prefer|rather)\b)",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?:thinks?|says?|said|believes?|reckons?|claims?|told me|tells me|heard|guess|suppose|"
    r"wonder|doubt|feel like|according to|wants me to|asked me)\b",
    re.I,
)
_MOOD = re.compile(
    r"\b(?:i'm|i am|i feel|i felt|feeling)\s+(?:so |very |a bit |really |kind of |a little )?"
    r"(?:tired|busy|sick|bored|happy|sad|fine|ok|okay|good|great|stressed|exhausted|hungry|"
    r"confused|sorry|worried|excited|nervous|late)\b",
    re.I,
)
_NOT_ANYMORE = re.compile(
    r"^(?:actually,?\s*|oh,?\s*|wait,?\s*)?(?:(?:that's|that is|this is|it's|it is)\s+(?:no longer|not)"
    r"\s+(?:true|the case|right|accurate)(?:\s+any ?more)?|(?:not|no) any ?more|scratch that|"
    r"that's (?:changed|outdated|old news))\b",
    re.I,
)
_NOT_ANYMORE_TAIL = re.compile(r",\s*(?:but\s+)?not any ?more\b", re.I)


def _prepare(text: str) -> str:
    for pattern, repl in _SPELLING:
        text = pattern.sub(repl, text)
    return _QUOTED.sub(" ", text)


def _cased(text: str) -> bool:
    """Does the writer use capitals? Then a lower-case word is never a name."""
    for sentence in _SENTENCE.split(text):
        words = re.findall(r"[\w'-]+", sentence)
        for word in words[1:]:
            if word[:1].isupper() and not re.fullmatch(r"I(?:'\w+)?", word):
                return True
    return False


def _clauses(sentence: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _CLAUSE.finditer(sentence):
        piece = sentence[start : m.start()]
        bare = not re.search(r",|\b(?:and|but|so|also|plus|though|then)\s*$", m.group(0), re.I)
        if bare:
            rest = sentence[m.end() :]
            before = piece.split()[-1].lower() if piece.split() else ""
            if not _BARE_SPLIT_OK.match(rest) or before in _BINDS:
                continue
        if not dates.strip(piece).strip(" ,"):
            continue  # "Yesterday, I ran ...": a date alone belongs to what follows
        if piece.strip():
            out.append(piece)
        start = m.end()
    out.append(sentence[start:])
    return [c.strip(" \t-*•>,") for c in out if c.strip(" \t-*•>,")]


# --- slots ------------------------------------------------------------------------------------

# Where an object ends: a comma starts another thought ("I live in Hamburg,
# in a small flat"; "Anna lives in Berlin, she is a teacher").
_OBJECT_END = re.compile(r"\s*[,(:\u2014\u2013]|\s+-\s")
_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|which|who|where|when|although|though|while|now|anymore|"
    r"any ?more|these days|nowadays|currently|right now|at the moment|for (?:a|the|about|\d+|my|work|"
    r"years|months|ages)|as of|please|thanks|btw|lol|too|as well|actually|with|together with|near|"
    r"close to|next to|after|before|if|until|especially|mostly|honestly|though|here|every|"
    r"on (?:weekends|the weekend|sundays|saturdays)|at (?:weekends|the weekend)|at all|most days|all the time|to be|to get|to help|again|instead|lately|anyway|"
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
    "doing having everything anything something nothing one".split()
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

    def org(self, raw: str) -> str:
        raw = _OBJECT_END.split(dates.strip(raw.strip()), maxsplit=1)[0]
        m = re.search(r"\b(?:called|named)\s+(?P<n>.+)", raw, re.I)
        if m:
            return self.name(m.group("n"), loose=True)
        if self.cased:
            got = _proper_run(re.sub(r"^the\s+(?=[A-Z])", "", raw), max_words=4)
            if got and got.split()[0] not in _NON_NAMES - {"The"}:
                return got
            m = re.match(r"the ([a-z]+)\b(?! [a-z]+ (?:team|office|department))", raw)
            if m and m.group(1) not in lx.TIME_WORDS and m.group(1) not in lx.COMMON:
                return m.group(1)
            return ""
        return _lower_run(re.sub(r"^the\s+", "", _cut(raw)), max_words=3)

    def thing(self, raw: str, *, words: int = 6) -> str:
        got = _cut(raw)
        got = re.sub(r"^(?:a good|a nice|a|an|some)\s+", "", got, flags=re.I)
        tokens = got.split()
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


# --- builders ------------------------------------------------------------------------------


def _name(m: re.Match[str], t: _Turn) -> list[Candidate]:
    name = t.name(m.group("o"))
    if not name:
        return []
    name = " ".join(_cap(w) for w in name.split())
    return _keep(_c("name", f"User's name is {name}", name, importance=0.95))


def _greeting_name(m: re.Match[str], t: _Turn) -> list[Candidate]:
    name = t.name(m.group("o")) if t.cased else ""
    if not name or name.lower() in lx.NATIONALITIES or len(name.split()) > 2:
        return []
    return _keep(_c("name", f"User's name is {name}", name, importance=0.75))


def _nickname(m: re.Match[str], t: _Turn) -> list[Candidate]:
    # Another name the user answers to; the name itself stays.
    name = t.name(m.group("o"))
    if not name or len(name.split()) > 2:
        return []
    name = " ".join(_cap(w) for w in name.split())
    return _keep(_c("nickname", f"User goes by {name}", name, importance=0.85))


def _age(m: re.Match[str], t: _Turn) -> list[Candidate]:
    age = int(m.group("o"))
    if not 5 <= age <= 110:
        return []
    return _keep(_c("age", f"User is {age} years old", str(age), importance=0.6))


def _birthday(m: re.Match[str], t: _Turn) -> list[Candidate]:
    d = dates.find(m.group("o"))
    if d is None or not (d.group("md_m") or d.group("dm_m")):
        return []
    month = dates.MONTH_NAMES[dates.month_number(d.group("md_m") or d.group("dm_m")) - 1]
    day = int(d.group("md_d") or d.group("dm_d"))
    if not 1 <= day <= 31:
        return []
    c = _c("birthday", f"User's birthday is {month} {day}", f"{month} {day}", importance=0.8)
    if c:
        c.meta["undated"] = True  # the date is the birthday, not when it became true
    return _keep(c)


def _nationality(m: re.Match[str], t: _Turn) -> list[Candidate]:
    nat = _cap(m.group("o").lower())
    return _keep(_c("nationality", f"User is {nat}", nat, importance=0.7))


def _place_fact(predicate: str, template: str, importance: float) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        place = t.place(m.group("o"))
        if not place:
            return []
        return _keep(_c(predicate, template.format(o=place), place, importance=importance))

    return build


def _born_in(m: re.Match[str], t: _Turn) -> list[Candidate]:
    if re.match(r"\s*(?:\d|the \d|on\b)", m.group("o")):
        return []  # a year or a date, not a place
    return _place_fact("born_in", "User was born in {o}", 0.6)(m, t)


def _works_at(importance: float) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        raw = m.group("o")
        org = t.org(raw)
        if not org or org.lower() in {"myself", "home"}:
            return []
        out = _keep(_c("works_at", f"User works at {org}", org, importance=importance))
        rest = re.search(r"\bas (?:a|an) (?P<r>.+)", raw, re.I)
        if rest:
            title, _ = t.role(rest.group("r"))
            if title:
                out += _keep(_c("role", f"User is a {title}", title, importance=0.8))
        return out

    return build


def _role(m: re.Match[str], t: _Turn) -> list[Candidate]:
    title, rest = t.role(m.group("o"))
    if not title:
        return []
    out = _keep(_c("role", f"User is a {title}", title, importance=0.8))
    at = re.match(r"\s*(?:at|for|with)\s+(?P<org>.+)", rest, re.I)
    if at:
        org = t.org(at.group("org"))
        if org:
            out += _keep(_c("works_at", f"User works at {org}", org, importance=0.8))
    inside = re.match(r"\s*in\s+(?P<p>.+)", rest, re.I)
    if inside:
        place = t.place(inside.group("p"))
        if place:
            # "I'm a nurse in Leeds": most likely where they live, not certain.
            out += _keep(_c("lives_in", f"User lives in {place}", place, importance=0.7))
    return out


def _studies(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = m.group("o")
    at = re.search(r"\s+at\s+(?P<u>.+)$", raw, re.I)
    area = _cut(raw[: at.start()] if at else raw)
    area = re.sub(r"\s+in the (?:evenings?|mornings?)$", "", area, flags=re.I)
    out: list[Candidate] = []
    if area and not re.match(
        r"(?:the|a|an|for|hard|it|that|this|part-time|full-time|abroad|online|remotely)\b",
        area,
        re.I,
    ):
        if len(area.split()) <= 4:
            out += _keep(_c("studies", f"User studies {area}", area, importance=0.7))
    if at:
        uni = t.org(at.group("u"))
        if uni:
            out += _keep(_c("studies_at", f"User studies at {uni}", uni, importance=0.75))
    return out


def _studies_at(m: re.Match[str], t: _Turn) -> list[Candidate]:
    return _school_at(m.group("o"), t)


def _school_at(raw: str, t: _Turn) -> list[Candidate]:
    uni = t.org(raw)
    return _keep(_c("studies_at", f"User studies at {uni}", uni, importance=0.75)) if uni else []


def _school(m: re.Match[str], t: _Turn) -> list[Candidate]:
    # "I go to X" is a school only when X says so.
    if not re.search(
        r"\b(?:school|high|college|university|uni|academy|institute|polytechnic)\b",
        m.group("o"),
        re.I,
    ):
        return []
    raw = re.sub(r"^the\s+(?=University|College|School)", "", m.group("o").strip())
    return _school_at(raw, t)


def _graduated(m: re.Match[str], t: _Turn) -> list[Candidate]:
    org = t.org(m.group("o"))
    return _keep(_c("graduated_from", f"User graduated from {org}", org)) if org else []


def _relation_name(m: re.Match[str], t: _Turn) -> list[Candidate]:
    rel = lx.RELATIONS.get(m.group("rel").lower(), "")
    kind = (
        (lx.PETS.get(m.group("rel").lower()) or lx.BREEDS.get(m.group("rel").lower()))
        if not rel
        else None
    )
    predicate = rel or kind or ""
    if not predicate:
        return []
    name = t.name(m.group("o"), loose=bool(m.groupdict().get("loose")))
    if not name:
        return []
    t.person = name
    label = predicate.replace("_", " ")
    return _keep(_c(predicate, f"User's {label} is {name}", name, importance=0.75 if rel else 0.7))


def _pet_named(m: re.Match[str], t: _Turn) -> list[Candidate]:
    return _pets(m.group("rel").lower(), m.group("o"), t)


# "two cats, Salt and Pepper": the plural names the kind.
_SINGULAR = {
    "cats": "cat",
    "dogs": "dog",
    "kittens": "kitten",
    "puppies": "puppy",
    "rabbits": "rabbit",
}


def _pets(word: str, raw: str, t: _Turn) -> list[Candidate]:
    word = _SINGULAR.get(word, word)
    kind = lx.PETS.get(word) or lx.BREEDS.get(word) or lx.RELATIONS.get(word)
    if not kind:
        return []
    names = re.split(r"\s+(?:and|&)\s+|,\s*", raw.strip())
    out: list[Candidate] = []
    for raw in names[:3]:
        name = t.name(raw, loose=True)
        if name:
            out += _keep(
                _c(kind, f"User's {kind.replace('_', ' ')} is {name}", name, importance=0.7)
            )
    return out


def _partner(predicate: str) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        name = t.name(m.group("o"))
        if not name:
            return []
        t.person = name
        return _keep(_c(predicate, f"User's {predicate} is {name}", name, importance=0.8))

    return build


def _person_fact(m: re.Match[str], t: _Turn) -> list[Candidate]:
    """Facts about someone else: "my sister Anna lives in Porto", "Ben works
    at Airbus", "she is a teacher"."""
    out: list[Candidate] = []
    rel_word = (m.group("rel") or "").lower()
    rel = lx.RELATIONS.get(rel_word, "")
    if rel_word and not rel:
        # A pet's home or job is not a fact worth keeping; its name is.
        pet = lx.PETS.get(rel_word) or lx.BREEDS.get(rel_word)
        name = t.name(m.group("name")) if pet and m.group("name") else ""
        return (
            _keep(_c(pet, f"User's {pet} is {name}", name, importance=0.7)) if pet and name else []
        )
    name = t.name(m.group("name")) if m.group("name") else ""
    if m.group("name") and not name:
        return []
    if m.group("pron"):
        subject = t.person
    elif m.group("who"):
        subject = t.name(m.group("who"))
        if not subject or not t.cased:
            return []
    elif name:
        subject = name
        out += _keep(_c(rel, f"User's {rel.replace('_', ' ')} is {name}", name, importance=0.75))
    else:
        subject = "my " + rel.replace("_", " ")
    if not subject:
        return []
    t.person = subject
    verb = m.group("verb").lower()
    raw = m.group("o")
    if verb.endswith(("is", "'s")) or verb.startswith(("is a", "is now", "'s")):
        title, rest = t.role(raw)
        if not title:
            return out
        out += _keep(_about(subject, "role", title))
        inside = re.match(r"\s*in\s+(?P<p>.+)", rest, re.I)
        if inside:
            place = t.place(inside.group("p"))
            if place:
                out += _keep(_about(subject, "lives_in", place))
        return out
    if verb.startswith(("live", "moved", "relocated", "is based", "is living")):
        place = t.place(raw)
        if place:
            out += _keep(_about(subject, "lives_in", place))
    elif verb.startswith("work"):
        org = t.org(raw)
        if org:
            out += _keep(_about(subject, "works_at", org))
    elif verb.startswith(("stud", "is studying")):
        org = t.org(raw)
        if org:
            out += _keep(_about(subject, "studies_at", org))
    return out


def _likes(predicate: str, *, kind: str = "preference", importance: float = 0.6) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        out: list[Candidate] = []
        for item in t.things(m.group("o")):
            if predicate != "prefers" and item.lower().startswith(("to ", "it ")):
                continue
            verb = {"likes": "likes", "dislikes": "dislikes", "prefers": "prefers"}[predicate]
            out += _keep(
                _c(predicate, f"User {verb} {item}", item, kind=kind, importance=importance)
            )
        return out

    return build


def _prefers(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = re.split(r"\s+(?:over|to|rather than|than|instead of)\s+", m.group("o"), maxsplit=1)[0]
    item = t.thing(raw)
    if not item:
        return []
    return _keep(_c("prefers", f"User prefers {item}", item, kind="preference", importance=0.8))


def _coffee(m: re.Match[str], t: _Turn) -> list[Candidate]:
    item = f"{m.group('a').lower()} {m.group('n').lower()}"
    return _keep(_c("prefers", f"User prefers {item}", item, kind="preference", importance=0.7))


def _favorite(m: re.Match[str], t: _Turn) -> list[Candidate]:
    what = m.group("what").lower().strip()
    raw = re.split(r"\s+(?:from|at|by|in)\s+the\b", m.group("o"), maxsplit=1)[0]
    item = t.thing(raw)
    if not item or len(what.split()) > 3:
        return []
    return _keep(
        _c(
            "favorite_" + re.sub(r"\W+", "_", what),
            f"User's favorite {what} is {item}",
            item,
            kind="preference",
            importance=0.7,
        )
    )


def _used_to(predicate: str) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        raw = m.group("o")
        if predicate == "lives_in":
            items = [t.place(raw)]
        elif predicate == "works_at":
            items = [t.org(raw)]
        elif predicate == "role":
            items = [t.role(raw)[0]]
        elif predicate == "diet":
            items = [lx.DIETS.get(raw.split()[0].lower(), "")] if raw.split() else []
        else:
            items = t.things(raw)
        items = [i for i in items if i]
        if items:
            t.recent = items[0]
        return [_retraction(predicate, i) for i in items]

    return build


def _diet(m: re.Match[str], t: _Turn) -> list[Candidate]:
    diet = lx.DIETS.get(m.group("d").lower())
    if not diet:
        return []
    return _keep(_c("diet", f"User is {diet}", diet, importance=0.8))


def _diet_named(m: re.Match[str], t: _Turn) -> list[Candidate]:
    diet = m.group("o")
    if diet.lower() in {"strict", "new", "special", "healthy", "balanced", "normal"}:
        return []
    return _keep(_c("diet", f"User follows a {diet} diet", diet, importance=0.8))


def _no_diet(m: re.Match[str], t: _Turn) -> list[Candidate]:
    diet = lx.DIETS.get(m.group("d").lower())
    return [_retraction("diet", diet)] if diet else []


def _allergy(m: re.Match[str], t: _Turn) -> list[Candidate]:
    return [
        c
        for item in t.things(m.group("o"))
        if len(item.split()) <= 3
        for c in _keep(_c("allergic_to", f"User is allergic to {item}", item, importance=0.85))
    ]


def _allergy_noun(m: re.Match[str], t: _Turn) -> list[Candidate]:
    item = m.group("o").lower()
    if item in lx.COMMON:
        return []
    return _keep(_c("allergic_to", f"User is allergic to {item}", item, importance=0.85))


def _intolerance(m: re.Match[str], t: _Turn) -> list[Candidate]:
    item = m.group("o").lower()
    return _keep(_c("intolerant_to", f"User is intolerant to {item}", item, importance=0.8))


def _condition(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = m.group("o")
    cond = lx.CONDITION_ADJECTIVES.get(raw.lower(), raw)
    return _keep(_c("condition", f"User has {cond}", cond, importance=0.8))


def _avoids(m: re.Match[str], t: _Turn) -> list[Candidate]:
    item = _cut(m.group("o"))
    words = item.lower().split()
    if not words or len(words) > 2 or words[0] in lx.COMMON or words[0] in _DEICTIC:
        return []
    if words[0] in {
        "another",
        "any",
        "much",
        "that",
        "this",
        "out",
        "breakfast",
        "lunch",
        "dinner",
    }:
        return []
    return _keep(_c("avoids", f"User does not eat or drink {item}", item, importance=0.7))


def _instruction(body: str) -> Candidate | None:
    body = re.sub(r"^(?:please\s+|,\s*)+", "", body.strip()).rstrip(".! ")
    body = re.sub(
        r",?\s+(?:from now on|going forward|in (?:the )?future|please)$", "", body, flags=re.I
    )
    words = body.split()
    if len(words) < 2:
        return None
    first = words[0].lower()
    second = words[1].lower().strip(",.;:!")
    if first in {"is", "are", "was", "will", "the", "a", "an", "mind", "again", "ever"}:
        return None
    if first in {"always", "never"} and second in {
        "the",
        "a",
        "an",
        "mind",
        "again",
        "ever",
        "been",
        "was",
        "is",
        "have",
        "had",
        "thought",
        "seen",
        "say",
    }:
        return None
    return _c(
        "instruction",
        f"Standing instruction: {_cap(body)}",
        body,
        kind="instruction",
        importance=0.85,
    )


_INSTRUCTION = re.compile(
    r"^(?:please\s+|ok(?:ay)?,?\s+)?(?P<a>(?:always|never)\b.+)"
    r"|^(?:please\s+)?(?:and\s+)?(?:from now on|going forward|moving forward|in (?:the )?future|"
    r"henceforth|for future reference)[,:]?\s+(?P<b>.+)"
    r"|^(?:and\s+)?i(?:'d like| want| would like) you to (?P<c>(?:always|never)\b.+)",
    re.I,
)


def _project(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = m.group("o")
    called = re.search(r"\b(?:called|named)\s+(?P<n>.+)", raw, re.I)
    if called:
        name = t.name(called.group("n"), loose=True)
        if not name and t.cased:
            name = _proper_run(called.group("n"), max_words=4)
    elif t.cased:
        name = _proper_run(raw, max_words=3)
        if name and name.split()[0] in _NON_NAMES:
            name = ""
    else:
        name = ""
    if not name:
        return []
    return _keep(_c("project", f"User is working on {name}", name, importance=0.7))


def _tool(raw: str, t: _Turn) -> str:
    raw = re.sub(r"^(?:a|an|the|my|our)\s+", "", raw.strip(), flags=re.I)
    if t.cased:
        got = _proper_run(raw, max_words=3)
        return "" if not got or got.split()[0] in _NON_NAMES else got
    word = re.match(r"[\w+#.-]+", raw)
    return lx.TOOLS.get(word.group(0).lower().rstrip("."), "") if word else ""


def _uses(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = _OBJECT_END.split(m.group("o").strip(), maxsplit=1)[0]
    parts = re.split(r"\s+(?:and|&)\s+|,\s*", raw) if m.groupdict().get("many") else [raw]
    out: list[Candidate] = []
    for part in parts:
        tool = _tool(part, t)
        if tool:
            out += _keep(_c("uses", f"User uses {tool}", tool, importance=0.6))
    return out


def _uses_many(m: re.Match[str], t: _Turn) -> list[Candidate]:
    out: list[Candidate] = []
    for part in re.split(r"\s+(?:and|&)\s+|,\s*", m.group("o").strip()):
        tool = _tool(part, t)
        if tool:
            out += _keep(_c("uses", f"User uses {tool}", tool, importance=0.6))
    return out


def _learning(m: re.Match[str], t: _Turn) -> list[Candidate]:
    raw = re.sub(
        r"^(?:to (?:play|speak|use|cook|make|code in) )?(?:the )?", "", m.group("o"), flags=re.I
    )
    got = _proper_run(raw, max_words=2, connect=False) if t.cased else ""
    if not got:
        word = re.match(r"([a-z][\w-]+)\b", raw)
        if word and word.group(1) not in lx.COMMON and not word.group(1).endswith("ing"):
            got = word.group(1)
    if not got or got.split()[0] in _NON_NAMES:
        return []
    return _keep(_c("learning", f"User is learning {got}", got, importance=0.6))


_TOPICS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"\b(?:my (?:job|work|employer|company|workplace|office)|where i work)\b", re.I),
        "works_at",
    ),
    (
        re.compile(
            r"\b(?:where i live|where i'm based|my (?:old |new )?(?:address|home|flat|apartment|city|house))\b",
            re.I,
        ),
        "lives_in",
    ),
    (re.compile(r"\bmy (?:job title|role|position)\b", re.I), "role"),
    (re.compile(r"\bmy diet\b", re.I), "diet"),
    (re.compile(r"\bmy age\b|\bhow old i am\b", re.I), "age"),
    (re.compile(r"\bmy birthday\b", re.I), "birthday"),
    (re.compile(r"\bmy allerg(?:y|ies)\b", re.I), "allergic_to"),
    (re.compile(r"\bmy nickname\b", re.I), "nickname"),
    (re.compile(r"\bmy studies\b|\bwhat i study\b", re.I), "studies"),
]
_FORGET = re.compile(
    r"^(?:please\s+|(?:can|could) you\s+)?forget\s+(?:(?:what|everything|all)\s+(?:that\s+)?i\s+"
    r"(?:said|told you|mentioned|wrote)\s+about|about|everything about)\s+(?P<t>.+)",
    re.I,
)
_FORGET_THAT = re.compile(r"^(?:please\s+)?forget\s+that\s+(?P<c>.+)", re.I)


# The patterns, most specific first: a span one explains is not read again by
# a later, more general one ("I used to live in Paris" is no home).
PATTERNS: list[tuple[str, re.Pattern[str], Builder]] = [
    # retractions
    (
        "live reside",
        re.compile(
            rf"\b(?:i|we) (?:no longer|don't|do not) (?:live|reside) in {_O}(?= any ?more|$)", re.I
        ),
        _used_to("lives_in"),
    ),
    (
        "live reside",
        re.compile(rf"\b(?:i|we) no longer (?:live|reside) in {_O}", re.I),
        _used_to("lives_in"),
    ),
    (
        "live reside",
        re.compile(rf"\b(?:i|we) used to (?:live|reside) in {_O}", re.I),
        _used_to("lives_in"),
    ),
    (
        "work",
        re.compile(
            rf"\bi (?:no longer work (?:at|for)|(?:don't|do not) work (?:at|for) (?=.*any ?more)|"
            rf"used to work (?:at|for)){_O}",
            re.I,
        ),
        _used_to("works_at"),
    ),
    ("no longer", re.compile(rf"\b{_I_AM} no longer (?:at|with) {_O}", re.I), _used_to("works_at")),
    (
        "quit left lost fired laid",
        re.compile(
            r"\bi (?:quit|left|lost) my (?:job|position)\b|\bi (?:got fired|was fired|got laid off|was laid off)\b",
            re.I,
        ),
        lambda m, t: [_retraction("works_at", "")],
    ),
    (
        "quit",
        re.compile(r"^(?:so |well |and )?i (?:just |finally )?quit\W*$", re.I),
        lambda m, t: [_retraction("works_at", "")],
    ),
    (
        "quit left",
        re.compile(
            r"\bi (?:quit|left) (?!my\b|smoking|drinking|social|school|home|early|the\b)(?P<o>[^.;!?]+)",
            re.I,
        ),
        lambda m, t: [_retraction("works_at", o)] if (o := t.org(m.group("o"))) else [],
    ),
    (
        "no longer not",
        re.compile(
            rf"\b{_I_AM} (?:no longer (?:a|an)|not (?:a|an)) (?=.*\b(?:any ?more|no longer)\b|){_O}",
            re.I,
        ),
        lambda m, t: (
            [_retraction("role", r)]
            if (r := t.role(m.group("o"))[0])
            and re.search(r"no longer|any ?more", m.group(0), re.I)
            else []
        ),
    ),
    ("used to be", re.compile(rf"\bi used to be (?:a|an) {_O}", re.I), _used_to("role")),
    (
        "no longer not",
        re.compile(
            rf"\b{_WE_ARE} (?:no longer|not) (?:a |an )?(?P<d>{_DIET})\b(?=.*\b(?:any ?more)\b|)",
            re.I,
        ),
        lambda m, t: _no_diet(m, t) if re.search(r"no longer|any ?more", m.string, re.I) else [],
    ),
    (
        "being",
        re.compile(rf"\bi (?:stopped|quit) being (?:a |an )?(?P<d>{_DIET})\b", re.I),
        _no_diet,
    ),
    (
        "used to be",
        re.compile(rf"\bi used to be (?:a |an )?(?P<o>(?:{_DIET}))\b", re.I),
        _used_to("diet"),
    ),
    (
        "allergic",
        re.compile(rf"\b{_I_AM} no longer allergic to {_O}", re.I),
        lambda m, t: [_retraction("allergic_to", i) for i in t.things(m.group("o"))],
    ),
    (
        "have",
        re.compile(rf"\bi (?:don't|do not) have (?:a|an) (?P<p>{_PET}) any ?more\b", re.I),
        lambda m, t: [_retraction(lx.PETS[m.group("p").lower()], "")],
    ),
    (
        "like love enjoy",
        re.compile(
            r"\bi (?:no longer |(?:don't|do not) (?=(?:like|love|enjoy) [^.;!?]+ any ?more))"
            rf"(?:like|love|enjoy) {_O}",
            re.I,
        ),
        _used_to("likes"),
    ),
    (
        "used to",
        re.compile(rf"\bi used to (?:really )?(?:love|like|enjoy|adore) {_O}", re.I),
        _used_to("likes"),
    ),
    (
        "used to",
        re.compile(rf"\bi used to (?:really )?(?:hate|dislike|detest) {_O}", re.I),
        _used_to("dislikes"),
    ),
    # identity
    ("name", re.compile(rf"\bmy (?:full )?(?:name is|name's) {_NAME}", re.I), _name),
    ("called", re.compile(rf"\b{_I_AM} called {_NAME}", re.I), _name),
    (
        "name's",
        re.compile(rf"^(?:(?:hi|hey|hello)(?: there)?[,!.]*\s+)?name's {_NAME}", re.I),
        _name,
    ),
    (
        "i'm",
        re.compile(
            r"^(?:hi|hello|hey)(?: there| all| everyone)?[,!.]*\s+i'm (?P<o>[^.;!?]+)", re.I
        ),
        _greeting_name,
    ),
    (
        "call go by nickname know me",
        re.compile(
            r"\b(?:(?:you can |just |please )?call me|i go by|(?:everyone|everybody|people|most people|"
            r"(?:my )?friends|my family|my mates) (?:just )?(?:call|calls) me|my nickname is|people know me as) "
            + _NAME,
            re.I,
        ),
        _nickname,
    ),
    (
        "i'm i am turned",
        re.compile(
            rf"\b(?:{_I_AM}|i (?:just |recently )?turned) (?P<o>\d{{1,3}})"
            r"(?= years? old| yrs? old| y/?o\b|\s*$|\s*[,.!;]| and\b| now\b| so\b| but\b| this\b| last\b| in\b)",
            re.I,
        ),
        _age,
    ),
    (
        "birthday bday b-day",
        re.compile(r"\bmy (?:birthday|bday|b-day)(?:'s| is)(?: on)? (?P<o>[^.;!?]+)", re.I),
        _birthday,
    ),
    ("born", re.compile(r"\bi was born on (?P<o>[^.;!?]+)", re.I), _birthday),
    (
        "i'm i am",
        re.compile(
            rf"^(?:and |also )?{_I_AM} (?:half[- ])?(?P<o>{_NAT})\b(?! (?:food|cuisine|wine|beer|films?|music|breakfast))",
            re.I,
        ),
        _nationality,
    ),
    # partners and people
    (
        "married wed",
        re.compile(rf"\b{_I_AM} (?:married to|(?:now )?wed to) {_O}", re.I),
        _partner("spouse"),
    ),
    ("married wed", re.compile(r"\bi (?:married|wed) (?P<o>[^.;!?]+)", re.I), _partner("spouse")),
    ("engaged", re.compile(rf"\b{_I_AM} engaged to {_O}", re.I), _partner("fiance")),
    (
        "dating seeing going out",
        re.compile(rf"\bi(?:'ve| have)? been (?:dating|seeing|going out with) {_O}", re.I),
        _partner("partner"),
    ),
    (
        "got have adopted rescued",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:got|have|adopted|rescued|got us) (?:two|three|2|3) "
            r"(?P<rel>cats|dogs|kittens|puppies|rabbits)[,:]? (?P<o>[^.;!?]+)",
            re.I,
        ),
        _pet_named,
    ),
    (
        "have got adopted rescued own brought",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:just )?(?:have|got|adopted|rescued|own|brought home) (?:a|an) "
            rf"(?:\w+ )?(?P<rel>{_BREED}|{_PET}|{_REL})(?: (?:named|called)|,? (?:his|her|its) name is) (?P<o>[^.;!?]+)",
            re.I,
        ),
        _pet_named,
    ),
    (
        "lives moved relocated based living works working studies studying is 's",
        re.compile(
            r"^(?:(?:and|but|so|also|oh|well|btw)\s+)*"
            rf"(?:(?:my|our) {_MOD}(?P<rel>{_REL}|{_PET}|{_BREED})(?:,? (?P<name>[\w'-]+(?: [\w'-]+)?),?)?|(?P<pron>she|he)|"
            r"(?P<who>[\w'-]+(?: [\w'-]+)?))"
            rf"(?: {_ADV}|(?='))(?P<verb>lives in|lives|moved to|relocated to|is based in|is living in|works (?:at|for)|"
            r"is working (?:at|for)|studies at|is studying at|is (?:now )?(?:a|an)|'s (?:now )?(?:a|an)) "
            r"(?P<o>[^.;!?]+)",
            re.I,
        ),
        _person_fact,
    ),
    (
        "my our",
        re.compile(
            rf"\b(?:my|our) {_MOD}(?P<rel>{_REL}|{_PET}|{_BREED})(?:'s name is| is called| is named| is|,)? {_NAME}",
            re.I,
        ),
        _relation_name,
    ),
    (
        "my our",
        re.compile(rf"\b(?P<o>[\w'-]+) is (?:my|our) (?P<rel>{_REL})\b", re.I),
        _relation_name,
    ),
    # education before work: "I'm a student at X" is a school, not a job
    (
        "student undergrad postgrad fresher",
        re.compile(
            rf"\b{_I_AM} (?:a |an )?(?:[\w'-]+ ){{0,2}}(?:student|undergrad|undergraduate|postgrad|"
            rf"postgraduate|fresher) at {_O}",
            re.I,
        ),
        _studies_at,
    ),
    ("go to attend", re.compile(rf"\bi (?:go to|attend) {_O}", re.I), _school),
    ("graduated", re.compile(rf"\bi graduated from {_O}", re.I), _graduated),
    (
        "study studying major reading doing taking",
        re.compile(
            rf"\b(?:i (?:study|major in)|{_I_AM} (?:studying|majoring in)(?: for a degree in)?|"
            rf"{_I_AM} (?:doing|taking) (?:a |an |my )?(?:master'?s|masters|phd|doctorate|degree|"
            rf"bachelor'?s|ba|bsc|msc|ma|mba|course)(?: degree)? in|{_I_AM} reading(?= [^.;!?]* at\b)) {_O}",
            re.I,
        ),
        _studies,
    ),
    # work and home
    (
        "i'm i am work as become my job working as",
        re.compile(
            rf"\b(?:{_I_AM}(?: now| currently)? (?:a|an)|i work as (?:a|an)|i(?:'ve| have) become (?:a|an)|"
            rf"my job is(?: a| an)?|i(?:'m| am) working as (?:a|an)) {_O}",
            re.I,
        ),
        _role,
    ),
    (
        "work employ",
        re.compile(
            rf"\b(?:(?:i|we)(?: now| both| still| currently)? work (?:at|for)|{_I_AM} (?:now )?working (?:at|for)|i(?:'ve| have) been working (?:at|for)|"
            rf"{_I_AM} employed (?:at|by)|my employer is) {_O}",
            re.I,
        ),
        _works_at(0.8),
    ),
    (
        "joined job started starting",
        re.compile(
            rf"\b(?:i(?:'ve| have)? (?:just |recently |finally )?joined|i got a (?:new )?job (?:at|with)|"
            rf"i (?:just |recently )?started (?:a new job |working |my new job )?at|"
            rf"(?:new job[!.,]* )?starting (?:at|with)|^(?:just )?(?:started|joined) (?:at|with)) {_O}",
            re.I,
        ),
        _works_at(0.75),
    ),
    (
        "live reside living based moved relocated home",
        re.compile(
            rf"\b(?:(?:i|we)(?: now| both| still)? (?:live|reside)|{_WE_ARE} (?:now |currently )?(?:living|based)|"
            rf"(?:i|we)(?:'ve| have) been living|"
            rf"(?:i|we)(?:'ve| have)? (?:just |recently |finally |now |also )*(?:moved|relocated)"
            rf"(?: back| over| here)?(?: from [^,.;!?]+?)?|my home is|home is) (?:in|to)? ?{_O}",
            re.I,
        ),
        _place_fact("lives_in", "User lives in {o}", 0.8),
    ),
    (
        "moved into",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:just |recently |finally )?moved into (?:a|an|our|my) "
            rf"(?:new )?(?:\w+ )?(?:place|flat|house|home|apartment) in {_O}",
            re.I,
        ),
        _place_fact("lives_in", "User lives in {o}", 0.75),
    ),
    (
        "home",
        re.compile(rf"^home is {_O}", re.I),
        _place_fact("lives_in", "User lives in {o}", 0.75),
    ),
    (
        "from grew up",
        re.compile(rf"\b(?:{_I_AM} (?:originally )?from|i come from|i grew up in) {_O}", re.I),
        _place_fact("from", "User is from {o}", 0.6),
    ),
    ("born", re.compile(rf"\bi was born in {_O}", re.I), _born_in),
    # health
    ("allergic", re.compile(rf"\b{_WE_ARE} (?:\w+ly )?allergic to {_O}", re.I), _allergy),
    (
        "allergy",
        re.compile(
            r"\bi have (?:a |an )?(?:severe |mild |bad |serious )?(?P<o>[a-z-]+) allergy\b", re.I
        ),
        _allergy_noun,
    ),
    (
        "intolerant",
        re.compile(rf"\b{_I_AM} (?P<o>lactose|gluten|fructose|histamine|dairy) intolerant\b", re.I),
        _intolerance,
    ),
    (
        "gone been become turned went",
        re.compile(
            rf"\b(?:i|we)(?:'ve| have)? (?:gone|been|become|turned|went) (?P<d>{_DIET})\b", re.I
        ),
        _diet,
    ),
    (
        "i'm i am we're we are",
        re.compile(
            rf"\b{_WE_ARE}(?: now| also| fully| strictly| both| mostly)? (?:a |an )?(?P<d>{_DIET})\b"
            r"(?! (?:restaurant|food|recipes?|options?|place|dish|menu|friendly))",
            re.I,
        ),
        _diet,
    ),
    (
        "diet",
        re.compile(
            r"\b(?:i(?:'m| am) on an?|i (?:follow|keep|eat) an?) (?P<o>[\w-]+) diet\b", re.I
        ),
        _diet_named,
    ),
    (
        "have suffer diagnosed live with",
        re.compile(
            rf"\bi (?:have|suffer from|was diagnosed with|live with)(?: (?:mild|severe|chronic|bad))? (?P<o>{_COND})\b",
            re.I,
        ),
        _condition,
    ),
    ("i'm i am", re.compile(rf"\b{_I_AM} (?:a )?(?P<o>{_COND_ADJ})\b", re.I), _condition),
    (
        "eat drink",
        re.compile(rf"\bi (?:don't|do not|can't|cannot|never) (?:eat|drink) {_O}", re.I),
        _avoids,
    ),
    # projects and tools
    (
        "building developing making creating writing working designing launching",
        re.compile(
            rf"\b{_WE_ARE}(?: currently| also| still| now)? (?:building|developing|making|creating|writing|"
            rf"working on|designing|launching) {_O}",
            re.I,
        ),
        _project,
    ),
    (
        "project",
        re.compile(
            rf"\bmy (?:side |pet |hobby |current |latest |new |main )?project is {_O}", re.I
        ),
        _project,
    ),
    (
        "called named",
        re.compile(
            rf"\b(?:i|we) (?:maintain|run|founded|started|built|created|wrote) (?=[^.;!?]*\b(?:called|named)\b){_O}",
            re.I,
        ),
        _project,
    ),
    (
        "use",
        re.compile(rf"\b(?:i|we)(?: mostly| mainly| also| now| still| only| both)? use {_O}", re.I),
        _uses,
    ),
    (
        "switched migrated",
        re.compile(rf"\bi(?:'ve| have) (?:just )?(?:switched|migrated) to {_O}", re.I),
        _uses,
    ),
    (
        "code program develop deploy",
        re.compile(
            rf"\b(?:i|we) (?:mostly |mainly )?(?:code|program|develop|write code|deploy) (?:in|on|to) {_O}",
            re.I,
        ),
        _uses_many,
    ),
    ("stack", re.compile(rf"\b(?:my|our) (?:tech |main |usual )?stack is {_O}", re.I), _uses_many),
    (
        "learning",
        re.compile(rf"\b{_WE_ARE} (?:currently |also |slowly )?learning {_O}", re.I),
        _learning,
    ),
    # preferences
    (
        "my coffee my tea",
        re.compile(
            r"\bi (?:like|take|drink|have) my (?P<n>coffee|tea) (?P<a>black|white|strong|weak|sweet)\b",
            re.I,
        ),
        _coffee,
    ),
    (
        "hate dislike detest stand like enjoy fan into loathe",
        re.compile(
            r"\b(?:i (?:really |absolutely |truly |kind of |kinda |genuinely )?(?:hate|dislike|detest|"
            r"can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|loathe)|"
            rf"{_I_AM} (?:not|never) (?:a |much of a )?(?:big |huge )?fan of|{_I_AM} not (?:really )?into) {_O}",
            re.I,
        ),
        _likes("dislikes"),
    ),
    (
        "prefer",
        re.compile(
            rf"\b(?:i(?:'d| would)? (?:really |much |strongly |generally |usually |always )?prefer) {_O}",
            re.I,
        ),
        _prefers,
    ),
    (
        "drink eat",
        re.compile(rf"\bi (?:now |only |mostly |just )+(?:drink|eat) {_O}", re.I),
        _prefers,
    ),
    (
        "favorite favourite",
        re.compile(r"\bmy favou?rite (?P<what>[\w ]{2,30}?) (?:is|are) " + _O, re.I),
        _favorite,
    ),
    (
        "love like enjoy adore fan into obsessed",
        re.compile(
            r"(?<!would )(?<!'d )\b(?:i (?:really |absolutely |truly |just |also |genuinely |kinda |kind of )?"
            r"(?:love|like|enjoy|adore)|i(?:'ve| have) always (?:loved|liked|enjoyed)|"
            rf"{_I_AM} (?:really |so |very )?(?:into|obsessed with)|"
            rf"(?:{_I_AM} )?(?:a )?(?:big |huge |massive )fan of|{_I_AM} a fan of) {_O}",
            re.I,
        ),
        _likes("likes"),
    ),
]


# Each pattern's key words, split once: a clause must contain one of them.
_NEEDS = {needs: tuple(needs.split()) for needs, _, _ in PATTERNS}


# --- events and plans -----------------------------------------------------------------------

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
    when = dates.resolve(m, clause, now=t.now)
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
    weak = lx.WEAK_EVENT_VERBS.get(verb)
    if weak and not re.search(weak, body, re.I):
        return None
    # A past-tense happening: a bare "in March" is the last March.
    when = dates.resolve(m, clause, now=t.now, past=True)
    if when is not None and when.date() > t.now.date():
        return None
    key = _event_key(body)
    if not key:
        return None
    return Candidate(
        text=clause.rstrip(".!?"),
        kind="event",
        subject=USER,
        predicate="event",
        object=key,
        importance=0.5,
    )


# --- the extractor ----------------------------------------------------------------------------


def _clause_facts(clause: str, t: _Turn) -> list[Candidate]:
    found: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    low = clause.lower()
    for needs, pattern, build in PATTERNS:
        # A cheap test first: a pattern whose words are absent cannot match.
        if not any(w in low for w in _NEEDS[needs]):
            continue
        for m in pattern.finditer(clause):
            if any(start <= m.start() and m.end() <= end for start, end in taken):
                continue
            built = build(m, t)
            if built:
                taken.append((m.start(), m.end()))
                found.extend(built)
    return found


def _forget(sentence: str, t: _Turn) -> list[Candidate] | None:
    m = _FORGET.match(sentence)
    if m:
        topic = m.group("t")
        for pattern, predicate in _TOPICS:
            if pattern.search(topic):
                return [_retraction(predicate, "")]
        rel = re.match(rf"my ({_REL}|{_PET})\b", topic, re.I)
        if rel:
            word = rel.group(1).lower()
            return [_retraction(lx.RELATIONS.get(word) or lx.PETS[word], "")]
        return []
    m = _FORGET_THAT.match(sentence)
    if m:
        facts: list[Candidate] = []
        for clause in _clauses(m.group("c")):
            facts += _clause_facts(clause, t)
        return [
            _retraction(c.predicate, c.object, subject=c.subject) for c in facts if not c.retract
        ]
    return None


_WHO = re.compile(r"\b((?-i:[A-Z])[\w'-]+),? who (?=(?:lives|works|is|moved|studies)\b)")


def _inherit(clause: str, previous: str) -> str:
    """ "and works at Telefonica" after "my friend Sara lives in Madrid"."""
    if not _ELIDED.match(clause):
        return clause
    if re.match(rf"^{_FIRST_SUBJECT}\b", previous, re.I):
        return "I " + clause
    m = re.match(rf"^(?:my|our) {_MOD}(?:{_REL})(?:,? (?-i:([A-Z][\w'-]+)))?", previous, re.I)
    if m:
        return f"{m.group(1) or m.group(0)} {clause}"
    m = re.match(r"^(?-i:([A-Z][\w'-]+)) (?:lives|works|moved|is|studies)\b", previous)
    if m:
        return f"{m.group(1)} {clause}"
    return clause


def extract(text: str, *, now: datetime) -> list[Candidate]:
    """Candidate facts in one user turn's text."""
    text = _prepare(text)
    t = _Turn(now=now, cased=_cased(text))
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip(" \t-*•>")
        # "a sister called Nora who lives in Oslo": Nora lives in Oslo.
        sentence = _WHO.sub(r"\1, \1 ", sentence)
        if not sentence:
            continue
        if sentence.rstrip().endswith("?") or _HYPOTHETICAL.match(sentence):
            t.last = []
            continue
        m = _INSTRUCTION.match(sentence)
        if m:
            c = _instruction(m.group("a") or m.group("b") or m.group("c") or "")
            if c is not None:
                _add(t, [c], when=None)
                t.last = []
                continue
        forgotten = _forget(sentence, t)
        if forgotten is not None:
            _add(t, forgotten, when=None)
            t.last = []
            continue
        previous = ""
        skip_next = False
        for clause in _clauses(sentence):
            clause = _inherit(clause, previous)
            previous = clause
            if _NOT_ANYMORE.match(clause):
                _retract_last(t)
                continue
            reported = bool(_REPORTED.search(clause))
            if skip_next or reported or _MODAL.match(clause) or _HYPOTHETICAL.match(clause):
                skip_next = reported or skip_next and not _BARE_SPLIT_OK.match(clause)
                t.last = []
                continue
            if re.match(r"^(?:it|them|that)\b", clause, re.I) is None and t.recent:
                clause = re.sub(
                    r"\b(love|like|enjoy|adore|prefer|hate) (?:it|them)\b",
                    rf"\1 {t.recent}",
                    clause,
                )
            facts = _clause_facts(clause, t)
            if not facts:
                event = _event(clause, t)
                facts = [event] if event else []
            if facts and _NOT_ANYMORE_TAIL.search(clause):
                facts = [
                    c if c.retract else _retraction(c.predicate, c.object, subject=c.subject)
                    for c in facts
                ]
            when = dates.find_date(clause, now=now)
            t.last = _add(t, facts, when=when)
        t.recent = ""
    return t.found


# Predicates whose object is a proper name: guessed from lower-case text they
# are less certain, so they stay out of core memory.
_PROPER_SLOTS = frozenset(
    {"name", "nickname", "lives_in", "works_at", "from", "born_in", "studies_at"}
)


def _add(t: _Turn, facts: list[Candidate], *, when: datetime | None) -> list[Candidate]:
    added: list[Candidate] = []
    for c in facts:
        if not t.cased and c.predicate in _PROPER_SLOTS:
            c.importance = min(c.importance, 0.75)
        if when is not None and c.valid_from is None and not c.meta.pop("undated", False):
            c.valid_from = when
        c.meta.pop("undated", None)
        key = (c.subject.lower(), c.predicate, c.object.lower(), c.retract)
        if key in t.seen:
            continue
        t.seen.add(key)
        t.found.append(c)
        added.append(c)
    return added


def _retract_last(t: _Turn) -> None:
    """ "I work at Google. Actually, that's no longer true.": the facts just
    said are taken back."""
    for c in t.last:
        if c in t.found and not c.retract:
            t.found.remove(c)
            t.seen.discard((c.subject.lower(), c.predicate, c.object.lower(), False))
            r = _retraction(c.predicate, c.object, subject=c.subject)
            t.found.append(r)
    t.last = []

"""The deterministic extractor used when no LLM provider is configured, so
Engram learns offline: identity and names, role, employer, location and moves,
studies, likes/dislikes/preferences, people and relationships, standing
instructions, dated events, and retractions of any of these.

It reads first-person statements of a user turn, one clause at a time, and
writes facts in a canonical third-person form ("User lives in Lisbon"), so two
phrasings of the same fact hash the same and resolve to NOOP.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from memory.services.pipeline.candidates import Candidate

USER = "user"

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r",?\s+(?:and|but|also|plus)\s+(?=(?:i|i'm|i've|my|we)\b)", re.I)
_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|which|who|where|when|although|though|while|now|anymore|"
    r"any ?more|these days|nowadays|currently|right now|for (?:a|the|about|\d+)|as of|"
    r"please|thanks|btw|lol|too|as well|actually|though|with|together with|near|close to|next to)\b.*$",
    re.I,
)
_NAME_STOP = frozenset(
    "and but from now by i im thanks please btw not the a an in at on to lol haha ok".split()
)
_FILLER_ROLES = frozenset(
    "bit little lot big huge total complete fan person morning night early late "
    "good bad great terrible quick slow new old very really".split()
)

_O = r"(?P<o>[^.;!?]+)"
_NAME = r"(?P<o>[\w'.-]+(?:\s+[\w'.-]+){0,2})"
_PROPER = r"(?-i:(?P<o>[A-Z][\w'-]+(?:\s+[A-Z][\w'.-]*)?))"
_REL = (
    r"(?P<rel>wife|husband|partner|spouse|girlfriend|boyfriend|fianc[eé]e?|sister|brother|"
    r"mother|father|mom|mum|dad|son|daughter|friend|best friend|boss|manager|colleague|"
    r"coworker|co-worker|roommate|cousin|aunt|uncle|grandmother|grandfather|grandma|grandpa|"
    r"niece|nephew|teacher|mentor|neighbou?r|dog|cat|pet)"
)


# Where an object ends: a comma starts another thought ("I live in Hamburg,
# in a small flat"; "Anna lives in Berlin, she is a teacher").
_OBJECT_END = re.compile(r"\s*[,(\u2014\u2013]|\s+-\s")


def _clean(value: str) -> str:
    value = _OBJECT_END.split(value.strip(), maxsplit=1)[0]
    value = _STOP.sub("", value.strip())
    undated = _DATE.sub("", value).strip()
    if undated:
        value = undated
    value = re.sub(r"^(?:the city of|a|an)\s+", "", value, flags=re.I)
    return value.strip(" ,:-'\"").rstrip(".!?")


def _clean_name(value: str) -> str:
    words: list[str] = []
    for word in value.split():
        if word.lower().strip(".,") in _NAME_STOP:
            break
        words.append(word.strip(","))
    return " ".join(words).strip(" .")


def _employer(value: str) -> str:
    # "Initech on the payments team", "Siemens in the Munich office", "Acme as a designer"
    return re.split(r"\s+(?:as|on|in|at|from|since)\s+", value, maxsplit=1, flags=re.I)[0]


def _cap(value: str) -> str:
    return value[:1].upper() + value[1:]


# --- dates ---------------------------------------------------------------------------------

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
_MONTH_RE = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS if len(m) > 3] + ["sept"])
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_DATE = re.compile(
    rf"\b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|\b(?P<rel>yesterday|today|tonight|tomorrow)\b"
    rf"|\b(?P<dir>last|next|this) (?P<unit>week|month|year|{'|'.join(_WEEKDAYS)})\b"
    rf"|\b(?P<ago>\d{{1,3}}) (?P<agounit>days?|weeks?|months?|years?) ago\b"
    rf"|\b(?:on |this )?(?P<wd>{'|'.join(_WEEKDAYS)})\b"
    rf"|\b(?P<md_m>{_MONTH_RE})\.? (?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<md_y>\d{{4}}))?\b"
    rf"|\b(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<dm_m>{_MONTH_RE})\b(?:,? (?P<dm_y>\d{{4}}))?"
    rf"|\bin (?P<y>(?:19|20)\d{{2}})\b",
    re.I,
)
_PAST = re.compile(r"\b(?:was|were|went|did|had|moved|started|met|visited|got|ago|last)\b", re.I)


def _month(token: str) -> int:
    token = token.lower().rstrip(".")
    for name, number in _MONTHS.items():
        if name.startswith(token[:3]):
            return number
    return 1


def find_date(text: str, *, now: datetime) -> datetime | None:
    """The date a clause talks about, resolved against the turn's timestamp."""
    m = _DATE.search(text)
    if m is None:
        return None
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        if m.group("iso"):
            return datetime.fromisoformat(m.group("iso")).replace(tzinfo=now.tzinfo)
        if m.group("rel"):
            offset = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
            return day + timedelta(days=offset[m.group("rel").lower()])
        if m.group("dir"):
            sign = {"last": -1, "next": 1, "this": 0}[m.group("dir").lower()]
            unit = m.group("unit").lower()
            days = {"week": 7, "month": 30, "year": 365}.get(unit, 7)
            return day + timedelta(days=sign * days)
        if m.group("ago"):
            unit = m.group("agounit").lower().rstrip("s")
            days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
            return day - timedelta(days=int(m.group("ago")) * days)
        if m.group("wd"):
            target = _WEEKDAYS.index(m.group("wd").lower())
            delta = target - day.weekday()
            if _PAST.search(text):
                return day + timedelta(days=delta if delta <= 0 else delta - 7)
            return day + timedelta(days=delta if delta >= 0 else delta + 7)
        if m.group("md_m") or m.group("dm_m"):
            month = _month(m.group("md_m") or m.group("dm_m"))
            dom = int(m.group("md_d") or m.group("dm_d"))
            year = int(m.group("md_y") or m.group("dm_y") or day.year)
            return day.replace(year=year, month=month, day=dom)
        if m.group("y"):
            return day.replace(year=int(m.group("y")), month=1, day=1)
    except ValueError:
        return None
    return None


# --- patterns --------------------------------------------------------------------------------

Builder = Callable[[re.Match[str]], list[Candidate]]


def _fact(
    predicate: str,
    text: str,
    obj: str,
    *,
    kind: str = "fact",
    importance: float = 0.7,
    subject: str = USER,
    retract: bool = False,
) -> Candidate | None:
    if not obj or len(obj) > 120:
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


def _name(m: re.Match[str]) -> list[Candidate]:
    name = _clean_name(m.group("o"))
    if not name or not name[0].isalpha():
        return []
    name = " ".join(_cap(w) for w in name.split())
    c = _fact("name", f"User's name is {name}", name, importance=0.95)
    return [c] if c else []


def _nickname(m: re.Match[str]) -> list[Candidate]:
    # Another name the user answers to; the name itself stays.
    name = _clean_name(m.group("o"))
    if not name or not name[0].isalpha():
        return []
    name = " ".join(_cap(w) for w in name.split())
    c = _fact("nickname", f"User goes by {name}", name, importance=0.85)
    return [c] if c else []


def _role(m: re.Match[str]) -> list[Candidate]:
    raw = m.group("o")
    at = re.search(r"\s+(?:at|for|with)\s+(?P<org>.+)$", raw, re.I)
    role = _clean(raw[: at.start()] if at else raw)
    words = role.lower().split()
    if not words or words[0] in _FILLER_ROLES or len(words) > 5:
        return []
    out = [_fact("role", f"User is a {role}", role, importance=0.8)]
    if at:
        org = _clean(at.group("org"))
        out.append(_fact("works_at", f"User works at {org}", org, importance=0.8))
    return [c for c in out if c]


def _simple(
    predicate: str, template: str, *, kind: str = "fact", importance: float = 0.7
) -> Builder:
    def build(m: re.Match[str]) -> list[Candidate]:
        obj = _clean(m.group("o"))
        if predicate == "works_at":
            obj = _employer(obj)
        c = _fact(predicate, template.format(o=obj), obj, kind=kind, importance=importance)
        return [c] if c else []

    return build


def _studies(m: re.Match[str]) -> list[Candidate]:
    raw = m.group("o")
    at = re.search(r"\s+at\s+(?P<u>.+)$", raw, re.I)
    subject_area = _clean(raw[: at.start()] if at else raw)
    out = [_fact("studies", f"User studies {subject_area}", subject_area, importance=0.7)]
    if at:
        uni = _clean(at.group("u"))
        out.append(_fact("studies_at", f"User studies at {uni}", uni, importance=0.75))
    return [c for c in out if c]


def _relationship(m: re.Match[str]) -> list[Candidate]:
    rel = m.group("rel").lower().replace("co-worker", "coworker").replace("mum", "mom")
    rel = rel.replace(" ", "_")
    name = _clean_name(m.group("o"))
    if not name:
        return []
    c = _fact(rel, f"User's {rel.replace('_', ' ')} is {name}", name, importance=0.75)
    return [c] if c else []


def _third_person(m: re.Match[str]) -> list[Candidate]:
    who = m.group("who")
    if who.lower().startswith("my "):
        who = "my " + who[3:].lower()
    verb = m.group("verb").lower()
    predicate, phrase = _THIRD_PERSON[verb]
    obj = _clean(m.group("o"))
    if predicate == "works_at":
        obj = _employer(obj)
    display = _cap(who)
    c = _fact(predicate, f"{display} {phrase} {obj}", obj, subject=who, importance=0.6)
    return [c] if c else []


_THIRD_PERSON = {
    "lives": ("lives_in", "lives in"),
    "moved": ("lives_in", "lives in"),
    "relocated": ("lives_in", "lives in"),
    "works": ("works_at", "works at"),
    "studies": ("studies_at", "studies at"),
}


def _instruction(m: re.Match[str]) -> list[Candidate]:
    body = _cap(m.group("o").strip().rstrip(".!"))
    if len(body.split()) < 2:
        return []
    c = _fact(
        "instruction",
        f"Standing instruction: {body}",
        body,
        kind="instruction",
        importance=0.85,
    )
    return [c] if c else []


def _retract(predicate: str, template: str) -> Builder:
    def build(m: re.Match[str]) -> list[Candidate]:
        obj = _clean(m.groupdict().get("o") or "")
        c = Candidate(
            text=template.format(o=obj).strip(),
            subject=USER,
            predicate=predicate,
            object=obj,
            importance=0.7,
            retract=True,
        )
        return [c]

    return build


_I_AM = r"i(?:'m| am)"
PATTERNS: list[tuple[re.Pattern[str], Builder]] = [
    # retractions first: "I don't live in Lisbon anymore" must not read as a dislike
    (
        re.compile(rf"\bi (?:no longer|don't|do not|didn't) (?:live|reside) in {_O}", re.I),
        _retract("lives_in", "User no longer lives in {o}"),
    ),
    (
        re.compile(
            rf"\bi (?:(?:no longer|don't|do not) work (?:at|for)|(?:quit|left) "
            rf"(?:my job at |my job with |working at |working for )?){_O}",
            re.I,
        ),
        _retract("works_at", "User no longer works at {o}"),
    ),
    (
        re.compile(rf"\b{_I_AM} (?:no longer|not) (?:a|an) {_O}(?= any ?more)", re.I),
        _retract("role", "User is no longer a {o}"),
    ),
    (
        re.compile(
            rf"\bi (?:no longer|(?:don't|do not) (?=(?:like|love|enjoy) [^.;!?]+ any ?more))"
            rf"(?:like|love|enjoy) {_O}",
            re.I,
        ),
        _retract("likes", "User no longer likes {o}"),
    ),
    # identity
    (
        re.compile(rf"\b(?:my name is|my name's|{_I_AM} called) {_NAME}", re.I),
        _name,
    ),
    (
        re.compile(
            rf"\b(?:call me|i go by|people call me|everyone calls me|my friends call me) {_NAME}",
            re.I,
        ),
        _nickname,
    ),
    (
        re.compile(r"\b" + _I_AM + r" (?P<o>\d{1,3}) years? old\b", re.I),
        _simple("age", "User is {o} years old", importance=0.6),
    ),
    (
        re.compile(rf"\b{_I_AM} (?:a )?(?:big |huge |massive )?fan of {_O}", re.I),
        _simple("likes", "User likes {o}", kind="preference", importance=0.6),
    ),
    (
        re.compile(rf"\b{_I_AM} (?:married to|engaged to) {_PROPER}", re.I),
        _simple("spouse", "User is married to {o}", importance=0.8),
    ),
    # studies before role: "I'm a student at X" is a school, not a job
    (
        re.compile(rf"\b(?:{_I_AM} (?:a |an )?(?:\w+ )?student at|i (?:go to|attend)) {_O}", re.I),
        _simple("studies_at", "User studies at {o}", importance=0.75),
    ),
    (
        re.compile(rf"\bi (?:study|major in|(?:am|'m) (?:studying|majoring in)) {_O}", re.I),
        _studies,
    ),
    (
        re.compile(
            rf"\b(?:{_I_AM} (?:a|an)|i work as (?:a |an )?|my job is (?:a |an )?){_O}", re.I
        ),
        _role,
    ),
    (
        re.compile(
            rf"\b(?:i(?:'m| am)? (?:now )?(?:work|working) (?:at|for)|i(?:'ve| have)? (?:just )?joined|"
            rf"{_I_AM} employed (?:at|by)|i got a (?:new )?job (?:at|with)|my employer is|"
            rf"i started (?:a new job |working )?at) {_O}",
            re.I,
        ),
        _simple("works_at", "User works at {o}", importance=0.8),
    ),
    (
        re.compile(
            rf"\b(?:i (?:now )?(?:live|reside)|{_I_AM} (?:now )?(?:living|based|staying)|"
            rf"i(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated)(?: back)?|"
            rf"my home is) (?:in|to) {_O}",
            re.I,
        ),
        _simple("lives_in", "User lives in {o}", importance=0.8),
    ),
    (
        re.compile(rf"\b(?:{_I_AM} (?:originally )?from|i come from|i grew up in) {_O}", re.I),
        _simple("from", "User is from {o}", importance=0.6),
    ),
    (
        re.compile(rf"\bi was born in {_O}", re.I),
        _simple("born_in", "User was born in {o}", importance=0.6),
    ),
    # preferences
    (
        re.compile(
            rf"\bi (?:really |absolutely |truly |kind of |kinda )?(?:hate|dislike|detest|"
            rf"can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy) {_O}",
            re.I,
        ),
        _simple("dislikes", "User dislikes {o}", kind="preference", importance=0.6),
    ),
    (
        re.compile(rf"\bi (?:really |much |strongly |always )?prefer {_O}", re.I),
        _simple("prefers", "User prefers {o}", kind="preference", importance=0.8),
    ),
    (
        re.compile(r"\bmy favou?rite (?P<what>[\w ]{2,30}?) (?:is|are) " + _O, re.I),
        lambda m: [
            c
            for c in [
                _fact(
                    "favorite_" + re.sub(r"\W+", "_", m.group("what").lower()),
                    f"User's favorite {m.group('what').lower()} is {_clean(m.group('o'))}",
                    _clean(m.group("o")),
                    kind="preference",
                    importance=0.7,
                )
            ]
            if c
        ],
    ),
    (
        re.compile(
            rf"(?<!would )(?<!'d )\bi (?:really |absolutely |truly |just )?(?:love|like|enjoy|adore) {_O}",
            re.I,
        ),
        _simple("likes", "User likes {o}", kind="preference", importance=0.6),
    ),
    # people
    (
        re.compile(rf"\bmy {_REL}(?:'s name is| is called| is named| is|,)? {_PROPER}", re.I),
        _relationship,
    ),
    (
        re.compile(rf"\bi have an? {_REL} (?:named|called) {_PROPER}", re.I),
        _relationship,
    ),
    (
        re.compile(
            r"\b(?P<who>(?-i:[A-Z][a-z]+)|my " + _REL.replace("?P<rel>", "?:") + r")"
            r"(?: (?:now|just|recently|has|have))* (?P<verb>lives|moved|relocated|works|studies) "
            r"(?P<prep>in|to|at|for) " + _O,
            re.I,
        ),
        _third_person,
    ),
    # standing instructions
    (
        re.compile(
            r"^(?:please\s+)?(?P<o>(?:always|never)\b.+)"
            r"|\b(?:from now on|going forward|in (?:the )?future),?\s+(?P<o2>.+)"
            r"|\bi want you to (?P<o3>(?:always|never)\b.+)"
            r"|^(?:please\s+)?(?P<o4>(?:answer|reply|respond|write|talk|speak) (?:to me )?"
            r"(?:in|using) .+)",
            re.I,
        ),
        lambda m: _instruction(_FirstGroup(m)),  # type: ignore[arg-type]
    ),
]


class _FirstGroup:
    """Adapts a match with alternative `o*` groups to one `o` group."""

    def __init__(self, m: re.Match[str]) -> None:
        self._m = m

    def group(self, name: str) -> str:
        for key in ("o", "o2", "o3", "o4"):
            value = self._m.groupdict().get(key)
            if value:
                return value
        return ""


# "I'm tired today" is a mood, not an event worth remembering.
_MOOD = re.compile(
    r"\b(?:i'm|i am|i feel|i felt|feeling)\s+(?:so |very |a bit |really |kind of )?"
    r"(?:tired|busy|sick|bored|happy|sad|fine|ok|okay|good|great|stressed|exhausted|hungry)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|we|our|me)\b", re.I)


def _clauses(text: str) -> list[str]:
    out: list[str] = []
    for sentence in _SENTENCE.split(text):
        for clause in _CLAUSE.split(sentence):
            clause = clause.strip(" \t-*•>")
            if clause:
                out.append(clause)
    return out


def extract(text: str, *, now: datetime) -> list[Candidate]:
    """Candidate facts in one user turn's text."""
    found: list[Candidate] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for clause in _clauses(text):
        clause_found: list[Candidate] = []
        taken: list[tuple[int, int]] = []
        for pattern, build in PATTERNS:
            for m in pattern.finditer(clause):
                # A span already explained by an earlier (more specific)
                # pattern is not read again by a more general one.
                if any(start <= m.start() and m.end() <= end for start, end in taken):
                    continue
                built = build(m)
                if built:
                    taken.append((m.start(), m.end()))
                    clause_found.extend(built)
        when = find_date(clause, now=now)
        if (
            not clause_found
            and when is not None
            and _FIRST_PERSON.search(clause)
            and not _MOOD.search(clause)
        ):
            words = clause.split()
            if 4 <= len(words) <= 60:
                clause_found.append(
                    Candidate(
                        text=clause.rstrip(".!?"),
                        kind="event",
                        subject=USER,
                        predicate="event",
                        object="",
                        importance=0.5,
                    )
                )
        for c in clause_found:
            if when is not None and c.valid_from is None:
                c.valid_from = when
            key = (c.subject.lower(), c.predicate, c.object.lower(), c.retract)
            if key in seen:
                continue
            seen.add(key)
            found.append(c)
    return found

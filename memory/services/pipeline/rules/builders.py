"""Builders: one per kind of fact, turning a pattern's match into candidates
after checking each slot."""

from __future__ import annotations

import re

from memory.services.pipeline.candidates import Candidate
from memory.services.pipeline.rules import dates
from memory.services.pipeline.rules import lexicon as lx
from memory.services.pipeline.rules.slots import (
    _DEICTIC,
    _NON_NAMES,
    _OBJECT_END,
    Builder,
    _about,
    _c,
    _cap,
    _cut,
    _keep,
    _proper_run,
    _retraction,
    _Turn,
)


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


def _works_at(importance: float, *, common: bool = True) -> Builder:
    def build(m: re.Match[str], t: _Turn) -> list[Candidate]:
        raw = m.group("o")
        org = t.org(raw, common=common)
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
        items = t.things(m.group("o"))
        for item in items:
            if predicate != "prefers" and item.lower().startswith(("to ", "it ")):
                continue
            verb = {"likes": "likes", "dislikes": "dislikes", "prefers": "prefers"}[predicate]
            # The object is the clean key; the text keeps what the user said
            # about it ("on weekends", "in the mountains"), which is what
            # recall finds the fact by.
            said = _said_with(m.group("o"), item) if len(items) == 1 else ""
            out += _keep(
                _c(predicate, f"User {verb} {item}{said}", item, kind=kind, importance=importance)
            )
        return out

    return build


def _said_with(raw: str, item: str) -> str:
    """What follows `item` in `raw` up to the end of its thought, at most a
    few words: " in the mountains on weekends"."""
    at = raw.lower().find(item.lower())
    if at < 0:
        return ""
    rest = raw[at + len(item) :]
    rest = _OBJECT_END.split(rest, maxsplit=1)[0]
    rest = re.split(
        r"\s+(?:but|because|so|though|although|while|and i|and my)\b", rest, maxsplit=1
    )[0]
    words = rest.split()
    return " " + " ".join(words[:8]).rstrip(".!?") if words else ""


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
    verb = second if first in {"always", "never"} else first
    if verb not in lx.IMPERATIVES:
        return None
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
            if name and name.split()[0] in _NON_NAMES - {"The"}:
                name = ""
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

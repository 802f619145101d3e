"""Sentences a person would write from stored facts about one subject, for
the deterministic paths of reflection (no LLM):

    Anna lives in Lyon, works as a teacher and has a dog named Max.
    The user likes hiking and jazz and dislikes crowds.

A fact whose text opens with its subject ("Anna lives in Lyon", "User is a
nurse") gives a clause (what follows the name); clauses with the same list
verb share it ("likes hiking and jazz"); a possessive ("User's sister is
Anna") becomes a sentence of its own, and so does a fact whose text does not
name its subject first. Preferences get their own sentence after the rest.
Nothing is invented: every clause is the wording of one fact."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.models import MemoryItem

# Verbs whose objects read well as one list: "likes hiking and jazz".
LIST_VERBS = frozenset(
    "likes loves enjoys adores dislikes hates prefers avoids speaks plays has owns uses "
    "eats drinks reads watches visited visits mentions studies collects".split()
)
PREFERENCE_VERBS = frozenset(
    "likes loves enjoys adores dislikes hates prefers avoids wants".split()
)
MAX_CLAUSES = 6
MAX_SEPARATE = 3  # possessive and standalone sentences
MAX_CLAUSE_CHARS = 120
MAX_CHARS = 400


@dataclass(frozen=True)
class _Piece:
    form: str  # clause | own | sentence
    text: str
    preference: bool


def _clean(text: str) -> str:
    return " ".join(text.split()).strip().rstrip(".!?;,: ").strip()


_MODALS = frozenset("can could will would should must might may shall".split())
_ADVERBS = frozenset("also really usually often always never still just mostly rarely".split())
_FIRST = re.compile(r"^(?:i\s+am|i['’]m|i\s+have|i['’]ve|i)\s+(.*)$", re.I)
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "were": "was"}


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in ("don't", "don’t"):
        return "doesn't"
    if low in _MODALS or low.endswith(("ed", "n't", "n’t")) or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _from_first_person(text: str) -> str | None:
    """ "I dislike crowds" -> "dislikes crowds", "I'm vegetarian" -> "is
    vegetarian"; None when the text does not open with "I"."""
    m = _FIRST.match(text)
    if m is None:
        return None
    opening = text[: m.start(1)].lower().split()
    rest = m.group(1).split()
    if not rest:
        return None
    if opening[-1] in ("am", "i'm", "i’m"):
        return "is " + " ".join(rest)
    if opening[-1] in ("have", "i've", "i’ve"):
        return "has " + " ".join(rest)
    i = 0
    while i < len(rest) - 1 and rest[i].lower() in _ADVERBS:
        i += 1
    if rest[i].lower() in ("do", "did") and i + 1 < len(rest) and rest[i + 1].lower() == "not":
        rest[i] = "does" if rest[i].lower() == "do" else "did"
    else:
        rest[i] = _third_person(rest[i])
    return " ".join(rest)


def _piece(item: MemoryItem, lead: re.Pattern[str], *, user: bool = False) -> _Piece | None:
    text = _clean(item.text)
    if not text:
        return None
    if item.predicate == "mentions" and item.object:
        return _Piece("clause", f"often mentions {_clean(item.object)}", False)
    said = _from_first_person(text) if user else None
    if said is not None and said[:1].islower():
        verb = said.split()[0]
        preference = item.kind == MemoryItem.Kind.PREFERENCE or verb in PREFERENCE_VERBS
        return _Piece("clause", said, preference)
    m = lead.match(text)
    if m is None:
        return _Piece("sentence", text[0].upper() + text[1:], False)
    rest = text[m.end() :]
    if re.match(r"^['’]s\s+\S", rest):
        return _Piece("own", rest.split(None, 1)[1], False)
    # "Anna K. has a dog": the lead may stop before an initial's period.
    rest = rest.strip(" ,:").lstrip(". ")
    if not rest or not rest[0].islower():
        return _Piece("sentence", text[0].upper() + text[1:], False)
    verb = rest.split()[0]
    preference = item.kind == MemoryItem.Kind.PREFERENCE or verb in PREFERENCE_VERBS
    return _Piece("clause", rest, preference)


def _and(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _join_clauses(clauses: Sequence[str]) -> str:
    """Clauses in order, those opening with the same list verb folded into one."""
    groups: list[tuple[str, list[str]]] = []
    for clause in clauses:
        verb, _, rest = clause.partition(" ")
        if verb == "often" and " " in rest:  # "often mentions Priya"
            adverb, (verb, _, rest) = verb, rest.partition(" ")
            verb = f"{adverb} {verb}" if verb in LIST_VERBS else clause
            rest = rest if verb != clause else ""
        # Only short objects share a verb: "likes hiking and jazz", never a
        # list of clauses.
        if verb.split()[-1] in LIST_VERBS and rest and len(rest.split()) <= 4 and "," not in rest:
            for gverb, objects in groups:
                if gverb == verb:
                    objects.append(rest)
                    break
            else:
                groups.append((verb, [rest]))
        else:
            groups.append((clause, []))
    return _and([f"{verb} {_and(objects)}" if objects else verb for verb, objects in groups])


def _rank(item: MemoryItem) -> tuple[float, int, int]:
    return (item.importance, item.frequency, item.pk)


def describe(
    *, display: str, lead: re.Pattern[str], items: Sequence[MemoryItem], user: bool = False
) -> str:
    """A few sentences about one subject from its strongest facts, told in
    the order they were learned, at most MAX_CHARS long; "" when none of
    them can be phrased."""
    name = display[:1].upper() + display[1:]
    chosen: list[tuple[int, _Piece]] = []
    seen: set[str] = set()
    clauses = separate = 0
    for item in sorted(items, key=_rank, reverse=True):
        piece = _piece(item, lead, user=user)
        if piece is None or piece.text.lower() in seen or len(piece.text) > MAX_CLAUSE_CHARS:
            continue
        if piece.form == "clause":
            if clauses >= MAX_CLAUSES:
                continue
            clauses += 1
        else:
            if separate >= MAX_SEPARATE:
                continue
            separate += 1
        seen.add(piece.text.lower())
        chosen.append((item.pk, piece))
    chosen.sort(key=lambda c: c[0])
    pieces = [p for _, p in chosen]
    facts = [p.text for p in pieces if p.form == "clause" and not p.preference]
    prefs = [p.text for p in pieces if p.form == "clause" and p.preference]
    sentences = [f"{name} {_join_clauses(group)}." for group in (facts, prefs) if group]
    sentences += [
        f"{name}'s {p.text}." if p.form == "own" else f"{p.text}."
        for p in pieces
        if p.form != "clause"
    ]
    out = ""
    for sentence in sentences:
        if out and len(out) + 1 + len(sentence) > MAX_CHARS:
            break
        out = f"{out} {sentence}".strip()
    return out[:MAX_CHARS]

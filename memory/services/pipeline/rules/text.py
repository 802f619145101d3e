"""Text preparation for the rule-based extractor: spelling, quoted text,
sentences and clauses, and the regex fragments the patterns share."""

from __future__ import annotations

import re

from memory.services.pipeline.rules import dates
from memory.services.pipeline.rules import lexicon as lx

USER = "user"


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
_CALLED_QUOTED = re.compile(r'\b(called|named|titled)\s+"([^"\n]{1,60}?)[.!?,]?"', re.I)
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
# Verbs whose subject may be left out after "and" ("... and works at X"); not
# "love" or "like", which are as often nouns ("energy and love everywhere").
_ELIDED = re.compile(
    r"^(?:also |now |still )?(?:live|lives|work|works|study|studies|moved|relocated|grew up)\b",
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
    # "a project called "Finding Home"": a quoted name is a name, not a quotation.
    text = _CALLED_QUOTED.sub(r"\1 \2", text)
    # Anything else quoted is someone else's words: gone, leaving a boundary.
    return _QUOTED.sub(" ; ", text)


def _cased(text: str) -> bool:
    """Does the writer use capitals at all (beyond "I")? Then a lower-case word
    is never a name; in all-lower-case text it may be."""
    return any(
        word[:1].isupper() and not re.fullmatch(r"I(?:'\w+)?", word)
        for word in re.findall(r"[\w'-]+", text)
    )


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

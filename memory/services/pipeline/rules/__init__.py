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
against tests/data/extraction_corpus.jsonl by `manage.py eval_extraction`.

The package: text.py (spelling, quoted text, sentences and clauses, the
regex fragments patterns share), slots.py (what may fill a slot; the
per-turn state), builders.py (a match to candidates), patterns.py (the
ordered patterns with their key words), events.py (events and plans),
dates.py and lexicon.py; this module runs them over a turn."""

from __future__ import annotations

import re
from datetime import datetime

from memory.services.pipeline.candidates import Candidate
from memory.services.pipeline.rules import dates, project
from memory.services.pipeline.rules import lexicon as lx
from memory.services.pipeline.rules.builders import _INSTRUCTION, _instruction
from memory.services.pipeline.rules.events import _event
from memory.services.pipeline.rules.patterns import _FORGET, _FORGET_THAT, _NEEDS, _TOPICS, PATTERNS
from memory.services.pipeline.rules.slots import _retraction, _Turn
from memory.services.pipeline.rules.text import (
    _BARE_SPLIT_OK,
    _ELIDED,
    _FIRST_SUBJECT,
    _HYPOTHETICAL,
    _MOD,
    _MODAL,
    _NOT_ANYMORE,
    _NOT_ANYMORE_TAIL,
    _PET,
    _REL,
    _REPORTED,
    _SENTENCE,
    USER,
    _cased,
    _clauses,
    _prepare,
)

find_date = dates.find_date  # the date a clause talks about, importable from here

retraction = _retraction  # "User no longer works at X" as a retraction candidate
__all__ = ["PATTERNS", "USER", "extract", "find_date", "retraction"]


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
            if not facts:
                facts = project.facts(clause)
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

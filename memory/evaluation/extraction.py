"""Precision and recall of an extractor against a labelled corpus.

The corpus is JSON lines, one sentence each:

    {"text": "My sister Anna lives in Porto.", "class": "people",
     "facts": [{"subject": "user", "predicate": "sister", "object": "Anna", "retract": false},
               {"subject": "Anna", "predicate": "lives_in", "object": "Porto", "retract": false}]}

A sentence with no durable fact has `"facts": []` (class "none"). An
extracted fact is right when one labelled fact of its sentence has the same
subject (case-insensitive, "my mum" = "my mom"), predicate, object after
normalization (case, punctuation, accents and articles ignored) and retract
flag. Events and plans are keyed by what happened, in the extractor's own
words, so for them the object matches when the content words overlap by at
least EVENT_OVERLAP (Jaccard). Each labelled fact matches one extracted fact
at most.

Precision counts extracted facts (a wrong fact is one no label explains),
recall counts labelled facts; both per fact class (`fact_class`) and overall.
`manage.py eval_extraction` prints them and tests/memory/test_extraction_corpus.py
holds the extractor to the thresholds below."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memory.services.pipeline.candidates import Candidate

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "extraction_corpus.jsonl"
# The instant the corpus is read at: relative dates ("next Friday", "in March")
# resolve against it, and plans are what lies after it.
CORPUS_NOW = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)

MIN_PRECISION = 0.97
MIN_RECALL = 0.85
MIN_CLASS_PRECISION = 0.95
EVENT_OVERLAP = 0.6

_ARTICLES = frozenset("a an the my our your his her their".split())
_EVENT_STOP = _ARTICLES | frozenset(
    "i we me us to of for in on at with and am is are was were be been going will "
    "just finally really".split()
)
_SUBJECT_SYNONYMS = {
    "mum": "mom",
    "mother": "mom",
    "grandma": "grandmother",
    "neighbor": "neighbour",
}

CLASSES = (
    "identity",
    "work",
    "home",
    "education",
    "people",
    "pets",
    "health",
    "preference",
    "instruction",
    "project",
    "event",
    "retraction",
)
_CLASS_OF = {
    **dict.fromkeys(
        ("name", "nickname", "age", "birthday", "from", "born_in", "nationality"), "identity"
    ),
    **dict.fromkeys(("role", "works_at"), "work"),
    "lives_in": "home",
    **dict.fromkeys(("studies", "studies_at", "graduated_from"), "education"),
    **dict.fromkeys(
        (
            "dog",
            "cat",
            "pet",
            "rabbit",
            "parrot",
            "hamster",
            "tortoise",
            "horse",
            "guinea_pig",
            "fish",
            "bird",
            "snake",
            "lizard",
            "gecko",
            "ferret",
            "budgie",
        ),
        "pets",
    ),
    **dict.fromkeys(("allergic_to", "intolerant_to", "diet", "condition", "avoids"), "health"),
    **dict.fromkeys(("likes", "dislikes", "prefers"), "preference"),
    "instruction": "instruction",
    **dict.fromkeys(("project", "uses", "learning"), "project"),
    **dict.fromkeys(("event", "plan"), "event"),
}


@dataclass(frozen=True)
class Fact:
    subject: str
    predicate: str
    object: str
    retract: bool = False

    def __str__(self) -> str:
        sign = "NOT " if self.retract else ""
        return f"{sign}{self.subject} {self.predicate} {self.object!r}"


@dataclass
class Example:
    text: str
    facts: list[Fact]
    label: str = "none"


@dataclass
class Counts:
    extracted: int = 0
    correct: int = 0
    labelled: int = 0
    found: int = 0

    @property
    def precision(self) -> float:
        return self.correct / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0


@dataclass
class Report:
    sentences: int = 0
    overall: Counts = field(default_factory=Counts)
    by_class: dict[str, Counts] = field(default_factory=dict)
    # (sentence, fact) pairs
    wrong: list[tuple[str, Fact]] = field(default_factory=list)
    missed: list[tuple[str, Fact]] = field(default_factory=list)

    def failures(self) -> list[str]:
        """What keeps this report under the thresholds; empty when it passes."""
        out = []
        if self.overall.precision < MIN_PRECISION:
            out.append(f"overall precision {self.overall.precision:.3f} < {MIN_PRECISION}")
        if self.overall.recall < MIN_RECALL:
            out.append(f"overall recall {self.overall.recall:.3f} < {MIN_RECALL}")
        for name, counts in sorted(self.by_class.items()):
            if counts.precision < MIN_CLASS_PRECISION:
                out.append(f"{name} precision {counts.precision:.3f} < {MIN_CLASS_PRECISION}")
        return out


def fact_class(fact: Fact) -> str:
    if fact.retract:
        return "retraction"
    if norm_subject(fact.subject) != "user":
        return "people"
    if fact.predicate.startswith("favorite_"):
        return "preference"
    if fact.predicate in _CLASS_OF:
        return _CLASS_OF[fact.predicate]
    return "people"  # a relation of the user's: sister, wife, best_friend, ...


def _plain(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(value: str) -> list[str]:
    return re.findall(r"[^\W_]+", _plain(value))


def norm_subject(value: str) -> str:
    words = [_SUBJECT_SYNONYMS.get(w, w) for w in _words(value)]
    return " ".join(words) or "user"


def norm_object(value: str) -> str:
    return " ".join(w for w in _words(value) if w not in _ARTICLES)


def _event_words(value: str) -> set[str]:
    return {w for w in _words(value) if w not in _EVENT_STOP}


def same_fact(got: Fact, want: Fact) -> bool:
    if (
        got.predicate != want.predicate
        or got.retract != want.retract
        or norm_subject(got.subject) != norm_subject(want.subject)
    ):
        return False
    if got.predicate in ("event", "plan"):
        a, b = _event_words(got.object), _event_words(want.object)
        if not a or not b:
            return a == b
        return len(a & b) / len(a | b) >= EVENT_OVERLAP
    return norm_object(got.object) == norm_object(want.object)


def load(path: Path = DEFAULT_CORPUS) -> list[Example]:
    examples = []
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                facts = [
                    Fact(
                        subject=str(x.get("subject") or "user"),
                        predicate=str(x["predicate"]),
                        object=str(x.get("object") or ""),
                        retract=bool(x.get("retract", False)),
                    )
                    for x in row.get("facts", [])
                ]
                examples.append(
                    Example(text=str(row["text"]), facts=facts, label=row.get("class", "none"))
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
    return examples


def as_fact(c: Candidate) -> Fact:
    return Fact(subject=c.subject, predicate=c.predicate, object=c.object, retract=c.retract)


Extractor = Callable[[str], Iterable[Candidate]]


def evaluate(examples: Iterable[Example], extractor: Extractor) -> Report:
    report = Report(by_class={name: Counts() for name in CLASSES})
    for ex in examples:
        report.sentences += 1
        got = [as_fact(c) for c in extractor(ex.text)]
        unmatched = list(ex.facts)
        for fact in got:
            counts = report.by_class.setdefault(fact_class(fact), Counts())
            counts.extracted += 1
            report.overall.extracted += 1
            hit = next((w for w in unmatched if same_fact(fact, w)), None)
            if hit is None:
                report.wrong.append((ex.text, fact))
                continue
            unmatched.remove(hit)
            counts.correct += 1
            report.overall.correct += 1
        for want in ex.facts:
            counts = report.by_class.setdefault(fact_class(want), Counts())
            counts.labelled += 1
            report.overall.labelled += 1
            if want in unmatched:
                report.missed.append((ex.text, want))
            else:
                counts.found += 1
                report.overall.found += 1
    return report


def rules_extractor(now: datetime = CORPUS_NOW) -> Extractor:
    from memory.services.pipeline import rules

    return lambda text: rules.extract(text, now=now)

"""The candidate fact that extraction produces and resolution decides on."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.search.query import query_terms

# Predicates that hold one value at a time for a subject: a new value
# supersedes the old one instead of sitting next to it.
FUNCTIONAL_PREDICATES = frozenset(
    {
        "name",
        "lives_in",
        "works_at",
        "role",
        "studies_at",
        "studies",
        "age",
        "birthday",
        "nationality",
        "spouse",
        "partner",
        "wife",
        "husband",
        "timezone",
        "language",
        "pronouns",
        "manager",
        "boss",
        "girlfriend",
        "boyfriend",
        "fiance",
        "fiancee",
        "employer",
    }
)

KINDS = ("fact", "preference", "event", "instruction", "insight", "decision", "episode")


@dataclass
class Candidate:
    text: str
    kind: str = "fact"
    subject: str = ""
    predicate: str = ""
    object: str = ""
    importance: float = 0.5
    valid_from: datetime | None = None
    # The user took this back ("I no longer live in Lisbon"): invalidate, don't add.
    retract: bool = False
    # Any, not object: inside this class body `object` names the field above.
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = " ".join(self.text.split())[:2000]
        if self.kind not in KINDS:
            self.kind = "fact"
        # "Anna K." and "Anna K" are one subject: no trailing punctuation.
        self.subject = self.subject.strip().rstrip(".,;:!?")[:200]
        self.predicate = re.sub(r"[^a-z0-9_]+", "_", self.predicate.strip().lower()).strip("_")[
            :100
        ]
        self.object = self.object.strip().rstrip(".!?,;")[:500]
        self.importance = min(1.0, max(0.0, float(self.importance)))

    @property
    def functional(self) -> bool:
        return (
            self.predicate in FUNCTIONAL_PREDICATES
            or self.predicate.startswith("favorite_")
            or bool(self.meta.get("single_valued"))
        )


def content_hash(text: str) -> str:
    """Hash of the normalized wording, for exact-duplicate detection."""
    norm = " ".join(re.findall(r"\w+", text.casefold()))
    return hashlib.sha256(norm.encode()).hexdigest()


def term_set(text: str) -> frozenset[str]:
    return frozenset(query_terms(text))


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of content words; cheap and deterministic."""
    sa, sb = term_set(a), term_set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def spellings(subject: str) -> list[str]:
    """The case variants a subject is stored under: an IN on them uses the
    (space, subject, predicate) index, where a case-insensitive match would
    read every fact of the space (subjects are canonical since identity
    resolution; older rows may differ in case)."""
    return list(dict.fromkeys([subject, subject.lower(), subject.title(), subject.upper()]))

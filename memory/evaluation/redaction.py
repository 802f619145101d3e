"""Recall of redaction over a corpus of secrets, and how often it touches
look-alikes.

The corpus is JSON lines (memory/evaluation/redaction_corpus.py writes the
generated ones; tests/data/redaction_handwritten.jsonl is written by hand):

    {"text": "DB is postgres://app:Tr0ub4dor@db/prod", "kind": "db_password",
     "values": ["Tr0ub4dor"]}
    {"text": "commit 3f786850e387550fdab836ed7e6dc881de23001b",
     "kind": "lookalike:git_sha", "values": []}

A secret line is redacted when none of its values is left in the output:
not whole, and for values of 12 characters or more not as any 10-character
piece either (half a card number is a leak). A look-alike is touched when
the output differs from the input at all. Every line is also checked to
redact idempotently and to keep every non-ASCII character outside its
secrets (emoji, other scripts). `manage.py eval_redaction` prints the
figures and tests/memory/test_redaction_corpus.py holds redaction to the
targets below.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memory.screening.redaction import KINDS, redact

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
CORPORA = {
    "main": DATA / "redaction_corpus.jsonl",
    "heldout": DATA / "redaction_heldout.jsonl",
    "handwritten": DATA / "redaction_handwritten.jsonl",
}
MIN_RECALL = 1.0
MAX_LOOKALIKE_RATE = 0.01
_PIECE = 10


@dataclass(frozen=True)
class Line:
    text: str
    kind: str
    values: tuple[str, ...]

    @property
    def lookalike(self) -> bool:
        return self.kind.startswith("lookalike")


@dataclass
class Report:
    secrets: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)
    lookalikes: Counter[str] = field(default_factory=Counter)
    touched: Counter[str] = field(default_factory=Counter)
    misses: list[tuple[Line, str]] = field(default_factory=list)
    false_positives: list[tuple[Line, str]] = field(default_factory=list)
    not_idempotent: list[Line] = field(default_factory=list)
    text_broken: list[tuple[Line, str]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        total = sum(self.secrets.values())
        return sum(self.redacted.values()) / total if total else 1.0

    @property
    def lookalike_rate(self) -> float:
        total = sum(self.lookalikes.values())
        return sum(self.touched.values()) / total if total else 0.0

    @property
    def passed(self) -> bool:
        return (
            self.recall >= MIN_RECALL
            and self.lookalike_rate <= MAX_LOOKALIKE_RATE
            and not self.not_idempotent
            and not self.text_broken
        )


def load(path: Path) -> list[Line]:
    lines = []
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            row = json.loads(raw)
            kind = str(row["kind"])
            if not kind.startswith("lookalike") and kind not in KINDS:
                raise ValueError(f"{path.name}:{n}: unknown kind {kind!r}")
            lines.append(Line(text=row["text"], kind=kind, values=tuple(row.get("values", []))))
    return lines


def leaked(value: str, output: str) -> bool:
    if value in output:
        return True
    if len(value) >= 12:
        return any(value[i : i + _PIECE] in output for i in range(len(value) - _PIECE + 1))
    return False


def _outside(text: str, values: Iterable[str]) -> str:
    for v in sorted(values, key=len, reverse=True):
        text = text.replace(v, "")
    return text


def _non_ascii(text: str) -> Counter[str]:
    return Counter(ch for ch in text if ord(ch) > 127)


def evaluate(lines: Iterable[Line], redactor: Callable[[str], str] = redact) -> Report:
    report = Report()
    for line in lines:
        out = redactor(line.text)
        if redactor(out) != out:
            report.not_idempotent.append(line)
        if line.lookalike:
            report.lookalikes[line.kind] += 1
            if out != line.text:
                report.touched[line.kind] += 1
                report.false_positives.append((line, out))
            continue
        report.secrets[line.kind] += 1
        if any(leaked(v, out) for v in line.values):
            report.misses.append((line, out))
        else:
            report.redacted[line.kind] += 1
        # Characters outside the secrets survive: emoji and other scripts are
        # never cut or dropped by a rule.
        if _non_ascii(_outside(line.text, line.values)) - _non_ascii(out):
            report.text_broken.append((line, out))
    return report


def evaluate_path(path: Path) -> Report:
    return evaluate(load(path))


def per_kind(report: Report) -> list[tuple[str, int, int]]:
    return [(k, report.redacted[k], report.secrets[k]) for k in sorted(report.secrets)]

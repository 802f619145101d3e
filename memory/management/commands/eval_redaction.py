"""Recall of redaction per kind and the share of look-alikes it touches.

    python manage.py eval_redaction [PATH ...] [--regenerate]

Without PATH it reads the three corpora of memory/evaluation/redaction.py
(the generated main set, the held-out set made with another seed and other
contexts, the hand-written set) and reports each separately. Lists every
missed secret, every touched look-alike, any line whose redaction is not
idempotent or loses characters outside its secrets, and exits 1 when a
corpus is below target (recall 1.0, look-alikes touched <= 1%).
`--regenerate` rewrites the generated corpora first. Reads no database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.evaluation import redaction, redaction_corpus


class Command(BaseCommand):
    help = "Measure secret and PII redaction against the redaction corpora."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path)
        parser.add_argument(
            "--regenerate", action="store_true", help="rewrite the generated corpora first"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["regenerate"]:
            redaction_corpus.main()
        paths = opts["paths"] or list(redaction.CORPORA.values())
        failed = []
        for path in paths:
            try:
                lines = redaction.load(path)
            except (OSError, ValueError) as exc:
                raise CommandError(str(exc)) from None
            started = time.perf_counter()
            report = redaction.evaluate(lines)
            took = time.perf_counter() - started
            self._print(path, report, took, len(lines))
            if not report.passed:
                failed.append(path.name)
        if failed:
            self.stdout.write(f"BELOW TARGET: {', '.join(failed)}")
            raise SystemExit(1)

    def _print(self, path: Path, report: redaction.Report, took: float, n: int) -> None:
        out = self.stdout.write
        secrets, looks = sum(report.secrets.values()), sum(report.lookalikes.values())
        out(
            f"== {path.name}: {n} lines, {took * 1000:.0f} ms ({took * 1e6 / max(n, 1):.0f} µs a line)"
        )
        out(f"{'kind':<20} {'redacted':>8} {'of':>5} {'recall':>7}")
        for kind, hit, total in redaction.per_kind(report):
            out(f"{kind:<20} {hit:>8} {total:>5} {hit / total:>7.3f}")
        out(
            f"{'all secrets':<20} {sum(report.redacted.values()):>8} {secrets:>5} "
            f"{report.recall:>7.3f}  (target {redaction.MIN_RECALL:.2f})"
        )
        out(
            f"look-alikes touched: {sum(report.touched.values())} of {looks} = "
            f"{report.lookalike_rate:.2%}  (target <= {redaction.MAX_LOOKALIKE_RATE:.0%})"
        )
        out(
            f"not idempotent: {len(report.not_idempotent)}; "
            f"text outside secrets broken: {len(report.text_broken)}"
        )
        for line, got in report.misses:
            out(f"  MISSED {line.kind}: {line.text!r}\n      -> {got!r}")
        for line, got in report.false_positives:
            out(f"  TOUCHED {line.kind}: {line.text!r}\n      -> {got!r}")
        for line in report.not_idempotent:
            out(f"  NOT IDEMPOTENT {line.kind}: {line.text!r}")
        for line, got in report.text_broken:
            out(f"  BROKEN {line.kind}: {line.text!r}\n      -> {got!r}")
        out("")

"""Quarantine recall per class and false positives of the injection screen.

    python manage.py eval_screening [--injection PATH --benign PATH] [--quiet]

Without paths, measures the development corpora and the held-out corpora of
tests/data/ (screening_*.jsonl) and reports them separately. Lists every
missed payload and every false positive, and exits non-zero when a corpus is
below the thresholds (memory/evaluation/screening.py). Reads no database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.evaluation import screening


def _show(turns: tuple[str, ...]) -> str:
    text = " || ".join(turns).replace("\n", "\\n")
    return ascii(text[:160])[1:-1]


class Command(BaseCommand):
    help = "Measure the injection screen against payload and benign corpora."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--injection", type=Path, help="payload corpus (JSONL)")
        parser.add_argument("--benign", type=Path, help="benign corpus (JSONL)")
        parser.add_argument("--quiet", action="store_true", help="figures only, no lists")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.perf_counter()
        try:
            if opts["injection"] or opts["benign"]:
                reports = [
                    screening.evaluate(
                        name="given",
                        injection=screening.load(opts["injection"]) if opts["injection"] else [],
                        benign=screening.load(opts["benign"]) if opts["benign"] else [],
                    )
                ]
            else:
                reports = screening.evaluate_default()
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        took = time.perf_counter() - started
        out = self.stdout.write
        texts = sum(r.injection.total + r.benign.total for r in reports)
        out(f"{texts} items screened in {took:.2f} s")
        for report in reports:
            out(f"\n== {report.name} ==")
            out(f"{'class':<16} {'payloads':>8} {'caught':>6} {'recall':>7}")
            for name in sorted(report.by_class):
                c = report.by_class[name]
                out(f"{name:<16} {c.total:>8} {c.flagged:>6} {c.rate:>7.3f}")
            c = report.injection
            out(f"{'overall':<16} {c.total:>8} {c.flagged:>6} {c.rate:>7.3f}")
            b = report.benign
            out(f"benign: {b.total} turns, {b.flagged} flagged, false-positive rate {b.rate:.4f}")
            if len(report.by_batch) > 2:
                out("by batch (payloads caught / benign flagged):")
                for name in sorted(report.by_batch):
                    c = report.by_batch[name]
                    out(f"  {name:<8} {c.flagged:>4} of {c.total:<5} {c.rate:.3f}")
            if opts["quiet"]:
                continue
            out(f"missed payloads ({len(report.misses)}):")
            for ex in report.misses:
                out(f"  [{ex.cls}] {ex.id}: {_show(ex.turns)}")
            out(f"false positives ({len(report.false_positives)}):")
            for ex, reasons in report.false_positives:
                out(f"  [{ex.cls}] {ex.id} {reasons}: {_show(ex.turns)}")
        failures = [f for report in reports for f in report.failures()]
        if failures:
            raise CommandError("below threshold: " + "; ".join(failures))
        out("\nthresholds met")

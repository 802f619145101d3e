"""Precision and recall of the rule-based extractor on a labelled corpus.

    python manage.py eval_extraction [PATH] [--missed]

PATH defaults to tests/data/extraction_corpus.jsonl. Prints precision and
recall per fact class and overall, then every wrong fact (and, with
--missed, every labelled fact not found). Matching and thresholds:
memory/evaluation/extraction.py. Reads no database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.evaluation import extraction


class Command(BaseCommand):
    help = "Measure the rule-based extractor against a labelled corpus."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", type=Path, default=extraction.DEFAULT_CORPUS)
        parser.add_argument("--missed", action="store_true", help="also list facts not found")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            examples = extraction.load(opts["path"])
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        started = time.perf_counter()
        report = extraction.evaluate(examples, extraction.rules_extractor())
        took = time.perf_counter() - started
        out = self.stdout.write
        out(f"{report.sentences} sentences, {took * 1000:.0f} ms")
        out(
            f"{'class':<12} {'extracted':>9} {'correct':>7} {'labelled':>8} {'found':>5}"
            f" {'precision':>9} {'recall':>6}"
        )
        rows = [(name, report.by_class[name]) for name in sorted(report.by_class)]
        for name, c in [*rows, ("overall", report.overall)]:
            out(
                f"{name:<12} {c.extracted:>9} {c.correct:>7} {c.labelled:>8} {c.found:>5}"
                f" {c.precision:>9.3f} {c.recall:>6.3f}"
            )
        out(f"\nwrong facts ({len(report.wrong)}):")
        for text, fact in report.wrong:
            out(f"  {fact}  <- {text}")
        if opts["missed"]:
            out(f"\nmissed facts ({len(report.missed)}):")
            for text, fact in report.missed:
                out(f"  {fact}  <- {text}")
        failures = report.failures()
        out("\n" + ("below threshold: " + "; ".join(failures) if failures else "thresholds met"))

"""Does consolidation cost recall? LoCoMo Recall@k before and after one run.

    python manage.py eval_consolidation /path/to/locomo10.json [--conversations 1-3]

Each conversation is ingested into its own space by memory/evaluation/locomo.py,
its questions are asked, one consolidation run is made over the space (the
environment probe skipped: it is host-level and has nothing to do with
recall), and the same questions are asked again. Prints both tables, the
run reports and the change in Recall@10. Run it with ENGRAM_DATA_DIR pointing
at a scratch directory: it writes spaces into the configured database."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from consolidation import services
from memory.models import MemoryItem


def _live(space: Any) -> int:
    return MemoryItem.objects.filter(
        space=space, status="active", expired_at=None, screen_status="ok"
    ).count()


class Command(BaseCommand):
    help = "Measure LoCoMo Recall@k before and after one consolidation run per conversation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="locomo10.json")
        parser.add_argument("--conversations", default="", help="e.g. 1-5 or 1,3 (default all)")
        parser.add_argument("--k", type=int, default=20, help="results asked per question")
        parser.add_argument("--skip", nargs="+", default=[], metavar="STEP", help="steps to skip")
        parser.add_argument("--json", type=Path, default=None, help="write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        from memory.evaluation import locomo

        try:
            data = locomo.load(opts["path"])
            chosen = locomo.parse_range(opts["conversations"], len(data))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        call_command("migrate", verbosity=0, interactive=False)
        self.stdout.write(f"database: {connection.settings_dict['NAME']}")
        before: list[dict[str, Any]] = []
        after: list[dict[str, Any]] = []
        runs: list[dict[str, Any]] = []
        for number in chosen:
            conv = data[number - 1]
            space = locomo.ingest(number, conv)
            before += locomo.ask(number, conv, space, k=opts["k"])
            live_before = _live(space)
            started = time.perf_counter()
            run = services.run_now(space=space, trigger="cli", skip=["environment", *opts["skip"]])
            seconds = time.perf_counter() - started
            after += locomo.ask(number, conv, space, k=opts["k"])
            report = run.report if run else "not run"
            runs.append(
                {
                    "conv": number,
                    "report": report,
                    "seconds": round(seconds, 2),
                    "live_before": live_before,
                    "live_after": _live(space),
                    "errors": run.errors if run else [],
                }
            )
            self.stdout.write(
                f"conv {number}: {report} ({seconds:.1f}s; live items {live_before} -> {_live(space)})"
            )
        fig_before, fig_after = locomo.summarise(before), locomo.summarise(after)
        for title, figures in (("BEFORE", fig_before), ("AFTER", fig_after)):
            self.stdout.write(f"\n{title} consolidation")
            for line in locomo.table(figures):
                self.stdout.write(line)
        for metric in ("r@10", "r@5", "mrr"):
            b = statistics.fmean(r[metric] for r in before if r["category"] != 5)
            a = statistics.fmean(r[metric] for r in after if r["category"] != 5)
            self.stdout.write(
                f"{metric} (cat 1-4): before {b:.4f}  after {a:.4f}  change {a - b:+.4f}"
            )
        if opts["json"]:
            opts["json"].write_text(
                json.dumps({"before": fig_before, "after": fig_after, "runs": runs}, indent=2)
            )

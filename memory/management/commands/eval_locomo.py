"""Evaluate recall on the public LoCoMo benchmark (locomo10.json).

    python manage.py eval_locomo /path/to/locomo10.json [--conversations 1-5]
        [--chart recall.png] [--json figures.json] [--reuse] [--baseline bm25]

How conversations are ingested and questions scored: memory/evaluation/locomo.py.

The command writes into whatever database the settings point at, so start it
with ENGRAM_DATA_DIR (or ENGRAM_DATABASE_URL) pointing at a scratch location,
never at real data. Each run creates fresh spaces, unless --reuse is given:
then a conversation already ingested into this database by the same pipeline
(same conversation text, same space name) is asked again without ingesting,
which turns a tuning iteration from a minute into seconds.

--baseline bm25 ranks the same turns by plain BM25 instead of recall: an
in-memory SQLite FTS5 index (Porter stemming) with one row per turn holding
"Speaker: text", the query's non-stopword terms ORed, bm25() alone. That is
the baseline the issue's figures were measured with (it reproduces them to
within 0.003); --baseline bm25-text indexes the turn text without the
speaker's name, a weaker reference. Either runs on any database backend
because the index is its own.

--depth asks for 100 results a question and adds a table of where the
evidence turns ranked, per category: in the top 10, just below it, deeper,
or not among the 100 at all (no re-ranking can reach those).

--url evaluates a running Engram over its API instead (start it with ./run,
with this command's ENGRAM_DATA_DIR or ENGRAM_DATABASE_URL, where the spaces
and keys are made): turns go in with POST /turns/batch, the server's worker
runs the pipeline, questions are asked with POST /recall, and the latency
line is the HTTP round trip.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from memory.evaluation import locomo
from memory.models import Space

# Results asked per question with --depth: deep enough to tell evidence that
# ranks just below the top 10 from evidence keyword search never proposes.
DEPTH = 100


class Command(BaseCommand):
    help = "Ingest LoCoMo conversations through the write pipeline and measure recall."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="locomo10.json")
        parser.add_argument("--conversations", default="", help="e.g. 1-5 or 1,3 (default all)")
        parser.add_argument("--chart", type=Path, default=None, help="write Recall@k PNG here")
        parser.add_argument("--json", type=Path, default=None, help="write the figures as JSON")
        parser.add_argument("--k", type=int, default=20, help="results asked per question")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="ask again a conversation this database already holds instead of ingesting it",
        )
        parser.add_argument(
            "--baseline",
            choices=("bm25", "bm25-text"),
            default=None,
            help="rank turns with plain FTS5 BM25 (turn text only) instead of recall",
        )
        parser.add_argument(
            "--url",
            default=None,
            help="evaluate the running server at this URL over its API (it must share this "
            "command's database)",
        )
        parser.add_argument(
            "--depth",
            action="store_true",
            help=f"ask for {DEPTH} results a question and show where the evidence turns ranked, "
            "per category (what a re-ranking could reach, and what it never can)",
        )
        parser.add_argument(
            "--questions",
            type=Path,
            default=None,
            help="write every question with its evidence and the refs found (JSON lines)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        # Checked first: finding out after a long evaluation would waste it.
        if opts["chart"] and not locomo.charts_available():
            raise CommandError(f"--chart: {locomo.CHARTS_HINT}; or run without --chart")
        try:
            data = locomo.load(opts["path"])
            chosen = locomo.parse_range(opts["conversations"], len(data))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if opts["depth"]:
            opts["k"] = max(opts["k"], DEPTH)
            self.stdout.write(f"asking for {opts['k']} results a question (--depth)")
        per_question: list[dict[str, Any]] = []
        ingest_s = 0.0
        if opts["baseline"]:
            speaker = opts["baseline"] == "bm25"
            self.stdout.write(
                "baseline: FTS5 BM25 (porter) over "
                + ("'Speaker: text'" if speaker else "turn text")
                + ", query terms ORed"
            )
            for number in chosen:
                index = locomo.Bm25Turns(data[number - 1], speaker=speaker)
                per_question += locomo.ask(number, data[number - 1], index, k=opts["k"])
        elif opts["url"]:
            self.stdout.write(
                f"server: {opts['url']} (database {connection.settings_dict['NAME']})"
            )
            started = time.perf_counter()
            posted = {n: locomo.post(n, data[n - 1], url=opts["url"]) for n in chosen}
            locomo.drain(list(posted.values()))
            ingest_s = time.perf_counter() - started
            for number in chosen:
                per_question += locomo.ask(number, data[number - 1], posted[number], k=opts["k"])
            self.stdout.write(
                f"posted + the server's pipeline: {ingest_s:.1f}s for {len(chosen)} conversations"
            )
        else:
            call_command("migrate", verbosity=0, interactive=False)
            self.stdout.write(f"database: {connection.settings_dict['NAME']}")
            # Every conversation is ingested before any is asked: the full-text
            # index is shared by all spaces, so asking conversation 1 while 2-10
            # are not in yet would measure a different index than --reuse does.
            spaces: dict[int, Space] = {}
            for number in chosen:
                started = time.perf_counter()
                spaces[number] = locomo.ingest(number, data[number - 1], reuse=opts["reuse"])
                ingest_s += time.perf_counter() - started
            for number in chosen:
                per_question += locomo.ask(number, data[number - 1], spaces[number], k=opts["k"])
            self.stdout.write(f"ingest + pipeline: {ingest_s:.1f}s for {len(chosen)} conversations")
        if opts["questions"]:
            with opts["questions"].open("w") as out:
                for row in per_question:
                    out.write(json.dumps(row) + "\n")
        figures = locomo.summarise(per_question)
        for line in [*locomo.table(figures), locomo.latency_line(per_question)]:
            self.stdout.write(line)
        if opts["depth"]:
            for line in locomo.depth_table(per_question, k=opts["k"]):
                self.stdout.write(line)
        if opts["json"]:
            opts["json"].write_text(json.dumps(figures, indent=2))
        if opts["chart"]:
            locomo.chart(figures, opts["chart"])
            self.stdout.write(f"chart written to {opts['chart']}")

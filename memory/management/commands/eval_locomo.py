"""Evaluate recall on the public LoCoMo benchmark (locomo10.json).

    python manage.py eval_locomo /path/to/locomo10.json [--conversations 1-5]
        [--chart recall.png] [--keep-db]

Each conversation goes into its own space through the real ingestion path:
accept_turns with ref = the dialog id ("D1:3"), ts = the session's date, the
speaker's name in metadata["speaker"]. LoCoMo is two people talking, neither
an assistant, so the first speaker is stored as role "user" and the second as
"assistant": that keeps both roles in use the way an agent transcript would
and the name stays in metadata. The write pipeline is drained in-process by
run_job for every pending IngestJob; then every question is asked through
recall(). A question's Recall@k is the share of its evidence refs found in
source.turn_refs of the top-k results (refs deduplicated in rank order); All@10
is 1 when every evidence ref is in the top 10.

The command runs against a fresh temporary SQLite database unless --database
points elsewhere, so it never touches the operator's data: it must be started
with ENGRAM_DATA_DIR unset or pointing at a scratch directory; see handle().
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from tqdm import tqdm

KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        start=1,
    )
}


def parse_session_date(text: str) -> datetime:
    m = _DATE.search(text or "")
    if not m:
        raise CommandError(f"unrecognised session date {text!r}")
    hour = int(m[1]) % 12 + (12 if m[3].lower() == "pm" else 0)
    return datetime(int(m[6]), _MONTHS[m[5].lower()], int(m[4]), hour, int(m[2]), tzinfo=UTC)


def _range(spec: str, total: int) -> list[int]:
    chosen: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            chosen.extend(range(int(a), int(b) + 1))
        elif part:
            chosen.append(int(part))
    bad = [c for c in chosen if not 1 <= c <= total]
    if bad:
        raise CommandError(f"--conversations {spec!r}: no conversation {bad[0]} (1..{total})")
    return chosen


class Command(BaseCommand):
    help = "Ingest LoCoMo conversations through the write pipeline and measure recall."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="locomo10.json")
        parser.add_argument("--conversations", default="", help="e.g. 1-5 or 1,3 (default all)")
        parser.add_argument("--chart", type=Path, default=None, help="write Recall@k PNG here")
        parser.add_argument("--json", type=Path, default=None, help="write the figures as JSON")
        parser.add_argument("--k", type=int, default=20, help="results asked per question")

    def handle(self, *args: Any, **opts: Any) -> None:
        path: Path = opts["path"]
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        data = json.loads(path.read_text())
        chosen = (
            _range(opts["conversations"], len(data))
            if opts["conversations"]
            else list(range(1, len(data) + 1))
        )
        call_command("migrate", verbosity=0, interactive=False)
        self.stdout.write(f"database: {connection.settings_dict['NAME']}")
        per_question: list[dict[str, Any]] = []
        ingest_s = 0.0
        for number in chosen:
            started = time.perf_counter()
            space = self._ingest(number, data[number - 1])
            ingest_s += time.perf_counter() - started
            per_question += self._ask(number, data[number - 1], space, k=opts["k"])
        self.stdout.write(f"ingest + pipeline: {ingest_s:.1f}s for {len(chosen)} conversations")
        figures = self._report(per_question, chosen)
        if opts["json"]:
            opts["json"].write_text(json.dumps(figures, indent=2))
        if opts["chart"]:
            self._chart(figures, opts["chart"])
            self.stdout.write(f"chart written to {opts['chart']}")

    # --- ingestion ----------------------------------------------------------------------

    def _ingest(self, number: int, conv: dict[str, Any]):  # type: ignore[no-untyped-def]
        from memory.models import IngestJob, Space
        from memory.services.pipeline import run_job
        from memory.services.turns import TurnData, accept_turns

        c = conv["conversation"]
        name = f"locomo-{number}-{int(time.time() * 1000)}"
        space = Space.objects.create(name=name)
        first = c["speaker_a"]
        sessions = sorted(
            (int(key.split("_")[1]) for key in c if re.fullmatch(r"session_\d+", key)),
        )
        batch: list[TurnData] = []
        for s in sessions:
            ts = parse_session_date(c[f"session_{s}_date_time"])
            for turn in c[f"session_{s}"]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    # A shared photo: the caption is what the other person saw.
                    text = f"{text} [shares a photo: {turn['blip_caption']}]"
                batch.append(
                    TurnData(
                        session_id=f"session-{s}",
                        role="user" if turn["speaker"] == first else "assistant",
                        text=text,
                        ts=ts,
                        ref=turn["dia_id"],
                        metadata={"speaker": turn["speaker"]},
                    )
                )
        for i in range(0, len(batch), 500):
            accept_turns(space=space, turns=batch[i : i + 500])
        pending = list(
            IngestJob.objects.filter(space=space, status="pending")
            .order_by("id")
            .values_list("id", flat=True)
        )
        for job_id in tqdm(pending, desc=f"conv {number} pipeline", leave=False):
            run_job(job_id)
        return space

    # --- questions ----------------------------------------------------------------------

    def _ask(
        self, number: int, conv: dict[str, Any], space: Any, *, k: int
    ) -> list[dict[str, Any]]:
        from memory.services.recall import recall

        out = []
        for qa in tqdm(conv["qa"], desc=f"conv {number} questions", leave=False):
            evidence = {
                e.strip() for e in qa.get("evidence", []) for e in e.split(";") if e.strip()
            }
            if not evidence:
                continue
            response = recall(space=space, query=qa["question"], k=k)
            refs: list[str] = []
            for result in response.results:
                for ref in result.source.turn_refs:
                    if ref not in refs:
                        refs.append(ref)
            row: dict[str, Any] = {
                "conv": number,
                "category": qa["category"],
                "ms": response.took_ms,
            }
            for cutoff in KS:
                row[f"r@{cutoff}"] = len(evidence & set(refs[:cutoff])) / len(evidence)
            row["all@10"] = float(evidence <= set(refs[:10]))
            rank = next((i for i, ref in enumerate(refs, 1) if ref in evidence), None)
            row["mrr"] = 1.0 / rank if rank else 0.0
            out.append(row)
        return out

    # --- report -------------------------------------------------------------------------

    def _report(self, rows: list[dict[str, Any]], chosen: list[int]) -> dict[str, Any]:
        metrics = [f"r@{k}" for k in KS] + ["mrr", "all@10"]

        def summarise(subset: list[dict[str, Any]]) -> dict[str, float]:
            if not subset:
                return {}
            return {m: statistics.fmean(r[m] for r in subset) for m in metrics} | {"n": len(subset)}

        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            scope = [f"conv {'1-5' if r['conv'] <= 5 else '6-10'}", "all"]
            for s in scope:
                if r["category"] == 5:
                    groups[f"{s} | cat 5 {CATEGORIES[5]}"].append(r)
                else:
                    groups[f"{s} | cat {r['category']} {CATEGORIES[r['category']]}"].append(r)
                    groups[f"{s} | overall 1-4"].append(r)
        figures = {name: summarise(subset) for name, subset in sorted(groups.items())}
        header = f"{'scope':<38}" + "".join(f"{m:>8}" for m in metrics) + f"{'n':>6}"
        self.stdout.write(header)
        for name, f in figures.items():
            self.stdout.write(
                f"{name:<38}" + "".join(f"{f[m]:>8.3f}" for m in metrics) + f"{int(f['n']):>6}"
            )
        latencies = sorted(r["ms"] for r in rows)
        if latencies:
            self.stdout.write(
                f"recall latency: p50 {latencies[len(latencies) // 2]:.1f} ms, "
                f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms over {len(latencies)} questions"
            )
        return figures

    def _chart(self, figures: dict[str, Any], out: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for name, f in figures.items():
            if not name.startswith("all |"):
                continue
            ax.plot(KS, [f[f"r@{k}"] for k in KS], marker="o", label=name.removeprefix("all | "))
        ax.set_xlabel("k")
        ax.set_ylabel("Recall@k")
        ax.set_xticks(KS)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.set_title("Engram recall on LoCoMo (evidence turns in top k)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out, dpi=120)

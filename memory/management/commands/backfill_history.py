"""manage.py backfill_history --space NAME FILE.jsonl [--run]

Without --run: a zero-cost estimate (turns, sessions, salient turns, what is
already stored, LLM calls a run would cost). With --run: store the turns with
a progress bar; safe to interrupt and rerun, it resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory.services.imports import history
from memory.services.spaces import get_or_create_space


class Command(BaseCommand):
    help = "Backfill past conversations from a JSONL file of turns (estimate first, then --run)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--space", required=True, help="target space (created if missing)")
        parser.add_argument("--run", action="store_true", help="import; without it only estimate")
        parser.add_argument("--batch-size", type=int, default=200)

    def _bad(self, bad: list[history.BadLine]) -> None:
        for b in bad[:10]:
            self.stderr.write(f"  line {b.line}: {b.error}")
        if len(bad) > 10:
            self.stderr.write(f"  ... and {len(bad) - 10} more")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        if not 1 <= opts["batch_size"] <= 500:
            raise CommandError("--batch-size must be between 1 and 500")
        space = get_or_create_space(name=opts["space"])
        est = history.estimate(space=space, path=path)
        todo = est.turns - est.already_present
        self.stdout.write(
            f"turns: {est.turns}  sessions: {est.sessions}  already stored: {est.already_present}\n"
            f"to import: {todo}  salient: {est.salient}  skipped by the gate: "
            f"{dict(est.skip_reasons) or 0}\n"
            f"estimated LLM calls: {est.estimated_llm_calls}"
            + (
                f" (budget {est.llm_budget_per_hour}/hour: about "
                f"{-(-est.estimated_llm_calls // est.llm_budget_per_hour)} h of background work)"
                if est.estimated_llm_calls and est.llm_budget_per_hour
                else ""
            )
            + f"\nunreadable lines: {len(est.bad_lines)}"
        )
        self._bad(est.bad_lines)
        if not opts["run"]:
            self.stdout.write("dry run: nothing written (add --run to import)")
            return
        with tqdm(total=est.turns, unit="turn", desc="backfill", disable=None) as bar:
            result = history.run(
                space=space,
                path=path,
                batch_size=opts["batch_size"],
                progress=bar.update,
                actor="cli",
            )
        self.stdout.write(
            f"stored {result.created} new turns, {result.existing} were already there"
        )

"""Run consolidation in the foreground: `python manage.py consolidate --space NAME`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from consolidation import services
from memory.errors import EngramError
from memory.models import Space


class Command(BaseCommand):
    help = "Consolidate one space (or every space) now, in this process, with a progress bar."

    def add_arguments(self, parser: CommandParser) -> None:
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--space", help="space name")
        target.add_argument("--all", action="store_true", help="every space")
        parser.add_argument("--only", nargs="+", metavar="STEP", help="run only these steps")
        parser.add_argument("--skip", nargs="+", metavar="STEP", default=[], help="skip steps")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["all"]:
            spaces = list(Space.objects.order_by("name"))
        else:
            space = Space.objects.filter(name=opts["space"]).first()
            if space is None:
                raise CommandError(f"no space named {opts['space']!r}")
            spaces = [space]
        for space in spaces:
            self._one(space, only=opts["only"], skip=opts["skip"])

    def _one(self, space: Space, *, only: list[str] | None, skip: list[str]) -> None:
        bar = tqdm(total=len(services.step_names()), desc=space.name, unit="step")

        def progress(name: str, entry: dict[str, Any]) -> None:
            bar.set_postfix_str(f"{name}: {entry.get('status')}")
            bar.update(1)

        try:
            run = services.run_now(
                space=space, trigger="cli", only=only, skip=skip, progress=progress
            )
        except EngramError as exc:
            raise CommandError(exc.detail) from None
        finally:
            bar.close()
        if run is None:
            self.stdout.write(f"{space.name}: another worker is consolidating this space; skipped")
            return
        self.stdout.write(
            f"{space.name}: run {run.pk} {run.status} in {services.duration_seconds(run)}s, "
            f"{run.llm_calls} LLM calls — {run.report}"
        )
        for error in run.errors:
            self.stderr.write(f"  step {error['step']} failed: {error['error']}")

"""manage.py slot_palace [--space NAME]

Give every live entry without a palace place its room#slot: a store from
before the palace, or a large import. The worker does the same in the
background (task memory.slot_palace); this runs it now, with a progress bar.
Safe to interrupt and rerun: it resumes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory.models import Space
from memory.services.palace import slots


class Command(BaseCommand):
    help = "Slot live entries that have no palace place yet, with a progress bar."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--space", help="only this space (default: every marked space)")

    def handle(self, *args: Any, **opts: Any) -> None:
        spaces = Space.objects.order_by("name")
        if opts["space"]:
            spaces = spaces.filter(name=opts["space"])
            if not spaces.exists():
                raise CommandError(f"no space named {opts['space']!r}")
        else:
            spaces = spaces.filter(palace_backlog_at__isnull=False)
        total = 0
        for space in spaces:
            todo = slots.backlog(space.pk)
            if todo:
                with tqdm(total=todo, unit="entry", desc=space.name, disable=None) as bar:
                    slots.slot_missing(space.pk, progress=bar.update)
            # Marked done only if nothing was stored around the write path meanwhile.
            Space.objects.filter(pk=space.pk, palace_backlog_at=space.palace_backlog_at).update(
                palace_backlog_at=None
            )
            total += todo
            self.stdout.write(f"{space.name}: {todo} slotted")
        self.stdout.write(self.style.SUCCESS(f"done: {total} entries slotted"))

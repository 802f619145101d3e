"""manage.py bench_forget [--turns N] [--facts N] [--audit N]

Times a verified hard forget (by id and by query) in a space of the given
size, on whichever database ENGRAM_DATABASE_URL names: the delete, the
reclaim (SQLite: FTS merge + WAL checkpoint; PostgreSQL: VACUUM) and the
verification's scans. Creates its own space and removes it afterwards."""

from __future__ import annotations

import random
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from memory.models import AuditEvent, MemoryItem, Session, Space, Turn
from memory.services import forget

_WORDS = (
    "garden kettle ferry violin harbour lantern pepper quarry saddle thimble walnut "
    "meadow orchard pebble ribbon silver timber velvet willow anchor barley cobalt"
).split()


def _sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


class Command(BaseCommand):
    help = "Time a verified hard forget at a given space size."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--turns", type=int, default=50_000)
        parser.add_argument("--facts", type=int, default=20_000)
        parser.add_argument("--audit", type=int, default=50_000)

    def handle(self, *args: Any, **opts: Any) -> None:
        rng = random.Random(17)
        space = Space.objects.create(name=f"bench-forget-{int(time.time() * 1000)}")
        try:
            self._fill(space, rng, opts)
            for label, kwargs in (
                ("by id", {"item_id": MemoryItem.objects.filter(space=space).first().pk}),  # type: ignore[union-attr]
                ("by query", {"query": "zephyrquill"}),
            ):
                started = time.perf_counter()
                done = forget.forget_with_report(space=space, hard=True, actor="bench", **kwargs)
                ms = (time.perf_counter() - started) * 1000
                report = done.verification or {}
                self.stdout.write(
                    f"{connection.vendor} hard forget {label}: {done.count} row(s) in {ms:.0f} ms; "
                    f"verified={report.get('verified')} places={len(report.get('checked', []))} "
                    f"storage={report.get('storage')}"
                )
        finally:
            forget.forget(space=space, everything=True, confirm=space.name, actor="bench")
            space.delete()

    def _fill(self, space: Space, rng: random.Random, opts: dict[str, Any]) -> None:
        session = Session.objects.create(space=space, external_id="bench")
        batch = 2000
        for start in range(0, opts["turns"], batch):
            Turn.objects.bulk_create(
                Turn(space=space, session=session, role="user", text=_sentence(rng))
                for _ in range(min(batch, opts["turns"] - start))
            )
        for start in range(0, opts["facts"], batch):
            MemoryItem.objects.bulk_create(
                MemoryItem(space=space, text=_sentence(rng, 8))
                for _ in range(min(batch, opts["facts"] - start))
            )
        for start in range(0, opts["audit"], batch):
            AuditEvent.objects.bulk_create(
                AuditEvent(space=space, action="add", target_type="item", detail={"n": i})
                for i in range(min(batch, opts["audit"] - start))
            )
        # What the query forget removes: three turns and a fact.
        for i in range(3):
            Turn.objects.create(
                space=space,
                session=session,
                role="user",
                text=f"My zephyrquill code number {i} is in the drawer",
            )
        MemoryItem.objects.create(space=space, text="The zephyrquill code is kept in the drawer")
        self.stdout.write(
            f"filled: {opts['turns']} turns, {opts['facts']} facts, {opts['audit']} audit rows"
        )

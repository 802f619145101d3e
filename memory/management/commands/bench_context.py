"""Measure GET /api/v1/context on a space with many facts.

Builds (or reuses) a space of N synthetic facts with filled core blocks, then
times real HTTP requests through the whole stack (auth, core blocks, mirror
check, environment block, recall in its worker thread) and prints p50/p95
with and without the recalled part. The space is wiped afterwards unless
--keep is given.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction
from django.test import Client
from django.utils import timezone
from tqdm import tqdm

from memory.models import MemoryItem, Space
from memory.services import core, forget
from memory.services.spaces import create_api_key

NAMES = "Priya Anna Ravi Kenji Lena Omar Sofia Marco Aiko Tomas Zara Idris".split()
PREDICATES = [
    ("lives_in", "lives in"),
    ("works_at", "works at"),
    ("likes", "likes"),
    ("visited", "visited"),
    ("owns", "owns"),
    ("studies", "studies"),
]
OBJECTS = (
    "Pune Berlin Oslo Chennai Lisbon Kyoto Nairobi Quito Google Infosys Siemens chess "
    "violin oolong ferries bicycles jazz astronomy pottery sourdough Rust Django kayaks"
).split()


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


class Command(BaseCommand):
    help = "Benchmark GET /api/v1/context (p50/p95 with and without recall) on N facts."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument("--requests", type=int, default=200)
        parser.add_argument("--space", default="bench-context")
        parser.add_argument("--keep", action="store_true", help="keep the space afterwards")
        parser.add_argument("--seed", type=int, default=7)

    def _build(self, space: Space, n: int, rng: random.Random) -> None:
        have = MemoryItem.objects.filter(space=space).count()
        now = timezone.now()
        batch: list[MemoryItem] = []
        for i in tqdm(range(have, n), desc="facts", unit="fact", disable=have >= n):
            name = rng.choice(NAMES)
            pred, phrase = rng.choice(PREDICATES)
            obj = rng.choice(OBJECTS)
            batch.append(
                MemoryItem(
                    space=space,
                    text=f"{name} {phrase} {obj} (note {i})",
                    subject=name,
                    predicate=pred,
                    object=obj,
                    importance=rng.random(),
                    created_at=now,
                    last_seen=now,
                    source="bench",
                )
            )
            if len(batch) >= 1000:
                with transaction.atomic():
                    MemoryItem.objects.bulk_create(batch)
                batch = []
        if batch:
            with transaction.atomic():
                MemoryItem.objects.bulk_create(batch)
        user = core.load_block(space=space, label="user")
        if user.version == 0:
            lines = [f"Fact {i}: {rng.choice(NAMES)} {rng.choice(OBJECTS)}" for i in range(40)]
            core.set_text(space=space, label="user", text="\n".join(lines[:35]), author="bench")
            core.set_text(space=space, label="agent", text="\n".join(lines), author="bench")

    def _time(self, client: Client, queries: list[str | None]) -> list[float]:
        timings = []
        for query in tqdm(queries, desc="requests", unit="req", leave=False, disable=None):
            url = "/api/v1/context" + (f"?query={query}" if query else "")
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                raise SystemExit(f"GET {url} answered {response.status_code}: {response.content!r}")
        return timings

    def handle(self, *args: Any, **opts: Any) -> None:
        rng = random.Random(opts["seed"])
        # Runs on a scratch data directory like the other benchmarks.
        call_command("migrate", verbosity=0, interactive=False)
        _, key = create_api_key(space_name=opts["space"], name="bench")
        space = Space.objects.get(name=opts["space"])
        self._build(space, opts["items"], rng)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        n = opts["requests"]
        # Warm up: first probe of the environment, connection, caches.
        self._time(client, [None, "warm up chess"])
        plain = self._time(client, [None] * n)
        queries: list[str | None] = [
            f"Where does {rng.choice(NAMES)} live {rng.choice(OBJECTS)}" for _ in range(n)
        ]
        with_recall = self._time(client, queries)
        body = client.get("/api/v1/context?query=Where does Anna live").json()
        self.stdout.write(
            f"space {space.name}: {MemoryItem.objects.filter(space=space).count()} facts, "
            f"context {body['tokens']} tokens, recall left out: {body['recall_left_out']}"
        )
        for label, values in (("without recall", plain), ("with recall", with_recall)):
            self.stdout.write(
                f"GET /context {label:15s} p50 {statistics.median(values):7.2f} ms   "
                f"p95 {_percentile(values, 0.95):7.2f} ms   (n={len(values)})"
            )
        if not opts["keep"]:
            forget.forget(space=space, everything=True, confirm=space.name, actor="bench")
            Space.objects.filter(pk=space.pk).delete()

"""How fast each dashboard view renders on a space of realistic size.

    ENGRAM_DATA_DIR=$(mktemp -d) python manage.py bench_dashboard --facts 10000

Builds a space (bulk inserts: facts of every kind and status, with entities,
edges, palace places, sessions and turns, beliefs, audit events; some facts
superseded, some quarantined or waiting for review), then requests every
view as a signed-in curator through Django's test client, in-process, and
prints p50 and max per view over --runs requests. Run it on a scratch data
directory: it migrates the configured database and adds a bench space (kept
with --keep).
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.test import Client
from tqdm import tqdm

from memory.models import (
    AuditEvent,
    Belief,
    Entity,
    MemoryItem,
    ProposedWrite,
    Relation,
    Session,
    Space,
    Turn,
)
from memory.services.palace import slots

WORDS = (
    "amber basalt cobalt dahlia ember fjord granite heron indigo juniper kestrel lichen "
    "marble nectar onyx pepper quartz raven saffron tundra umber violet willow yarrow zinc"
).split()
PREDICATES = ["lives_in", "works_at", "likes", "owns", "visited", "studies", "uses"]
KINDS = ["fact", "fact", "fact", "preference", "event", "decision", "episode", "insight"]


class Command(BaseCommand):
    help = "Render time of every dashboard view on a synthetic space (in-process)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--facts", type=int, default=10_000)
        parser.add_argument("--runs", type=int, default=10)
        parser.add_argument("--seed", type=int, default=5)
        parser.add_argument("--keep", action="store_true", help="keep the bench space")

    def handle(self, *args: Any, **opts: Any) -> None:
        call_command("migrate", verbosity=0, interactive=False)
        rng = random.Random(opts["seed"])
        space = Space.objects.create(name=f"bench-dashboard-{int(time.time())}")
        try:
            started = time.perf_counter()
            ids = self._build(space, rng, opts["facts"])
            self.stdout.write(
                f"built {opts['facts']} facts (+ entities, edges, turns, audit) "
                f"in {time.perf_counter() - started:.1f}s"
            )
            self._measure(space, ids, runs=opts["runs"])
        finally:
            if not opts["keep"]:
                space.delete()

    def _build(self, space: Space, rng: random.Random, n: int) -> dict[str, int]:
        base = datetime(2024, 1, 1, tzinfo=UTC)
        with transaction.atomic():
            entities = Entity.objects.bulk_create(
                Entity(space=space, name=f"{w.title()} {i}", norm=f"{w} {i}")
                for i in range(max(1, n // 20))
                for w in [WORDS[i % len(WORDS)]]
            )
            sessions = Session.objects.bulk_create(
                Session(space=space, external_id=f"s{i}", started_at=base + timedelta(days=i))
                for i in range(max(1, n // 50))
            )
        items: list[MemoryItem] = []
        with tqdm(total=n, desc="facts", disable=None) as bar:
            for start in range(0, n, 2000):
                rows = []
                for i in range(start, min(n, start + 2000)):
                    subject = rng.choice(entities)
                    obj = rng.choice(entities)
                    status = MemoryItem.Status.ACTIVE
                    screen = MemoryItem.Screen.OK
                    if i % 97 == 0:
                        status = MemoryItem.Status.PENDING_REVIEW
                    elif i % 89 == 0:
                        screen = MemoryItem.Screen.FLAGGED
                    when = base + timedelta(hours=i)
                    rows.append(
                        MemoryItem(
                            space=space,
                            text=f"{subject.name} {rng.choice(PREDICATES).replace('_', ' ')} "
                            f"{obj.name} near the {rng.choice(WORDS)} {rng.choice(WORDS)}",
                            kind=rng.choice(KINDS),
                            subject=subject.name,
                            predicate=rng.choice(PREDICATES),
                            object=obj.name,
                            importance=rng.random(),
                            status=status,
                            screen_status=screen,
                            valid_from=when,
                            stated_at=when,
                            created_at=when,
                            last_seen=when,
                            content_hash=f"bench-{space.pk}-{i}",
                        )
                    )
                items += MemoryItem.objects.bulk_create(rows)
                bar.update(len(rows))
        with transaction.atomic():
            # One in ten facts was superseded by the next one.
            for old, new in zip(items[::10], items[1::10], strict=False):
                old.valid_to = old.expired_at = new.valid_from
                old.superseded_by = new
            MemoryItem.objects.bulk_update(
                items[::10], ["valid_to", "expired_at", "superseded_by"], batch_size=1000
            )
            by_name = {e.name: e for e in entities}
            Relation.objects.bulk_create(
                (
                    Relation(
                        space=space,
                        src=by_name[it.subject],
                        rel=it.predicate,
                        dst=by_name[it.object],
                        item=it,
                        valid_from=it.valid_from,
                        valid_to=it.valid_to,
                        created_at=it.created_at,
                        expired_at=it.expired_at,
                    )
                    for it in items
                ),
                batch_size=2000,
            )
            Turn.objects.bulk_create(
                (
                    Turn(
                        space=space,
                        session=sessions[i % len(sessions)],
                        role="user" if i % 2 else "assistant",
                        text=f"turn {i} about the {rng.choice(WORDS)} {rng.choice(WORDS)}",
                        ts=base + timedelta(hours=i),
                        created_at=base + timedelta(hours=i),
                    )
                    for i in range(n)
                ),
                batch_size=2000,
            )
            AuditEvent.objects.bulk_create(
                (
                    AuditEvent(
                        space=space,
                        action=rng.choice(["add", "update", "expire", "forget", "core_edit"]),
                        target_type="item",
                        target_id=str(items[i % len(items)].pk),
                        actor="pipeline",
                        detail={"reason": "bench", "text": items[i % len(items)].text[:80]},
                    )
                    for i in range(2 * n)
                ),
                batch_size=2000,
            )
            for b in range(max(1, n // 100)):
                belief = Belief.objects.create(
                    space=space,
                    text=f"Belief {b}: {rng.choice(WORDS)} matters",
                    status=rng.choice(list(Belief.Status.values)),
                )
                belief.evidence.add(*rng.sample(items, 5))
            # Agents' writes waiting for approval (ENGRAM_WRITE_APPROVAL), in Review.
            ProposedWrite.objects.bulk_create(
                ProposedWrite(
                    space=space,
                    target="core",
                    label=("user", "agent")[i % 2],
                    payload={"op": "save", "action": "add", "text": f"Entry {i}.", "old_text": ""},
                    base_version=0,
                    proposer="api:bench",
                )
                for i in range(max(1, n // 100))
            )
        slots.slot_missing(space.pk)
        return {
            "session": sessions[0].pk,
            "entity": entities[0].pk,
            "word": 0,
        }

    def _measure(self, space: Space, ids: dict[str, int], *, runs: int) -> None:
        user, _ = get_user_model().objects.get_or_create(
            username="bench-curator", defaults={"is_staff": True}
        )
        client = Client()
        client.force_login(user)
        client.get(f"/?space={space.name}")
        views = [
            "/",
            "/library/",
            f"/library/?q={WORDS[3]}",
            "/library/?status=quarantined",
            "/graph/",
            "/graph.json",
            "/graph.json?as_of=2024-06-01",
            "/episodes/",
            f"/episodes/{ids['session']}/",
            "/entities/",
            f"/entities/{ids['entity']}/",
            "/beliefs/",
            "/review/",
            "/skills/",
            "/log/",
            "/ops/",
            "/core/",
            f"/ask/?q={WORDS[5]}+{WORDS[7]}",
        ]
        self.stdout.write(f"{'view':<36} {'p50 ms':>8} {'max ms':>8}  status")
        worst = 0.0
        for url in views:
            client.get(url)  # warm
            times, status = [], 0
            for _ in range(runs):
                t = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t) * 1000)
                status = response.status_code
            p50 = statistics.median(times)
            worst = max(worst, p50)
            self.stdout.write(f"{url:<36} {p50:8.1f} {max(times):8.1f}  {status}")
        self.stdout.write(f"slowest view p50: {worst:.1f} ms")

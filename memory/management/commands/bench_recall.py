"""Recall latency on a synthetic space.

    ENGRAM_DATA_DIR=$(mktemp -d) python manage.py bench_recall --items 100000 --turns 100000

Builds a space of that many facts and turns (bulk inserts; the FTS triggers
index them as they go), then times recall() in-process and POST /api/v1/recall
over HTTP against a real gunicorn subprocess on the same database, and prints
p50/p95/p99 and peak memory. Run it on a scratch data directory: it migrates
the configured database and adds (and afterwards deletes) a bench space.

With --reuse the space is named after its size and seed and kept: the first
run builds it, later runs with the same --items/--turns/--seed find it and
only measure, which is what makes iterating on latency practical.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psutil
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, transaction
from tqdm import tqdm

from memory.models import MemoryItem, Session, Space, Turn
from memory.services.recall import recall
from memory.services.spaces import create_api_key

logging.getLogger("httpx").setLevel(logging.WARNING)

SYLLABLES = (
    "ka lo mi ne ru sa to vi ze ba de fi go hu ja ke li mo nu pa qui re si tu wa xo yu".split()
)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_weights(size: int) -> list[float]:
    """Zipf-like word frequencies, as in real text: a few words are everywhere."""
    return [1.0 / (i + 1) ** 1.05 for i in range(size)]


def sentence(rng: random.Random, vocab: list[str], cum_weights: list[float]) -> str:
    """A stored text: 6 to 18 words drawn by frequency (cum_weights: the
    accumulated zipf_weights, which draw what weights= would without
    re-summing 20,000 weights a sentence)."""
    return " ".join(rng.choices(vocab, cum_weights=cum_weights, k=rng.randint(6, 18)))


def _loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def _percentiles(samples: list[float]) -> str:
    s = sorted(samples)

    def at(q: float) -> float:
        return s[min(len(s) - 1, int(q * len(s)))]

    return (
        f"p50 {at(0.50):6.2f} ms  p95 {at(0.95):6.2f} ms  p99 {at(0.99):6.2f} ms  "
        f"mean {statistics.fmean(s):6.2f} ms  (n={len(s)})"
    )


class Command(BaseCommand):
    help = "Benchmark recall latency on a synthetic space (in-process and over HTTP)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=100_000)
        parser.add_argument("--turns", type=int, default=100_000)
        parser.add_argument("--queries", type=int, default=500)
        parser.add_argument("--k", type=int, default=8)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--no-http", action="store_true", help="skip the HTTP measurement")
        parser.add_argument("--keep", action="store_true", help="keep the bench space afterwards")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="build the space once under a name derived from its size and seed, keep it, "
            "and reuse it on later runs",
        )
        parser.add_argument(
            "--scopes",
            action="store_true",
            help="also slot both palaces and link a user space of a tenth the size; recall "
            "through the linked pair, alternating query by query with the one space",
        )
        parser.add_argument(
            "--profile",
            metavar="PATH",
            help="write a cProfile of the slowest 5%% of in-process queries to PATH",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        rng = random.Random(opts["seed"])
        call_command("migrate", verbosity=0, interactive=False)
        self.stdout.write(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        reuse = opts["reuse"]
        name = f"bench-recall-{opts['items']}-{opts['turns']}-{opts['seed']}"
        space = Space.objects.filter(name=name).first() if reuse else None
        if space is not None and not self._complete(space, opts["items"], opts["turns"]):
            self.stdout.write(f"{name} is incomplete (an interrupted build): rebuilding")
            self._delete(space)
            space = None
        built = space is None
        if space is None:
            space = Space.objects.create(name=name if reuse else f"bench-{int(time.time())}")
        try:
            vocab = _vocabulary(rng, 20_000)
            weights = zipf_weights(len(vocab))
            started = time.perf_counter()
            if built:
                texts = self._build(
                    space, rng, vocab, weights, items=opts["items"], turns=opts["turns"]
                )
                self.stdout.write(
                    f"built {opts['items']} items + {opts['turns']} turns in "
                    f"{time.perf_counter() - started:.1f}s"
                )
            else:
                texts = self._sample(space)
                self.stdout.write(f"reusing {name} (built earlier)")
            queries = []
            for _ in range(opts["queries"]):
                words = rng.choice(texts).split()
                picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
                queries.append("what about " + " ".join(picked) + "?")
            for q in queries[:20]:  # warm caches and the connection
                recall(space=space, query=q, k=opts["k"])
            samples = []
            for q in tqdm(queries, desc="in-process recall"):
                t = time.perf_counter()
                recall(space=space, query=q, k=opts["k"])
                samples.append((time.perf_counter() - t) * 1000)
            self.stdout.write(f"in-process recall (k={opts['k']}): {_percentiles(samples)}")
            self.stdout.write(f"load average: {_loadavg()}")
            if opts["scopes"]:
                self._scopes(space, rng, vocab, weights, queries, opts)
            if opts["profile"]:
                self._profile(space, queries, samples, k=opts["k"], path=opts["profile"])
            peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            self.stdout.write(f"peak memory of this process: {peak_kb / 1024:.0f} MiB")
            if not opts["no_http"]:
                self._http(space, queries, k=opts["k"])
        finally:
            if not (opts["keep"] or reuse):
                self._delete(space)

    def _scopes(
        self,
        space: Space,
        rng: random.Random,
        vocab: list[str],
        weights: list[float],
        queries: list[str],
        opts: dict[str, Any],
    ) -> None:
        """Recall with rooms and scopes: both palaces slotted, the project's
        key linked to a user space, each query run through the pair and
        through the one space in turn, so both see the same machine."""
        from memory.services.palace import slots

        items, turns = max(1, opts["items"] // 10), max(1, opts["turns"] // 10)
        name = f"bench-recall-user-{items}-{turns}-{opts['seed']}"
        user = Space.objects.filter(name=name).first()
        if user is not None and not self._complete(user, items, turns):
            self._delete(user)
            user = None
        if user is None:
            user = Space.objects.create(name=name, kind=Space.Kind.USER)
            self._build(user, rng, vocab, weights, items=items, turns=turns)
        for each in (space, user):
            started = time.perf_counter()
            with tqdm(desc=f"slotting {each.name}", unit="entry") as bar:
                placed = slots.slot_missing(each.pk, progress=bar.update)
            if placed:
                self.stdout.write(
                    f"slotted {placed} entries of {each.name} in {time.perf_counter() - started:.1f}s"
                )
        pair = (space, user)
        for q in queries[:20]:
            recall(spaces=pair, query=q, k=opts["k"])
        one: list[float] = []
        linked: list[float] = []
        for q in tqdm(queries, desc="recall, one space / linked pair"):
            t = time.perf_counter()
            recall(space=space, query=q, k=opts["k"])
            one.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            recall(spaces=pair, query=q, k=opts["k"])
            linked.append((time.perf_counter() - t) * 1000)
        self.stdout.write(f"one space, palace slotted (k={opts['k']}): {_percentiles(one)}")
        self.stdout.write(
            f"linked pair ({opts['items']}+{opts['turns']} and {items}+{turns}, "
            f"k={opts['k']}): {_percentiles(linked)}"
        )
        self._linked_quality(pair, rng, k=opts["k"])
        self.stdout.write(f"load average: {_loadavg()}")

    def _linked_quality(self, pair: tuple[Space, Space], rng: random.Random, *, k: int) -> None:
        """What the linked space's lighter search (recall.channels.LINKED)
        gives up: queries drawn from the user space's own facts and turns,
        and how often the pair's top k holds the row each was drawn from,
        searched with the light budget and with the full one. A row of the
        same text counts as found: a reused space and the user space built
        beside it draw the same texts, so the project space holds a copy of
        many user rows, and ranking every match ties the two copies."""
        from memory.services.recall import channels

        user = pair[1]
        drawn = [
            ("item", text)
            for text in MemoryItem.objects.filter(space=user)
            .order_by("id")
            .values_list("text", flat=True)[::37]
        ] + [
            ("turn", text)
            for text in Turn.objects.filter(space=user)
            .order_by("id")
            .values_list("text", flat=True)[::37]
        ]
        queries = []
        for kind, text in drawn:
            words = text.split()
            picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
            queries.append((kind, text, "what about " + " ".join(picked) + "?"))
        light = channels.LINKED
        # A drawn fact comes back as a result of type fact (or insight).
        types = {"item": {"fact", "insight"}, "turn": {"turn"}}
        found: dict[str, dict[str, float]] = {}
        try:
            for name, budget in (("light", light), ("full", channels.FULL)):
                channels.LINKED = budget
                hits = {"item": 0, "turn": 0}
                for kind, text, q in queries:
                    results = recall(spaces=pair, query=q, k=k).results
                    hits[kind] += any(r.type in types[kind] and r.text == text for r in results)
                drawn_of = {kind: sum(1 for q in queries if q[0] == kind) for kind in hits}
                found[name] = {
                    "all": sum(hits.values()) / max(1, len(queries)),
                    **{kind: hits[kind] / max(1, drawn_of[kind]) for kind in hits},
                }
        finally:
            channels.LINKED = light
        self.stdout.write(
            f"linked space's row found in the pair's top {k} ({len(queries)} queries drawn "
            f"from it): {found['light']['all']:.3f} as searched ({light.match} rows ranked, "
            f"{light.turns} turns re-scored), {found['full']['all']:.3f} if searched in full; "
            f"turns {found['light']['turn']:.3f} / {found['full']['turn']:.3f}, "
            f"facts {found['light']['item']:.3f} / {found['full']['item']:.3f}"
        )

    def _complete(self, space: Space, items: int, turns: int) -> bool:
        return (
            MemoryItem.objects.filter(space=space).count() == items
            and Turn.objects.filter(space=space).count() == turns
        )

    def _sample(self, space: Space) -> list[str]:
        # The same texts _build() sampled: every 97th item, then every 97th turn.
        items = MemoryItem.objects.filter(space=space).order_by("id").values_list("text", flat=True)
        turns = Turn.objects.filter(space=space).order_by("id").values_list("text", flat=True)
        return list(items)[::97] + list(turns)[::97]

    def _profile(
        self, space: Space, queries: list[str], samples: list[float], *, k: int, path: str
    ) -> None:
        import cProfile
        import io
        import pstats

        cut = sorted(samples)[int(0.95 * len(samples))]
        slow = [q for q, ms in zip(queries, samples, strict=True) if ms >= cut]
        profiler = cProfile.Profile()
        profiler.enable()
        for q in slow:
            recall(space=space, query=q, k=k)
        profiler.disable()
        profiler.dump_stats(path)
        self.stdout.write(f"profile of the {len(slow)} slowest queries written to {path}:")
        report = io.StringIO()
        pstats.Stats(profiler, stream=report).sort_stats("cumulative").print_stats(30)
        self.stdout.write(report.getvalue())

    def _build(
        self,
        space: Space,
        rng: random.Random,
        vocab: list[str],
        weights: list[float],
        *,
        items: int,
        turns: int,
    ) -> list[str]:
        base = datetime(2024, 1, 1, tzinfo=UTC)
        sample: list[str] = []
        batch = 2000
        sessions = [
            Session.objects.create(space=space, external_id=f"s{i}", started_at=base)
            for i in range(max(1, turns // 200))
        ]

        cum_weights = list(itertools.accumulate(weights))

        with tqdm(total=items + turns, desc="building space") as bar:
            for start in range(0, items, batch):
                rows = []
                for i in range(start, min(items, start + batch)):
                    text = sentence(rng, vocab, cum_weights)
                    if i % 97 == 0:
                        sample.append(text)
                    rows.append(
                        MemoryItem(
                            space=space,
                            text=text,
                            subject=rng.choice(vocab),
                            predicate="says",
                            object=rng.choice(vocab),
                            importance=rng.random(),
                            created_at=base + timedelta(minutes=i),
                            last_seen=base + timedelta(minutes=i),
                            source_turn_refs=[f"r{i}"],
                        )
                    )
                with transaction.atomic():
                    MemoryItem.objects.bulk_create(rows)
                bar.update(len(rows))
            for start in range(0, turns, batch):
                rows_t = []
                for i in range(start, min(turns, start + batch)):
                    text = sentence(rng, vocab, cum_weights)
                    if i % 97 == 0:
                        sample.append(text)
                    rows_t.append(
                        Turn(
                            space=space,
                            session=sessions[i // 200 % len(sessions)],
                            ref=f"r{i}",
                            role="user" if i % 2 else "assistant",
                            text=text,
                            ts=base + timedelta(minutes=i),
                            skip_reason="",
                        )
                    )
                with transaction.atomic():
                    Turn.objects.bulk_create(rows_t)
                bar.update(len(rows_t))
        with connection.cursor() as cursor:
            # On PostgreSQL VACUUM also sets the visibility map, as autovacuum
            # would after a while on a real server.
            cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
        return sample

    def _http(self, space: Space, queries: list[str], *, k: int) -> None:
        _, key = create_api_key(space_name=space.name)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ)
        env.setdefault("ENGRAM_DATA_DIR", str(settings.DATA_DIR))
        server = subprocess.Popen(
            [
                os.path.join(os.path.dirname(sys.executable), "gunicorn"),
                "engram_site.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--log-level",
                "warning",
            ],
            cwd=settings.BASE_DIR,
            env=env,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            with httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10
            ) as client:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        if client.get("/api/v1/health").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline:
                        raise RuntimeError("the HTTP server did not start")
                    time.sleep(0.2)
                for q in queries[:40]:
                    client.post("/api/v1/recall", json={"query": q, "k": k})
                samples = []
                for q in tqdm(queries, desc="HTTP recall"):
                    t = time.perf_counter()
                    response = client.post("/api/v1/recall", json={"query": q, "k": k})
                    samples.append((time.perf_counter() - t) * 1000)
                    response.raise_for_status()
            self.stdout.write(f"HTTP POST /api/v1/recall (k={k}): {_percentiles(samples)}")
            self.stdout.write(f"load average: {_loadavg()}")
            proc = psutil.Process(server.pid)
            rss = [p.memory_info().rss for p in [proc, *proc.children()]]
            self.stdout.write(
                f"server RSS: {max(rss) / 2**20:.0f} MiB largest process, "
                f"{sum(rss) / 2**20:.0f} MiB total ({len(rss)} processes)"
            )
        finally:
            server.terminate()
            server.wait(timeout=10)

    def _delete(self, space: Space) -> None:
        with transaction.atomic():
            Turn.objects.filter(space=space).delete()
            MemoryItem.objects.filter(space=space).delete()
            space.delete()
